// How a cpu launch runs its grid: oneTBB tasks of consecutive blocks (cpu_plugin.cpp,
// block_grain), stolen by the threads of the kernel's arena. Whatever the block count and the
// thread count, every block runs exactly once per launch.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/builder.h"

using namespace tg;

namespace {

// Each block adds 1 to its own counter: after `launches` launches every counter equals it.
Kernel count_blocks(int64_t gx, int64_t gy) {
  KernelBuilder k("count_blocks");
  auto C = k.tensor("C", {gy, gx}, i32);
  k.grid(gx, gy).threads(1).body([&](Expr bx, Expr by) { k.atomic_add(C(by, bx), 1); });
  return k.build();
}

}  // namespace

TEST_CASE("cpu launch: every block runs once per launch, for any block and thread count") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  // Fewer blocks than threads, one task per block, tasks of several blocks, ragged task counts.
  const std::vector<std::pair<int64_t, int64_t>> grids{{1, 1},  {3, 1},   {7, 9},   {64, 1},
                                                       {65, 1}, {33, 31}, {4097, 1}};
  for (const char* threads : {"1", "2", "3"}) {
    for (auto [gx, gy] : grids) {
      INFO("threads " << threads << ", grid " << gx << "x" << gy);
      CompileOptions opt;
      opt.params["num_threads"] = threads;
      tg::testing::NoKernelCache no_cache;
      CompiledKernel ck = cpu->compile(count_blocks(gx, gy), opt);
      std::vector<int32_t> counts(std::size_t(gx * gy), 0);
      HostTensor c{counts.data(), {gy, gx}, i32};
      constexpr int kLaunches = 3;
      for (int l = 0; l < kLaunches; ++l) ck.launch({c});
      int64_t wrong = 0;
      for (int32_t n : counts) wrong += n != kLaunches;
      CHECK(wrong == 0);
    }
  }
}
