// Lowered tile IR (gpu_pipeline() output: Kernel, For, Let, If, Store, Atomic, Barrier, Mma over
// Global, Shared and Local buffers) → SPIR-V, one GLCompute entry point a kernel.
//
//   kernel grid(8) threads(128) -> (bx; tx) { C[bx*128 + tx] = A[bx*128 + tx] + 1.0 }
// becomes (disassembly, abridged)
//   OpEntryPoint GLCompute %add_k0 "add_k0" %A %C %gl_WorkGroupID %gl_LocalInvocationIndex
//   OpExecutionMode %add_k0 LocalSize 128 1 1
//   %bx = OpBitcast %int (OpCompositeExtract %uint (OpLoad %v3uint %gl_WorkGroupID) 0)
//   %tx = OpBitcast %int (OpLoad %uint %gl_LocalInvocationIndex)
//   %p  = OpAccessChain %_ptr_StorageBuffer_float %A %int_0 (bx*128 + tx)
//   %v  = OpFAdd %float (OpLoad %float %p NonPrivatePointer) %float_1
//   OpStore (OpAccessChain ... %C ...) %v NonPrivatePointer
//
// Values are computed in "value" types: f32 for every float format up to f32 (rounded to the
// format after each operation, as the interpreter does), f64, i32 for every integer up to 32
// bits (wrapped to the format's width after each operation), i64, bool. Tensors hold their
// formats (16-bit and 8-bit storage capabilities); Shared and Local buffers hold value types,
// which is why target_info() gives the passes half of the device's Workgroup memory.
// Cooperative-matrix Mma is in coopmat_lowering.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spirv/module_builder.h"
#include "spirv_codegen.h"

namespace tg::vulkan {

/// How a buffer's elements are held.
struct BufferStorage {
  enum class Form : uint8_t {
    Value,      // the value type itself (Shared, Local, and tensors of 32/64-bit formats)
    Narrow,     // a 16- or 8-bit format in a tensor (f16, bf16 bits, i16, i8, u8, fp8 bits, bool bytes)
    FloatBits,  // f32 held as its int32 bits, so compare-and-swap loops can update it
    Packed,     // two 4-bit elements a byte (int4, uint4, fp4)
    Vector,     // 16-bit elements 8 a uvec4: buffers only 16-byte copies store (vector_copy.cpp)
  };
  uint32_t variable = 0;
  uint32_t storage_class = 0;
  uint32_t element_type = 0;  // as stored
  uint32_t element_ptr = 0;   // pointer to one stored element in storage_class
  DType dtype;
  Form form = Form::Value;
  bool tensor = false;           // a Block struct around a runtime array: access chains start with 0
  std::vector<Expr> strides;     // element strides, row-major (Shared tiles: rows may be padded)
  uint32_t vector_variable = 0;  // tensors: the same binding seen as uvec4s, made on first use
  std::vector<uint32_t> registers;  // Vector-form Local registers: one uvec4 Function variable each
  bool wide_index = false;       // 64-bit element indices (2^31 elements or more)
};

/// Module-wide state: the tensors' descriptors, the push constants, the built-in inputs, and
/// the types every kernel shares. lower_kernel adds one entry point.
class ModuleLowering {
 public:
  ModuleLowering(ModuleBuilder& m, const Function& f, const Features& features, const FastPaths& paths = {});
  void lower_kernel(const ir::Kernel& k, const std::string& entry_name);
  bool uses_coopmat() const { return coopmat_used; }

  ModuleBuilder& m;
  const Function& f;
  const Features& features;
  uint32_t glsl = 0;
  uint32_t t_void = 0, t_bool = 0, t_i32 = 0, t_u32 = 0, t_f32 = 0;
  std::map<const ir::BufferNode*, BufferStorage> tensors;
  std::map<const ir::VarNode*, std::pair<uint32_t, DType>> push_members;  // scalar → (member, stored dtype)
  uint32_t push_var = 0;
  uint32_t local_index_var = 0, workgroup_id_var = 0;
  std::vector<uint32_t> interface;                     // globals every entry point lists
  std::set<const ir::BufferNode*> float_bits_buffers;  // f32 buffers updated by CAS loops
  bool coopmat_used = false;
  std::set<const ir::BufferNode*> written_tensors;  // tensors some statement stores to
  /// The fast paths, switched off one by one to measure them (FastPaths, from CompileOptions params).
  bool vector_copies = true;

  /// The tensor's binding as a runtime array of uvec4 (an aliasing variable at the same set and
  /// binding), for 16-byte loads; its id, declared on first use.
  uint32_t vector_view(BufferStorage& tensor);

  /// The value type of t; throws tg::Error (at loc) where the device lacks it.
  uint32_t value_type(DType t, const SourceLoc& loc);
  /// The type t is stored as in a tensor (Narrow/Packed forms included).
  uint32_t tensor_element_type(DType t, const SourceLoc& loc, BufferStorage::Form* form);
  void need_int64(const SourceLoc& loc, const std::string& what);

 private:
  uint32_t vector_block_ = 0;
  void declare_tensors();
  void declare_push_constants();
};

/// Strides of a row-major buffer as expressions (constants where the shape is).
std::vector<Expr> row_major_strides(const ir::BufferNode& b);

/// The module's text: SPIRV-Tools' disassembly where built in and able to read it, otherwise
/// the project's one-instruction-a-line listing.
std::string disassemble(const std::vector<uint32_t>& words);

}  // namespace tg::vulkan
