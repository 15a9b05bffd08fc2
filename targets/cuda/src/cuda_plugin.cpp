// The `cuda` target: the shared GPU pipeline, CUDA C++ emission, NVRTC, and the driver API.
// Built from the interp target's model (api/src/interp_target.cpp), hook by hook.
#include "cuda_plugin.h"

#include <cstdlib>

#include "cuda_codegen.h"
#include "cuda_driver.h"
#include "cuda_target_info.h"
#include "nvrtc.h"
#include "tilegen/passes/async_copies.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/use_ldmatrix.h"
#include "tilegen/plugin.h"

namespace tg::cuda {

namespace {

// The passes async_copies and use_ldmatrix can be left out to isolate them: --param cp_async=0,
// ldmatrix=0 (or, as the defaults, TILEGEN_CUDA_CP_ASYNC=0, TILEGEN_CUDA_LDMATRIX=0, which the
// runtime reads into the params).
const ParamKey kCpAsync =
    ParamKey::on_off("cp_async", true, "TILEGEN_CUDA_CP_ASYNC", "cp.async copies (the pass async_copies)");
const ParamKey kLdmatrix =
    ParamKey::on_off("ldmatrix", true, "TILEGEN_CUDA_LDMATRIX", "ldmatrix loads (the pass use_ldmatrix)");
// On by default since the path passed the whole cuda conformance suite on an H200 (a9dba15,
// docs/PERF.md): an sm_90 device's kernels are compiled for sm_90a, with wgmma
// (cuda_target_info.h); --param wgmma=0 or TILEGEN_CUDA_WGMMA=0 keeps it on sm_90's mma.sync. An
// architecture named with --arch is compiled as named.
const ParamKey kWgmma = ParamKey::on_off("wgmma", true, "TILEGEN_CUDA_WGMMA",
                                         "wgmma on an sm_90 device, compiled for sm_90a");

// On by default since the whole cuda conformance suite passed with it on an H100 (2026-12-07,
// docs/PERF.md; memcheck, racecheck and synccheck clean on ragged gemms): the pass bulk_copies
// feeds pipelined tiles with bulk tensor copies on mbarriers (sm_90 and later); --param tma=0 or
// TILEGEN_CUDA_TMA=0 keeps cp.async.
const ParamKey kTma =
    ParamKey::on_off("tma", true, "TILEGEN_CUDA_TMA", "bulk tensor copies on mbarriers, sm_90 and later");

// Off by default: --param warp_roles=1 or TILEGEN_CUDA_WARP_ROLES=1 lets the pass warp_roles give
// the bulk copies a producer warp of their own (with tma on). On an H100 (2026-12-07, PERF.md) it
// was right where the gemms run on wgmma and wrong where one stays on mma.sync (gemm_softmax
// 96×128×512 with wgmma_rows=0; trans_B 4096³ with wgmma_trans_b=0), which the interpreter's run
// of the same lowered IR does not reproduce.
const ParamKey kWarpRoles = ParamKey::on_off("warp_roles", false, "TILEGEN_CUDA_WARP_ROLES",
                                             "a producer warp for the bulk copies (rings that wgmma reads)");

// On by default since gemm's and fp8_gemm's conformance passed with it on an H100 (2026-12-07,
// docs/PERF.md; trans_B 4096³ 437 TFLOP/s against 269 on mma.sync): a gemm with trans_b (B
// stored N×K) runs on wgmma, B K-major; --param wgmma_trans_b=0 or TILEGEN_CUDA_WGMMA_TRANS_B=0
// keeps such gemms on mma.sync.
const ParamKey kWgmmaTransB =
    ParamKey::on_off("wgmma_trans_b", true, "TILEGEN_CUDA_WGMMA_TRANS_B", "wgmma for B stored N×K, K-major");

// On by default since gemm_softmax's and flash_attention's conformance passed with it on an H100
// (2026-12-07, docs/PERF.md; attention 0.56× → 0.88× cuDNN): a gemm whose rows are then reduced
// (gemm_softmax, attention's scores) runs on wgmma, and a gemm whose A is such a fragment
// (attention's P) reads A from registers (wgmma's RS form); --param wgmma_rows=0 or
// TILEGEN_CUDA_WGMMA_ROWS=0 keeps them on mma.sync.
const ParamKey kWgmmaRows =
    ParamKey::on_off("wgmma_rows", true, "TILEGEN_CUDA_WGMMA_ROWS", "wgmma for gemms whose rows are reduced");

// Off by default: --param issue_ahead=1 or TILEGEN_CUDA_ISSUE_AHEAD=1 issues a loop's leading async
// gemm one iteration early (the pass issue_ahead: attention's next Q·Kᵀ beside this tile's
// softmax). Right on an H100 (flash_attention's conformance, 2026-12-07) but no faster there.
const ParamKey kIssueAhead = ParamKey::on_off("issue_ahead", false, "TILEGEN_CUDA_ISSUE_AHEAD",
                                              "the next iteration's leading async gemm issued early");

// The device's TargetInfo as sm_90a where the wgmma switch is on, the device is an sm_90 and no
// architecture was named; with bulk copies where the tma switch is on and the chip has them.
TargetInfo with_wgmma(const TargetInfo& info, const CompileOptions& opt) {
  TargetInfo x = info;
  if (param_on(opt, kWgmma) && opt.arch.empty() && info.arch == "sm_90") {
    x.arch = "sm_90a";
    const TargetInfo a = nvidia_target_info(90, true);
    x.matrix_units = a.matrix_units;
    x.reallocate_registers = a.reallocate_registers;
  }
  x.bulk_copy = param_on(opt, kTma) && x.arch.rfind("sm_", 0) == 0 && std::atoi(x.arch.c_str() + 3) >= 90;
  x.async_mma_trans_b = param_on(opt, kWgmmaTransB);
  x.async_mma_rows = param_on(opt, kWgmmaRows);
  x.async_mma_register_a = x.async_mma_rows;  // the fragments it lays out are P's sources
  return x;
}

class CudaPlugin final : public TargetPlugin {
 public:
  std::string name() const override { return "cuda"; }

