// CUDA C++ from lowered tile IR (the output of gpu_pipeline(): per-thread code only).
//
//   kernel grid(2, 2) threads(128) -> (bx, by; tx) { shared A_shared: f16[32, 16]; local C_local: f32[8]; ...
//   }
// becomes
//   extern "C" __global__ void __launch_bounds__(128) gemm(tg_u16* __restrict__ A, ...) {
//     extern __shared__ __align__(16) tg_u8 tg_smem[];
//     tg_u16* A_shared = reinterpret_cast<tg_u16*>(tg_smem + 0);
//     __align__(16) float C_local[8];
//     const int bx = blockIdx.x; ...
//   }
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg::cuda {

/// Where each shared buffer of a kernel lives in its dynamic shared memory.
struct SharedPlan {
  std::vector<std::pair<Buffer, int64_t>> offsets;  // buffer → byte offset
  int64_t bytes = 0;
};

/// One __global__ function a launch runs, in order.
struct KernelPlan {
  std::string name;
  const ir::Kernel* kernel = nullptr;
  SharedPlan shared;
};

/// The kernels of f with their names and shared-memory layouts. Throws tg::Error when a kernel
/// needs more shared memory than info.shared_mem_bytes, naming the buffers to shrink.
std::vector<KernelPlan> plan_kernels(const Function& f, const TargetInfo& info);

/// Instruction choices that can be switched off to isolate them (both are exact by construction).
struct EmitOptions {
  bool ldmatrix = true;  // mma operands by ldmatrix where proven equivalent (ldmatrix_match.h)
  bool cp_async = true;  // pipelined loops' leading copies by cp.async (pipeline_shared.h)
};

/// The whole translation unit: #include "tilegen_device.h" and one extern "C" __global__ per kernel.
std::string emit_cuda(const Function& f, const TargetInfo& info, const EmitOptions& opt = {});

}  // namespace tg::cuda
