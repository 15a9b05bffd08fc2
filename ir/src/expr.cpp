#include "tilegen/ir/expr.h"

#include <cmath>
#include <functional>
#include <limits>

#include "tilegen/ir/buffer.h"
#include "tilegen/ir/int_semantics.h"

namespace tg {

using namespace ir;

// ---- Handles

Expr::Expr(int v) : node_(std::make_shared<IntImm>(i32, v)) {}
Expr::Expr(int64_t v)
    : node_(std::make_shared<IntImm>(v >= INT32_MIN && v <= INT32_MAX ? i32 : i64, v)) {}
Expr::Expr(float v) : node_(std::make_shared<FloatImm>(f32, double(v), true)) {}
Expr::Expr(double v) : node_(std::make_shared<FloatImm>(f32, v, true)) {}
Expr::Expr(bool v) : node_(std::make_shared<IntImm>(boolean, v ? 1 : 0)) {}

DType Expr::dtype() const { return node_ ? node_->dtype : f32; }

std::optional<int64_t> Expr::as_int() const {
  if (auto* i = as<IntImm>(); i && !i->dtype.is_bool()) return i->value;
  return std::nullopt;
}

Var::Var(std::string name, DType t, SourceLoc loc)
    : Expr(std::make_shared<VarNode>(std::move(name), t, std::move(loc))) {}
Var::Var(std::shared_ptr<const VarNode> n) : Expr(std::move(n)) {}
const VarNode* Var::node() const { return static_cast<const VarNode*>(get()); }
const std::string& Var::name() const { return node()->name; }

// ---- Names

const char* ir::name_of(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+"; case BinOp::Sub: return "-"; case BinOp::Mul: return "*";
    case BinOp::Div: return "/"; case BinOp::Mod: return "%"; case BinOp::Min: return "min";
    case BinOp::Max: return "max"; case BinOp::Eq: return "=="; case BinOp::Ne: return "!=";
    case BinOp::Lt: return "<"; case BinOp::Le: return "<="; case BinOp::Gt: return ">";
    case BinOp::Ge: return ">="; case BinOp::And: return "&&"; case BinOp::Or: return "||";
    case BinOp::BitAnd: return "&"; case BinOp::BitOr: return "|"; case BinOp::BitXor: return "^";
    case BinOp::Shl: return "<<"; case BinOp::Shr: return ">>";
  }
  return "?";
}
const char* ir::name_of(UnOp op) {
  switch (op) { case UnOp::Neg: return "-"; case UnOp::Not: return "!"; case UnOp::BitNot: return "~"; }
  return "?";
}
const char* ir::name_of(Intrinsic f) {
  switch (f) {
    case Intrinsic::Exp: return "exp"; case Intrinsic::Exp2: return "exp2"; case Intrinsic::Log: return "log";
    case Intrinsic::Log2: return "log2"; case Intrinsic::Sqrt: return "sqrt"; case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::Abs: return "abs"; case Intrinsic::Tanh: return "tanh"; case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos"; case Intrinsic::Floor: return "floor"; case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round"; case Intrinsic::Erf: return "erf"; case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Pow: return "pow"; case Intrinsic::Fma: return "fma";
  }
  return "?";
}
int ir::arity_of(Intrinsic f) { return f == Intrinsic::Pow ? 2 : f == Intrinsic::Fma ? 3 : 1; }
bool ir::is_comparison(BinOp op) { return op >= BinOp::Eq && op <= BinOp::Ge; }
bool ir::is_logical(BinOp op) { return op == BinOp::And || op == BinOp::Or; }

// ---- Type rules

namespace {
bool is_weak_float(const Expr& e) {
  auto* f = e.as<FloatImm>();
  return f && f->weak;
}
bool is_int_literal(const Expr& e) { return e.as<IntImm>() && !e.dtype().is_bool(); }
int int_rank(DType t) {
  // bool < int4 < ... ; unsigned ranks with signed of the same width
  return t.bits() * 2 + (t.is_signed_int() ? 0 : 1);
}
int float_rank(DType t) {
  switch (t.code) {
    case TypeCode::F4E2M1: return 0; case TypeCode::F8E4M3: case TypeCode::F8E5M2: return 1;
    case TypeCode::F16: case TypeCode::BF16: return 2; case TypeCode::F32: return 3; default: return 4;
  }
}
}  // namespace