  // libcuda and a device are needed to run; NVRTC is needed to compile. Either missing makes the
  // target unavailable, with the reason.
  ProbeResult probe() override {
    ProbeResult r = probe_driver();
    std::string why;
    if (r.available && !nvrtc_available(&why)) {
      r.available = false;
      r.reason = why;
    }
    return r;
  }

  // Switches that leave a pass out of the pipeline.
  std::vector<ParamKey> param_keys() const override {
    return {kCpAsync, kLdmatrix, kWgmma, kTma, kWarpRoles, kWgmmaTransB, kWgmmaRows, kIssueAhead};
  }

  // The shared GPU pipeline for an NVIDIA TargetInfo (32-lane warps, mma.sync units), then
  // cp.async and ldmatrix where they apply (docs/passes.md lists it).
  std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions& opt) override {
    std::vector<PassEntry> mine;
    if (param_on(opt, kCpAsync)) mine.push_back({"async_copies", async_copies});
    if (param_on(opt, kLdmatrix)) mine.push_back({"use_ldmatrix", use_ldmatrix});
    std::vector<PassEntry> passes = gpu::source_pipeline(opt, std::move(mine));
    if (!param_on(opt, kWarpRoles))
      std::erase_if(passes, [](const PassEntry& p) { return p.name == "warp_roles"; });
    if (!param_on(opt, kIssueAhead))
      std::erase_if(passes, [](const PassEntry& p) { return p.name == "issue_ahead"; });
    // every pass sees the device it compiles for
    if (param_on(opt, kWgmma) || param_on(opt, kTma) || param_on(opt, kWgmmaTransB) ||
        param_on(opt, kWgmmaRows))
      for (PassEntry& p : passes)
        p.run = [run = p.run, opt](const Function& f, const TargetInfo& info) {
          return run(f, with_wgmma(info, opt));
        };
    return passes;
  }

  // Lowered IR → CUDA C++ (source), PTX (assembly), cubin (binary); entry lists the kernels.
  //   kernel grid(2, 2) threads(128) ...  →  extern "C" __global__ void __launch_bounds__(128) gemm(...)
  Artifact codegen(const Function& lowered, const TargetInfo& info, const CompileOptions& opt) override {
    TargetInfo target = with_wgmma(gpu::codegen_target(*this, info, opt), opt);
    Artifact a;
    a.source = emit_cuda(lowered, target);
    NvrtcOutput out = nvrtc_compile(a.source, lowered.name, target.arch);
    a.assembly = std::move(out.ptx);
    a.binary = std::move(out.cubin);
    a.entry = gpu::entry_list(lowered, target);
    return a;
  }

  std::unique_ptr<DeviceContext> open(int index) override { return open_device(index); }

  // "sm_80", "sm_86", "sm_90", "sm_90a", ...: mma.sync paths need sm_80 or later.
  TargetInfo info_for_arch(const std::string& arch) override {
    int sm = 0;
    if (arch.rfind("sm_", 0) == 0) sm = std::atoi(arch.c_str() + 3);
    if (sm < 80)
      throw Error("cuda: architecture '" + arch +
                  "' is not supported; use sm_80 or later (sm_80, sm_86, sm_89, sm_90)");
    // sm_90a, the architecture-specific Hopper target, has wgmma (nvidia_target_info).
    TargetInfo info = nvidia_target_info(sm, sm >= 90 && arch.back() == 'a');
    info.arch = arch;
    return info;
  }
};

}  // namespace

TargetPlugin* make_plugin() { return new CudaPlugin; }

}  // namespace tg::cuda
