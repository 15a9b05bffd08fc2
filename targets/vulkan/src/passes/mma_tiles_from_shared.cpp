// mma_tiles_from_shared (see the header).
#include "mma_tiles_from_shared.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
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

// Per buffer, how many statements read it.
struct Reads : BufferAccessVisitor {
  std::map<const ir::BufferNode*, int> reads, uses;
  using BufferAccessVisitor::visit;
  void access(const Buffer& b, BufferAccess how) override {
    if (how != BufferAccess::Write) reads[b.get()]++;
    uses[b.get()]++;
  }
};

bool is_var(const Expr& e, const ir::VarNode* v) { return e.as<ir::VarNode>() == v; }

using Lets = std::map<const ir::VarNode*, std::pair<Var, Expr>>;

// v = tx op 32
bool binds(const Lets& lets, const ir::VarNode* v, const ir::VarNode* tx, ir::BinOp op) {
  auto it = lets.find(v);
  if (it == lets.end()) return false;
  const auto* b = it->second.second.as<ir::Binary>();
  return b && b->op == op && is_var(b->a, tx) && b->b.as_int() == 32;
}

class MmaTiles : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    if (op->threads % 32 != 0) return self;
    k_ = op;
    Writes all;
    all.visit_stmt(op->body);
    writes_ = std::move(all.stores);
    Stmt body = mutate(op->body);
    k_ = nullptr;
    if (body.same_as(op->body)) return self;
    body = drop_dead_fills(body);
    auto n = std::make_shared<ir::Kernel>(*op);
    n->body = body;
    Reads r;
    r.visit_stmt(body);
    n->buffers.erase(std::remove_if(n->buffers.begin(), n->buffers.end(),
                                    [&](const Buffer& b) { return emptied_.count(b.get()) && !r.uses[b.get()]; }),
                     n->buffers.end());
    return Stmt(std::move(n));
  }

  Stmt visit(const ir::Let* op, const Stmt& self) override {
    auto saved = lets_.find(op->var.node()) != lets_.end() ? std::optional(lets_.at(op->var.node())) : std::nullopt;
    lets_[op->var.node()] = {op->var, op->value};
    Stmt out = IRMutator::visit(op, self);
    if (saved)
      lets_[op->var.node()] = *saved;
    else
      lets_.erase(op->var.node());
    return out;
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    loop_vars_.insert(op->var.node());
    Stmt out = IRMutator::visit(op, self);
    loop_vars_.erase(op->var.node());
    return out;
  }

  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    Stmt mutated = IRMutator::visit(op, self);
    if (!k_) return mutated;
    const auto* seq = mutated.as<ir::Seq>();
    std::vector<Stmt> stmts = seq->stmts;
    bool changed = !mutated.same_as(self);
    for (std::size_t i = 0; i < stmts.size(); ++i)
      if (Stmt s = rewrite_mma_nest(stmts, i); !s.same_as(stmts[i])) stmts[i] = s, changed = true;
    if (!changed) return self;
    auto n = std::make_shared<ir::Seq>(*seq);
    n->stmts = std::move(stmts);
    return Stmt(std::move(n));
  }

 private:
  // The register-filling nest `nest` of `regs`, for an Mma reading regs at `offset` (a multiple
  // of unit_regs): the indices of the Shared tile's first element, or nothing.
  std::optional<std::vector<Expr>> prove_tile(const Stmt& nest, const ir::BufferNode* regs, const Expr& offset,
                                              int64_t unit_regs, int64_t cols, DType type) const {
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
    if (loops.empty() || !st || st->buffer.get() != regs || st->indices.size() != 1 || st->shuffle())
      return std::nullopt;
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
    auto numel = regs->shape.size() == 1 ? regs->shape[0].as_int() : std::nullopt;
    if (!boundary || !numel || radix != *numel) return std::nullopt;
    // the lane and the values uniform over the subgroup: warp = tx / 32, loop and block variables
    const ir::VarNode* tx = k_->thread_var.node();
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
      if (std::any_of(k_->block_vars.begin(), k_->block_vars.end(), [&](const Var& b) { return b.node() == v; }))
        continue;
      return std::nullopt;
    }
    if (!lane) return std::nullopt;
    auto element = [&](const Expr& e, int64_t L, int64_t r) {
      std::vector<std::pair<Var, Expr>> map;
      for (const Digit& d : digits)
        map.push_back({d.var, d.coeff >= unit_regs ? (offset / Expr(int(d.coeff))) % Expr(int(d.extent))
                                                   : Expr(int((r / d.coeff) % d.extent))});
      map.push_back({lets_.at(lane).first, Expr(int(L))});
      return simplify_expr(substitute(e, map));
    };
    std::vector<Expr> first;  // lane 0's register 0
    for (const Expr& e : ld->indices) first.push_back(element(e, 0, 0));
    for (int64_t L = 0; L < 32; ++L)
      for (int64_t r = 0; r < unit_regs; ++r) {
        int64_t e = L * unit_regs + r;
        for (std::size_t d = 0; d < rank; ++d) {
          const int64_t k = d == row_dim ? -(e / cols) : d == col_dim ? -(e % cols) : 0;
          LinearForm diff = linear_difference(element(ld->indices[d], L, r), first[d], k);
          if (!diff.is_constant() || diff.constant != 0) return std::nullopt;
        }
      }
    return first;
  }

  // stmts[i] as a loop nest of Mmas whose A or B registers an earlier sibling nest fills (and
  // nothing between writes them, their Shared tile, or waits at a barrier): those operands
  // rewritten as tiles.
  Stmt rewrite_mma_nest(const std::vector<Stmt>& stmts, std::size_t i) {
    std::vector<const ir::For*> loops;
    Stmt s = stmts[i];
    while (const auto* f = s.as<ir::For>()) loops.push_back(f), s = f->body;
    const auto* op = s.as<ir::Mma>();
    if (!op || op->a.is_tile() || op->b.is_tile()) return stmts[i];
    const MatrixUnit* u = find_matrix_unit(op->unit);
    if (!u || u->family != "coopmat" || u->group_size != 32) return stmts[i];
    auto find = [&](const ir::MmaOperand& o, int64_t regs, int64_t cols, DType t) -> std::optional<ir::MmaOperand> {
      auto w = writes_.find(o.buffer.get());
      if (w == writes_.end() || w->second != 1 || !is_multiple_of(o.offset, regs)) return std::nullopt;
      for (std::size_t j = i; j-- > 0;) {
        Writes fill;
        fill.visit_stmt(stmts[j]);
        if (!fill.stores[o.buffer.get()]) continue;
        std::optional<std::vector<Expr>> first = prove_tile(stmts[j], o.buffer.get(), o.offset, regs, cols, t);
        if (!first) return std::nullopt;
        Stmt inner = stmts[j];
        while (const auto* f = inner.as<ir::For>()) inner = f->body;
        const Buffer& tile = inner.as<ir::Store>()->value.as<ir::Load>()->buffer;
        for (std::size_t q = j + 1; q < i; ++q) {  // the tile is unchanged until the Mma
          Writes between;
          between.visit_stmt(stmts[q]);
          if (between.stores[tile.get()] || between.barriers) return std::nullopt;  // nor another thread
        }
        return ir::MmaOperand{tile, Expr(), *first};
      }
      return std::nullopt;
    };
    std::optional<ir::MmaOperand> a = find(op->a, u->a_regs(), u->k, u->a_type);
    std::optional<ir::MmaOperand> b = find(op->b, u->b_regs(), u->n, u->b_type);
    if (!a && !b) return stmts[i];
    auto n = std::make_shared<ir::Mma>(*op);
    if (a) emptied_.insert(op->a.buffer.get()), n->a = *a;
    if (b) emptied_.insert(op->b.buffer.get()), n->b = *b;
    Stmt out(std::move(n));
    for (std::size_t d = loops.size(); d-- > 0;) {
      auto f = std::make_shared<ir::For>(*loops[d]);
      f->body = out;
      out = Stmt(std::move(f));
    }
    return out;
  }

  // A register-filling nest whose registers no one reads any more: every Mma reading them takes
  // its operand from the Shared tile now.
  //   for mi, p, h: a_regs[mi*8 + p*2 + h] = A_shared[...]   ; dropped
  Stmt drop_dead_fills(const Stmt& body) {
    Reads r;
    r.visit_stmt(body);
    struct Drop : IRMutator {
      const std::set<const ir::BufferNode*>* emptied;
      std::map<const ir::BufferNode*, int>* reads;
      using IRMutator::visit;
      Stmt visit(const ir::Seq* op, const Stmt& self) override {
        Stmt mutated = IRMutator::visit(op, self);
        std::vector<Stmt> kept;
        for (const Stmt& s : mutated.as<ir::Seq>()->stmts)
          if (!dead(s)) kept.push_back(s);
        if (kept.size() == mutated.as<ir::Seq>()->stmts.size()) return mutated;
        auto n = std::make_shared<ir::Seq>(*mutated.as<ir::Seq>());
        n->stmts = std::move(kept);
        return Stmt(std::move(n));
      }
      bool dead(const Stmt& nest) const {
        Stmt s = nest;
        while (const auto* f = s.as<ir::For>()) s = f->body;
        const auto* st = s.as<ir::Store>();
        if (!st || !emptied->count(st->buffer.get()) || (*reads)[st->buffer.get()]) return false;
        Writes w;
        w.visit_stmt(nest);
        return !w.barriers && w.stores.size() == 1;
      }
    } drop;
    drop.emptied = &emptied_;
    drop.reads = &r.reads;
    return drop.mutate(body);
  }

  const ir::Kernel* k_ = nullptr;
  std::map<const ir::BufferNode*, int> writes_;
  Lets lets_;
  std::set<const ir::VarNode*> loop_vars_;
  std::set<const ir::BufferNode*> emptied_;  // register buffers of operands now read as tiles
};

}  // namespace

Function mma_tiles_from_shared(const Function& f, const Features& device) {
  if (device.subgroup_size != 32 || device.coopmat_units.empty()) return f;
  return MmaTiles().mutate_function(f);
}

}  // namespace tg::vulkan
