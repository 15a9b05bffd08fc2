// Interval arithmetic over the IR's integer expressions, and the facts that sharpen it.
// Infinite endpoints are INT64_MIN / INT64_MAX; every operation below keeps the result sound by
// widening to ±∞ whenever an endpoint would not fit in 64 bits.
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

#include <algorithm>
#include <bit>

#include "tilegen/ir/int_semantics.h"

namespace tg {

using namespace ir;

namespace {

constexpr int64_t kNeg = Interval::kNegInf;
constexpr int64_t kPos = Interval::kPosInf;
using Wide = __int128;
constexpr Wide kBig = Wide(1) << 100;  // stands for ∞ inside products

bool is_inf(int64_t v) { return v == kNeg || v == kPos; }
// A lower / upper endpoint from a wide value: anything that does not fit widens to ∓∞.
int64_t lo_of(Wide v) { return v <= Wide(kNeg) || v >= Wide(kPos) ? kNeg : int64_t(v); }
int64_t hi_of(Wide v) { return v <= Wide(kNeg) || v >= Wide(kPos) ? kPos : int64_t(v); }

Interval make_interval(Wide lo, Wide hi) { return {lo_of(lo), hi_of(hi)}; }

Interval add(Interval a, Interval b) {
  int64_t lo = (is_inf(a.lo) || is_inf(b.lo)) ? kNeg : lo_of(Wide(a.lo) + b.lo);
  int64_t hi = (is_inf(a.hi) || is_inf(b.hi)) ? kPos : hi_of(Wide(a.hi) + b.hi);
  return {lo, hi};
}

Wide corner(int64_t x, int64_t y) {
  if (x == 0 || y == 0) return 0;
  if (is_inf(x) || is_inf(y)) return ((x > 0) == (y > 0)) ? kBig : -kBig;
  return Wide(x) * y;
}

Interval mul(Interval a, Interval b) {
  Wide c[4] = {corner(a.lo, b.lo), corner(a.lo, b.hi), corner(a.hi, b.lo), corner(a.hi, b.hi)};
  return make_interval(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

Interval scale(Interval a, int64_t k) { return mul(a, Interval::point(k)); }

using ir::floor_div;
using ir::floor_mod;

// floor(x / y) for y ≥ 1, where x may be ±∞ and y may be +∞ (the limit as y grows).
Wide div_corner(int64_t x, int64_t y) {
  if (is_inf(x)) return x > 0 ? kBig : -kBig;
  if (y == kPos) return x >= 0 ? 0 : -1;
  return floor_div(x, y);
}

Interval neg(Interval a) {
  return {a.hi == kPos ? kNeg : lo_of(-Wide(a.hi)), a.lo == kNeg ? kPos : hi_of(-Wide(a.lo))};
}

Interval div(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0) return Interval::everything();
  if (b.hi < 0) return div(neg(a), neg(b));  // floor(x / y) = floor(-x / -y)
  // floor(x / y) with y > 0 is monotone in x, and monotone in y for a fixed sign of x.
  Wide c[4] = {div_corner(a.lo, b.lo), div_corner(a.lo, b.hi), div_corner(a.hi, b.lo),
               div_corner(a.hi, b.hi)};
  return make_interval(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

Interval mod(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0) return Interval::everything();
  if (b.lo >= 1) {
    if (a.lo >= 0 && a.hi < b.lo) return a;
    if (b.is_point() && !is_inf(a.lo) && !is_inf(a.hi) && floor_div(a.lo, b.lo) == floor_div(a.hi, b.lo))
      return {floor_mod(a.lo, b.lo), floor_mod(a.hi, b.lo)};
    int64_t top = b.hi == kPos ? kPos : b.hi - 1;
    if (a.lo >= 0) top = std::min(top, a.hi);
    return {0, top};
  }
  // Negative divisor: the floor modulo takes the divisor's sign, (b.lo, 0].
  if (a.hi <= 0 && a.lo > b.hi) return a;
  return {b.lo == kNeg ? kNeg : b.lo + 1, 0};
}

Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Interval intersect(Interval a, Interval b) {
  Interval r{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
  return r.lo > r.hi ? a : r;  // empty only in unreachable code; keep the wider, sound one
}

Interval bitwise(BinOp op, Interval a, Interval b, DType t) {
  if (op == BinOp::BitAnd) {
    if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
    if (a.lo >= 0) return {0, a.hi};
    if (b.lo >= 0) return {0, b.hi};
    return type_range(t);
  }
  if (a.lo >= 0 && b.lo >= 0 && a.has_upper() && b.has_upper()) {
    const int bits = int(std::bit_width(uint64_t(std::max(a.hi, b.hi))));  // both non-negative
    if (bits < 63) return {0, (int64_t(1) << bits) - 1};
  }
  return type_range(t);
}

// Exact two's-complement helpers so that folding huge coefficients never hits UB.
int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

void add_term(LinearForm& f, const Expr& atom, int64_t coef) {
  for (auto& [t, c] : f.terms) {
    if (equal(t, atom)) {
      c = wrap_add(c, coef);
      return;
    }
  }
  f.terms.emplace_back(atom, coef);
}

void collect(LinearForm& f, const Expr& e, int64_t scale) {
  if (scale == 0) return;
  if (auto v = e.as_int()) {
    f.constant = wrap_add(f.constant, wrap_mul(*v, scale));
    return;
  }
  if (e.dtype() == f.type) {
    if (auto* b = e.as<Binary>()) {
      switch (b->op) {
        case BinOp::Add:
          collect(f, b->a, scale);
          collect(f, b->b, scale);
          return;
        case BinOp::Sub:
          collect(f, b->a, scale);
          collect(f, b->b, wrap_mul(scale, -1));
          return;
        case BinOp::Mul:
          if (auto k = b->b.as_int()) return collect(f, b->a, wrap_mul(scale, *k));
          if (auto k = b->a.as_int()) return collect(f, b->b, wrap_mul(scale, *k));
          break;
        default: break;
      }
    } else if (auto* u = e.as<Unary>(); u && u->op == UnOp::Neg) {
      return collect(f, u->a, wrap_mul(scale, -1));
    }
  }
  add_term(f, e, scale);
}

void drop_zero_terms(LinearForm& f) {
  std::erase_if(f.terms, [](const auto& t) { return t.second == 0; });
}

// a + k·b, term by term.
LinearForm combine(const LinearForm& a, const LinearForm& b, int64_t k) {
  LinearForm r = a;
  for (auto& [t, c] : b.terms) add_term(r, t, wrap_mul(c, k));
  r.constant = wrap_add(r.constant, wrap_mul(b.constant, k));
  drop_zero_terms(r);
  return r;
}

}  // namespace

LinearForm linear_difference(const Expr& lhs, const Expr& rhs, int64_t k) {
  LinearForm r = combine(linear_form(lhs), linear_form(rhs), -1);
  r.constant = wrap_add(r.constant, k);
  return r;
}

Interval type_range(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return {0, 1};
    case TypeCode::I4: return {-8, 7};
    case TypeCode::U4: return {0, 15};
    case TypeCode::I8: return {-128, 127};
    case TypeCode::U8: return {0, 255};
    case TypeCode::I16: return {-32768, 32767};
    case TypeCode::I32: return {INT32_MIN, INT32_MAX};
    case TypeCode::U32: return {0, 4294967295LL};
    default: return Interval::everything();
  }
}

bool is_multiple_of(const Expr& e, int64_t k) {
  LinearForm f = linear_form(simplify_expr(e));
  if (f.constant % k != 0) return false;
  for (auto& [term, coeff] : f.terms)
    if (coeff % k != 0) return false;
  return true;
}

LinearForm linear_form(const Expr& e) {
  LinearForm f;
  f.type = e.dtype();
  if (!f.type.is_int()) {
    f.terms.emplace_back(e, 1);
    return f;
  }
  collect(f, e, 1);
  drop_zero_terms(f);
  return f;
}

Expr to_expr(const LinearForm& f) {
  Expr acc;
  auto term = [&](const Expr& atom, int64_t c) {
    return c == 1 ? atom : make_binary(BinOp::Mul, atom, make_int(c, f.type));
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& [atom, c] : f.terms) {
      if (c == 0 || (pass == 0) != (c > 0)) continue;
      if (!acc.defined())
        acc = c == -1 ? make_unary(UnOp::Neg, atom) : term(atom, c);
      else if (c > 0)
        acc = make_binary(BinOp::Add, acc, term(atom, c));
      else
        acc = make_binary(BinOp::Sub, acc, term(atom, wrap_mul(c, -1)));
    }
  }
  if (!acc.defined()) return make_int(f.constant, f.type);
  if (f.constant > 0) return make_binary(BinOp::Add, acc, make_int(f.constant, f.type));
  if (f.constant < 0 && f.constant != INT64_MIN)
    return make_binary(BinOp::Sub, acc, make_int(-f.constant, f.type));
  if (f.constant != 0) return make_binary(BinOp::Add, acc, make_int(f.constant, f.type));
  return acc;
}

// ---- Bounds

namespace {

class Bounder {
 public:
  explicit Bounder(const RangeContext& c) : ctx_(c) {}

