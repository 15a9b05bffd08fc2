// The simplify pass: one bottom-up IRMutator that carries a RangeContext (what holds at each
// node), rewrites expressions with the rules listed in simplify.h, and prunes statements whose
// effect is decided. Every rewrite keeps the value exactly, under floor Div/Mod semantics.
#include "tilegen/passes/simplify.h"

#include <numeric>

#include "tilegen/ir/int_semantics.h"
#include "tilegen/passes/range_tracking_mutator.h"

namespace tg {

using namespace ir;

namespace {

bool is_noop(const Stmt& s) {
  if (!s) return true;
  auto* q = s.as<Seq>();
  return q && q->stmts.empty();
}

Stmt noop(const SourceLoc& loc) { return Stmt(std::make_shared<Seq>(loc)); }

using ir::floor_div;
using ir::floor_mod;

bool is_plain_int(DType t) { return t.is_int(); }  // integers, not bool

void plus_term(LinearForm& f, const Expr& atom, int64_t coef) {
  for (auto& [t, c] : f.terms)
    if (equal(t, atom)) {
      c += coef;
      return;
    }
  f.terms.emplace_back(atom, coef);
}

// !(a < b) → a >= b for integer comparisons (with floats, NaN makes both false); !!x → x.
Expr negate(const Expr& c) {
  if (auto* u = c.as<Unary>(); u && u->op == UnOp::Not) return u->a;
  if (auto* b = c.as<Binary>(); b && is_comparison(b->op) && b->a.dtype().is_int() && b->b.dtype().is_int()) {
    BinOp flipped = b->op;
    switch (b->op) {
      case BinOp::Lt: flipped = BinOp::Ge; break;
      case BinOp::Le: flipped = BinOp::Gt; break;
      case BinOp::Gt: flipped = BinOp::Le; break;
      case BinOp::Ge: flipped = BinOp::Lt; break;
      case BinOp::Eq: flipped = BinOp::Ne; break;
      default: flipped = BinOp::Eq; break;
    }
    return make_binary(flipped, b->a, b->b);
  }
  return make_unary(UnOp::Not, c);
}

class VarUse : public IRVisitor {
 public:
  explicit VarUse(const VarNode* v) : var_(v) {}
  bool found = false;
  void visit(const VarNode* op) override { found = found || op == var_; }

 private:
  const VarNode* var_;
};

bool uses(const Stmt& s, const Var& v) {
  VarUse u(v.node());
  u.visit_stmt(s);
  return u.found;
}

// Scopes (what holds inside kernels, loops, lets, ifs and select arms) come from the base.
class Simplifier : public RangeTrackingMutator {
 public:
  explicit Simplifier(RangeContext ctx) : RangeTrackingMutator(ctx), base_(std::move(ctx)) {}
  using RangeTrackingMutator::visit;

  // Buffer shapes live at function level: simplify them without the facts of the first place
  // the buffer happens to be met (they must hold everywhere the buffer is used).
  Buffer mutate_buffer(const Buffer& b) override {
    std::swap(ctx_, base_);
    Buffer out = RangeTrackingMutator::mutate_buffer(b);
    std::swap(ctx_, base_);
    return out;
  }

  // ---- Expressions

  Expr visit(const VarNode* op, const Expr& self) override { return constant_if_known(self); }

  Expr visit(const Binary* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    return keep_if_equal(binary(op->op, a, b), self);
  }

  Expr visit(const Unary* op, const Expr& self) override {
    Expr a = mutate(op->a);
    Expr r = op->op == UnOp::Not ? negate(a) : make_unary(op->op, a);
    if (op->op == UnOp::Neg && is_plain_int(r.dtype())) r = to_expr(linear_form(r));
    return keep_if_equal(constant_if_known(r), self);
  }

  Expr visit(const Select* op, const Expr& self) override {
    Expr c = mutate(op->cond);
    if (auto d = ctx_.decide(c)) return mutate(*d ? op->t : op->f);
    Expr t = mutate_assuming(op->t, c, true), f = mutate_assuming(op->f, c, false);
    Expr r = equal(t, f) ? t : make_select(c, t, f);
    return keep_if_equal(constant_if_known(r), self);
  }

  Expr visit(const Cast* op, const Expr& self) override {
    Expr a = mutate(op->a);
    // cast(T, cast(U, x: T)) → x when U is an integer type at least as wide as T: the round trip
    // through U keeps every value of T.
    if (auto* inner = a.as<Cast>(); inner && inner->a.dtype() == op->dtype && is_plain_int(op->dtype) &&
                                    is_plain_int(inner->dtype) && inner->dtype.bits() >= op->dtype.bits())
      return inner->a;
    return keep_if_equal(constant_if_known(make_cast(op->dtype, a)), self);
  }

  // ---- Statements

