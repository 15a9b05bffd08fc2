// Accumulators held as cooperative matrices (ir::Hold, made by the pass hold_accumulators): a
// Local buffer C_local is, while the hold's body runs, an array of OpTypeCooperativeMatrixKHR
// Function variables, one per unit tile (C_local[u·regs .. u·regs+regs) ↔ tile u):
//
//   hold C_local as "coopmat_16x16x16_f16_f32" {
//     for ko in serial(0 +: 8) { ... mma "coopmat_16x16x16_f16_f32" a=..., b=..., c=C_local[0] ... }
//   }
// becomes
//   for u < 16: stage C_local[u*8 .. u*8+8) in the model layout; acc[u] = OpCooperativeMatrixLoadKHR
//   loop ko { ... acc[0] = OpCooperativeMatrixMulAddKHR a b acc[0] ... }
//   for u < 16: OpCooperativeMatrixStoreKHR acc[u] to the staging tile; lanes read C_local[u*8 + r]
// So the staging of C happens once a hold instead of once an Mma. Where every Mma's C offset in
// the buffer's holds is a constant (the pass unrolled the loops around them), acc is not an array
// but one variable per tile (acc_0 .. acc_15), so no matrix is ever indexed dynamically (which
// would put the accumulators in local memory on NVIDIA).
#include <algorithm>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

// Per held buffer: whether every Mma accumulating into it inside its holds has a constant offset.
struct HeldOffsets : IRVisitor {
  std::map<const ir::BufferNode*, bool> constant;
  std::map<const ir::BufferNode*, int> held;
  void visit(const ir::Hold* op) override {
    constant.emplace(op->buffer.get(), true);
    ++held[op->buffer.get()];
    IRVisitor::visit(op);
    --held[op->buffer.get()];
  }
  void visit(const ir::Mma* op) override {
    if (held[op->c.buffer.get()] && !constant_offset(op->c.offset)) constant[op->c.buffer.get()] = false;
  }
};

}  // namespace

std::optional<int64_t> constant_offset(const Expr& offset) { return simplify_expr(offset).as_int(); }

// Function variables for each held buffer: one per unit tile where every offset is constant,
// else an array of matrices.
void KernelLowering::plan_holds() {
  HeldOffsets scan;
  scan.visit_stmt(k_.body);
  for (const Buffer& buf : k_.buffers) {
    auto found = scan.constant.find(buf.get());
    if (found == scan.constant.end()) continue;
    const ir::BufferNode* node = buf.get();
    // the unit of the buffer's holds (the verifier requires one per buffer's Mmas inside each)
    struct FirstHold : IRVisitor {
      const ir::BufferNode* b;
      const ir::Hold* found = nullptr;
      void visit(const ir::Hold* op) override {
        if (op->buffer.get() == b && !found) found = op;
        IRVisitor::visit(op);
      }
    } first;
    first.b = node;
    first.visit_stmt(k_.body);
    const MatrixUnit* u = find_matrix_unit(first.found->unit);
    const auto& units = M.features.coopmat_units;
    if (!u || u->family != "coopmat" || M.features.subgroup_size != 32 || k_.threads % 32 != 0 ||
        std::find(units.begin(), units.end(), u->name) == units.end())
      throw Error(
          "hold " + node->name + " as " + first.found->unit +
              ": this Vulkan device has no such cooperative matrix at subgroup size 32 (or the kernel's "
              "threads are not whole subgroups); run hold_accumulators with the device's own features",
          first.found->loc);
    if (buffers_.at(node).form != BufferStorage::Form::Value)
      throw Error(
          "internal: the held accumulator " + node->name + " is not stored as values; report this kernel",
          first.found->loc);
    Resident r;
    r.unit = u;
    r.regs = uint32_t(u->c_regs());
    r.units = uint32_t(*buf.const_numel() / u->c_regs());
    r.component = coopmat_component(u->c_type, k_.loc);
    r.type = m.type_cooperative_matrix(r.component, spv::ScopeSubgroup, uint32_t(u->m), uint32_t(u->n),
                                       spv::MatrixAccumulator);
    r.element_ptr = m.type_pointer(spv::SCFunction, r.type);
    if (found->second) {
      for (uint32_t t = 0; t < r.units; ++t) {
        r.tiles.push_back(m.function_variable(r.element_ptr));
        m.name(r.tiles.back(), node->name + "_coopmat_" + std::to_string(t));
      }
    } else {
      r.var = m.function_variable(m.type_pointer(spv::SCFunction, m.type_array(r.type, r.units)));
      m.name(r.var, node->name + "_coopmat");
    }
    resident_[node] = r;
  }
}