DType promote(const Expr& a, const Expr& b) {
  DType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return ta;
  bool fa = ta.is_float(), fb = tb.is_float();
  if (fa && fb) {
    if (is_weak_float(a)) return tb;
    if (is_weak_float(b)) return ta;
    if (float_rank(ta) != float_rank(tb)) return float_rank(ta) > float_rank(tb) ? ta : tb;
    return f32;  // f16 with bf16, e4m3 with e5m2: meet at f32
  }
  if (fa) return is_weak_float(a) && !is_int_literal(b) ? f32 : ta;
  if (fb) return is_weak_float(b) && !is_int_literal(a) ? f32 : tb;
  // Both integer or bool: a literal takes the other's type; else (two literals too) the wider,
  // so INT64_MIN / -1 stays i64 instead of meeting the i32 literal -1 at i32.
  if (is_int_literal(a) && is_int_literal(b)) return int_rank(ta) >= int_rank(tb) ? ta : tb;
  if (is_int_literal(a) && !tb.is_bool()) return tb;
  if (is_int_literal(b) && !ta.is_bool()) return ta;
  if (ta.is_bool()) return tb;
  if (tb.is_bool()) return ta;
  return int_rank(ta) >= int_rank(tb) ? ta : tb;
}

Expr make_int(int64_t v, DType t) { return Expr(std::make_shared<IntImm>(t, wrap_int_to(t, v))); }
Expr make_float(double v, DType t) { return Expr(std::make_shared<FloatImm>(t, round_float_to(t, v), false)); }
Expr make_bool(bool v) { return Expr(std::make_shared<IntImm>(boolean, v)); }

Expr make_cast(DType t, Expr a) {
  if (!a.defined()) throw Error("cast of an empty expression");
  if (a.dtype() == t && !is_weak_float(a)) return a;
  if (auto* i = a.as<IntImm>()) {
    if (t.is_float()) return make_float(double(i->value), t);
    return make_int(t.is_bool() ? i->value != 0 : i->value, t);
  }
  if (auto* f = a.as<FloatImm>()) {
    if (t.is_float()) return make_float(f->value, t);
    return make_int(convert_scalar(f64, t, Scalar::of_float(f->value)).i, t);
  }
  return Expr(std::make_shared<Cast>(t, std::move(a)));
}

namespace {
std::optional<Expr> fold_int(BinOp op, DType t, int64_t x, int64_t y) {
  int64_t r;
  switch (op) {
    case BinOp::Add: r = int64_t(uint64_t(x) + uint64_t(y)); break;  // wraps, as at run time
    case BinOp::Sub: r = int64_t(uint64_t(x) - uint64_t(y)); break;
    case BinOp::Mul: r = int64_t(uint64_t(x) * uint64_t(y)); break;
    case BinOp::Div: r = int_div(t, x, y); break;  // int_semantics.h: x / 0 = 0, MIN / -1 = MIN
    case BinOp::Mod: r = int_mod(t, x, y); break;
    case BinOp::Min: r = std::min(x, y); break;
    case BinOp::Max: r = std::max(x, y); break;
    case BinOp::Eq: return make_bool(x == y);
    case BinOp::Ne: return make_bool(x != y);
    case BinOp::Lt: return make_bool(x < y);
    case BinOp::Le: return make_bool(x <= y);
    case BinOp::Gt: return make_bool(x > y);
    case BinOp::Ge: return make_bool(x >= y);
    case BinOp::And: return make_bool(x && y);
    case BinOp::Or: return make_bool(x || y);
    case BinOp::BitAnd: r = x & y; break;
    case BinOp::BitOr: r = x | y; break;
    case BinOp::BitXor: r = x ^ y; break;
    case BinOp::Shl: r = int_shl(t, x, y); break;
    case BinOp::Shr: r = int_shr(t, x, y); break;
    default: return std::nullopt;
  }
  return make_int(r, t);
}

std::optional<Expr> fold_float(BinOp op, DType t, double x, double y) {
  switch (op) {
    case BinOp::Add: return make_float(x + y, t);
    case BinOp::Sub: return make_float(x - y, t);
    case BinOp::Mul: return make_float(x * y, t);
    case BinOp::Div: return make_float(x / y, t);
    case BinOp::Min: return make_float(std::fmin(x, y), t);
    case BinOp::Max: return make_float(std::fmax(x, y), t);
    case BinOp::Eq: return make_bool(x == y);
    case BinOp::Ne: return make_bool(x != y);
    case BinOp::Lt: return make_bool(x < y);
    case BinOp::Le: return make_bool(x <= y);
    case BinOp::Gt: return make_bool(x > y);
    case BinOp::Ge: return make_bool(x >= y);
    default: return std::nullopt;
  }
}

bool is_const_int(const Expr& e, int64_t v) {
  auto i = e.as_int();
  return i && *i == v;
}
}  // namespace

