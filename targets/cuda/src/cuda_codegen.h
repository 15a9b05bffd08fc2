// CUDA C++ from lowered tile IR (the output of gpu_pipeline(): per-thread code only). The
// dialect-neutral emission is the core's tg::gpu::SourceEmitter (gpu_source.h); this target adds
// CUDA's hooks: __launch_bounds__, dynamic shared memory, mma.sync, ldmatrix and cp.async.
//
//   kernel grid(2, 2) threads(128) -> (bx, by; tx) { shared A_shared: f16[32, 16]; ... }
// becomes
//   extern "C" __global__ void __launch_bounds__(128) gemm(tg_u16* __restrict__ A, ...) {
//     extern __shared__ __align__(16) tg_u8 tg_smem[];
//     const int bx = blockIdx.x; ...
//   }
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/passes/target_info.h"

namespace tg::cuda {

using gpu::KernelPlan;
using gpu::plan_kernels;
using gpu::SharedPlan;

/// The whole translation unit: #include "tilegen_device.h" and one extern "C" __global__ per kernel.
/// cp.async and ldmatrix are in the IR (the passes async_copies and use_ldmatrix) or not.
std::string emit_cuda(const Function& f, const TargetInfo& info);

}  // namespace tg::cuda
