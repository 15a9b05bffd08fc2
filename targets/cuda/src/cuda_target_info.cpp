#include "cuda_target_info.h"

#include <string>

namespace tg::cuda {

TargetInfo nvidia_target_info(int sm, bool arch_specific) {
  TargetInfo info;
  info.target = "cuda";
  info.arch = "sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
  info.device_name = "NVIDIA GPU (" + info.arch + ")";
  info.warp_size = 32;
  info.max_threads = 1024;
  // Opt-in dynamic shared memory per block: 163 KB on sm_80, 227 KB on sm_90.
  info.shared_mem_bytes = sm >= 90 ? 227 * 1024 : sm >= 80 ? 163 * 1024 : 48 * 1024;
  info.vector_bytes = 16;
  info.async_copy = sm >= 80;
  info.lane_shuffle = true;                    // shfl.sync
  info.roles_async_reads_only = true;          // warp_roles.h: wgmma-read rings only
  info.max_grid = {2147483647, 65535, 65535};  // gridDim limits of every architecture since sm_30
  info.matrix_units = {"mma_m16n8k16_f16_f32", "mma_m16n8k16_bf16_f32"};
  if (sm >= 89)  // Ada and Hopper: mma.sync on fp8 (e4m3, e5m2)
    info.matrix_units.insert(info.matrix_units.end(), {"mma_m16n8k32_e4m3_f32", "mma_m16n8k32_e5m2_f32"});
  if (arch_specific && sm >= 90) {
    std::vector<std::string> units;
    for (const char* t : {"f16", "bf16", "e4m3", "e5m2"})
      for (int n : {256, 128, 64})
        units.push_back("wgmma_m64n" + std::to_string(n) + (t[0] == 'e' ? "k32_" : "k16_") + t + "_f32");
    info.matrix_units.insert(info.matrix_units.begin(), units.begin(), units.end());
    info.reallocate_registers = true;  // setmaxnreg
  }
  info.register_file = 65536;
  return info;
}

}  // namespace tg::cuda
