// What the hip target knows of an AMD CDNA GPU without opening one: the single source of these
// facts (info_for_arch, the device probe, the code generator's unit check and the tests).
#pragma once
#include <string>

#include "tilegen/passes/target_info.h"

namespace tg::hip {

/// TargetInfo of an AMD CDNA GPU ("gfx90a", "gfx942"), without a device: 64-lane waves, 64 KiB
/// of LDS a workgroup, MFMA 16x16x16 and 32x32x8 for f16 and bf16, 16x16x4 for f32, and 16x16x32
/// fp8 on gfx942 only. Throws tg::Error for any other architecture, naming the supported ones.
TargetInfo amd_target_info(const std::string& gfx);

/// Every MFMA unit amd_target_info gives some architecture (what the code generator can emit).
const std::vector<std::string>& mfma_units();

}  // namespace tg::hip
