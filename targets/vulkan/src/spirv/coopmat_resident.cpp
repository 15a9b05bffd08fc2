// Accumulators that stay cooperative matrices across a region (the K loop of a gemm): a Local
// buffer C_local whose every access inside a statement S is the C operand of an Mma on one
// coopmat unit is held, while S runs, as an array of OpTypeCooperativeMatrixKHR Function
// variables, one per unit tile (C_local[u·regs .. u·regs+regs) ↔ tile u):
//
//   for mi, ni, r: C_local[mi*32 + ni*8 + r] = 0.0        ; per lane, as before
//   for ko in serial(0 +: 8) { ...                         ; S: only Mma C operands of C_local
//     mma "coopmat_16x16x16_f16_f32" a=..., b=..., c=C_local[mi*32 + ni*8] }
//   C[...] = cast<f16>(C_local[...])                       ; per lane, as before
// becomes
//   (per lane) C_local = 0
//   for u < 16: stage C_local[u*8 .. u*8+8) in the model layout; acc[u] = OpCooperativeMatrixLoadKHR
//   loop ko { ... acc[(mi*32 + ni*8) / 8] = OpCooperativeMatrixMulAddKHR a b acc[...] }
//   for u < 16: OpCooperativeMatrixStoreKHR acc[u] to the staging tile; lanes read C_local[u*8 + r]
// So the staging of C happens once a region instead of once an Mma, and the model layout holds
// wherever lanes touch elements. Buffers or statements that do not fit keep the per-Mma form.
// Where every C offset is constant once the loop nest around its Mma is unrolled (constant
// bounds, ≤ kMaxUnrolled iterations), acc is not an array but one variable per tile
// (acc_0 .. acc_15) and the nest is unrolled, so no matrix is ever indexed dynamically (which
// would put the accumulators in local memory on NVIDIA).
#include <algorithm>
#include <set>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

// Per buffer: Mma C operand uses, and every other reference (loads, stores, atomics, A/B).
struct Uses : IRVisitor {
  std::map<const ir::BufferNode*, int> mma_c, other;
  std::map<const ir::BufferNode*, std::vector<const ir::Mma*>> mmas;
  void visit(const ir::Load* op) override {
    other[op->buffer.get()]++;
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    other[op->buffer.get()]++;
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    other[op->buffer.get()]++;
    IRVisitor::visit(op);
  }
  void visit(const ir::Mma* op) override {
    other[op->a.buffer.get()]++;
    other[op->b.buffer.get()]++;
    mma_c[op->c.buffer.get()]++;
    mmas[op->c.buffer.get()].push_back(op);
    visit_expr(op->a.offset);
    visit_expr(op->b.offset);
    visit_expr(op->c.offset);
  }
};

// Unrolling a nest of more iterations than this is not worth the code size.
constexpr int64_t kMaxUnrolled = 64;

// Whether every Mma on b has a C offset that depends only on the variables of the loops
// directly around it (each loop's body the next loop or the Mma), of constant bounds and at
// most kMaxUnrolled iterations in all: then unrolling that nest makes every index constant.
//   for mi in unrolled(0 +: 4) { for ni in unrolled(0 +: 4) { mma ... c=C_local[mi*32 + ni*8] } }
struct ConstantNests : IRVisitor {
  explicit ConstantNests(const ir::BufferNode* buffer) : b(buffer) {}
  const ir::BufferNode* b;
  bool ok = true;
  std::vector<const ir::For*> stack;
  void visit(const ir::For* op) override {
    stack.push_back(op);
    IRVisitor::visit(op);
    stack.pop_back();
  }
  void visit(const ir::Mma* op) override {
    if (op->c.buffer.get() != b) return;
    std::set<const ir::VarNode*> chain;
    int64_t trips = 1;
    const ir::StmtNode* child = op;
    for (auto it = stack.rbegin(); it != stack.rend() && (*it)->body.get() == child; ++it) {
      std::optional<int64_t> n = (*it)->extent.as_int();
      if (!(*it)->min.as_int() || !n || (*it)->for_kind == ForKind::Parallel) break;
      trips *= std::max<int64_t>(*n, 1);
      chain.insert((*it)->var.node());
      child = *it;
    }
    for (const ir::VarNode* v : vars_in(op->c.offset)) ok = ok && chain.count(v);
    ok = ok && trips <= kMaxUnrolled;
  }
};

// The outermost statements under s (through Seq, Let and For bodies) that use b only as Mma C
// operands: loops, or several Mmas.
void find_regions(const Stmt& s, const ir::BufferNode* b,
                  std::map<const ir::StmtNode*, std::vector<const ir::BufferNode*>>* regions) {
  if (!s) return;
  Uses u;
  u.visit_stmt(s);
  if (!u.mma_c[b]) return;
  if (!u.other[b]) {  // a lone Mma gains nothing from the round trip: keep the per-Mma form
    if (u.mma_c[b] > 1 || s.as<ir::For>()) (*regions)[s.get()].push_back(b);
    return;
  }
  if (const auto* seq = s.as<ir::Seq>())
    for (const Stmt& x : seq->stmts) find_regions(x, b, regions);
  else if (const auto* let = s.as<ir::Let>())
    find_regions(let->body, b, regions);
  else if (const auto* loop = s.as<ir::For>())
    find_regions(loop->body, b, regions);
}

}  // namespace

