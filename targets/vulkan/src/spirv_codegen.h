// The contract between the vulkan target's SPIR-V code generator (spirv/) and its runtime
// (runtime/): what a device can do, written as an architecture string so device-less codegen
// (`tilegen source --target vulkan --arch ...`) and the kernel cache see the same thing, and how
// a lowered Function's parameters reach the shader.
//
// Interface of every emitted module (fixed, so load() can rebuild it from the lowered Function
// alone on a kernel-cache hit):
//   - one OpEntryPoint GLCompute per ir::Kernel of the Function, in order, named as
//     ir::kernel_entry_names() says ("gemm_k0", "gemm_k1", ...), LocalSize (threads, 1, 1);
//     grid extents are constants after size binding and the runtime dispatches (grid[0],
//     grid[1], grid[2]) workgroups;
//   - tensor parameter i (i-th Tensor param in Function::params order) is a StorageBuffer at
//     descriptor set 0, binding i, holding a runtime array of its element type;
//   - scalar parameters live in one push-constant block, laid out by push_constant_layout().
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/ir/kernel_names.h"
#include "tilegen/passes/target_info.h"

namespace tg::vulkan {

/// What the code generator may use on a device. The runtime fills it from the device's
/// features; arch_string()/parse_arch() carry it inside TargetInfo::arch.
struct Features {
  uint32_t subgroup_size = 32;       // the device's subgroupSize (lavapipe: 4..16, NVIDIA: 32)
  bool float16_storage = true;       // storageBuffer16BitAccess (+ Workgroup 16-bit access)
  bool int8_storage = true;          // storageBuffer8BitAccess
  bool float16_arith = false;        // shaderFloat16 (otherwise f16 math is done in f32)
  bool int64 = true;                 // shaderInt64
  bool int16 = true;                 // shaderInt16: 16-bit integer types (bf16/i16 Shared tiles at width)
  bool int8 = true;                  // shaderInt8: 8-bit integer types (i8/u8 Shared tiles at width)
  bool float64 = false;              // shaderFloat64
  bool subgroup_arith = true;        // subgroup arithmetic/shuffle operations in compute
  bool float_atomic_add = false;     // VK_EXT_shader_atomic_float (f32 add on storage buffers)
  /// Cooperative-matrix units the device reports at subgroup scope, as matrix-unit registry
  /// names ("coopmat_16x16x16_f16_f32"); empty: the plain path only.
  std::vector<std::string> coopmat_units;
  uint32_t max_shared_bytes = 32768; // maxComputeSharedMemorySize
  uint32_t max_threads = 1024;       // maxComputeWorkGroupInvocations
  // maxComputeWorkGroupCount; the Vulkan minimum when no device is at hand. Not in the arch
  // string: it changes no code, only what check_grid_limits accepts.
  uint32_t max_grid[3] = {65535, 65535, 65535};
};

/// "vk1.3;sg=32;f16s;i8s;i64;i16;i8;sgops;smem=49152;thr=1024;cm=coopmat_16x16x16_f16_f32,..." —
/// deterministic (the kernel cache keys on it) and parseable.
std::string arch_string(const Features& f);
/// Whether Shared tiles of every 16- and 8-bit tile format (f16, bf16, i16, i8, u8) are held at
/// their width in Workgroup memory on such a device (else widened to 32 bits).
bool shared_at_width(const Features& f);
/// Inverse of arch_string; throws tg::Error naming the unknown field otherwise.
Features parse_arch(const std::string& arch);
/// The TargetInfo a Vulkan device with these features presents to the passes (warp_size =
/// subgroup size, matrix_units = coopmat_units, shared_mem_bytes, max_threads; target "vulkan").
TargetInfo target_info(const Features& f, const std::string& device_name, bool software);

/// One scalar parameter's place in the push-constant block.
struct PushField {
  std::size_t param_index = 0;  // index into Function::params
  uint32_t offset = 0;          // bytes from the block's start
  DType dtype;                  // as stored (bool as a 32-bit int, sub-32-bit ints widened to 32)
};
struct PushLayout {
  std::vector<PushField> fields;
  uint32_t bytes = 0;  // total size, a multiple of 4 (≤ 128, the minimum every device offers)
};
/// The push-constant layout of f's scalar parameters. Throws tg::Error past 128 bytes.
PushLayout push_constant_layout(const Function& f);

/// What codegen returns: the module and its SPIR-V disassembly where SPIRV-Tools is built in
/// (otherwise the project's own listing of the module).
struct SpirvOutput {
  std::vector<uint32_t> words;
  std::string text;
  bool uses_coopmat = false;
};

/// The code generator's fast paths, on unless switched off to measure them alone (the vulkan
/// target's CompileOptions param vector_copies; pad_rows, prefetch and double_buffer switch
/// passes, vulkan_pipeline.h).
struct FastPaths {
  bool vector_copies = true;  // 16-byte copies between tensors, shared tiles and registers
};

/// The lowered Function (gpu_pipeline() output for target_info(f)) → one SPIR-V module (1.6,
/// Vulkan memory model). Throws tg::Error naming the construct where something cannot be
/// expressed on a device with these features.
SpirvOutput emit_spirv(const Function& lowered, const Features& features, const FastPaths& paths = {});

}  // namespace tg::vulkan
