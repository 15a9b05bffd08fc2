// 16-byte copies between tensors, Shared tiles and Local registers (group copies, tile_storage.h).
//
// partition_threads groups a copy's innermost loop by the vector width (8 elements of f16):
//   for v in vectorized(0 +: 8) { let c1: i32 = flat % 4 * 8 + v  A_shared[c0, c1] = A[by*128 + c0, ko*32 +
//   c1] }
// Where both sides are contiguous in v and 16-byte aligned at v = 0 (proven on the indices: the
// last index is e + v with e a multiple of 8, the others free of v, the last dimension a
// multiple of 8), that is one uvec4 load from the tensor (its binding seen as a runtime array of
// uvec4, an aliasing variable) and one uvec4 store into the tile:
//   %v = OpLoad %v4uint (OpAccessChain %A_vec4 %int_0 (flat(A, element 0) >> 3))
//   OpStore (OpAccessChain %A_shared (flat(A_shared, element 0) >> 3)) %v
// A tile every store of which is such a copy is held as uvec4s (BufferStorage::Form::Vector):
// single elements are read by extracting their half of a word, cooperative matrices are loaded
// through a uvec4 pointer, rows row_pitch() apart (pad_shared_rows pads them in the IR). Local
// registers only group copies touch (what prefetch_tiles writes) are uvec4s as well: one
// Function variable each where every copy names them by a constant index, so they stay in
// registers.
#include <algorithm>

#include "spirv/kernel_lowering_internal.h"
#include "tile_storage.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

uint32_t ModuleLowering::vector_view(BufferStorage& t) {
  if (t.vector_variable) return t.vector_variable;
  if (!vector_block_) {  // struct { uvec4 data[]; }, one for every view
    uint32_t arr = m.type_runtime_array(m.type_vector(t_u32, 4));
    m.decorate(arr, spv::DecArrayStride, {16});
    vector_block_ = m.type_struct({arr});
    m.decorate(vector_block_, spv::DecBlock);
    m.member_decorate(vector_block_, 0, spv::DecOffset, {0});
  }
  t.vector_variable =
      m.global_variable(m.type_pointer(spv::SCStorageBuffer, vector_block_), spv::SCStorageBuffer);
  for (auto& [node, b] : tensors)
    if (&b == &t) {
      uint32_t binding = 0;
      for (const Param& p : f.params) {
        if (p.kind != Param::Kind::Tensor) continue;
        if (p.buffer.get() == node) break;
        ++binding;
      }
      m.decorate(t.vector_variable, spv::DecDescriptorSet, {0});
      m.decorate(t.vector_variable, spv::DecBinding, {binding});
      if (!written_tensors.count(node)) m.decorate(t.vector_variable, spv::DecNonWritable);
      m.name(t.vector_variable, node->name + "_vec4");
    }
  return t.vector_variable;  // each entry point using it lists it (KernelLowering::vector_views_)
}

std::set<const ir::BufferNode*> KernelLowering::plan_vector_tiles() const {
  if (!M.vector_copies) return {};
  std::set<const ir::BufferNode*> out = vector_tiles(k_.body), regs = vector_registers(k_.body);
  out.insert(regs.begin(), regs.end());
  return out;
}

// Local registers whose every group copy names them by a constant index.
bool KernelLowering::constant_registers(const ir::BufferNode* b) const {
  struct Scan : IRVisitor {
    const ir::BufferNode* b;
    bool constant = true;
    void visit(const ir::For* op) override {
      if (auto g = match_group_copy(*op)) {
        for (auto [buf, index] : {std::pair{g->src, &g->src_index}, std::pair{g->dst, &g->dst_index}})
          if (buf == b) constant = constant && simplify_expr(index->at(0)).as_int().has_value();
        return;
      }
      IRVisitor::visit(op);
    }
  } scan;
  scan.b = b;
  scan.visit_stmt(k_.body);
  return scan.constant;
}