Expr make_binary(BinOp op, Expr a, Expr b) {
  if (!a.defined() || !b.defined()) throw Error(std::string("operator ") + name_of(op) + " on an empty expression");
  bool bitwise = op >= BinOp::BitAnd;
  if (is_logical(op)) {
    a = make_cast(boolean, a);
    b = make_cast(boolean, b);
  } else {
    DType t = promote(a, b);
    if (bitwise && t.is_float())
      throw Error(std::string("bitwise operator ") + name_of(op) + " needs integer operands, not " +
                  std::string(t.name()) + "; cast them first");
    a = make_cast(t, a);
    b = make_cast(t, b);
  }
  DType operand = a.dtype();
  DType result = (is_comparison(op) || is_logical(op)) ? boolean : operand;

  auto ia = a.as<IntImm>(), ib = b.as<IntImm>();
  if (ia && ib) {
    if (auto r = fold_int(op, result, ia->value, ib->value)) return *r;
  }
  auto fa = a.as<FloatImm>(), fb = b.as<FloatImm>();
  if (fa && fb) {
    if (auto r = fold_float(op, result, fa->value, fb->value)) return *r;
  }
  // Identities that are exact for integers (and for floats where IEEE keeps them exact).
  if (operand.is_int()) {
    switch (op) {
      case BinOp::Add:
        if (is_const_int(a, 0)) return b;
        if (is_const_int(b, 0)) return a;
        break;
      case BinOp::Sub:
        if (is_const_int(b, 0)) return a;
        if (a.same_as(b)) return make_int(0, operand);
        break;
      case BinOp::Mul:
        if (is_const_int(a, 1)) return b;
        if (is_const_int(b, 1)) return a;
        if (is_const_int(a, 0) || is_const_int(b, 0)) return make_int(0, operand);
        break;
      case BinOp::Div:
        if (is_const_int(b, 1)) return a;
        break;
      case BinOp::Mod:
        if (is_const_int(b, 1)) return make_int(0, operand);
        break;
      default: break;
    }
  }
  // Logical identities on bool constants (as_int() excludes bools, so read the immediates).
  auto bool_const = [](const Expr& e) -> std::optional<bool> {
    if (auto* i = e.as<IntImm>()) return i->value != 0;
    return std::nullopt;
  };
  if (op == BinOp::And || op == BinOp::Or) {
    bool absorbing = op == BinOp::Or;  // x || true = true, x && false = false
    if (auto c = bool_const(a)) return *c == absorbing ? a : b;
    if (auto c = bool_const(b)) return *c == absorbing ? b : a;
  }
  return Expr(std::make_shared<Binary>(result, op, std::move(a), std::move(b)));
}

Expr make_unary(UnOp op, Expr a) {
  if (!a.defined()) throw Error(std::string("operator ") + name_of(op) + " on an empty expression");
  if (op == UnOp::Not) {
    a = make_cast(boolean, a);
    if (auto i = a.as<IntImm>()) return make_bool(!i->value);
    return Expr(std::make_shared<Unary>(boolean, op, std::move(a)));
  }
  if (op == UnOp::BitNot && a.dtype().is_float())
    throw Error("operator ~ needs an integer operand, not " + std::string(a.dtype().name()));
  if (auto i = a.as<IntImm>(); i && !i->dtype.is_bool())
    return make_int(op == UnOp::Neg ? int64_t(0 - uint64_t(i->value)) : ~i->value, i->dtype);  // wraps
  if (auto f = a.as<FloatImm>(); f && op == UnOp::Neg)
    return Expr(std::make_shared<FloatImm>(f->dtype, -f->value, f->weak));
  DType t = a.dtype();
  return Expr(std::make_shared<Unary>(t, op, std::move(a)));
}

