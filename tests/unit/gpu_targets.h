// The TargetInfo of the GPUs the pass tests lower for. The vendors' facts live in their plugins
// (targets/cuda/src/cuda_target_info.cpp, targets/hip/src/hip_target_info.cpp): where the build
// links those code generators, these are theirs. A build without them (the sanitizer build, with
// the plugins off) still tests the shared passes, on models of the same devices that
// test_gpu_targets.cpp proves equal to the plugins' wherever both exist.
#pragma once
#include <string>

#include "tilegen/passes/target_info.h"
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
#include "cuda_target_info.h"
#endif
#ifdef TILEGEN_HAVE_HIP_CODEGEN
#include "hip_target_info.h"
#endif

namespace tg::test {

/// The models: what a pass reads of an NVIDIA sm_80/sm_90 and an AMD gfx90a/gfx942.
inline TargetInfo model_nvidia(int sm, bool arch_specific = false) {
  TargetInfo t;
  t.target = "cuda";
  t.arch = "sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
  t.device_name = "NVIDIA GPU (" + t.arch + ")";
  t.warp_size = 32;
  t.shared_mem_bytes = (sm >= 90 ? 227 : 163) * 1024;
  t.async_copy = t.lane_shuffle = true;
  t.max_grid = {2147483647, 65535, 65535};
  t.matrix_units = {"mma_m16n8k16_f16_f32", "mma_m16n8k16_bf16_f32"};
  if (sm >= 89)
    t.matrix_units.insert(t.matrix_units.end(), {"mma_m16n8k32_e4m3_f32", "mma_m16n8k32_e5m2_f32"});
  t.register_file = 65536;
  t.reallocate_registers = arch_specific && sm >= 90;
  if (arch_specific)  // sm_90a: wgmma first
    t.matrix_units.insert(
        t.matrix_units.begin(),
        {"wgmma_m64n256k16_f16_f32", "wgmma_m64n128k16_f16_f32", "wgmma_m64n64k16_f16_f32",
         "wgmma_m64n256k16_bf16_f32", "wgmma_m64n128k16_bf16_f32", "wgmma_m64n64k16_bf16_f32",
         "wgmma_m64n256k32_e4m3_f32", "wgmma_m64n128k32_e4m3_f32", "wgmma_m64n64k32_e4m3_f32",
         "wgmma_m64n256k32_e5m2_f32", "wgmma_m64n128k32_e5m2_f32", "wgmma_m64n64k32_e5m2_f32"});
  return t;
}
inline TargetInfo model_cdna(const std::string& gfx) {
  TargetInfo t;
  t.target = "hip";
  t.arch = gfx;
  t.device_name = "AMD GPU (" + gfx + ")";
  t.warp_size = 64;
  t.shared_mem_bytes = 64 * 1024;
  t.lane_shuffle = true;
  t.max_grid = {2147483647, 65535, 65535};
  t.matrix_units = {"mfma_f32_16x16x16_f16", "mfma_f32_16x16x16_bf16", "mfma_f32_32x32x8_f16",
                    "mfma_f32_32x32x8_bf16", "mfma_f32_16x16x4_f32"};
  if (gfx == "gfx942") t.matrix_units.push_back("mfma_f32_16x16x32_fp8");
  return t;
}

/// sm 80 or 90; `arch_specific`: sm_90a.
inline TargetInfo nvidia(int sm, bool arch_specific = false) {
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
  return cuda::nvidia_target_info(sm, arch_specific);
#else
  return model_nvidia(sm, arch_specific);
#endif
}
/// "gfx90a" or "gfx942".
inline TargetInfo cdna(const std::string& gfx) {
#ifdef TILEGEN_HAVE_HIP_CODEGEN
  return hip::amd_target_info(gfx);
#else
  return model_cdna(gfx);
#endif
}
inline TargetInfo sm80() { return nvidia(80); }
inline TargetInfo sm90() { return nvidia(90); }
inline TargetInfo sm90a() { return nvidia(90, true); }
inline TargetInfo gfx90a() { return cdna("gfx90a"); }
inline TargetInfo gfx942() { return cdna("gfx942"); }

}  // namespace tg::test
