// 16-byte copies into Shared tiles held as uvec4s, padded rows, and the register-prefetched,
// double-buffered K loop (targets/vulkan/src/spirv/vector_copy.cpp): the module's structure for
// the H200's features, and gemm run for real against its reference where a Vulkan device is
// present (lavapipe in CI: the plain path; the cooperative-matrix path is run on the H200).
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include <iostream>
#include <map>
#include <set>

#include "test_vulkan_spirv_util.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"
#include "vulkan_pipeline.h"

using namespace tg;
using namespace tg::vulkan;
using tg::test::Inst;
using tg::test::instructions;

namespace {

const samples::Sample& gemm_sample() {
  for (const samples::Sample& x : samples::all())
    if (x.name == "gemm") return x;
  throw Error("no gemm sample");
}

SpirvOutput gemm_module(const Features& features, int64_t n, samples::Params extra) {
  extra.insert({{"M", n}, {"N", n}, {"K", n}});
  samples::Params p = samples::resolve(gemm_sample(), extra);
  Function f = gemm_sample().build(p, f16).function();
  Function b = bind_sizes(f, infer_sizes(f, {{n, n}, {n, n}, {n, n}}));
  PassManager pm(vulkan_pipeline({}));
  return emit_spirv(pm.run(b, target_info(features, "test", false)), features);
}

}  // namespace

TEST_CASE("vulkan vector copies: H200 gemm tiles are padded uvec4s in two slots, one barrier a K step") {
  SpirvOutput out = gemm_module(test::h200_features(), 512,
                                {{"block_M", 128}, {"block_N", 128}, {"block_K", 32}, {"stages", 1}});
  REQUIRE(out.uses_coopmat);
  auto insts = instructions(out.words);
  std::map<uint32_t, int64_t> constants;  // id -> value (32-bit integer constants)
  std::map<uint32_t, Inst> types;
  for (const Inst& in : insts) {
    if (in.op == spv::OpConstant && in.operands.size() == 3) constants[in.operands[1]] = in.operands[2];
    if (in.op == spv::OpTypeVector || in.op == spv::OpTypeArray || in.op == spv::OpTypePointer ||
        in.op == spv::OpTypeInt)
      types[in.operands[0]] = in;
  }
  // Workgroup arrays of uvec4: A 2 slots × 128 rows × (32 + 8) halves / 8, B 2 × 32 × (128 + 8) / 8
  std::multiset<int64_t> vec4_arrays;
  for (const Inst& in : insts)
    if (in.op == spv::OpVariable && in.operands.size() >= 3 && in.operands[2] == spv::SCWorkgroup) {
      const Inst& arr = types.at(types.at(in.operands[0]).operands[2]);
      auto element = types.find(arr.operands[1]);
      if (arr.op == spv::OpTypeArray && element != types.end() && element->second.op == spv::OpTypeVector)
        vec4_arrays.insert(constants.at(arr.operands[2]));
    }
  CHECK(vec4_arrays == std::multiset<int64_t>{1280, 1088});
  // A and B loaded as cooperative matrices straight from the tiles, stride in uvec4s: 5 and 17
  std::multiset<int64_t> strides;
  for (const Inst& in : insts)
    if (in.op == spv::OpCooperativeMatrixLoadKHR) strides.insert(constants.at(in.operands[4]));
  CHECK(strides.count(5) == 4);    // 4 A tiles a K step of 16 (a loop of 2 steps)
  CHECK(strides.count(17) == 4);   // 4 B tiles likewise
  CHECK(strides.count(16) == 16);  // the accumulators, before the loop
  // Workgroup barriers: one after the prologue's fill of slot 0, one in the K loop
  int workgroup_barriers = 0, muladds = 0;
  for (const Inst& in : insts) {
    if (in.op == spv::OpControlBarrier && constants.at(in.operands[0]) == spv::ScopeWorkgroup) ++workgroup_barriers;
    if (in.op == spv::OpCooperativeMatrixMulAddKHR) ++muladds;
  }
  CHECK(workgroup_barriers == 2);
  CHECK(muladds == 16);  // a 64×64 warp tile of 4×4 unit tiles, in the K steps' loop (Unroll)
}

TEST_CASE("vulkan vector copies: prefetched gemm matches its reference on the device") {
  bool available = false;
  for (const TargetStatus& t : targets()) available = available || (t.name == "vulkan" && t.available);
  if (!available) {
    std::cout << "skipped: no vulkan device\n";
    return;
  }
  Target vk = Target::get("vulkan");
  std::mt19937_64 rng(7);
  const samples::Sample& s = gemm_sample();
  // two slots (64×64×32 fits), one slot (128×128×32 does not fit twice in lavapipe's 32 KiB),
  // the transposes, and a ragged shape (bounds-checked copies: element by element)
  const std::vector<samples::Params> cases = {
      {{"M", 192}, {"N", 128}, {"K", 160}, {"block_M", 64}, {"block_N", 64}, {"block_K", 32}, {"stages", 1}},
      {{"M", 128},
       {"N", 192},
       {"K", 96},
       {"block_M", 64},
       {"block_N", 64},
       {"block_K", 32},
       {"stages", 1},
       {"trans_A", 1}},
      {{"M", 128},
       {"N", 128},
       {"K", 96},
       {"block_M", 64},
       {"block_N", 64},
       {"block_K", 32},
       {"stages", 1},
       {"trans_B", 1},
       {"threads", 256}},
      {{"M", 256}, {"N", 128}, {"K", 64}, {"block_M", 128}, {"block_N", 128}, {"block_K", 32}, {"stages", 1}},
      {{"M", 100}, {"N", 72}, {"K", 88}, {"block_M", 64}, {"block_N", 64}, {"block_K", 32}, {"stages", 1}}};
  for (const samples::Params& c : cases) {
    samples::Params p = samples::resolve(s, c);
    INFO("gemm M=" << p.at("M") << " N=" << p.at("N") << " K=" << p.at("K") << " tiles " << p.at("block_M")
                   << "x" << p.at("block_N") << "x" << p.at("block_K"));
    Kernel k = s.build(p, f16);
    samples::Problem pr = s.make_problem(p, f16, rng);
    CompiledKernel ck = vk.compile(k);
    ck.launch(samples::kernel_args(k.function(), pr));
    samples::Comparison cmp = samples::compare(pr.args[2], pr.expected.at(0), s.tolerance(p, f16));
    INFO("max |error| " << cmp.max_abs_error);
    CHECK(cmp.mismatches == 0);
  }
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
