// check_grid_limits: a grid a device cannot launch, or whose block index would wrap, is a
// tg::Error naming the dimension and the limit, on every target (before, a grid of 2^31 + 2
// blocks ran on cpu with the block index wrapped to negative values).
#include <doctest/doctest.h>

#include "gpu_targets.h"
#include "tilegen/ir/parser.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/grid_limits.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

Function grid_kernel(const std::string& grid, const std::string& block_vars) {
  return parse_function("func g(Y: i64[2] global) {\n kernel grid(" + grid + ") threads(1) -> (" +
                        block_vars + "; tx) {\n  Y[0] = 1:i64\n }\n}\n");
}

TargetInfo no_device_limit() {
  TargetInfo info;
  info.target = "cpu";
  return info;
}

}  // namespace

TEST_CASE("grid limits: a block index of i32 counts at most 2^31 blocks, on every target") {
  CHECK_NOTHROW(check_grid_limits(grid_kernel("2147483648:i64", "bx"), no_device_limit()));
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("2147483650:i64", "bx"), no_device_limit()),
                       doctest::Contains("grid dimension 0 has 2147483650 blocks; the block index bx is i32, "
                                         "which counts at most 2147483648 blocks"),
                       Error);
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("4, 70000", "bx, by: i16"), no_device_limit()),
                       doctest::Contains("grid dimension 1 has 70000 blocks; the block index by is i16"),
                       Error);
  CHECK_NOTHROW(check_grid_limits(grid_kernel("2147483650:i64", "bx: i64"), no_device_limit()));
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("4294967296:i64, 4294967296:i64, 4294967296:i64",
                                                     "bx: i64, by: i64, bz: i64"),
                                         no_device_limit()),
                       doctest::Contains("more than 2^63 - 1 blocks"), Error);
}

TEST_CASE("grid limits: the target's TargetInfo::max_grid, per dimension and in number of dimensions") {
  TargetInfo cuda = test::sm80(), hip = test::gfx90a();
  CHECK_NOTHROW(check_grid_limits(grid_kernel("2147483647, 65535, 65535", "bx, by, bz"), cuda));
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("8, 70000", "bx, by"), cuda),
                       doctest::Contains("grid dimension 1 has 70000 blocks; the cuda target"), Error);
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("8, 70000", "bx, by"), hip),
                       doctest::Contains("allows at most 65535 in that dimension"), Error);
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("2147483650:i64", "bx: i64"), cuda),
                       doctest::Contains("allows at most 2147483647"), Error);
  CHECK_THROWS_WITH_AS(check_grid_limits(grid_kernel("1, 1, 1, 2", "a, b, c, d"), cuda),
                       doctest::Contains("grids of at most 3 dimensions"), Error);
}

TEST_CASE("grid limits: a grid of 2^31 + 2 blocks is refused at the builder's grid line") {
  // The verifier refuses it at build() (an i32 block index cannot hold the last block); IR text
  // that declares it so reaches the targets, whose compile refuses it too.
  KernelBuilder k("gm");
  auto Y = k.tensor("Y", {2}, i64);
  const int line = __LINE__ + 1;
  k.grid(Expr((int64_t(1) << 31) + 2)).threads(1).body([&](Expr bx) { k.atomic_max(Y(0), cast(i64, bx)); });
  try {
    k.build();
    FAIL("built a grid whose block index wraps");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("bx is i32") != std::string::npos);
    CHECK(e.where().line == line);
  }
}
