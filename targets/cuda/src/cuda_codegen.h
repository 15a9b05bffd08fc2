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

/// One tensor map a kernel's bulk copies read through (cp.async.bulk.tensor): the global tensor
/// (its index in Function::params), the box (outermost side first) and the swizzle the copies'
/// shared tile has (0: none; 1, 2, 3: 32-, 64-, 128-byte). The kernel takes them after the
/// function's parameters, in this order, as `const __grid_constant__ tg_tensor_map`; the launch
/// encodes each from the argument's pointer and shape (cuTensorMapEncodeTiled).
struct TensorMapSpec {
  int param = -1;
  DType dtype;
  std::vector<int64_t> box;
  int swizzle = 0;
  bool operator==(const TensorMapSpec& o) const {
    return param == o.param && box == o.box && swizzle == o.swizzle;
  }
};

/// The tensor maps of a kernel's bulk copies, in first-use order; bulk_copy_map gives the one of
/// a copy (an index into that list).
std::vector<TensorMapSpec> tensor_maps(const Function& f, const ir::Kernel& k);
TensorMapSpec tensor_map_of(const Function& f, const ir::BulkCopy& op);

/// The whole translation unit: #include "tilegen_device.h" and one extern "C" __global__ per kernel.
/// cp.async and ldmatrix are in the IR (the passes async_copies and use_ldmatrix) or not.
std::string emit_cuda(const Function& f, const TargetInfo& info);

}  // namespace tg::cuda