uint32_t KernelLowering::vector_pointer(const BufferStorage& b, uint32_t flat) {
  if (!b.registers.empty())
    throw Error("internal: uvec4 registers indexed by a computed index; report this kernel", k_.loc);
  uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t index_type = b.wide_index ? m.type_int(64, true) : M.t_i32;
  uint32_t q = m.op(spv::OpShiftRightArithmetic, index_type, {flat, m.constant_int(index_type, 3)});
  if (b.tensor) {
    auto& t = M.tensors.at(
        std::find_if(M.tensors.begin(), M.tensors.end(), [&](auto& kv) { return &kv.second == &b; })->first);
    uint32_t var = M.vector_view(t);
    if (std::find(vector_views_.begin(), vector_views_.end(), var) == vector_views_.end())
      vector_views_.push_back(var);
    return m.op(spv::OpAccessChain, m.type_pointer(spv::SCStorageBuffer, v4), {var, c_i32(0), q});
  }
  return m.op(spv::OpAccessChain, b.element_ptr, {b.variable, q});
}

// The uvec4 of a group copy's side at element 0's indices: a register variable, or a pointer.
uint32_t KernelLowering::vector_pointer_at(const BufferStorage& b, const std::vector<Expr>& index) {
  if (b.registers.empty()) return vector_pointer(b, flat_index(b, index));
  std::optional<int64_t> flat = simplify_expr(flat_expr(b, index)).as_int();
  if (!flat || *flat < 0 || *flat % 8 != 0 || std::size_t(*flat / 8) >= b.registers.size())
    throw Error("internal: a group copy names uvec4 registers by a computed index; report this kernel",
                k_.loc);
  return b.registers[std::size_t(*flat / 8)];
}

// Element `flat` of a tile held as uvec4s: its word, then its half.
uint32_t KernelLowering::vector_element(const BufferStorage& b, uint32_t flat) {
  uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t vec = m.op(spv::OpLoad, v4, {vector_pointer(b, flat), uint32_t(spv::MemNonPrivatePointer)});
  uint32_t word_index = m.op(spv::OpBitwiseAnd, M.t_i32,
                             {m.op(spv::OpShiftRightArithmetic, M.t_i32, {flat, c_i32(1)}), c_i32(3)});
  uint32_t word = m.op(spv::OpVectorExtractDynamic, M.t_u32, {vec, word_index});
  uint32_t shift =
      m.op(spv::OpShiftLeftLogical, M.t_i32, {m.op(spv::OpBitwiseAnd, M.t_i32, {flat, c_i32(1)}), c_i32(4)});
  if (b.dtype == i16)
    return m.op(spv::OpBitFieldSExtract, M.t_i32, {m.op(spv::OpBitcast, M.t_i32, {word}), shift, c_i32(16)});
  uint32_t bits = m.op(spv::OpBitFieldUExtract, M.t_u32, {word, shift, c_i32(16)});
  if (b.dtype == bf16)
    return m.op(spv::OpBitcast, M.t_f32, {m.op(spv::OpShiftLeftLogical, M.t_u32, {bits, m.u32(16)})});
  return m.op(spv::OpCompositeExtract, M.t_f32,
              {glsl(m.type_vector(M.t_f32, 2), spv::GlslUnpackHalf2x16, {bits}), 0});
}

// A group copy whose sides are a Narrow tensor or uvec4s: one uvec4 load and store.
bool KernelLowering::vector_copy(const ir::For& op) {
  if (!M.vector_copies) return false;
  std::optional<GroupCopy> g = match_group_copy(op);
  if (!g) return false;
  const BufferStorage& dst = storage_of(g->dst, op.loc);
  const BufferStorage& src = storage_of(g->src, op.loc);
  for (const BufferStorage* side : {&dst, &src})
    if (side->tensor ? side->form != BufferStorage::Form::Narrow : side->form != BufferStorage::Form::Vector)
      return false;
  const uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t from = vector_pointer_at(src, g->src_index), to = vector_pointer_at(dst, g->dst_index);
  // Function storage (registers) takes no memory operand; tensors and tiles are NonPrivatePointer
  const uint32_t load_mem = memory_operand(src), store_mem = memory_operand(dst);
  uint32_t v = load_mem ? m.op(spv::OpLoad, v4, {from, load_mem}) : m.op(spv::OpLoad, v4, {from});
  if (store_mem)
    m.inst(spv::OpStore, {to, v, store_mem});
  else
    m.inst(spv::OpStore, {to, v});
  return true;
}

}  // namespace tg::vulkan