  Interval of(const Expr& e) const {
    if (!e.defined() || e.dtype().is_float()) return Interval::everything();
    return intersect(raw(e), type_range(e.dtype()));
  }

  Interval of_linear(const LinearForm& f) const {
    Interval sum = Interval::point(f.constant);
    for (auto& [t, c] : f.terms) sum = add(sum, scale(of(t), c));
    return sum;
  }

 private:
  Interval raw(const Expr& e) const {
    switch (e->kind) {
      case ExprKind::IntImm: return Interval::point(e.as<IntImm>()->value);
      case ExprKind::Var: {
        auto it = ctx_.ranges.find(e.as<VarNode>());
        return it == ctx_.ranges.end() ? type_range(e.dtype()) : it->second;
      }
      case ExprKind::Binary: return binary(e);
      case ExprKind::Unary: return unary(e);
      case ExprKind::Select: {
        auto* s = e.as<Select>();
        if (auto d = ctx_.decide(s->cond, false)) return *d ? of(s->t) : of(s->f);
        return hull(of(s->t), of(s->f));
      }
      case ExprKind::Cast: {
        auto* c = e.as<Cast>();
        if (c->a.dtype().is_float()) return type_range(e.dtype());
        Interval in = of(c->a), range = type_range(e.dtype());
        if (e.dtype().is_bool())
          return in.lo > 0 || in.hi < 0 ? Interval::point(1) : in.is_point() ? Interval::point(0) : range;
        return in.lo >= range.lo && in.hi <= range.hi ? in : range;  // a narrowing cast may wrap
      }
      default: return type_range(e.dtype());  // loads, calls
    }
  }

