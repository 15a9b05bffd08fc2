// version_edge_copies (see version_edge_copies.h).
#include "version_edge_copies.h"

#include <unordered_set>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::cpu {

using namespace ir;

namespace {

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (auto* b = e.as<Binary>(); b && b->op == BinOp::And) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
    return;
  }
  out.push_back(e);
}

/// The guard terms of a loop-free body (conditions of Ifs and Selects, split at &&), the variables
/// it binds, and whether it holds a loop.
struct BodyFacts : IRVisitor {
  std::vector<Expr> terms;
  std::unordered_set<const VarNode*> bound;
  bool loop = false;
  void visit(const If* op) override {
    conjuncts(op->cond, terms);
    IRVisitor::visit(op);
  }
  void visit(const Select* op) override {
    conjuncts(op->cond, terms);
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    bound.insert(op->var.node());
    IRVisitor::visit(op);
  }
  void visit(const For*) override { loop = true; }
  void visit(const Gemm*) override { loop = true; }
};

struct FreeVars : IRVisitor {
  std::unordered_set<const VarNode*> vars;
  void visit(const VarNode* op) override { vars.insert(op); }
};

/// The condition under which `term` holds for every value of v in [lo, lo + extent), or null
/// when the term is not a comparison linear in v alone that is monotone over the range.
Expr whole_range_condition(const Expr& term, const Var& v, const Expr& lo, int64_t extent,
                           const std::unordered_set<const VarNode*>& bound, const Var& outer) {
  auto* b = term.as<Binary>();
  if (!b || !b->a.dtype().is_int() || !b->b.dtype().is_int()) return Expr();
  if (b->op != BinOp::Lt && b->op != BinOp::Le && b->op != BinOp::Gt && b->op != BinOp::Ge) return Expr();
  FreeVars free;
  free.visit_expr(term);
  if (!free.vars.count(v.node()) || free.vars.count(outer.node())) return Expr();
  for (const VarNode* x : free.vars)
    if (bound.count(x)) return Expr();
  // a - b = k·v + rest, where rest does not mention v.
  const LinearForm d = linear_difference(b->a, b->b);
  int64_t k = 0;
  for (const auto& [t, c] : d.terms) {
    if (t.as<VarNode>() == v.node()) {
      k += c;
      continue;
    }
    FreeVars in;
    in.visit_expr(t);
    if (in.vars.count(v.node())) return Expr();  // v under a division, a product, ...
  }
  if (k == 0) return Expr();
  // a - b grows with v when k > 0: `<`/`<=` are tightest at the last v, `>`/`>=` at the first.
  const bool upper = b->op == BinOp::Lt || b->op == BinOp::Le;
  const bool at_last = upper == (k > 0);
  Expr at = at_last ? simplify_expr(make_binary(BinOp::Add, lo, make_int(extent - 1, v.dtype()))) : lo;
  return substitute(term, {{v, at}});
}

/// `term` replaced by true wherever it occurs (the same node).
struct Drop : IRMutator {
  std::vector<Expr> terms;
  Expr visit(const Binary* op, const Expr& self) override {
    for (const Expr& t : terms)
      if (t.same_as(self)) return make_bool(true);
    return IRMutator::visit(op, self);
  }
};

class Version : public IRMutator {
 public:
  Stmt visit(const For* op, const Stmt& self) override {
    auto* inner = op->body.as<For>();
    auto ext = inner ? inner->extent.as_int() : std::nullopt;
    if (op->for_kind != ForKind::Parallel || !inner || inner->for_kind != ForKind::Parallel || !ext ||
        *ext < 1)
      return IRMutator::visit(op, self);
    BodyFacts facts;
    facts.visit_stmt(inner->body);
    if (facts.loop) return self;
    Drop drop;
    Expr cond;
    for (const Expr& t : facts.terms) {
      bool seen = false;
      for (const Expr& d : drop.terms) seen = seen || d.same_as(t);
      if (seen) continue;
      Expr whole = whole_range_condition(t, inner->var, inner->min, *ext, facts.bound, op->var);
      if (!whole.defined()) continue;
      drop.terms.push_back(t);
      cond = cond.defined() ? make_binary(BinOp::And, cond, whole) : whole;
    }
    if (!cond.defined()) return self;
    cond = simplify_expr(cond);
    if (auto c = cond.as_int(); c && *c == 0) return self;  // never in bounds: nothing to gain
    Stmt fast = simplify_stmt(drop.mutate(self));
    if (auto c = cond.as_int(); c && *c != 0) return fast;
    auto n = std::make_shared<If>(op->loc);
    n->cond = cond;
    n->then_body = fast;
    n->else_body = self;
    return Stmt(std::move(n));
  }
};

}  // namespace

Function version_edge_copies(const Function& f) { return Version().mutate_function(f); }

}  // namespace tg::cpu
