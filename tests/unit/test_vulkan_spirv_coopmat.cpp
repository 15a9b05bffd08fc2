// The vulkan coopmat path keeps gemm accumulators in cooperative matrices across the K loop:
// the C operand of the Mma in the loop is loaded from and stored to a Function variable, and the
// accumulator is staged through Workgroup memory only before and after the loop; A and B are
// loaded straight from their Shared tiles (the pass mma_tiles_from_shared proved the register layout; the IR says `a=tile A_s[..]`).
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "test_vulkan_spirv_util.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/samples.h"
#include "vulkan_pipeline.h"

using namespace tg;
using namespace tg::vulkan;
using tg::test::Inst;
using tg::test::instructions;

namespace {

SpirvOutput gemm_module(int64_t size, samples::Params extra = {}, const Features& device = test::h200_features(),
                        const CompileOptions& opt = {}, std::string* ir = nullptr) {
  const samples::Sample* s = nullptr;
  for (const samples::Sample& x : samples::all())
    if (x.name == "gemm") s = &x;
  REQUIRE(s);
  extra.insert({{"M", size}, {"N", size}, {"K", size}});
  samples::Params p = samples::resolve(*s, extra);
  Function f = s->build(p, f16).function();
  Function b = bind_sizes(f, infer_sizes(f, {{size, size}, {size, size}, {size, size}}));
  PassManager pm(vulkan_pipeline(opt));
  Function lowered = pm.run(b, target_info(device, "test", false));
  if (ir) *ir = print(lowered);
  return emit_spirv(lowered, device);
}

std::map<uint32_t, std::string> debug_names(const std::vector<Inst>& insts) {
  std::map<uint32_t, std::string> names;
  for (const Inst& in : insts)
    if (in.op == spv::OpName) {
      std::string n;
      for (std::size_t w = 1; w < in.operands.size(); ++w)
        for (int b = 0; b < 4; ++b)
          if (char ch = char((in.operands[w] >> (8 * b)) & 0xff)) n += ch;
      names[in.operands[0]] = n;
    }
  return names;
}

}  // namespace

TEST_CASE("vulkan coopmat: gemm accumulators stay cooperative matrices across the K loop") {
  SpirvOutput out = gemm_module(256);
  REQUIRE(out.uses_coopmat);
  auto insts = instructions(out.words);
  std::size_t first = insts.size(), last = 0;
  int muladds = 0, stores_khr = 0, loads_khr = 0;
  for (std::size_t i = 0; i < insts.size(); ++i) {
    if (insts[i].op == spv::OpCooperativeMatrixMulAddKHR) first = std::min(first, i), last = i, ++muladds;
    if (insts[i].op == spv::OpCooperativeMatrixLoadKHR) ++loads_khr;
    if (insts[i].op == spv::OpCooperativeMatrixStoreKHR) {
      ++stores_khr;
      CHECK(last < i);  // every store of a matrix is after the loop: the epilogue's staging
    }
  }
  // 128 threads, block 128x128: a 64x64 warp tile of 4x4 unit tiles, the mi/ni nest unrolled
  REQUIRE(muladds == 16);
  CHECK(stores_khr == 16);
  // C once a unit tile before the loop; A and B once a unit row/column in the nest (4 + 4)
  CHECK(loads_khr == 8 + stores_khr);
  // the unrolled nest: no loop, no staging store, each MulAdd's result stored straight back
  std::map<uint32_t, uint32_t> loaded_from;  // OpLoad result -> pointer
  for (const Inst& in : insts)
    if (in.op == spv::OpLoad && in.operands.size() >= 3) loaded_from[in.operands[1]] = in.operands[2];
  std::set<uint32_t> accumulators;
  for (std::size_t i = first; i <= last; ++i) {
    CHECK(insts[i].op != spv::OpLoopMerge);
    CHECK(insts[i].op != spv::OpCooperativeMatrixStoreKHR);
    if (insts[i].op != spv::OpCooperativeMatrixMulAddKHR) continue;
    const Inst& mad = insts[i];
    REQUIRE(loaded_from.count(mad.operands[4]));
    uint32_t var = loaded_from[mad.operands[4]];
    accumulators.insert(var);
    REQUIRE(i + 1 < insts.size());
    CHECK(insts[i + 1].op == spv::OpStore);
    CHECK(insts[i + 1].operands[0] == var);  // straight back into the same variable
    CHECK(insts[i + 1].operands[1] == mad.operands[1]);
  }
  CHECK(accumulators.size() == 16);
  // each accumulator is its own Function variable of a cooperative-matrix type: no array of
  // matrices, so no access chain with a dynamic index into one
  std::set<uint32_t> coopmat_types, variables;
  std::map<uint32_t, uint32_t> pointee;
  for (const Inst& in : insts) {
    if (in.op == spv::OpTypeCooperativeMatrixKHR) coopmat_types.insert(in.operands[0]);
    if (in.op == spv::OpTypePointer) pointee[in.operands[0]] = in.operands[2];
    if (in.op == spv::OpTypeArray) CHECK(!coopmat_types.count(in.operands[1]));
    if (in.op == spv::OpVariable) variables.insert(in.operands[1]);
  }
  for (const Inst& in : insts)
    if (in.op == spv::OpVariable && accumulators.count(in.operands[1]))
      CHECK(coopmat_types.count(pointee[in.operands[0]]));
  for (uint32_t v : accumulators) CHECK(variables.count(v));
  // A and B: OpCooperativeMatrixLoadKHR from an access chain into A_shared / B_shared
  std::map<uint32_t, std::string> names = debug_names(insts);
  auto source_of = [&](uint32_t matrix) -> std::string {
    for (const Inst& in : insts)
      if (in.op == spv::OpCooperativeMatrixLoadKHR && in.operands[1] == matrix)
        for (const Inst& chain : insts)
          if (chain.op == spv::OpAccessChain && chain.operands[1] == in.operands[2])
            return names[chain.operands[2]];
    return "";
  };
  CHECK(source_of(insts[first].operands[2]) == "A_shared");
  CHECK(source_of(insts[first].operands[3]) == "B_shared");
  // so the per-lane register fills of A and B are dead: mma_tiles_from_shared dropped them and
  // their buffers, nothing declares them
  int regs_vars = 0;
  for (const auto& [id, name] : names)
    if (name.rfind("a_regs", 0) == 0 || name.rfind("b_regs", 0) == 0) ++regs_vars;
  CHECK(regs_vars == 0);
}

