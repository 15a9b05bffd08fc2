// What the cuda target knows of an NVIDIA GPU without opening one: the single source of these
// facts (info_for_arch, the device probe and the tests all start here).
#pragma once
#include "tilegen/passes/target_info.h"

namespace tg::cuda {

/// TargetInfo of an NVIDIA GPU of compute capability `sm` (80 for sm_80, 90 for sm_90), without
/// a device: 32-lane warps, mma.sync m16n8k16 for f16 and bf16, 16-byte vectors, cp.async, the
/// opt-in shared memory of the architecture. A probed device overrides what it reports itself.
/// `arch_specific` (sm_90a): also Hopper's wgmma (m64nNk16, N = 256, 128, 64, f16 and bf16),
/// listed first, so that the gemms it can take run on it and the others stay on mma.sync.
TargetInfo nvidia_target_info(int sm, bool arch_specific = false);

}  // namespace tg::cuda
