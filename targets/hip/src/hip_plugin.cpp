// The `hip` target: the shared GPU pipeline with 64-lane waves and MFMA, HIP C++ emission,
// hiprtc or clang's HIP device compilation, and the HIP runtime through dlopen.
// Built from the interp target's model (api/src/interp_target.cpp), hook by hook.
#include "hip_codegen.h"
#include "hip_compile.h"
#include "hip_runtime.h"
#include "hip_target_info.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/plugin.h"
#include "hip_plugin.h"

namespace tg::hip {

namespace {

// The runtime reads TILEGEN_HIP_COMPILER into this param as its default; the plugin never does.
const ParamKey kCompiler =
    ParamKey::one_of("compiler", {"auto", "hiprtc", "clang"}, "auto", "TILEGEN_HIP_COMPILER",
                     "auto: hiprtc where a ROCm runtime is installed, else clang");

HipCompiler compiler_of(const CompileOptions& opt) {
  const std::string c = param_text(opt, kCompiler);
  return c == "hiprtc" ? HipCompiler::Hiprtc : c == "clang" ? HipCompiler::Clang : HipCompiler::Auto;
}

class HipPlugin final : public TargetPlugin {
 public:
  std::string name() const override { return "hip"; }

  // Running needs libamdhip64 and an AMD GPU; compiling needs hiprtc or clang 19 (codegen works
  // without a device, so `tilegen source --target hip` runs anywhere clang-19 is installed).
  ProbeResult probe() override {
    ProbeResult r = probe_runtime();
    std::string why_rtc, why_clang;
    if (r.available && !hiprtc_available(&why_rtc) && find_hip_clang(&why_clang).empty()) {
      r.available = false;
      r.reason = "no HIP compiler: " + why_rtc + "; " + why_clang;
    }
    return r;
  }

  // The shared GPU pipeline (docs/passes.md lists it) for amd_target_info: wave64, MFMA units.
  std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions& opt) override {
    return gpu::source_pipeline(opt);
  }

  // Lowered IR → HIP C++ (source), code object (binary), its disassembly (assembly) and the
  // kernels' registers, LDS and scratch from its metadata (stats).
  //   kernel grid(..) threads(256) ... mma "mfma_f32_16x16x16_f16" ...
  //   → extern "C" __global__ void __launch_bounds__(256) gemm(...) { ... tg_mfma_f32_16x16x16_f16(...) }
  //   → v_mfma_f32_16x16x16_f16 a[0:3], v[4:5], v[6:7], a[0:3]
  Artifact codegen(const Function& lowered, const TargetInfo& info, const CompileOptions& opt) override {
    TargetInfo target = gpu::codegen_target(*this, info, opt);
    Artifact a;
    a.source = emit_hip(lowered, target);
    CodeObject co = compile_hip(a.source, lowered.name, target.arch, compiler_of(opt));
    a.binary = std::move(co.binary);
    a.assembly = disassemble(a.binary, target.arch);
    a.stats = format_stats(code_object_stats(a.binary));
    a.entry = gpu::entry_list(lowered, target);
    return a;
  }

  std::vector<ParamKey> param_keys() const override { return {kCompiler}; }

  std::unique_ptr<DeviceContext> open(int index) override { return open_device(index); }

  // "gfx90a" (MI200) or "gfx942" (MI300).
  TargetInfo info_for_arch(const std::string& arch) override { return amd_target_info(arch); }
};

}  // namespace

TargetPlugin* make_plugin() { return new HipPlugin; }

}  // namespace tg::hip
