#include "tilegen/passes/gpu_pipeline.h"

#include "tilegen/ir/error.h"
#include "tilegen/passes/check_element_accesses.h"
#include "tilegen/passes/infer_fragment_layouts.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/pipeline_shared.h"
#include "tilegen/passes/rasterize_blocks.h"

namespace tg {

std::vector<PassEntry> gpu_pipeline(bool check_accesses, const std::map<std::string, int64_t>& sizes) {
  std::vector<PassEntry> passes = default_pipeline(sizes);
  passes.push_back({"rasterize_blocks",
                    [](const Function& f, const TargetInfo& info) { return rasterize_blocks(f, info); }});
  passes.push_back({"infer_fragment_layouts", infer_fragment_layouts});
  // After the layouts: the shared memory it fits its stages into is then what stays shared (a
  // fragment in registers no longer counts against it).
  passes.push_back({"pipeline_shared", pipeline_shared});
  passes.push_back({"partition_threads", partition_threads});
  if (check_accesses) passes.push_back({"check_element_accesses", check_element_accesses});
  return passes;
}

TargetInfo nvidia_target_info(int sm) {
  TargetInfo info;
  info.target = "cuda";
  info.arch = "sm_" + std::to_string(sm);
  info.device_name = "NVIDIA GPU (" + info.arch + ")";
  info.warp_size = 32;
  info.max_threads = 1024;
  // Opt-in dynamic shared memory per block: 163 KB on sm_80, 227 KB on sm_90.
  info.shared_mem_bytes = sm >= 90 ? 227 * 1024 : sm >= 80 ? 163 * 1024 : 48 * 1024;
  info.vector_bytes = 16;
  info.async_copy = sm >= 80;
  info.lane_shuffle = true;  // shfl.sync
  info.max_grid = {2147483647, 65535, 65535};  // gridDim limits of every architecture since sm_30
  info.matrix_units = {"mma_m16n8k16_f16_f32", "mma_m16n8k16_bf16_f32"};
  return info;
}

TargetInfo amd_target_info(const std::string& gfx) {
  if (gfx != "gfx90a" && gfx != "gfx942")
    throw Error("hip: architecture '" + gfx + "' is not supported; use gfx90a (MI200) or gfx942 (MI300)");
  TargetInfo info;
  info.target = "hip";
  info.arch = gfx;
  info.device_name = "AMD GPU (" + gfx + ")";
  info.warp_size = 64;  // CDNA runs wave64; MFMA operand layouts are defined over 64 lanes
  info.max_threads = 1024;
  info.shared_mem_bytes = 64 * 1024;  // LDS a workgroup
  info.vector_bytes = 16;
  info.async_copy = false;                     // no cp.async: global loads go through VGPRs
  info.lane_shuffle = true;                    // ds_bpermute
  info.max_grid = {2147483647, 65535, 65535};  // hipDeviceProp_t::maxGridSize on CDNA, rounded down
  // 16x16 first: its 4 accumulator registers a tile leave more room than 32x32's 16 for small
  // block tiles. bf16 are the _1k forms (gfx90a and later). f32 keeps f32 accumulators in
  // registers too (otherwise they live in LDS, which 64 KiB cannot hold at 128x128 tiles).
  info.matrix_units = {"mfma_f32_16x16x16_f16", "mfma_f32_16x16x16_bf16", "mfma_f32_32x32x8_f16",
                       "mfma_f32_32x32x8_bf16", "mfma_f32_16x16x4_f32"};
  if (gfx == "gfx942") info.matrix_units.push_back("mfma_f32_16x16x32_fp8");
  return info;
}

}  // namespace tg
