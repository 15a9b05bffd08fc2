// HIP C++ from lowered tile IR (the output of gpu_pipeline() for amd_target_info(): per-thread
// code, 64-lane waves). The dialect-neutral emission is the core's tg::gpu::SourceEmitter
// (gpu_source.h); this target adds HIP's hooks: static LDS, AMDGPU work-group/work-item
// builtins, the workgroup barrier, and MFMA builtins for ir::Mma.
//
//   kernel grid(2, 2) threads(256) -> (bx, by; tx) { shared A_shared: f16[64, 32]; ...
//     mma "mfma_f32_16x16x16_f16" a=A_local[0], b=B_local[0], c=C_local[0] }
// becomes
//   extern "C" __global__ void __launch_bounds__(256) gemm(tg_u16* __restrict__ A, ...) {
//     __shared__ __attribute__((aligned(16))) tg_u8 tg_smem[5120];
//     const int bx = tg_block_index_x(); ...
//     tg_mfma_f32_16x16x16_f16(&C_local[0], &A_local[0], &B_local[0]);   // v_mfma_f32_16x16x16_f16
//   }
#pragma once
#include <string>

#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg::hip {

/// The whole translation unit: #include "tilegen_device.h" and one extern "C" __global__ per kernel.
std::string emit_hip(const Function& f, const TargetInfo& info);

}  // namespace tg::hip
