// The vulkan coopmat path keeps gemm accumulators in cooperative matrices across the K loop:
// the C operand of the Mma in the loop is loaded from and stored to a Function variable, and the
// accumulator is staged through Workgroup memory only before and after the loop; A and B are
// loaded straight from their Shared tiles (the register layout proven in coopmat_direct.cpp).
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include <map>

#include "test_vulkan_spirv_util.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::vulkan;

namespace {

struct Inst {
  uint32_t op;
  std::vector<uint32_t> operands;
};

std::vector<Inst> instructions(const std::vector<uint32_t>& words) {
  std::vector<Inst> out;
  for (std::size_t i = 5; i < words.size();) {
    uint32_t n = words[i] >> 16;
    if (!n) break;
    out.push_back(
        {words[i] & 0xffff, std::vector<uint32_t>(words.begin() + long(i) + 1, words.begin() + long(i + n))});
    i += n;
  }
  return out;
}

SpirvOutput gemm_module(int64_t size) {
  const samples::Sample* s = nullptr;
  for (const samples::Sample& x : samples::all())
    if (x.name == "gemm") s = &x;
  REQUIRE(s);
  samples::Params p = samples::resolve(*s, {{"M", size}, {"N", size}, {"K", size}});
  Function f = s->build(p, f16).function();
  Function b = bind_sizes(f, infer_sizes(f, {{size, size}, {size, size}, {size, size}}));
  PassManager pm(gpu_pipeline());
  Function lowered = pm.run(b, target_info(test::h200_features(), "test", false));
  return emit_spirv(lowered, test::h200_features());
}

}  // namespace

TEST_CASE("vulkan coopmat: gemm accumulators stay cooperative matrices across the K loop") {
  SpirvOutput out = gemm_module(256);
  REQUIRE(out.uses_coopmat);
  auto insts = instructions(out.words);
  std::size_t muladd = insts.size();
  int muladds = 0, stores_khr = 0, loads_khr = 0, stores_before_muladd_loop = 0;
  for (std::size_t i = 0; i < insts.size(); ++i) {
    if (insts[i].op == spv::OpCooperativeMatrixMulAddKHR) muladd = i, ++muladds;
    if (insts[i].op == spv::OpCooperativeMatrixLoadKHR) ++loads_khr;
    if (insts[i].op == spv::OpCooperativeMatrixStoreKHR) {
      ++stores_khr;
      CHECK(muladd < i);  // every store of a matrix is after the loop: the epilogue's staging
    }
  }
  REQUIRE(muladds == 1);
  CHECK(stores_khr >= 1);
  CHECK(loads_khr == 2 + stores_khr);  // A and B an Mma; C once a unit tile before the loop
  // C is an OpLoad of the accumulator variable's element, and the result is stored straight back
  const Inst& mad = insts[muladd];
  uint32_t c = mad.operands[4];
  bool c_from_variable = false;
  for (const Inst& in : insts)
    if (in.op == spv::OpLoad && in.operands.size() >= 3 && in.operands[1] == c) c_from_variable = true;
  CHECK(c_from_variable);
  REQUIRE(muladd + 1 < insts.size());
  CHECK(insts[muladd + 1].op == spv::OpStore);
  CHECK(insts[muladd + 1].operands[1] == mad.operands[1]);
  // inside the K loop (from its header to the MulAdd) no matrix is stored to Workgroup memory
  std::size_t header = muladd;
  while (header > 0 && insts[header].op != spv::OpLoopMerge) --header;
  for (std::size_t i = header; i < muladd; ++i) {
    CHECK(insts[i].op != spv::OpCooperativeMatrixStoreKHR);
    if (insts[i].op == spv::OpStore) ++stores_before_muladd_loop;
  }
  CHECK(stores_before_muladd_loop == 0);  // A and B come straight from Shared: nothing is staged
  // A and B: OpCooperativeMatrixLoadKHR from an access chain into A_shared / B_shared
  std::map<uint32_t, std::string> names;
  for (const Inst& in : insts)
    if (in.op == spv::OpName) {
      std::string n;
      for (std::size_t w = 1; w < in.operands.size(); ++w)
        for (int b = 0; b < 4; ++b)
          if (char ch = char((in.operands[w] >> (8 * b)) & 0xff)) n += ch;
      names[in.operands[0]] = n;
    }
  auto source_of = [&](uint32_t matrix) -> std::string {
    for (const Inst& in : insts)
      if (in.op == spv::OpCooperativeMatrixLoadKHR && in.operands[1] == matrix)
        for (const Inst& chain : insts)
          if (chain.op == spv::OpAccessChain && chain.operands[1] == in.operands[2])
            return names[chain.operands[2]];
    return "";
  };
  CHECK(source_of(mad.operands[2]) == "A_shared");
  CHECK(source_of(mad.operands[3]) == "B_shared");
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