Expr make_select(Expr cond, Expr t, Expr f) {
  if (!cond.defined() || !t.defined() || !f.defined()) throw Error("select with an empty expression");
  cond = make_cast(boolean, cond);
  DType ty = promote(t, f);
  t = make_cast(ty, t);
  f = make_cast(ty, f);
  if (auto c = cond.as<IntImm>()) return c->value ? t : f;
  if (t.same_as(f)) return t;
  return Expr(std::make_shared<Select>(ty, std::move(cond), std::move(t), std::move(f)));
}

Expr make_call(Intrinsic fn, std::vector<Expr> args) {
  if (int(args.size()) != arity_of(fn))
    throw Error(std::string(name_of(fn)) + " takes " + std::to_string(arity_of(fn)) + " arguments, not " +
                std::to_string(args.size()));
  for (auto& a : args)
    if (!a.defined()) throw Error(std::string(name_of(fn)) + " of an empty expression");
  Expr acc = args[0];
  for (std::size_t i = 1; i < args.size(); ++i) acc = make_cast(promote(acc, args[i]), acc);
  DType t = acc.dtype();
  if (fn == Intrinsic::Abs && t.is_int()) {
    Expr x = make_cast(t, args[0]);
    return make_select(x < make_int(0, t), -x, x);
  }
  if (!t.is_float()) t = f32;  // exp(int) etc. compute in f32
  if (is_weak_float(args[0]) && args.size() == 1) t = f32;
  for (auto& a : args) a = make_cast(t, a);
  return Expr(std::make_shared<Call>(t, fn, std::move(args)));
}

Expr make_load(std::shared_ptr<const BufferNode> buffer, std::vector<Expr> indices) {
  DType t = buffer->dtype;
  for (auto& i : indices) {
    if (!i.defined()) throw Error("index into " + buffer->name + " is an empty expression");
    if (!i.dtype().is_int())
      throw Error("index into " + buffer->name + " has type " + std::string(i.dtype().name()) +
                  "; indices must be integers (cast with tg::cast(tg::i32, ...))");
  }
  return Expr(std::make_shared<Load>(t, std::move(buffer), std::move(indices)));
}

// ---- Sugar

namespace {

/// The operand's Expr; an empty one is a tg::Error at the user's line, saying what to do.
Expr defined_at(Operand& o, const char* op) {
  if (!o.expr.defined())
    throw Error(std::string("operator ") + op +
                    " on an empty expression: a default-constructed tg::Expr has no value; assign it "
                    "one before using it",
                SourceLoc::from(o.loc));
  return std::move(o.expr);
}

Expr binary_at(BinOp op, Operand& a, Operand& b) {
  Expr x = defined_at(a, name_of(op));
  return make_binary(op, std::move(x), defined_at(b, name_of(op)));
}

}  // namespace

Expr operator+(Operand a, Operand b) { return binary_at(BinOp::Add, a, b); }
Expr operator-(Operand a, Operand b) { return binary_at(BinOp::Sub, a, b); }
Expr operator*(Operand a, Operand b) { return binary_at(BinOp::Mul, a, b); }
Expr operator/(Operand a, Operand b) { return binary_at(BinOp::Div, a, b); }
Expr operator%(Operand a, Operand b) { return binary_at(BinOp::Mod, a, b); }
Expr operator-(Operand a) { return make_unary(UnOp::Neg, defined_at(a, name_of(UnOp::Neg))); }
Expr operator==(Operand a, Operand b) { return binary_at(BinOp::Eq, a, b); }
Expr operator!=(Operand a, Operand b) { return binary_at(BinOp::Ne, a, b); }
Expr operator<(Operand a, Operand b) { return binary_at(BinOp::Lt, a, b); }
Expr operator<=(Operand a, Operand b) { return binary_at(BinOp::Le, a, b); }
Expr operator>(Operand a, Operand b) { return binary_at(BinOp::Gt, a, b); }
Expr operator>=(Operand a, Operand b) { return binary_at(BinOp::Ge, a, b); }
Expr operator&&(Operand a, Operand b) { return binary_at(BinOp::And, a, b); }
Expr operator||(Operand a, Operand b) { return binary_at(BinOp::Or, a, b); }
Expr operator!(Operand a) { return make_unary(UnOp::Not, defined_at(a, name_of(UnOp::Not))); }
Expr operator&(Operand a, Operand b) { return binary_at(BinOp::BitAnd, a, b); }
Expr operator|(Operand a, Operand b) { return binary_at(BinOp::BitOr, a, b); }
Expr operator^(Operand a, Operand b) { return binary_at(BinOp::BitXor, a, b); }
Expr operator<<(Operand a, Operand b) { return binary_at(BinOp::Shl, a, b); }
Expr operator>>(Operand a, Operand b) { return binary_at(BinOp::Shr, a, b); }

