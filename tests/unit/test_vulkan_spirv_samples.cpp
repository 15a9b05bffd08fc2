// Every sample through the vulkan target's whole pipeline (vulkan_pipeline(): gpu_pipeline, then
// pad_shared_rows, hold_accumulators, prefetch_tiles, double_buffer_tiles) and emit_spirv, for a
// lavapipe-like device (subgroup 8, plain path), an H200-like one (subgroup 32, cooperative
// matrices) and a minimal one, at every unit-test shape (ragged ones included). Plain-path
// modules pass spirv-val; coopmat modules (which SPIRV-Tools 2023.1 cannot read) are checked
// structurally. The lowered IR of every device is executed by the interpreter, its race detector
// on, against the samples' references: what the emitter translates is what the interpreter checked.
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include "test_vulkan_spirv_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/samples.h"
#include "vulkan_pipeline.h"

using namespace tg;
using namespace tg::samples;

namespace {

std::vector<std::vector<int64_t>> shapes_of(const Function& f, const Problem& p) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Buffer& t : f.tensors())
    for (const HostArray& a : p.args)
      if (a.name == t->name) shapes.push_back(a.shape);
  return shapes;
}

// The lowered function of one sample shape for these features, with its prepared problem.
Function lowered_sample(const Sample& s, std::size_t shape, DType t, const vulkan::Features& feat,
                        Problem* pr) {
  std::mt19937_64 rng(11);
  Params p = resolve(s, s.test_shapes[shape]);
  Function f = s.build(p, t).function();
  *pr = s.make_problem(p, t, rng);
  PassManager pm(vulkan::vulkan_pipeline({}));
  return pm.run(bind_sizes(f, infer_sizes(f, shapes_of(f, *pr))), vulkan::target_info(feat, "test", false));
}

// lavapipe-like, H200-like, and a minimal Vulkan 1.3 device (no shaderFloat16, no 64-bit
// integers: f16 tiles widened to f32 in Workgroup memory, 32-bit indices)
vulkan::Features device_features(int device) {
  vulkan::Features feat = device == 1 ? test::h200_features() : test::lavapipe_features();
  if (device == 2) feat.float16_arith = false, feat.int64 = false, feat.subgroup_size = 16;
  return feat;
}
const char* device_name(int device) { return device == 0 ? " lavapipe" : device == 1 ? " h200" : " minimal"; }

void check_coopmat_structure(const vulkan::SpirvOutput& out) {
  using namespace tg::vulkan;
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixMulAddKHR) >= 1);
  // A and B an Mma; C an Mma, or once a unit tile where the accumulator stays a matrix
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixLoadKHR) >=
        2 * test::count_opcode(out.words, spv::OpCooperativeMatrixMulAddKHR));
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixStoreKHR) >= 1);
  CHECK(test::count_opcode(out.words, spv::OpTypeCooperativeMatrixKHR) >= 3);
  CHECK(test::contains(out.text, "OpCooperativeMatrixMulAddKHR"));  // SPIRV-Tools' text or the own listing
  // OpCapability CooperativeMatrixKHR and OpExtension "SPV_KHR_cooperative_matrix"
  bool cap = false;
  for (std::size_t i = 5; i + 1 < out.words.size(); i += out.words[i] >> 16)
    if ((out.words[i] & 0xffff) == spv::OpCapability && out.words[i + 1] == spv::CapCooperativeMatrixKHR)
      cap = true;
  CHECK(cap);
}

void check_sample_modules(const Sample& s, DType t) {
  for (std::size_t i = 0; i < s.test_shapes.size(); ++i) {
    if (s.test_shape_info[i].conformance_only) continue;
    for (int device = 0; device < 3; ++device) {
      const bool h200 = device == 1;
      vulkan::Features feat = device_features(device);
      INFO(s.name << " [" << s.test_shape_info[i].label << "] " << t.name() << device_name(device));
      Problem pr;
      Function lowered = lowered_sample(s, i, t, feat, &pr);
      INFO(print(lowered));
      vulkan::SpirvOutput out = vulkan::emit_spirv(lowered, feat);
      CHECK(test::count_opcode(out.words, vulkan::spv::OpEntryPoint) ==
            int(ir::kernel_entry_names(lowered).size()));
      if (h200 && t == f16 && (s.name == "gemm" || s.name == "gemm_relu")) CHECK(out.uses_coopmat);
      if (out.uses_coopmat)
        check_coopmat_structure(out);
      else
        test::check_valid(out);
    }
  }
}

// The interpreter, races detected, on the lowered IR of each device: on the coopmat one, the model
// layout of the registry's coopmat units (which the staging tiles make true on the device) and the
// holds of accumulators reproduce the references.
void check_sample_interpreted(const Sample& s, DType t) {
  for (std::size_t i = 0; i < s.test_shapes.size(); ++i) {
    if (s.test_shape_info[i].conformance_only) continue;
    for (int device = 0; device < 3; ++device) {
      INFO(s.name << " [" << s.test_shape_info[i].label << "] " << t.name() << device_name(device));
      Problem pr;
      Params p = resolve(s, s.test_shapes[i]);
      Function lowered = lowered_sample(s, i, t, device_features(device), &pr);
      INFO(print(lowered));
      InterpretOptions races;
      races.detect_races = true;
      interpret(lowered, host_args(lowered, pr), races);
      std::size_t out = 0;
      for (const HostArray& a : pr.args) {
        if (!a.is_output) continue;
        Comparison c = compare(a, pr.expected.at(out++), s.tolerance(p, t));
        INFO("output " << a.name << ": max |error| " << c.max_abs_error);
        CHECK(c.mismatches == 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("vulkan spirv: every sample, dtype and shape emits a module (plain ones pass spirv-val)") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE((s.name + " " + std::string(t.name())).c_str()) { check_sample_modules(s, t); }
    }
}

TEST_CASE(
    "vulkan pipeline: the interpreter, races detected, reproduces every sample's reference on every device") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE((s.name + " " + std::string(t.name())).c_str()) { check_sample_interpreted(s, t); }
    }
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
