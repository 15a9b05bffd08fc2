// The hip target's proof of correctness without an AMD GPU: every sample at every dtype and test
// shape the conformance suite has (ragged and default-tile shapes included), lowered by the hip
// target's whole pipeline for gfx90a and gfx942 (64-lane waves, MFMA; the shared GPU pipeline
// alone where the build has no hip plugin), then executed by the
// interpreter with the MFMA descriptions and its race detection, must match the float64 reference.
#include <doctest/doctest.h>

#include "gpu_pass_test_util.h"
#ifdef TILEGEN_HAVE_HIP_CODEGEN
#include "hip_plugin.h"
#endif
#include "hip_test_util.h"
#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/plugin.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

bool uses_mma(const std::string& ir_text) { return ir_text.find("mma ") != std::string::npos; }

// Lowers and runs one sample at one dtype and shape; returns whether the lowered IR uses MFMA.
bool check_case(const Sample& s, DType t, std::size_t shape, const TargetInfo& info) {
  std::mt19937_64 rng(11);
  // the hip target's complete list (its plugin's pipeline(): pad_shared_tiles and
  // place_shared_memory after the shared GPU pipeline); without the plugin in the build (the
  // sanitizer build), the shared GPU pipeline alone
#ifdef TILEGEN_HAVE_HIP_CODEGEN
  static const std::unique_ptr<TargetPlugin> plugin(hip::make_plugin());  // the linked code generator
  TargetPlugin* hip = plugin.get();
#else
  TargetPlugin* hip = nullptr;
#endif
  PassManager pm(hip ? hip->pipeline(info, {}) : gpu_pipeline());
  return uses_mma(testing::check_lowered_sample(s, t, shape, pm, info, rng));
}

void check_arch(const std::string& gfx, bool conformance_only) {
  const TargetInfo info = test::cdna(gfx);
  for (const Sample& s : all())
    for (DType t : s.dtypes)
      for (std::size_t i = 0; i < s.test_shapes.size(); ++i) {
        if (s.test_shape_info[i].conformance_only != conformance_only) continue;
        SUBCASE((s.name + " " + std::string(t.name()) + " " + s.test_shape_info[i].label).c_str()) {
          bool mfma = check_case(s, t, i, info);
          // The matrix-unit samples must actually run on MFMA for 16-bit inputs, or this proves
          // nothing about the MFMA layouts; tiles narrower than an MFMA tile (16) cannot.
          Params p = resolve(s, s.test_shapes[i]);
          bool wide = !p.count("block_N") || (p.at("block_N") >= 16 && p.at("block_M") >= 16);
          if ((t == f16 || t == bf16) && (s.name == "gemm" || s.name == "flash_attention") && wide)
            CHECK(mfma);
        }
      }
}

}  // namespace

TEST_CASE("hip: every sample lowered for gfx90a matches the reference in the interpreter") {
  check_arch("gfx90a", false);
}

TEST_CASE("hip: every sample lowered for gfx942 matches the reference in the interpreter") {
  check_arch("gfx942", false);
}

// One case an arch: the slowest unit tests under ASan, kept apart so the ctest shards share them.
TEST_CASE("hip: the conformance suite's default-tile shapes lowered for gfx90a match the reference") {
  check_arch("gfx90a", true);
}

TEST_CASE("hip: the conformance suite's default-tile shapes lowered for gfx942 match the reference") {
  check_arch("gfx942", true);
}

TEST_CASE("hip: an fp8 gemm lowered for gfx942 runs on the 16x16x32 fp8 unit and matches the tile gemm") {
  Function f = test::fp8_gemm_kernel().function();
  Function lowered = PassManager(gpu_pipeline()).run(f, test::gfx942());
  INFO(print(lowered));
  CHECK(test::contains(print(lowered), "mfma_f32_16x16x32_fp8"));
  test::check_same_results(f, lowered);
}
