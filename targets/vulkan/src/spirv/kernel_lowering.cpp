// Module-wide declarations (tensors, push constants, built-ins) and the statements of a kernel
// (see kernel_lowering.h for what is emitted).
#include <algorithm>
#include <cstdlib>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/visitor.h"

namespace tg::vulkan {

namespace {

// Tensors that some statement writes (the others are NonWritable), and f32 buffers that need
// compare-and-swap loops (atomic max/min, or add without VK_EXT_shader_atomic_float).
struct WriteScan : IRVisitor {
  bool float_add = false;
  std::set<const ir::BufferNode*> written, cas;
  void visit(const ir::Store* op) override {
    written.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    written.insert(op->buffer.get());
    if (op->buffer->dtype == f32 &&
        !(op->op == AtomicOp::Add && float_add && op->buffer->scope == Scope::Global))
      cas.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
};

}  // namespace

std::vector<Expr> row_major_strides(const ir::BufferNode& b) {
  std::vector<Expr> st(b.shape.size(), Expr(1));
  for (std::size_t d = b.shape.size() - 1; d-- > 0;) st[d] = st[d + 1] * b.shape[d + 1];
  return st;
}

ModuleLowering::ModuleLowering(ModuleBuilder& mb, const Function& fn, const Features& feat,
                               const FastPaths& paths)
    : m(mb), f(fn), features(feat) {
  m.capability(spv::CapShader);
  m.capability(spv::CapVulkanMemoryModel);
  glsl = m.ext_inst_import("GLSL.std.450");
  t_void = m.type_void();
  t_bool = m.type_bool();
  t_i32 = m.type_int(32, true);
  t_u32 = m.type_int(32, false);
  t_f32 = m.type_float(32);
  WriteScan scan;
  scan.float_add = features.float_atomic_add;
  scan.visit_stmt(f.body);
  float_bits_buffers = scan.cas;
  // Checked accesses write the function's access record (access_check.h).
  if (const Param* record = find_access_record(f)) scan.written.insert(record->buffer.get());
  written_tensors = scan.written;
  vector_copies = paths.vector_copies;
  declare_tensors();
  for (const Param& p : f.params)  // in parameter order: the module's words never depend on addresses
    if (p.kind == Param::Kind::Tensor && !scan.written.count(p.buffer.get()))
      m.decorate(tensors.at(p.buffer.get()).variable, spv::DecNonWritable);
  declare_push_constants();
  uint32_t v3 = m.type_vector(t_u32, 3);
  workgroup_id_var = m.global_variable(m.type_pointer(spv::SCInput, v3), spv::SCInput);
  m.decorate(workgroup_id_var, spv::DecBuiltIn, {spv::BuiltInWorkgroupId});
  m.name(workgroup_id_var, "gl_WorkGroupID");
  local_index_var = m.global_variable(m.type_pointer(spv::SCInput, t_u32), spv::SCInput);
  m.decorate(local_index_var, spv::DecBuiltIn, {spv::BuiltInLocalInvocationIndex});
  m.name(local_index_var, "gl_LocalInvocationIndex");
  interface.push_back(workgroup_id_var);
  interface.push_back(local_index_var);
}

void ModuleLowering::need_int64(const SourceLoc& loc, const std::string& what) {
  if (!features.int64)
    throw Error("unsupported: " + what +
                    " needs 64-bit integers, which this Vulkan device lacks (shaderInt64); use i32",
                loc);
  m.capability(spv::CapInt64);
}

uint32_t ModuleLowering::value_type(DType t, const SourceLoc& loc) {
  if (t.is_bool()) return t_bool;
  if (t == f64) {
    if (!features.float64)
      throw Error("unsupported: f64 needs shaderFloat64, which this Vulkan device lacks; compute in f32",
                  loc);
    m.capability(spv::CapFloat64);
    return m.type_float(64);
  }
  if (t.is_float()) return t_f32;
  if (t == i64) {
    need_int64(loc, "i64");
    return m.type_int(64, true);
  }
  return t_i32;
}

uint32_t ModuleLowering::tensor_element_type(DType t, const SourceLoc& loc, BufferStorage::Form* form) {
  *form = BufferStorage::Form::Value;
  if (t.bits() >= 32 && !t.is_bool()) return t == u32 ? t_i32 : value_type(t, loc);
  *form = t.is_packed() ? BufferStorage::Form::Packed : BufferStorage::Form::Narrow;
  if (t.bits() == 16) {
    if (!features.float16_storage)
      throw Error(
          "unsupported: " + std::string(t.name()) +
              " tensors need 16-bit storage (storageBuffer16BitAccess), which this Vulkan device lacks",
          loc);
    m.capability(spv::CapStorageBuffer16BitAccess);
    return t == f16 ? m.type_float(16) : m.type_int(16, t == i16);
  }
  if (!features.int8_storage)
    throw Error("unsupported: " + std::string(t.name()) +
                    " tensors need 8-bit storage (storageBuffer8BitAccess), which this Vulkan device lacks",
                loc);
  m.capability(spv::CapStorageBuffer8BitAccess);
  return m.type_int(8, t == i8);
}

// Tensor i: struct { T data[]; } at set 0, binding i, in StorageBuffer.
void ModuleLowering::declare_tensors() {
  std::map<uint32_t, uint32_t> block_of_element;  // one Block struct per stored element type
  uint32_t binding = 0;
  for (const Param& p : f.params) {
    if (p.kind != Param::Kind::Tensor) continue;
    const ir::BufferNode& node = *p.buffer.get();
    BufferStorage b;
    b.dtype = node.dtype;
    b.tensor = true;
    b.storage_class = spv::SCStorageBuffer;
    b.element_type = tensor_element_type(node.dtype, node.loc, &b.form);
    if (float_bits_buffers.count(&node)) b.element_type = t_i32, b.form = BufferStorage::Form::FloatBits;
    auto it = block_of_element.find(b.element_type);
    if (it == block_of_element.end()) {
      uint32_t arr = m.type_runtime_array(b.element_type);
      uint32_t bytes = node.dtype.is_packed() ? 1u : uint32_t(node.dtype.bits() / 8);
      m.decorate(arr, spv::DecArrayStride, {bytes});
      uint32_t st = m.type_struct({arr});
      m.decorate(st, spv::DecBlock);
      m.member_decorate(st, 0, spv::DecOffset, {0});
      it = block_of_element.emplace(b.element_type, st).first;
    }
    b.variable = m.global_variable(m.type_pointer(spv::SCStorageBuffer, it->second), spv::SCStorageBuffer);
    b.element_ptr = m.type_pointer(spv::SCStorageBuffer, b.element_type);
    m.decorate(b.variable, spv::DecDescriptorSet, {0});
    m.decorate(b.variable, spv::DecBinding, {binding++});
    m.name(b.variable, node.name);
    b.strides = row_major_strides(node);
    std::optional<int64_t> n = p.buffer.const_numel();
    b.wide_index = !n || *n >= (int64_t(1) << 31);
    if (b.wide_index && n) need_int64(node.loc, "tensor " + node.name + " of 2^31 elements or more");
    b.wide_index = b.wide_index && features.int64;
    tensors[&node] = b;
    interface.push_back(b.variable);
  }
}

void ModuleLowering::declare_push_constants() {
  PushLayout layout = push_constant_layout(f);
  if (layout.fields.empty()) return;
  std::vector<uint32_t> members;
  for (const PushField& pf : layout.fields) members.push_back(value_type(pf.dtype, f.loc));
  uint32_t st = m.type_struct(members);
  m.decorate(st, spv::DecBlock);
  for (std::size_t i = 0; i < layout.fields.size(); ++i) {
    m.member_decorate(st, uint32_t(i), spv::DecOffset, {layout.fields[i].offset});
    push_members[f.params[layout.fields[i].param_index].var.node()] = {uint32_t(i), layout.fields[i].dtype};
  }
  push_var = m.global_variable(m.type_pointer(spv::SCPushConstant, st), spv::SCPushConstant);
  m.name(push_var, "scalars");
  interface.push_back(push_var);
}

void ModuleLowering::lower_kernel(const ir::Kernel& k, const std::string& entry_name) {
  if (k.threads <= 0 || uint32_t(k.threads) > features.max_threads)
    throw Error("unsupported: kernel of " + std::to_string(k.threads) +
                    " threads: this Vulkan device runs at most " + std::to_string(features.max_threads) +
                    " a workgroup; use fewer threads",
                k.loc);
  KernelLowering kl(*this, k);
  std::vector<uint32_t> iface = interface;
  uint32_t fn = kl.lower(m.type_function(t_void), &iface);
  m.entry_point(fn, entry_name, iface);
  m.execution_mode(fn, spv::kExecutionModeLocalSize, {uint32_t(k.threads), 1, 1});
  m.name(fn, entry_name);
}

}  // namespace tg::vulkan