// Lanes' elements ↔ the matrices, unit tile by unit tile, through the per-subgroup staging
// tile in the model layout (lane L's registers r are row-major element L·regs + r).
void KernelLowering::sync_resident(const ir::BufferNode* b, Resident& r, bool into_matrices,
                                   const SourceLoc& loc) {
  M.coopmat_used = true;
  m.extension("SPV_KHR_cooperative_matrix");
  m.capability(spv::CapCooperativeMatrixKHR);
  const uint32_t rows = uint32_t(r.unit->m), cols = uint32_t(r.unit->n);
  uint32_t ptr_type = 0;
  uint32_t stage = scratch_base("c", r.component, rows * cols, &ptr_type);
  uint32_t tx = values_.at(k_.thread_var.node());
  uint32_t warp = m.op(spv::OpShiftRightArithmetic, M.t_i32, {tx, c_i32(5)});
  uint32_t lane = m.op(spv::OpBitwiseAnd, M.t_i32, {tx, c_i32(31)});
  uint32_t base = m.op(spv::OpIMul, M.t_i32, {warp, c_i32(rows * cols)});
  uint32_t lane_base = m.op(spv::OpIAdd, M.t_i32, {base, m.op(spv::OpIMul, M.t_i32, {lane, c_i32(r.regs)})});
  const uint32_t nonprivate = spv::MemNonPrivatePointer;
  const BufferStorage& regs = buffers_.at(b);
  const bool narrow = r.component != M.t_f32 && r.component != M.t_i32;
  for (uint32_t t = 0; t < r.units; ++t) {
    uint32_t mat_ptr = resident_tile(r, t);
    uint32_t tile = m.op(spv::OpAccessChain, ptr_type, {stage, base});
    barrier(spv::ScopeSubgroup);  // earlier readers of the staging tile are done
    if (into_matrices) {
      for (uint32_t i = 0; i < r.regs; ++i) {
        uint32_t v = load_element(regs, {Expr(int(t * r.regs + i))}, loc);
        if (narrow) v = m.op(r.unit->c_type.is_float() ? spv::OpFConvert : spv::OpSConvert, r.component, {v});
        uint32_t slot = m.op(spv::OpIAdd, M.t_i32, {lane_base, c_i32(i)});
        m.inst(spv::OpStore, {m.op(spv::OpAccessChain, ptr_type, {stage, slot}), v, nonprivate});
      }
      barrier(spv::ScopeSubgroup);
      uint32_t mat = m.op(spv::OpCooperativeMatrixLoadKHR, r.type,
                          {tile, m.u32(spv::RowMajorKHR), m.u32(cols), nonprivate});
      m.inst(spv::OpStore, {mat_ptr, mat});
    } else {
      uint32_t mat = m.op(spv::OpLoad, r.type, {mat_ptr});
      m.inst(spv::OpCooperativeMatrixStoreKHR, {tile, mat, m.u32(spv::RowMajorKHR), m.u32(cols), nonprivate});
      barrier(spv::ScopeSubgroup);
      for (uint32_t i = 0; i < r.regs; ++i) {
        uint32_t slot = m.op(spv::OpIAdd, M.t_i32, {lane_base, c_i32(i)});
        uint32_t v =
            m.op(spv::OpLoad, r.component, {m.op(spv::OpAccessChain, ptr_type, {stage, slot}), nonprivate});
        if (narrow)
          v = m.op(r.unit->c_type.is_float() ? spv::OpFConvert : spv::OpSConvert, M.value_type(b->dtype, loc),
                   {v});
        store_element(regs, {Expr(int(t * r.regs + i))}, v, loc);
      }
    }
  }
}

uint32_t KernelLowering::resident_tile(const Resident& r, uint32_t t) {
  return r.tiles.empty() ? m.op(spv::OpAccessChain, r.element_ptr, {r.var, c_i32(t)}) : r.tiles.at(t);
}

// The hold's body with its accumulator held as matrices: loaded before, stored back after.
void KernelLowering::hold(const ir::Hold& op) {
  Resident& r = resident_.at(op.buffer.get());
  if (r.active) throw Error("hold of " + op.buffer->name + " inside a hold of " + op.buffer->name, op.loc);
  sync_resident(op.buffer.get(), r, true, op.loc);
  r.active = true;
  stmt(op.body);
  r.active = false;
  sync_resident(op.buffer.get(), r, false, op.loc);
}

}  // namespace tg::vulkan