  Stmt visit(const For* op, const Stmt& self) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    Interval e = ctx_.bounds(ext);
    if (e.hi <= 0) return noop(op->loc);
    // A Parallel loop stays: its body is element code run once per element by the block, and
    // without the loop it would become SIMT code run by every thread.
    if (e.is_point() && e.lo == 1 && op->for_kind != ForKind::Parallel)
      return mutate(substitute(op->body, {{op->var, mn}}));
    Stmt body = mutate_loop_body(op, mn, ext);
    if (is_noop(body)) return noop(op->loc);
    return rebuilt(op, self, mn, ext, body);
  }

  Stmt visit(const If* op, const Stmt& self) override {
    Expr c = mutate(op->cond);
    if (auto d = ctx_.decide(c)) {
      if (*d) return mutate(op->then_body);
      return op->else_body ? mutate(op->else_body) : noop(op->loc);
    }
    Stmt t = mutate_assuming(op->then_body, c, true), e = mutate_assuming(op->else_body, c, false);
    if (is_noop(e)) e = Stmt();
    if (is_noop(t)) {
      if (!e) return noop(op->loc);
      c = negate(c);
      t = e;
      e = Stmt();
    }
    return rebuilt(op, self, c, t, e);
  }

  Stmt visit(const Let* op, const Stmt& self) override {
    Expr v = mutate(op->value);
    bool trivial = v.as<IntImm>() || v.as<FloatImm>() || v.as<VarNode>();
    if (trivial && v.dtype() == op->var.dtype()) return mutate(substitute(op->body, {{op->var, v}}));
    Stmt body = mutate_let_body(op, v);
    if (is_noop(body)) return noop(op->loc);
    if (!uses(body, op->var)) return body;  // values are pure: an unused binding does nothing
    return rebuilt(op, self, v, body);
  }

  Stmt visit(const Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& s : op->stmts) {
      Stmt m = mutate(s);
      changed = changed || !m.same_as(s);
      if (is_noop(m)) {
        changed = true;
      } else if (auto* q = m.as<Seq>()) {
        out.insert(out.end(), q->stmts.begin(), q->stmts.end());
        changed = true;
      } else {
        out.push_back(m);
      }
    }
    if (!changed) return self;
    if (out.empty()) return noop(op->loc);
    if (out.size() == 1) return out[0];
    auto n = std::make_shared<Seq>(*op);
    n->stmts = std::move(out);
    return Stmt(std::move(n));
  }

 private:
  static Expr keep_if_equal(const Expr& r, const Expr& self) { return equal(r, self) ? self : r; }

  // An integer or bool expression whose value the context decides becomes that constant.
  Expr constant_if_known(const Expr& e) const {
    if (e.as<IntImm>()) return e;
    DType t = e.dtype();
    if (t.is_bool()) {
      if (auto d = ctx_.decide(e)) return make_bool(*d);
    } else if (t.is_int()) {
      if (Interval r = ctx_.bounds(e); r.is_point()) return make_int(r.lo, t);
    }
    return e;
  }

  Expr binary(BinOp op, const Expr& a, const Expr& b) {
    Expr e = make_binary(op, a, b);  // folds constants and the cheap identities
    auto* bin = e.as<Binary>();
    if (!bin) return e;
    op = bin->op;  // folding may have returned another node (true && x → x)
    if (is_comparison(op) || is_logical(op)) {
      if (auto d = ctx_.decide(e)) return make_bool(*d);
      if (is_logical(op)) return logical_identities(bin, e);
      return e;
    }
    DType t = bin->a.dtype();
    if (t.is_float()) return float_identities(bin, e);
    if (!is_plain_int(t)) return e;
    Expr r = e;
    switch (op) {
      case BinOp::Add:
      case BinOp::Sub:
      case BinOp::Mul: r = to_expr(linear_form(e)); break;
      case BinOp::Div: r = divide(bin->a, bin->b, e); break;
      case BinOp::Mod: r = modulo(bin->a, bin->b, e); break;
      case BinOp::Min:
      case BinOp::Max: r = min_max(op, bin->a, bin->b, e); break;
      default: break;
    }
    return constant_if_known(r);
  }

  // x && true → x, x || false → x, x && x → x (the undecided side stays).
  static Expr logical_identities(const Binary* bin, const Expr& e) {
    bool neutral = bin->op == BinOp::And;
    auto is_neutral = [&](const Expr& x) {
      auto* i = x.as<IntImm>();
      return i && (i->value != 0) == neutral;
    };
    if (is_neutral(bin->b) || equal(bin->a, bin->b)) return bin->a;
    if (is_neutral(bin->a)) return bin->b;
    return e;
  }

