// The cpu target's software pipelining of tile copies (targets/cpu/src/emit_prefetch.cpp): a
// pipelined loop's gemm prefetches the Global lines its next iteration copies. Prefetches change
// no value, so the checks are that results still equal the interpreter's on ragged shapes (the
// last iteration prefetches past the tensors' ends, the edge tiles past their rows), for every
// dtype and transpose, and that the prefetches are in the code only where they belong.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/builder.h"

using namespace tg;
using tg::testing::check_cpu_matches_interpreter;
using tg::testing::random_array;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(77);
  return r;
}

// C = op(A) · op(B) in bm×bn×bk tiles, the K loop pipelined (3 stages) or serial.
Kernel tiled_gemm(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn,
                  int64_t bk, bool pipelined) {
  return tg::testing::gemm_kernel(t, ta, tb, M, N, K, bm, bn, bk, pipelined ? 3 : 0);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("cpu prefetch: a pipelined gemm still equals the interpreter, ragged, every dtype and transpose") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  for (DType t : {f32, f16, bf16})
    for (int tr = 0; tr < 4; ++tr) {
      bool ta = tr & 1, tb = tr & 2;
      INFO(t.name() << " trans_a " << ta << " trans_b " << tb);
      // 61×83×70 in 24×48×16 tiles: ragged in M, N and K; whole 6×16 micro-tiles and edges.
      const int64_t M = 61, N = 83, K = 70;
      Kernel k = tiled_gemm(t, ta, tb, M, N, K, 24, 48, 16, true);
      std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
      std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      check_cpu_matches_interpreter(
          *cpu, k.function(),
          {random_array(as, t, rng()), random_array(bs, t, rng()), random_array({M, N}, f32, rng())}, {},
          1e-4);
    }
}

TEST_CASE("cpu prefetch: only a pipelined loop with a micro-kernel gemm prefetches its next tiles") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  const std::string pipelined =
      cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, true)).assembly();
  const std::string serial =
      cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, false)).assembly();
  // 32 micro-tiles of 6×16 share A's next 48×32 tile (96 lines: 3 each) and B's next 32×64
  // tile (128 lines: 4 each); the serial loop promises no overlap and gets none.
  CHECK(count(pipelined, "prefetcht0") >= 7);
  CHECK(count(serial, "prefetch") == 0);
  CompileOptions plain;
  plain.params["gemm"] = "plain";  // no micro-kernel: the gemm is a loop nest, nothing to pipeline
  CHECK(count(cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, true), plain).assembly(),
              "prefetch") == 0);
}