  Interval binary(const Expr& e) const {
    auto* b = e.as<Binary>();
    if (is_comparison(b->op) || is_logical(b->op)) {
      auto d = ctx_.decide(e, false);
      return d ? Interval::point(*d) : Interval{0, 1};
    }
    if (e.dtype().is_bool()) return {0, 1};
    switch (b->op) {
      case BinOp::Add:
      case BinOp::Sub: return of_linear(linear_form(e));
      case BinOp::Mul:
        if (b->a.as_int() || b->b.as_int()) return of_linear(linear_form(e));
        return mul(of(b->a), of(b->b));
      case BinOp::Div: return div(of(b->a), of(b->b));
      case BinOp::Mod: return mod(of(b->a), of(b->b));
      case BinOp::Min: {
        Interval x = of(b->a), y = of(b->b);
        return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
      }
      case BinOp::Max: {
        Interval x = of(b->a), y = of(b->b);
        return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
      }
      case BinOp::Shl:
        if (auto k = b->b.as_int(); k && *k >= 0 && *k < 62) return scale(of(b->a), int64_t(1) << *k);
        return type_range(e.dtype());
      case BinOp::Shr:
        if (auto k = b->b.as_int(); k && *k >= 0 && *k < 63)
          return div(of(b->a), Interval::point(int64_t(1) << *k));
        return type_range(e.dtype());
      default: return bitwise(b->op, of(b->a), of(b->b), e.dtype());
    }
  }

  Interval unary(const Expr& e) const {
    auto* u = e.as<Unary>();
    switch (u->op) {
      case UnOp::Neg: return neg(of(u->a));
      case UnOp::Not: {
        auto d = ctx_.decide(e, false);
        return d ? Interval::point(*d) : Interval{0, 1};
      }
      case UnOp::BitNot: return add(neg(of(u->a)), Interval::point(-1));  // ~x = -x - 1
    }
    return type_range(e.dtype());
  }

