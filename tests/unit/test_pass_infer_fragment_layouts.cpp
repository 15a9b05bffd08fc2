// infer_fragment_layouts: gemm accumulators in matrix-unit registers, gemm as mma, epilogues and
// stores per thread; unsupported uses fall back to a block-wide tile. Results checked in the
// interpreter against the unlowered function.
#include "../../passes/src/lane_layout.h"
#include "gpu_pass_test_util.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/infer_fragment_layouts.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

namespace {

const char* kGemmRelu = R"(
func gemm_relu(A: f16[32, 32] global, B: f16[32, 32] global, C: f16[32, 32] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared As: f16[32, 16]
    shared Bs: f16[16, 32]
    fragment Cf: f32[32, 32]
    fill Cf = 0.0
    for ko in serial(0 +: 2) {
      copy A[0 +: 32, ko*16 +: 16] -> As
      copy B[ko*16 +: 16, 0 +: 32] -> Bs
      gemm(As, Bs -> Cf)
    }
    for i in parallel(0 +: 32) {
      for j in parallel(0 +: 32) {
        Cf[i, j] = max(Cf[i, j], 0.0)
      }
    }
    copy Cf -> C
  }
})";

// Evaluates a slot expression at constant lane and register.
int64_t at(const Expr& e, const Var& lane, const Var& reg, int l, int r) {
  return *simplify_expr(substitute(e, {{lane, Expr(l)}, {reg, Expr(r)}})).as_int();
}

}  // namespace

TEST_CASE("infer_fragment_layouts: gemm + relu + store run per warp on mma.sync registers") {
  Function f = parse_function(kGemmRelu);
  Function g = infer_fragment_layouts(f, nvidia_target_info(80));
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "local Cf: f32[8]"));  // 32×32 over a 2×2 warp grid: 1×2 tiles, 8 a thread
  CHECK(contains(text, "mma \"mma_m16n8k16_f16_f32\""));
  CHECK_FALSE(contains(text, "gemm("));
  CHECK_FALSE(contains(text, "fragment Cf"));
  check_same_results(f, g, 1e-3);
  check_same_results(f, partition_threads(g, nvidia_target_info(80)), 1e-3);
}

TEST_CASE("infer_fragment_layouts: a reduced fragment stays a tile; its gemm still uses the matrix unit") {
  Function f = parse_function(R"(
func rowmax(A: f16[16, 16] global, B: f16[16, 16] global, M: f32[16] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared As: f16[16, 16]
    shared Bs: f16[16, 16]
    fragment S: f32[16, 16]
    fragment m: f32[16]
    copy A -> As
    copy B -> Bs
    gemm(As, Bs -> S, clear)
    reduce max(S -> m, axis=1, clear)
    copy m -> M
  }
})");
  Function g = infer_fragment_layouts(f, nvidia_target_info(80));
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "fragment S: f32[16, 16]"));  // kept: reduce needs whole rows
  CHECK(contains(text, "local c_regs_"));            // the gemm goes through temporary registers
  CHECK(contains(text, "mma \"mma_m16n8k16_f16_f32\""));
  check_same_results(f, partition_threads(g, nvidia_target_info(80)), 1e-3);
}

TEST_CASE("infer_fragment_layouts: nothing to do without a matrix unit, or for f32 inputs") {
  Function f = parse_function(kGemmRelu);
  CHECK(infer_fragment_layouts(f, TargetInfo{}).body.same_as(f.body));
  TargetInfo no_f16 = nvidia_target_info(80);
  no_f16.matrix_units = {"mma_m16n8k16_bf16_f32"};
  CHECK(contains(print(infer_fragment_layouts(f, no_f16)), "gemm("));
}

TEST_CASE("lane layouts: slot expressions reproduce every built-in linear table") {
  Var lane("lane"), reg("reg");
  for (const char* name : {"mma_m16n8k16_f16_f32", "mfma_f32_32x32x8_f16", "mfma_f32_16x16x16_f16",
                           "coopmat_16x16x16_f16_f32"}) {
    const MatrixUnit& u = *find_matrix_unit(name);
    INFO(name);
    for (auto [layout, regs] :
         {std::pair{&u.a_layout, u.a_regs()}, {&u.b_layout, u.b_regs()}, {&u.c_layout, u.c_regs()}}) {
      auto s = lower::slot_exprs(*layout, u.group_size, regs, lane, reg);
      REQUIRE(s);
      for (int l = 0; l < u.group_size; ++l)
        for (int r = 0; r < regs; ++r) {
          CHECK(at(s->row, lane, reg, l, r) == (*layout)[std::size_t(l * regs + r)].row);
          CHECK(at(s->col, lane, reg, l, r) == (*layout)[std::size_t(l * regs + r)].col);
        }
    }
  }
  // A table that is not linear in the lane bits (lane 3 breaks the pattern) is refused.
  std::vector<MatrixUnit::Slot> odd = {{0, 0}, {1, 0}, {2, 0}, {0, 1}};
  CHECK_FALSE(lower::slot_exprs(odd, 4, 1, lane, reg));
}