TEST_CASE("vulkan coopmat: tile operands whose rows no matrix load can read are staged element by element") {
  // A's rows are 20 f16 (40 bytes): not the 16-byte multiple OpCooperativeMatrixLoadKHR needs,
  // so the emitter stages A through the subgroup's Workgroup area; B's 32-byte rows load directly.
  Function f = parse_function(R"(func f(A: f16[32, 20] global, B: f16[16, 16] global, C: f32[32, 16] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared As: f16[32, 20]
    shared Bs: f16[16, 16]
    local Cr: f32[8]
    for i in serial(0 +: 10) {
      As[(tx * 10 + i) / 20, (tx * 10 + i) % 20] = A[(tx * 10 + i) / 20, (tx * 10 + i) % 20]
    }
    for i in serial(0 +: 4) {
      Bs[(tx * 4 + i) / 16, (tx * 4 + i) % 16] = B[(tx * 4 + i) / 16, (tx * 4 + i) % 16]
    }
    for i in serial(0 +: 8) {
      Cr[i] = 0.0
    }
    barrier
    mma "coopmat_16x16x16_f16_f32" a=tile As[tx / 32 * 16, 2], b=tile Bs[0, 0], c=Cr[0]
    for i in serial(0 +: 8) {
      C[tx / 32 * 16 + (tx % 32 * 8 + i) / 16, (tx % 32 * 8 + i) % 16] = Cr[i]
    }
  }
}
)");
  verify(f);
  SpirvOutput out = emit_spirv(f, test::h200_features());
  REQUIRE(out.uses_coopmat);  // (Debian 12's spirv-val predates SPV_KHR_cooperative_matrix)
  auto insts = instructions(out.words);
  std::map<uint32_t, std::string> names = debug_names(insts);
  std::map<uint32_t, uint32_t> chain_base;  // access chain → the variable it indexes
  for (const Inst& in : insts)
    if (in.op == spv::OpAccessChain) chain_base[in.operands[1]] = in.operands[2];
  std::multiset<std::string> sources;
  for (const Inst& in : insts)
    if (in.op == spv::OpCooperativeMatrixLoadKHR) sources.insert(names[chain_base[in.operands[2]]]);
  CHECK(sources.count("coopmat_stage_a") == 1);
  CHECK(sources.count("Bs") == 1);
  CHECK(sources.count("coopmat_stage_c") == 1);
}

TEST_CASE("vulkan coopmat: a nest too large to unroll keeps the accumulators in an indexed array") {
  // one warp for a 256x128 tile: 16x8 unit tiles, more than the codegen unrolls
  SpirvOutput out = gemm_module(256, {{"block_M", 256}, {"block_N", 128}, {"threads", 32}});
  REQUIRE(out.uses_coopmat);
  auto insts = instructions(out.words);
  std::set<uint32_t> coopmat_types;
  int muladds = 0, matrix_arrays = 0;
  for (const Inst& in : insts) {
    if (in.op == spv::OpTypeCooperativeMatrixKHR) coopmat_types.insert(in.operands[0]);
    if (in.op == spv::OpTypeArray && coopmat_types.count(in.operands[1])) ++matrix_arrays;
    muladds += in.op == spv::OpCooperativeMatrixMulAddKHR;
  }
  CHECK(muladds == 1);
  CHECK(matrix_arrays == 1);
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