  const RangeContext& ctx_;
};

bool int_operands(const Binary* b) { return b->a.dtype().is_int() && b->b.dtype().is_int(); }

}  // namespace

Interval RangeContext::bounds(const Expr& e) const { return Bounder(*this).of(e); }

Interval bounds_of(const Expr& e, const VarRanges& ranges) {
  RangeContext c;
  c.ranges = ranges;
  return c.bounds(e);
}

RangeContext RangeContext::for_function(const Function& f) {
  RangeContext c;
  for (auto& v : f.sizes()) c.ranges[v.node()] = intersect({0, kPos}, type_range(v.dtype()));
  return c;
}

bool RangeContext::prove_nonpositive(const Expr& d, bool use_facts) const {
  if (!d.dtype().is_int() && !d.dtype().is_bool()) return false;
  return prove_nonpositive(linear_form(d), use_facts);
}

LinearForm RangeContext::expand(const LinearForm& f) const {
  if (definitions.empty()) return f;
  LinearForm out{f.type, {}, f.constant};
  for (auto& [t, c] : f.terms) {
    auto* v = t.as<VarNode>();
    auto it = v ? definitions.find(v) : definitions.end();
    if (it == definitions.end()) {
      add_term(out, t, c);
      continue;
    }
    for (auto& [dt, dc] : it->second.terms) add_term(out, dt, wrap_mul(dc, c));
    out.constant = wrap_add(out.constant, wrap_mul(it->second.constant, c));
  }
  drop_zero_terms(out);
  return out;
}

bool RangeContext::prove_nonpositive(const LinearForm& goal, bool use_facts) const {
  Bounder b(*this);
  LinearForm d = expand(goal);
  if (b.of_linear(d).hi <= 0) return true;
  if (!use_facts) return false;
  for (auto& f : facts) {
    // d ≤ 0 follows from f ≤ 0 when d - k·f ≤ 0 for some k > 0; try k = 1 and the k that
    // cancels the first term the two share.
    int64_t ks[2] = {1, 0};
    for (auto& [t, c] : d.terms)
      for (auto& [ft, fc] : f.terms)
        if (!ks[1] && equal(t, ft) && fc != 0 && c % fc == 0 && c / fc > 1) ks[1] = c / fc;
    for (int64_t k : ks)
      if (k > 0 && b.of_linear(combine(d, f, -k)).hi <= 0) return true;
  }
  return false;
}

std::optional<bool> RangeContext::decide(const Expr& c, bool use_facts) const {
  if (!c.defined()) return std::nullopt;
  if (auto* i = c.as<IntImm>()) return i->value != 0;
  if (auto* b = c.as<Binary>()) {
    if (is_comparison(b->op)) {
      if (!int_operands(b)) return std::nullopt;
      auto le = [&](const Expr& x, const Expr& y, int64_t k) {
        return prove_nonpositive(linear_difference(x, y, k), use_facts);
      };
      switch (b->op) {
        case BinOp::Lt:
          if (le(b->a, b->b, 1)) return true;
          if (le(b->b, b->a, 0)) return false;
          break;
        case BinOp::Le:
          if (le(b->a, b->b, 0)) return true;
          if (le(b->b, b->a, 1)) return false;
          break;
        case BinOp::Gt:
          if (le(b->b, b->a, 1)) return true;
          if (le(b->a, b->b, 0)) return false;
          break;
        case BinOp::Ge:
          if (le(b->b, b->a, 0)) return true;
          if (le(b->a, b->b, 1)) return false;
          break;
        case BinOp::Eq:
        case BinOp::Ne: {
          std::optional<bool> eq;
          if (le(b->a, b->b, 0) && le(b->b, b->a, 0))
            eq = true;
          else if (le(b->a, b->b, 1) || le(b->b, b->a, 1))
            eq = false;
          if (eq && b->op == BinOp::Ne) eq = !*eq;
          return eq;
        }
        default: break;
      }
      return std::nullopt;
    }
    if (is_logical(b->op)) {
      auto x = decide(b->a, use_facts), y = decide(b->b, use_facts);
      bool dominant = b->op == BinOp::Or;  // the value that decides the whole alone
      if ((x && *x == dominant) || (y && *y == dominant)) return dominant;
      if (x && y) return !dominant;
      return std::nullopt;
    }
  }
  if (auto* u = c.as<Unary>(); u && u->op == UnOp::Not) {
    auto x = decide(u->a, use_facts);
    return x ? std::optional<bool>(!*x) : std::nullopt;
  }
  if (c.dtype().is_bool() || c.dtype().is_int()) {
    Interval r = bounds(c);
    if (r.lo > 0 || r.hi < 0) return true;
    if (r.is_point() && r.lo == 0) return false;
  }
  return std::nullopt;
}

namespace {
// Facts that `x op y` adds, as linear forms known ≤ 0.
std::vector<LinearForm> facts_of(BinOp op, const Expr& x, const Expr& y) {
  switch (op) {
    case BinOp::Lt: return {linear_difference(x, y, 1)};
    case BinOp::Le: return {linear_difference(x, y, 0)};
    case BinOp::Gt: return {linear_difference(y, x, 1)};
    case BinOp::Ge: return {linear_difference(y, x, 0)};
    case BinOp::Eq: return {linear_difference(x, y, 0), linear_difference(y, x, 0)};
    default: return {};
  }
}
BinOp negated(BinOp op) {
  switch (op) {
    case BinOp::Lt: return BinOp::Ge;
    case BinOp::Le: return BinOp::Gt;
    case BinOp::Gt: return BinOp::Le;
    case BinOp::Ge: return BinOp::Lt;
    case BinOp::Eq: return BinOp::Ne;
    default: return BinOp::Eq;  // Ne
  }
}
}  // namespace

void RangeContext::assume_linear(const LinearForm& fact) {
  // Narrow the variable of a one-variable fact both as written (a let variable: m < 40) and
  // expanded (a loop variable), then keep the expanded form for proofs.
  narrow(fact);
  LinearForm f = expand(fact);
  if (f.terms.empty()) return;
  narrow(f);
  facts.push_back(std::move(f));
}

void RangeContext::narrow(const LinearForm& f) {
  // c·v + k ≤ 0 narrows v: v ≤ floor(-k / c) when c > 0, v ≥ ceil(k / -c) when c < 0.
  if (f.terms.size() != 1) return;
  auto [atom, c] = f.terms[0];
  auto* v = atom.as<VarNode>();
  if (!v || f.constant == INT64_MIN || c == INT64_MIN) return;
  Interval r = bounds(atom);
  if (c > 0)
    r.hi = std::min(r.hi, floor_div(-f.constant, c));
  else
    r.lo = std::max(r.lo, -floor_div(-f.constant, -c));
  if (r.lo <= r.hi) ranges[v] = r;
}

void RangeContext::assume(const Expr& cond) {
  if (auto* b = cond.as<Binary>()) {
    if (b->op == BinOp::And) {
      assume(b->a);
      assume(b->b);
    } else if (is_comparison(b->op) && int_operands(b)) {
      for (auto& f : facts_of(b->op, b->a, b->b)) assume_linear(f);
    }
  } else if (auto* u = cond.as<Unary>(); u && u->op == UnOp::Not) {
    assume_not(u->a);
  } else if (auto* v = cond.as<VarNode>()) {
    ranges[v] = Interval::point(1);
  }
}

void RangeContext::assume_not(const Expr& cond) {
  if (auto* b = cond.as<Binary>()) {
    if (b->op == BinOp::Or) {
      assume_not(b->a);
      assume_not(b->b);
    } else if (is_comparison(b->op) && int_operands(b)) {
      for (auto& f : facts_of(negated(b->op), b->a, b->b)) assume_linear(f);
    }
  } else if (auto* u = cond.as<Unary>(); u && u->op == UnOp::Not) {
    assume(u->a);
  } else if (auto* v = cond.as<VarNode>()) {
    ranges[v] = Interval::point(0);
  }
}

void RangeContext::set_range(const Var& v, Interval r) {
  ranges[v.node()] = intersect(r, type_range(v.dtype()));
}

void RangeContext::enter_kernel(const Kernel& k) {
  for (std::size_t d = 0; d < k.grid.size() && d < k.block_vars.size(); ++d) {
    Interval g = bounds(k.grid[d]);
    set_range(k.block_vars[d], {0, g.hi == kPos ? kPos : std::max<int64_t>(0, g.hi - 1)});
    assume_linear(linear_difference(k.block_vars[d], k.grid[d], 1));
  }
  if (k.thread_var.defined()) set_range(k.thread_var, {0, std::max(0, k.threads - 1)});
}

void RangeContext::enter_loop(const Var& v, const Expr& min, const Expr& extent) {
  Interval m = bounds(min), e = bounds(extent);
  // With an extent ≤ 0 the body never runs and any range is sound; keep min's.
  Interval r = e.hi <= 0 ? m : Interval{m.lo, e.hi == kPos ? kPos : add(m, Interval::point(e.hi - 1)).hi};
  set_range(v, r);
  if (!v.dtype().is_int()) return;
  assume_linear(linear_difference(min, v, 0));                                    // min ≤ v
  assume_linear(combine(linear_difference(v, min, 1), linear_form(extent), -1));  // v < min + extent
}

void RangeContext::enter_let(const Var& v, const Expr& value) {
  if (!v.dtype().is_int() || !value.dtype().is_int()) return;
  set_range(v, bounds(value));
  definitions[v.node()] = expand(linear_form(value));
}

}  // namespace tg
