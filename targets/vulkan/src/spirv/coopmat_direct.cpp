// A and B operands loaded straight from their Shared tiles. infer_fragment_layouts fills each
// operand's registers by a loop nest just before the Mma nest, in the same Seq:
//   for mi, p, h: a_regs[mi*8 + p*2 + h] = A_shared[warp/2*64 + mi*16 + lane/2, kk*16 + lane%2*8 + p*2 + h]
//   for mi, ni:   mma ... a=a_regs[mi*8] ...
// With the store index a mixed radix over the nest (so every register is written once) and, for
// every lane L < 32 and register r < regs, the source element minus lane 0's register 0 equal
// to ((L·regs + r) / cols, (L·regs + r) % cols) (the model layout, proven by exact symbolic
// differences in which everything but the lane cancels), the Mma's operand is the unit tile at
// lane 0's element of a row-major Shared buffer: OpCooperativeMatrixLoadKHR RowMajor, stride =
// the buffer's row pitch (its row length, or more where declare_buffers padded the rows; a tile
// held as uvec4s is loaded through a uvec4 pointer, offset and stride in uvec4s). Anything else
// keeps the staging path.
#include <algorithm>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

// Per buffer, how many statements write it (stores, atomics, Mma accumulators, ...); barriers.
struct Writes : BufferAccessVisitor {
  std::map<const ir::BufferNode*, int> stores;
  int barriers = 0;
  using BufferAccessVisitor::visit;
  void access(const Buffer& b, BufferAccess how) override {
    if (is_write(how)) stores[b.get()]++;
  }
  void visit(const ir::Barrier*) override { ++barriers; }
};

bool is_var(const Expr& e, const ir::VarNode* v) { return e.as<ir::VarNode>() == v; }

// v = tx op 32
bool binds(const std::map<const ir::VarNode*, std::pair<Var, Expr>>& lets, const ir::VarNode* v,
           const ir::VarNode* tx, ir::BinOp op) {
  auto it = lets.find(v);
  if (it == lets.end()) return false;
  const auto* b = it->second.second.as<ir::Binary>();
  return b && b->op == op && is_var(b->a, tx) && b->b.as_int() == 32;
}

}  // namespace