Expr min(Expr a, Expr b) { return make_binary(BinOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(BinOp::Max, std::move(a), std::move(b)); }
Expr select(Expr c, Expr t, Expr f) { return make_select(std::move(c), std::move(t), std::move(f)); }
Expr cast(DType t, Expr a) { return make_cast(t, std::move(a)); }
Expr ceildiv(Expr a, Expr b) {
  if (!a.dtype().is_int() || !b.dtype().is_int())
    throw Error("ceildiv needs integer operands");
  return (a + b - 1) / b;
}
Expr exp(Expr a) { return make_call(Intrinsic::Exp, {std::move(a)}); }
Expr exp2(Expr a) { return make_call(Intrinsic::Exp2, {std::move(a)}); }
Expr log(Expr a) { return make_call(Intrinsic::Log, {std::move(a)}); }
Expr log2(Expr a) { return make_call(Intrinsic::Log2, {std::move(a)}); }
Expr sqrt(Expr a) { return make_call(Intrinsic::Sqrt, {std::move(a)}); }
Expr rsqrt(Expr a) { return make_call(Intrinsic::Rsqrt, {std::move(a)}); }
Expr abs(Expr a) { return make_call(Intrinsic::Abs, {std::move(a)}); }
Expr tanh(Expr a) { return make_call(Intrinsic::Tanh, {std::move(a)}); }
Expr sin(Expr a) { return make_call(Intrinsic::Sin, {std::move(a)}); }
Expr cos(Expr a) { return make_call(Intrinsic::Cos, {std::move(a)}); }
Expr floor(Expr a) { return make_call(Intrinsic::Floor, {std::move(a)}); }
Expr ceil(Expr a) { return make_call(Intrinsic::Ceil, {std::move(a)}); }
Expr round(Expr a) { return make_call(Intrinsic::Round, {std::move(a)}); }
Expr erf(Expr a) { return make_call(Intrinsic::Erf, {std::move(a)}); }
Expr sigmoid(Expr a) { return make_call(Intrinsic::Sigmoid, {std::move(a)}); }
Expr pow(Expr a, Expr b) { return make_call(Intrinsic::Pow, {std::move(a), std::move(b)}); }
Expr fma(Expr a, Expr b, Expr c) { return make_call(Intrinsic::Fma, {std::move(a), std::move(b), std::move(c)}); }

Expr lowest(DType t) {
  switch (t.code) {
    case TypeCode::F16: return make_float(-65504.0, t);
    case TypeCode::BF16: return make_float(-3.3895313892515355e38, t);
    case TypeCode::F32: return make_float(-double(std::numeric_limits<float>::max()), t);
    case TypeCode::F64: return make_float(-std::numeric_limits<double>::max(), t);
    case TypeCode::F8E4M3: return make_float(-448.0, t);
    case TypeCode::F8E5M2: return make_float(-57344.0, t);
    case TypeCode::F4E2M1: return make_float(-6.0, t);
    case TypeCode::I4: return make_int(-8, t);
    case TypeCode::I8: return make_int(-128, t);
    case TypeCode::I16: return make_int(-32768, t);
    case TypeCode::I32: return make_int(INT32_MIN, t);
    case TypeCode::I64: return make_int(INT64_MIN, t);
    default: return make_int(0, t);
  }
}
Expr highest(DType t) {
  switch (t.code) {
    case TypeCode::U4: return make_int(15, t);
    case TypeCode::U8: return make_int(255, t);
    case TypeCode::U32: return make_int(4294967295LL, t);
    case TypeCode::Bool: return make_int(1, t);
    default: break;
  }
  Expr lo = lowest(t);
  if (auto* f = lo.as<FloatImm>()) return make_float(-f->value, t);
  return make_int(-(lo.as<IntImm>()->value + 1), t);
}
Expr infinity(DType t) {
  if (!t.is_float()) throw Error("infinity of integer type " + std::string(t.name()));
  return Expr(std::make_shared<FloatImm>(t, INFINITY, false));
}

// ---- Structural equality and hashing

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case ExprKind::FloatImm: {
      double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::Var: return false;  // identity only
    case ExprKind::Binary: {
      auto x = a.as<Binary>(), y = b.as<Binary>();
      return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
    }
    case ExprKind::Unary: {
      auto x = a.as<Unary>(), y = b.as<Unary>();
      return x->op == y->op && equal(x->a, y->a);
    }
    case ExprKind::Select: {
      auto x = a.as<Select>(), y = b.as<Select>();
      return equal(x->cond, y->cond) && equal(x->t, y->t) && equal(x->f, y->f);
    }
    case ExprKind::Cast: return equal(a.as<Cast>()->a, b.as<Cast>()->a);
    case ExprKind::Call: {
      auto x = a.as<Call>(), y = b.as<Call>();
      if (x->fn != y->fn || x->args.size() != y->args.size()) return false;
      for (std::size_t i = 0; i < x->args.size(); ++i)
        if (!equal(x->args[i], y->args[i])) return false;
      return true;
    }
    case ExprKind::Load: {
      auto x = a.as<Load>(), y = b.as<Load>();
      if (x->buffer != y->buffer || x->indices.size() != y->indices.size()) return false;
      for (std::size_t i = 0; i < x->indices.size(); ++i)
        if (!equal(x->indices[i], y->indices[i])) return false;
      return true;
    }
    case ExprKind::AccessCheck: {
      // Two checks of one site on the same element report the same thing.
      auto x = a.as<AccessCheck>(), y = b.as<AccessCheck>();
      if (x->site != y->site || !equal(x->cond, y->cond) || !equal(x->thread, y->thread) ||
          x->indices.size() != y->indices.size())
        return false;
      for (std::size_t i = 0; i < x->indices.size(); ++i)
        if (!equal(x->indices[i], y->indices[i])) return false;
      return true;
    }
  }
  return false;
}

