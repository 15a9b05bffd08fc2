// guard_masks (see the header).
#include "tilegen/passes/guard_masks.h"

#include <set>

#include "stmt_build.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

using namespace lower;

// The variables a statement binds (its loops and lets), with the ranges of constant loops.
struct Bound : IRVisitor {
  std::set<const ir::VarNode*> vars;
  VarRanges ranges;
  using IRVisitor::visit;
  void visit(const ir::For* op) override {
    vars.insert(op->var.node());
    auto lo = op->min.as_int(), n = op->extent.as_int();
    if (lo && n && *n > 0) ranges[op->var.node()] = {*lo, *lo + *n - 1};
    IRVisitor::visit(op);
  }
  void visit(const ir::Let* op) override {
    vars.insert(op->var.node());
    IRVisitor::visit(op);
  }
};

bool has_load(const Expr& e) {
  struct Scan : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const ir::Load*) override { found = true; }
  } scan;
  scan.visit_expr(e);
  return scan.found;
}

// The first j from which cond may hold for some value of the statement's variables (`bound`),
// as an expression of the variables outside it; nullopt where cond is not of the header's form.
std::optional<Expr> first_true(const Expr& cond, const Var& j, const Bound& bound, const Var& tx) {
  const auto* b = cond.as<ir::Binary>();
  if (!b) return std::nullopt;
  if (b->op == ir::BinOp::Or) {
    auto x = first_true(b->a, j, bound, tx), y = first_true(b->b, j, bound, tx);
    if (!x || !y) return std::nullopt;
    return min(*x, *y);
  }
  if (!b->a.dtype().is_int() || !b->b.dtype().is_int()) return std::nullopt;
  LinearForm d;  // cond ⟺ d ≥ 1
  switch (b->op) {
    case ir::BinOp::Lt: d = linear_difference(b->b, b->a); break;
    case ir::BinOp::Le: d = linear_difference(b->b, b->a, 1); break;
    case ir::BinOp::Gt: d = linear_difference(b->a, b->b); break;
    case ir::BinOp::Ge: d = linear_difference(b->a, b->b, 1); break;
    default: return std::nullopt;
  }
  int64_t alpha = 0, inner = 0;  // d = alpha·j + outer + (inner terms, at most `inner`)
  LinearForm neg;                // -(outer + inner), to be divided by alpha
  neg.type = d.type;
  for (const auto& [t, c] : d.terms) {
    if (t.same_as(j)) {
      alpha += c;
      continue;
    }
    const std::set<const ir::VarNode*> vs = vars_in(t);
    if (vs.count(j.node()) || (tx.defined() && vs.count(tx.node())) || has_load(t)) return std::nullopt;
    bool any_inner = false, any_outer = false;
    for (const ir::VarNode* v : vs) (bound.vars.count(v) ? any_inner : any_outer) = true;
    if (!any_inner) {
      neg.terms.emplace_back(t, -c);
      continue;
    }
    if (any_outer) return std::nullopt;
    const Interval r = bounds_of(t, bound.ranges);
    if ((c > 0 && !r.has_upper()) || (c < 0 && !r.has_lower())) return std::nullopt;
    inner += c * (c > 0 ? r.hi : r.lo);
  }
  if (alpha <= 0) return std::nullopt;
  // alpha·j + outer + inner ≥ 1 first holds at j = floor(-(outer + inner) / alpha) + 1.
  neg.constant = -(d.constant + inner);
  return to_expr(neg) / make_int(alpha, d.type) + make_int(1, d.type);
}

// The selects of s whose condition reads j.
std::vector<const ir::Select*> masks_of(const Stmt& s, const Var& j) {
  struct Scan : IRVisitor {
    const Var& j;
    std::vector<const ir::Select*> found;
    explicit Scan(const Var& v) : j(v) {}
    using IRVisitor::visit;
    void visit(const ir::Select* op) override {
      if (vars_in(op->cond).count(j.node())) found.push_back(op);
      IRVisitor::visit(op);
    }
  } scan(j);
  scan.visit_stmt(s);
  return scan.found;
}

// s with the given selects replaced by their unmasked value, and stores that write back what
// they read dropped; whether anything is left.
struct Unmask : IRMutator {
  const std::set<const ir::Select*>& masks;
  explicit Unmask(const std::set<const ir::Select*>& m) : masks(m) {}
  using IRMutator::visit;
  Expr visit(const ir::Select* op, const Expr& self) override {
    if (masks.count(op)) return mutate(op->f);
    return IRMutator::visit(op, self);
  }
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    const auto* st = s.as<ir::Store>();
    const auto* ld = st->value.as<ir::Load>();
    if (!ld || ld->buffer.get() != st->buffer.get() || ld->indices.size() != st->indices.size() ||
        st->async || st->shuffle_xor != 0)
      return s;
    for (std::size_t i = 0; i < st->indices.size(); ++i)
      if (!equal(ld->indices[i], st->indices[i])) return s;
    return make_seq({}, op->loc);
  }
};

bool has_effect(const Stmt& s) {
  struct Scan : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const ir::Store*) override { found = true; }
    void visit(const ir::Atomic*) override { found = true; }
    void visit(const ir::Copy*) override { found = true; }
    void visit(const ir::Fill*) override { found = true; }
    void visit(const ir::Gemm*) override { found = true; }
    void visit(const ir::Reduce*) override { found = true; }
    void visit(const ir::If*) override { found = true; }
    void visit(const ir::Barrier*) override { found = true; }
  } scan;
  scan.visit_stmt(s);
  return scan.found;
}

class GuardMasks : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    tx_ = op->thread_var;
    return IRMutator::visit(op, self);
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt out = IRMutator::visit(op, self);  // inner loops first
    if (op->for_kind != ForKind::Serial && op->for_kind != ForKind::Pipelined) return out;
    const auto* loop = out.as<ir::For>();
    std::vector<Stmt> body = stmts_of(loop->body);
    bool changed = false;
    for (Stmt& s : body) {
      if (!s.as<ir::For>()) continue;  // a nest over the tile
      std::vector<const ir::Select*> masks = masks_of(s, loop->var);
      if (masks.empty()) continue;
      Bound bound;
      bound.visit_stmt(s);
      std::optional<Expr> from;
      for (const ir::Select* m : masks) {
        std::optional<Expr> f = first_true(m->cond, loop->var, bound, tx_);
        if (!f) {
          from.reset();
          break;
        }
        from = from ? min(*from, *f) : *f;
      }
      if (!from) continue;
      const std::set<const ir::Select*> set(masks.begin(), masks.end());
      Stmt plain = Unmask(set).mutate(s);
      auto n = std::make_shared<ir::If>(s->loc);
      n->cond = simplify_expr(loop->var >= *from);
      n->then_body = s;
      if (has_effect(plain)) n->else_body = plain;
      s = Stmt(std::move(n));
      changed = true;
    }
    if (!changed) return out;
    auto l = std::make_shared<ir::For>(*loop);
    l->body = make_seq(std::move(body), loop->body->loc);
    return Stmt(std::move(l));
  }

 private:
  Var tx_;
};

}  // namespace

Function guard_masks(const Function& f, const TargetInfo&) {
  GuardMasks pass;
  Function out = pass.mutate_function(f);
  if (out.body.same_as(f.body)) return f;  // nothing guarded: no simplification either
  out.body = simplify_stmt(out.body, RangeContext::for_function(out));
  return out;
}

}  // namespace tg