// The register-filling nest `nest` of `regs`, for an Mma reading regs at `offset` (a multiple
// of unit_regs): the Shared tile and its lane-0 element, or nothing.
std::optional<KernelLowering::DirectTile> KernelLowering::prove_direct(const Stmt& nest,
                                                                       const ir::BufferNode* regs,
                                                                       const Expr& offset, int64_t unit_regs,
                                                                       int64_t cols, DType type) {
  std::vector<const ir::For*> loops;
  Stmt s = nest;
  while (const auto* f = s.as<ir::For>()) {
    if (f->for_kind == ForKind::Parallel || f->min.as_int() != 0 || !f->extent.as_int() ||
        *f->extent.as_int() <= 0)
      return std::nullopt;
    loops.push_back(f);
    s = f->body;
  }
  const auto* st = s.as<ir::Store>();
  if (loops.empty() || !st || st->buffer.get() != regs || st->indices.size() != 1) return std::nullopt;
  const auto* ld = st->value.as<ir::Load>();
  if (!ld || ld->buffer->scope != Scope::Shared || ld->buffer->shape.size() < 2 ||
      ld->buffer->dtype != type || regs->dtype != type || ld->indices.size() != ld->buffer->shape.size())
    return std::nullopt;
  // rows and columns are the last two dimensions; leading ones (a double-buffered tile's slot)
  // must be the same for every lane and register
  const std::size_t rank = ld->indices.size(), row_dim = rank - 2, col_dim = rank - 1;
  // store index = Σ coeff·var over the nest, a mixed radix covering regs exactly
  LinearForm idx = linear_form(simplify_expr(st->indices[0]));
  if (idx.constant != 0 || idx.terms.size() != loops.size()) return std::nullopt;
  struct Digit {
    Var var;
    int64_t coeff, extent;
  };
  std::vector<Digit> digits;
  for (auto& [term, coeff] : idx.terms) {
    const auto* v = term.as<ir::VarNode>();
    auto it = std::find_if(loops.begin(), loops.end(), [&](const ir::For* f) { return f->var.node() == v; });
    if (!v || it == loops.end() || coeff <= 0) return std::nullopt;
    digits.push_back({(*it)->var, coeff, *(*it)->extent.as_int()});
  }
  std::sort(digits.begin(), digits.end(), [](const Digit& a, const Digit& b) { return a.coeff < b.coeff; });
  int64_t radix = 1;
  bool boundary = unit_regs == 1;
  for (const Digit& d : digits) {
    if (d.coeff != radix) return std::nullopt;
    radix *= d.extent;
    boundary = boundary || radix == unit_regs;
  }
  std::optional<int64_t> n = ld->buffer->shape[row_dim].as_int(),
                         row_len = ld->buffer->shape[col_dim].as_int();
  auto numel = regs->shape.size() == 1 ? regs->shape[0].as_int() : std::nullopt;
  if (!boundary || !numel || radix != *numel || !n || !row_len) return std::nullopt;
  // the lane and the values uniform over the subgroup: warp = tx / 32, loop and block variables
  const ir::VarNode* tx = k_.thread_var.node();
  const ir::VarNode* lane = nullptr;
  std::set<const ir::VarNode*> vars;
  for (const Expr& e : ld->indices) vars.merge(vars_in(e));
  for (const ir::VarNode* v : vars) {
    bool nest_var =
        std::any_of(digits.begin(), digits.end(), [&](const Digit& d) { return d.var.node() == v; });
    if (nest_var || loop_vars_.count(v) || binds(lets_, v, tx, ir::BinOp::Div)) continue;
    if (binds(lets_, v, tx, ir::BinOp::Mod) && (!lane || lane == v)) {
      lane = v;
      continue;
    }
    if (std::any_of(k_.block_vars.begin(), k_.block_vars.end(), [&](const Var& b) { return b.node() == v; }))
      continue;
    return std::nullopt;
  }
  if (!lane) return std::nullopt;
  auto element = [&](const Expr& e, int64_t L, int64_t r, bool lane_const) {
    std::vector<std::pair<Var, Expr>> map;
    for (const Digit& d : digits)
      map.push_back({d.var, d.coeff >= unit_regs ? (offset / Expr(int(d.coeff))) % Expr(int(d.extent))
                                                 : Expr(int((r / d.coeff) % d.extent))});
    if (lane_const) map.push_back({lets_.at(lane).first, Expr(int(L))});
    return simplify_expr(substitute(e, map));
  };
  std::vector<Expr> first;  // lane 0's register 0
  for (const Expr& e : ld->indices) first.push_back(element(e, 0, 0, true));
  const Expr& row0 = first[row_dim];
  const Expr& col0 = first[col_dim];
  for (int64_t L = 0; L < 32; ++L)
    for (int64_t r = 0; r < unit_regs; ++r) {
      int64_t e = L * unit_regs + r;
      for (std::size_t d = 0; d < rank; ++d) {
        const int64_t k = d == row_dim ? -(e / cols) : d == col_dim ? -(e % cols) : 0;
        LinearForm diff = linear_difference(element(ld->indices[d], L, r, true), first[d], k);
        if (!diff.is_constant() || diff.constant != 0) return std::nullopt;
      }
    }
  // 16-byte alignment of the tile's start and rows (the Vulkan rule for coopmat loads), in the
  // tile's storage: its rows may be padded (declare_buffers)
  const int64_t per16 = 16 / std::max(1, type.bits() / 8);
  const std::vector<Expr>& strides = storage_of(ld->buffer.get(), ld->loc).strides;
  std::optional<int64_t> pitch = strides[row_dim].as_int();
  if (!pitch || *pitch < *row_len) return std::nullopt;
  Expr flat = row0 * Expr(int(*pitch)) + col0;
  for (std::size_t d = 0; d < row_dim; ++d) flat = flat + first[d] * strides[d];
  if (*pitch % per16 != 0 || !is_multiple_of(flat, per16)) return std::nullopt;
  return DirectTile{ld->buffer.get(), flat, uint32_t(*pitch)};
}