std::size_t hash_expr(const Expr& e) {
  if (!e.defined()) return 0;
  auto mix = [](std::size_t h, std::size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  std::size_t h = mix(std::size_t(e->kind), std::size_t(e->dtype.code));
  switch (e->kind) {
    case ExprKind::IntImm: return mix(h, std::hash<int64_t>()(e.as<IntImm>()->value));
    case ExprKind::FloatImm: return mix(h, std::hash<double>()(e.as<FloatImm>()->value));
    case ExprKind::Var: return mix(h, std::hash<const void*>()(e.get()));
    case ExprKind::Binary: {
      auto x = e.as<Binary>();
      return mix(mix(mix(h, std::size_t(x->op)), hash_expr(x->a)), hash_expr(x->b));
    }
    case ExprKind::Unary: return mix(mix(h, std::size_t(e.as<Unary>()->op)), hash_expr(e.as<Unary>()->a));
    case ExprKind::Select: {
      auto x = e.as<Select>();
      return mix(mix(mix(h, hash_expr(x->cond)), hash_expr(x->t)), hash_expr(x->f));
    }
    case ExprKind::Cast: return mix(h, hash_expr(e.as<Cast>()->a));
    case ExprKind::Call: {
      auto x = e.as<Call>();
      h = mix(h, std::size_t(x->fn));
      for (auto& a : x->args) h = mix(h, hash_expr(a));
      return h;
    }
    case ExprKind::Load: {
      auto x = e.as<Load>();
      h = mix(h, std::hash<const void*>()(x->buffer.get()));
      for (auto& a : x->indices) h = mix(h, hash_expr(a));
      return h;
    }
    case ExprKind::AccessCheck: {
      auto x = e.as<AccessCheck>();
      h = mix(mix(h, std::size_t(x->site)), hash_expr(x->cond));
      for (auto& a : x->indices) h = mix(h, hash_expr(a));
      return h;
    }
  }
  return h;
}

}  // namespace tg