  // Only rewrites that are exact in IEEE arithmetic: x*1, x/1, x-0, min/max(x, x).
  static Expr float_identities(const Binary* bin, const Expr& e) {
    auto is = [](const Expr& x, double v) {
      auto* f = x.as<FloatImm>();
      return f && f->value == v;
    };
    switch (bin->op) {
      case BinOp::Mul:
        if (is(bin->b, 1.0)) return bin->a;
        if (is(bin->a, 1.0)) return bin->b;
        break;
      case BinOp::Div:
        if (is(bin->b, 1.0)) return bin->a;
        break;
      case BinOp::Sub:
        if (is(bin->b, 0.0)) return bin->a;  // -0 - 0 = -0: exact (unlike x + 0)
        break;
      case BinOp::Min:
      case BinOp::Max:
        if (equal(bin->a, bin->b)) return bin->a;
        break;
      default: break;
    }
    return e;
  }

  Expr min_max(BinOp op, const Expr& a, const Expr& b, const Expr& e) {
    if (equal(a, b)) return a;
    bool is_min = op == BinOp::Min;
    if (ctx_.prove(make_binary(BinOp::Le, a, b))) return is_min ? a : b;
    if (ctx_.prove(make_binary(BinOp::Le, b, a))) return is_min ? b : a;
    return e;
  }

  // (q·d + r) / d = q + r / d under floor division, for any integer q.
  Expr divide(const Expr& a, const Expr& b, const Expr& e) {
    auto d = b.as_int();
    if (!d || *d <= 0) return e;
    LinearForm n = linear_form(a);
    LinearForm q{n.type, {}, floor_div(n.constant, *d)}, r{n.type, {}, floor_mod(n.constant, *d)};
    for (auto& [t, c] : n.terms) {
      if (c % *d == 0)
        q.terms.emplace_back(t, c / *d);
      else
        r.terms.emplace_back(t, c);
    }
    Expr rest = to_expr(r);
    Interval rb = ctx_.bounds(rest);
    if (rb.has_lower() && rb.has_upper() && floor_div(rb.lo, *d) == floor_div(rb.hi, *d)) {
      q.constant += floor_div(rb.lo, *d);
      return to_expr(q);
    }
    if (q.terms.empty() && q.constant == 0) return divide_rest(r, *d, e);
    plus_term(q, divide_rest(r, *d, make_binary(BinOp::Div, rest, make_int(*d, n.type))), 1);
    return to_expr(q);
  }

  // r / d where no term of r is a multiple of d.
  Expr divide_rest(const LinearForm& r, int64_t d, const Expr& e) {
    // (g·x) / (g·d) = x / d for g > 0.
    int64_t g = std::gcd(r.constant, d);
    for (auto& [t, c] : r.terms) g = std::gcd(g, c);
    if (g > 1) {
      LinearForm s = r;
      s.constant /= g;
      for (auto& [t, c] : s.terms) c /= g;
      return make_binary(BinOp::Div, to_expr(s), make_int(d / g, r.type));
    }
    // (x / c) / d = x / (c·d) for c, d > 0.
    if (r.terms.size() == 1 && r.terms[0].second == 1 && r.constant == 0) {
      if (auto* inner = r.terms[0].first.as<Binary>(); inner && inner->op == BinOp::Div) {
        if (auto c = inner->b.as_int(); c && *c > 0 && *c <= INT32_MAX && d <= INT32_MAX)
          return make_binary(BinOp::Div, inner->a, make_int(*c * d, r.type));
      }
    }
    return e;
  }

  // (q·d + r) % d = r % d; and r % d = r - k·d when r is known to lie in [k·d, k·d + d).
  Expr modulo(const Expr& a, const Expr& b, const Expr& e) {
    auto d = b.as_int();
    if (!d || *d <= 0) return e;
    LinearForm n = linear_form(a);
    LinearForm r{n.type, {}, floor_mod(n.constant, *d)};
    for (auto& [t, c] : n.terms)
      if (int64_t m = floor_mod(c, *d)) r.terms.emplace_back(t, m);
    Interval rb = ctx_.bounds(to_expr(r));
    if (rb.has_lower() && rb.has_upper() && floor_div(rb.lo, *d) == floor_div(rb.hi, *d)) {
      r.constant -= floor_div(rb.lo, *d) * *d;
      return to_expr(r);
    }
    Expr rest = to_expr(r);
    // (x % c) % d = x % d when d divides c.
    if (auto* inner = rest.as<Binary>(); inner && inner->op == BinOp::Mod) {
      if (auto c = inner->b.as_int(); c && *c > 0 && *c % *d == 0)
        return modulo(inner->a, b, make_binary(BinOp::Mod, inner->a, b));
    }
    if (equal(rest, a)) return e;
    return make_binary(BinOp::Mod, rest, make_int(*d, n.type));
  }

  RangeContext base_;  // what holds at function level
};

}  // namespace

Expr simplify_expr(const Expr& e, const RangeContext& ctx) {
  Simplifier s(ctx);
  return s.mutate(e);
}

Stmt simplify_stmt(const Stmt& st, const RangeContext& ctx) {
  Simplifier s(ctx);
  return s.mutate(st);
}

Function simplify(const Function& f, const TargetInfo&) {
  Simplifier s(RangeContext::for_function(f));
  return s.mutate_function(f);
}

}  // namespace tg