// Before lowering seq's child i: where it is a loop nest of Mmas whose A or B registers are
// filled by an earlier sibling nest (and nothing between writes them or their Shared tile),
// record the proven direct tiles.
void KernelLowering::plan_direct(const ir::Seq& seq, std::size_t i) {
  std::vector<const ir::For*> loops;
  Stmt s = seq.stmts[i];
  while (const auto* f = s.as<ir::For>()) loops.push_back(f), s = f->body;
  const auto* op = s.as<ir::Mma>();
  if (!op || M.features.subgroup_size != 32 || k_.threads % 32 != 0) return;
  const MatrixUnit* u = find_matrix_unit(op->unit);
  if (!u || u->family != "coopmat") return;
  Writes all;
  all.visit_stmt(k_.body);
  auto find = [&](const ir::MmaOperand& o, int64_t regs, int64_t cols, DType t) -> std::optional<DirectTile> {
    if (all.stores[o.buffer.get()] != 1 || !is_multiple_of(o.offset, regs)) return std::nullopt;
    for (std::size_t j = i; j-- > 0;) {
      Writes w;
      w.visit_stmt(seq.stmts[j]);
      if (!w.stores[o.buffer.get()]) continue;
      std::optional<DirectTile> d = prove_direct(seq.stmts[j], o.buffer.get(), o.offset, regs, cols, t);
      if (!d) return std::nullopt;
      for (std::size_t q = j + 1; q < i; ++q) {  // the tile is unchanged until the Mma
        Writes between;
        between.visit_stmt(seq.stmts[q]);
        if (between.stores[d->shared] || between.barriers) return std::nullopt;  // nor another thread
      }
      return d;
    }
    return std::nullopt;
  };
  // the Shared tile (of the unit's type, proven above) must be stored as the matrix's component
  // type: f16 as f16 and i8 as i8 (the Narrow form), f32 and i32 as themselves
  auto loadable = [&](std::optional<DirectTile> d, DType t) -> std::optional<DirectTile> {
    if (!d) return d;
    const BufferStorage& sh = storage_of(d->shared, op->loc);
    const auto want = t.bits() < 32 ? BufferStorage::Form::Narrow : BufferStorage::Form::Value;
    const bool vector = sh.form == BufferStorage::Form::Vector && t.bits() == 16;
    if (sh.storage_class != spv::SCWorkgroup || (sh.form != want && !vector) || t.bits() > 32)
      return std::nullopt;
    return d;
  };
  direct_[op] = {loadable(find(op->a, u->a_regs(), u->k, u->a_type), u->a_type),
                 loadable(find(op->b, u->b_regs(), u->n, u->b_type), u->b_type)};
}

namespace {

// Every reference to b other than its stores, and the Mmas reading it as A or B.
struct Readers : IRVisitor {
  explicit Readers(const ir::BufferNode* buffer) : b(buffer) {}
  const ir::BufferNode* b;
  int other = 0;
  std::vector<std::pair<const ir::Mma*, int>> mma_operands;  // (Mma, 0 for A / 1 for B)
  void visit(const ir::Load* op) override {
    other += op->buffer.get() == b;
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    other += op->buffer.get() == b;
    IRVisitor::visit(op);
  }
  void visit(const ir::Mma* op) override {
    if (op->a.buffer.get() == b) mma_operands.push_back({op, 0});
    if (op->b.buffer.get() == b) mma_operands.push_back({op, 1});
    other += op->c.buffer.get() == b;
    IRVisitor::visit(op);
  }
};

}  // namespace

// A register-filling nest (see prove_direct) whose registers no one reads any more: every
// Mma reading them loads its operand straight from the Shared tile. The nest is then not
// emitted at all:
//   for mi, p, h: a_regs[mi*8 + p*2 + h] = A_shared[...]   ; dropped
//   for mi, ni:   mma ... a=a_regs[mi*8] ...               ; A from &A_shared[...]
bool KernelLowering::dead_fill(const ir::Seq& seq, std::size_t i) {
  Stmt s = seq.stmts[i];
  while (const auto* f = s.as<ir::For>()) s = f->body;
  const auto* st = s.as<ir::Store>();
  if (!st || st->buffer->scope != Scope::Local) return false;
  Writes w;
  w.visit_stmt(seq.stmts[i]);
  if (w.barriers || w.stores.size() != 1) return false;
  Readers r(st->buffer.get());
  r.visit_stmt(k_.body);
  if (r.other || r.mma_operands.empty()) return false;
  for (auto [op, which] : r.mma_operands) {
    auto it = direct_.find(op);
    if (it == direct_.end() || !(which == 0 ? it->second.first : it->second.second)) return false;
  }
  return true;
}

}  // namespace tg::vulkan
