#include "hip_target_info.h"

#include "tilegen/ir/error.h"

namespace tg::hip {

namespace {

// 16x16 first: its 4 accumulator registers a tile leave more room than 32x32's 16 for small
// block tiles. bf16 are the _1k forms (gfx90a and later). f32 keeps f32 accumulators in
// registers too (otherwise they live in LDS, which 64 KiB cannot hold at 128x128 tiles).
const std::vector<std::string> kCdnaUnits = {"mfma_f32_16x16x16_f16", "mfma_f32_16x16x16_bf16",
                                             "mfma_f32_32x32x8_f16", "mfma_f32_32x32x8_bf16",
                                             "mfma_f32_16x16x4_f32"};
const std::vector<std::string> kGfx942Units = {"mfma_f32_16x16x32_fp8"};

}  // namespace

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
  info.matrix_units = kCdnaUnits;
  if (gfx == "gfx942") info.matrix_units.insert(info.matrix_units.end(), kGfx942Units.begin(), kGfx942Units.end());
  return info;
}

const std::vector<std::string>& mfma_units() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = kCdnaUnits;
    v.insert(v.end(), kGfx942Units.begin(), kGfx942Units.end());
    return v;
  }();
  return all;
}

}  // namespace tg::hip