// A Local buffer qualifies when every Mma with it as C uses one device coopmat unit whose C type
// is the buffer's dtype (so the round trip through the matrix is exact), at offsets that are
// multiples of the unit's registers a lane, and the buffer is whole unit tiles.
void KernelLowering::plan_resident_accumulators() {
  if (M.features.subgroup_size != 32 || k_.threads % 32 != 0) return;
  Uses all;
  all.visit_stmt(k_.body);
  const auto& device_units = M.features.coopmat_units;
  for (const Buffer& buf : k_.buffers) {
    const ir::BufferNode* node = buf.get();
    auto found = all.mmas.find(node);
    if (node->scope != Scope::Local || found == all.mmas.end() || node->shape.size() != 1) continue;
    const std::vector<const ir::Mma*>& mmas = found->second;
    const MatrixUnit* u = find_matrix_unit(mmas.front()->unit);
    if (!u || u->family != "coopmat" || node->dtype != u->c_type ||
        std::find(device_units.begin(), device_units.end(), u->name) == device_units.end())
      continue;
    const int64_t regs = u->c_regs();
    bool ok = regs > 0 && buffers_.at(node).form == BufferStorage::Form::Value;
    for (const ir::Mma* op : mmas) ok = ok && op->unit == u->name && is_multiple_of(op->c.offset, regs);
    std::optional<int64_t> n = buf.const_numel();
    if (!ok || !n || *n % regs != 0) continue;
    std::map<const ir::StmtNode*, std::vector<const ir::BufferNode*>> regions;
    find_regions(k_.body, node, &regions);
    if (regions.empty()) continue;
    Resident r;
    r.unit = u;
    r.regs = uint32_t(regs);
    r.units = uint32_t(*n / regs);
    r.component = coopmat_component(u->c_type, k_.loc);
    r.type = m.type_cooperative_matrix(r.component, spv::ScopeSubgroup, uint32_t(u->m), uint32_t(u->n),
                                       spv::MatrixAccumulator);
    r.element_ptr = m.type_pointer(spv::SCFunction, r.type);
    ConstantNests nests(node);
    nests.visit_stmt(k_.body);
    if (nests.ok) {
      for (uint32_t t = 0; t < r.units; ++t) {
        r.tiles.push_back(m.function_variable(r.element_ptr));
        m.name(r.tiles.back(), node->name + "_coopmat_" + std::to_string(t));
      }
    } else {
      r.var = m.function_variable(m.type_pointer(spv::SCFunction, m.type_array(r.type, r.units)));
      m.name(r.var, node->name + "_coopmat");
    }
    resident_[node] = r;
    for (auto& [stmt_node, bufs] : regions)
      resident_regions_[stmt_node].insert(resident_regions_[stmt_node].end(), bufs.begin(), bufs.end());
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

Expr KernelLowering::unrolled(const Expr& e) const {
  std::vector<std::pair<Var, Expr>> map;
  for (const auto& [node, v] : const_vars_) map.push_back({v.first, Expr(int(v.second))});
  return simplify_expr(map.empty() ? e : substitute(e, map));
}

std::optional<int64_t> KernelLowering::constant_value(const Expr& e) const { return unrolled(e).as_int(); }

// A loop nest around one Mma whose accumulator has a variable per unit tile, emitted once per
// iteration with the loop variables constant, so that each Mma names its tile's variable:
//   for mi in unrolled(0 +: 4) { for ni in unrolled(0 +: 4) { mma ... c=C_local[mi*32 + ni*8] } }
// becomes 16 Mmas on C_local_coopmat_0 .. C_local_coopmat_15. A and B tiles loaded straight
// from Shared are loaded once in the nest and reused (nothing in the nest writes Shared).
bool KernelLowering::unroll_mma_nest(const ir::For& op) {
  int64_t trips = 1;
  const ir::For* f = &op;
  for (;;) {
    std::optional<int64_t> n = f->extent.as_int();
    if (!f->min.as_int() || !n || f->for_kind == ForKind::Parallel) return false;
    trips *= std::max<int64_t>(*n, 1);
    const auto* inner = f->body.as<ir::For>();
    if (!inner) break;
    f = inner;
  }
  const auto* mma_op = f->body.as<ir::Mma>();
  if (!mma_op || trips > kMaxUnrolled) return false;
  auto it = resident_.find(mma_op->c.buffer.get());
  if (it == resident_.end() || !it->second.active || it->second.tiles.empty()) return false;
  ++unroll_depth_;
  const int64_t lo = *op.min.as_int();
  for (int64_t i = lo; i < lo + *op.extent.as_int(); ++i) {
    const_vars_[op.var.node()] = {op.var, i};
    stmt(op.body);
  }
  const_vars_.erase(op.var.node());
  if (--unroll_depth_ == 0) coopmat_loads_.clear();
  return true;
}

// S with its accumulators held as matrices: loaded before, stored back after.
void KernelLowering::resident_region(const Stmt& s, const std::vector<const ir::BufferNode*>& bufs) {
  for (const ir::BufferNode* b : bufs) {
    sync_resident(b, resident_.at(b), true, s->loc);
    resident_.at(b).active = true;
  }
  stmt(s);
  for (const ir::BufferNode* b : bufs) {
    resident_.at(b).active = false;
    sync_resident(b, resident_.at(b), false, s->loc);
  }
}

}  // namespace tg::vulkan
