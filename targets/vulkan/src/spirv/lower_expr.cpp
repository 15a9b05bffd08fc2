// Expressions in value types (see kernel_lowering.h), with the interpreter's semantics: floats
// rounded to their format after each operation, integers wrapped to their width, floor
// division and modulo, saturating float→int conversions, fmin/fmax for min/max.
#include <cmath>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/int_semantics.h"
#include "tilegen/ir/visitor.h"

namespace tg::vulkan {

namespace {

bool is_unsigned(DType t) { return t == u32 || t == u8 || t == uint4; }

// Whether evaluating e may do something a not-taken branch must not: read memory (possibly
// out of bounds). Integer division is guarded (int_semantics.h), so it may run either way.
bool has_effects(const Expr& e) {
  struct Find : IRVisitor {
    bool found = false;
    void visit(const ir::Load*) override { found = true; }
    void visit(const ir::AccessCheck*) override { found = true; }  // writes the record where it fails
  } f;
  f.visit_expr(e);
  return f.found;
}

/// The operations int_semantics.h's division and shift recipes are written in, as SPIR-V
/// instructions on values of one integer type.
struct SpirvIntOps {
  using Value = uint32_t;
  ModuleBuilder& m;
  uint32_t type, t_bool, t_u32;  // unsigned values are held in `type`, a signed int
  bool is_signed;
  Value imm(int64_t v) { return m.constant_int(type, v); }
  Value add(Value a, Value b) { return m.op(spv::OpIAdd, type, {a, b}); }
  Value sub(Value a, Value b) { return m.op(spv::OpISub, type, {a, b}); }
  Value mul(Value a, Value b) { return m.op(spv::OpIMul, type, {a, b}); }
  Value div_trunc(Value a, Value b) {
    if (is_signed) return m.op(spv::OpSDiv, type, {a, b});
    // OpUDiv's result type must be unsigned: through the unsigned type of the same width.
    auto u = [&](Value v) { return m.op(spv::OpBitcast, t_u32, {v}); };
    return m.op(spv::OpBitcast, type, {m.op(spv::OpUDiv, t_u32, {u(a), u(b)})});
  }
  Value bit_and(Value a, Value b) { return m.op(spv::OpBitwiseAnd, type, {a, b}); }
  Value bit_xor(Value a, Value b) { return m.op(spv::OpBitwiseXor, type, {a, b}); }
  Value shl(Value a, Value n) { return m.op(spv::OpShiftLeftLogical, type, {a, n}); }
  Value shr(Value a, Value n) {
    return m.op(is_signed ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical, type, {a, n});
  }
  Value eq(Value a, Value b) { return m.op(spv::OpIEqual, t_bool, {a, b}); }
  Value ne(Value a, Value b) { return m.op(spv::OpINotEqual, t_bool, {a, b}); }
  Value lt(Value a, Value b) { return m.op(is_signed ? spv::OpSLessThan : spv::OpULessThan, t_bool, {a, b}); }
  Value both(Value p, Value q) { return m.op(spv::OpLogicalAnd, t_bool, {p, q}); }
  Value either(Value p, Value q) { return m.op(spv::OpLogicalOr, t_bool, {p, q}); }
  Value select(Value c, Value x, Value y) { return m.op(spv::OpSelect, type, {c, x, y}); }
};

}  // namespace

uint32_t KernelLowering::glsl(uint32_t result_type, uint32_t inst, const std::vector<uint32_t>& args) {
  std::vector<uint32_t> ops = {M.glsl, inst};
  ops.insert(ops.end(), args.begin(), args.end());
  return m.op(spv::OpExtInst, result_type, ops);
}

uint32_t KernelLowering::expr(const Expr& e) {
  const SourceLoc& loc = e->loc;
  switch (e->kind) {
    case ir::ExprKind::IntImm: {
      int64_t v = e.as<ir::IntImm>()->value;
      if (e.dtype().is_bool()) return m.constant_bool(v != 0);
      return m.constant_int(M.value_type(e.dtype(), loc), v);
    }
    case ir::ExprKind::FloatImm: {
      double v = e.as<ir::FloatImm>()->value;
      DType t = e.dtype();
      if (t != f64 && t != f32) v = round_float_to(t, v);
      return m.constant_float(M.value_type(t, loc), v);
    }
    case ir::ExprKind::Var: {
      const auto* v = e.as<ir::VarNode>();
      if (auto it = loop_vars_.find(v); it != loop_vars_.end())
        return m.op(spv::OpLoad, M.value_type(v->dtype, loc), {it->second});
      if (auto it = values_.find(v); it != values_.end()) return it->second;
      throw Error("variable " + v->name + " is used outside its binding (or is an unbound size parameter)",
                  loc);
    }
    case ir::ExprKind::Binary: return binary(*e.as<ir::Binary>());
    case ir::ExprKind::Unary: {
      const auto* u = e.as<ir::Unary>();
      DType t = u->a.dtype();
      uint32_t a = expr(u->a);
      if (u->op == ir::UnOp::Not)
        return m.op(spv::OpLogicalNot, M.t_bool, {t.is_bool() ? a : convert(a, t, boolean, loc)});
      uint32_t type = M.value_type(e.dtype(), loc);
      if (u->op == ir::UnOp::Neg && t.is_float()) return m.op(spv::OpFNegate, type, {a});
      return wrap_to(e.dtype(), m.op(u->op == ir::UnOp::Neg ? spv::OpSNegate : spv::OpNot, type, {a}));
    }
    case ir::ExprKind::Select: {
      const auto* s = e.as<ir::Select>();
      uint32_t c = expr(s->cond);
      if (has_effects(s->t) || has_effects(s->f)) return lazy_select(c, s->t, s->f, e.dtype());
      uint32_t a = convert(expr(s->t), s->t.dtype(), e.dtype(), loc);
      uint32_t b = convert(expr(s->f), s->f.dtype(), e.dtype(), loc);
      return m.op(spv::OpSelect, M.value_type(e.dtype(), loc), {c, a, b});
    }
    case ir::ExprKind::Cast: return cast(*e.as<ir::Cast>());
    case ir::ExprKind::Call: return call(*e.as<ir::Call>());
    case ir::ExprKind::Load: {
      const auto* l = e.as<ir::Load>();
      return load_element(storage_of(l->buffer.get(), loc), l->indices, loc);
    }
    case ir::ExprKind::AccessCheck: return access_check(*e.as<ir::AccessCheck>());
  }
  return 0;
}

// cond ? t : f evaluating only the taken side, as the interpreter does (a guarded load).
uint32_t KernelLowering::lazy_select(uint32_t cond, const Expr& t, const Expr& f, DType type) {
  uint32_t vt = 0, vf = 0, lt = 0, lf = 0;
  if_else(
      cond,
      [&] {
        vt = convert(expr(t), t.dtype(), type, t->loc);
        lt = m.current_label();
      },
      [&] {
        vf = convert(expr(f), f.dtype(), type, f->loc);
        lf = m.current_label();
      },
      true);
  return m.op(spv::OpPhi, M.value_type(type, t->loc), {vt, lt, vf, lf});
}

uint32_t KernelLowering::binary(const ir::Binary& op) {
  using ir::BinOp;
  const SourceLoc& loc = op.loc;
  if (op.op == BinOp::And || op.op == BinOp::Or) {
    uint32_t a = convert(expr(op.a), op.a.dtype(), boolean, loc);
    if (!has_effects(op.b)) {
      uint32_t b = convert(expr(op.b), op.b.dtype(), boolean, loc);
      return m.op(op.op == BinOp::And ? spv::OpLogicalAnd : spv::OpLogicalOr, M.t_bool, {a, b});
    }
    Expr rhs = op.b.dtype().is_bool() ? op.b : make_cast(boolean, op.b);
    return op.op == BinOp::And ? lazy_select(a, rhs, make_bool(false), boolean)
                               : lazy_select(a, make_bool(true), rhs, boolean);
  }
  // Operands arrive converted to a common type by the IR's constructors; comparisons compute
  // in it, everything else in the result type (shift amounts keep theirs).
  DType t = ir::is_comparison(op.op) ? promote(op.a, op.b) : op.dtype;
  uint32_t a = convert(expr(op.a), op.a.dtype(), t, loc);
  uint32_t b =
      convert(expr(op.b), op.b.dtype(), op.op == BinOp::Shl || op.op == BinOp::Shr ? op.b.dtype() : t, loc);
  uint32_t type = M.value_type(t, loc), bt = M.t_bool;
  if (t.is_bool()) {
    switch (op.op) {
      case BinOp::Eq: return m.op(spv::OpLogicalEqual, bt, {a, b});
      case BinOp::Ne:
      case BinOp::BitXor: return m.op(spv::OpLogicalNotEqual, bt, {a, b});
      case BinOp::BitAnd: return m.op(spv::OpLogicalAnd, bt, {a, b});
      case BinOp::BitOr: return m.op(spv::OpLogicalOr, bt, {a, b});
      default:
        throw Error(std::string("operator ") + ir::name_of(op.op) + " on bool operands; cast them to i32",
                    loc);
    }
  }
  if (t.is_float()) {
    uint32_t r;
    switch (op.op) {
      case BinOp::Add: r = m.op(spv::OpFAdd, type, {a, b}); break;
      case BinOp::Sub: r = m.op(spv::OpFSub, type, {a, b}); break;
      case BinOp::Mul: r = m.op(spv::OpFMul, type, {a, b}); break;
      case BinOp::Div: r = m.op(spv::OpFDiv, type, {a, b}); break;
      case BinOp::Mod: {
        uint32_t q = glsl(type, spv::GlslFloor, {m.op(spv::OpFDiv, type, {a, b})});
        r = m.op(spv::OpFSub, type, {a, m.op(spv::OpFMul, type, {b, q})});
        break;
      }
      case BinOp::Min: r = glsl(type, spv::GlslNMin, {a, b}); break;
      case BinOp::Max: r = glsl(type, spv::GlslNMax, {a, b}); break;
      case BinOp::Eq: return m.op(spv::OpFOrdEqual, bt, {a, b});
      case BinOp::Ne: return m.op(spv::OpFUnordNotEqual, bt, {a, b});
      case BinOp::Lt: return m.op(spv::OpFOrdLessThan, bt, {a, b});
      case BinOp::Le: return m.op(spv::OpFOrdLessThanEqual, bt, {a, b});
      case BinOp::Gt: return m.op(spv::OpFOrdGreaterThan, bt, {a, b});
      case BinOp::Ge: return m.op(spv::OpFOrdGreaterThanEqual, bt, {a, b});
      default:
        throw Error(std::string("operator ") + ir::name_of(op.op) + " on floating-point operands", loc);
    }
    return round_to(op.dtype, r, loc);
  }
  const bool uns = is_unsigned(t);
  uint32_t r;
  switch (op.op) {
    case BinOp::Add: r = m.op(spv::OpIAdd, type, {a, b}); break;
    case BinOp::Sub: r = m.op(spv::OpISub, type, {a, b}); break;
    case BinOp::Mul: r = m.op(spv::OpIMul, type, {a, b}); break;
    case BinOp::Div:
    case BinOp::Mod: {  // guarded: OpSDiv by 0, or of MIN by -1, is undefined
      SpirvIntOps ops{m, type, bt, M.t_u32, !uns};
      r = ir::lower_int_div(ops, op.op == BinOp::Div, a, b, t, op.b.as_int());
      break;
    }
    case BinOp::Min: r = glsl(type, uns ? spv::GlslUMin : spv::GlslSMin, {a, b}); break;
    case BinOp::Max: r = glsl(type, uns ? spv::GlslUMax : spv::GlslSMax, {a, b}); break;
    case BinOp::Eq: return m.op(spv::OpIEqual, bt, {a, b});
    case BinOp::Ne: return m.op(spv::OpINotEqual, bt, {a, b});
    case BinOp::Lt: return m.op(uns ? spv::OpULessThan : spv::OpSLessThan, bt, {a, b});
    case BinOp::Le: return m.op(uns ? spv::OpULessThanEqual : spv::OpSLessThanEqual, bt, {a, b});
    case BinOp::Gt: return m.op(uns ? spv::OpUGreaterThan : spv::OpSGreaterThan, bt, {a, b});
    case BinOp::Ge: return m.op(uns ? spv::OpUGreaterThanEqual : spv::OpSGreaterThanEqual, bt, {a, b});
    case BinOp::BitAnd: r = m.op(spv::OpBitwiseAnd, type, {a, b}); break;
    case BinOp::BitOr: r = m.op(spv::OpBitwiseOr, type, {a, b}); break;
    case BinOp::BitXor: r = m.op(spv::OpBitwiseXor, type, {a, b}); break;
    case BinOp::Shl:
    case BinOp::Shr: {  // guarded: a count outside [0, width) is undefined in SPIR-V
      SpirvIntOps ops{m, type, bt, M.t_u32, !uns};
      r = ir::lower_int_shift(ops, op.op == BinOp::Shl, a, b, t, op.b.as_int());
      break;
    }
    default: r = 0;
  }
  return wrap_to(op.dtype, r);
}

uint32_t KernelLowering::call(const ir::Call& op) {
  using ir::Intrinsic;
  const SourceLoc& loc = op.loc;
  DType t = op.dtype;
  uint32_t type = M.value_type(t, loc);
  std::vector<uint32_t> args;
  for (const Expr& a : op.args) args.push_back(convert(expr(a), a.dtype(), t, loc));
  if (!t.is_float()) {
    if (op.fn == Intrinsic::Abs)
      return wrap_to(t, is_unsigned(t) ? args[0] : glsl(type, spv::GlslSAbs, args));
    throw Error(std::string("the vulkan target computes ") + ir::name_of(op.fn) + " on floats only", loc);
  }
  const bool dbl = t == f64;
  auto f32_only = [&]() {
    if (dbl)
      throw Error("unsupported: " + std::string("the vulkan target computes ") + ir::name_of(op.fn) +
                      " in f32 only (GLSL.std.450 has no f64 form); cast the argument to f32",
                  loc);
  };
  uint32_t r;
  switch (op.fn) {
    case Intrinsic::Exp:
      f32_only();
      r = glsl(type, spv::GlslExp, args);
      break;
    case Intrinsic::Exp2:
      f32_only();
      r = glsl(type, spv::GlslExp2, args);
      break;
    case Intrinsic::Log:
      f32_only();
      r = glsl(type, spv::GlslLog, args);
      break;
    case Intrinsic::Log2:
      f32_only();
      r = glsl(type, spv::GlslLog2, args);
      break;
    case Intrinsic::Sqrt: r = glsl(type, spv::GlslSqrt, args); break;
    case Intrinsic::Rsqrt:
      r = m.op(spv::OpFDiv, type, {m.constant_float(type, 1.0), glsl(type, spv::GlslSqrt, args)});
      break;
    case Intrinsic::Abs: r = glsl(type, spv::GlslFAbs, args); break;
    case Intrinsic::Tanh:
      f32_only();
      r = glsl(type, spv::GlslTanh, args);
      break;
    case Intrinsic::Sin:
      f32_only();
      r = glsl(type, spv::GlslSin, args);
      break;
    case Intrinsic::Cos:
      f32_only();
      r = glsl(type, spv::GlslCos, args);
      break;
    case Intrinsic::Floor: r = glsl(type, spv::GlslFloor, args); break;
    case Intrinsic::Ceil: r = glsl(type, spv::GlslCeil, args); break;
    case Intrinsic::Round: r = glsl(type, spv::GlslRoundEven, args); break;
    case Intrinsic::Erf:
      f32_only();
      r = erf(args[0]);
      break;
    case Intrinsic::Sigmoid: {
      f32_only();
      uint32_t e = glsl(type, spv::GlslExp, {m.op(spv::OpFNegate, type, {args[0]})});
      r = m.op(spv::OpFDiv, type, {c_f32(1.0), m.op(spv::OpFAdd, type, {c_f32(1.0), e})});
      break;
    }
    case Intrinsic::Pow:
      f32_only();
      r = glsl(type, spv::GlslPow, args);
      break;
    case Intrinsic::Fma: r = glsl(type, spv::GlslFma, args); break;
    default:
      throw Error(std::string("intrinsic ") + ir::name_of(op.fn) + " is not supported by the vulkan target",
                  loc);
  }
  return round_to(t, r, loc);
}

// erf(x) = sign(x) (1 - t (a1 + t (a2 + ...)) e^(-x²)), t = 1 / (1 + p|x|): Abramowitz and
// Stegun 7.1.26 (|error| < 1.5e-7), since GLSL.std.450 has no erf.
uint32_t KernelLowering::erf(uint32_t x) {
  uint32_t f = M.t_f32;
  uint32_t ax = glsl(f, spv::GlslFAbs, {x});
  uint32_t t =
      m.op(spv::OpFDiv, f,
           {c_f32(1.0), m.op(spv::OpFAdd, f, {c_f32(1.0), m.op(spv::OpFMul, f, {c_f32(0.3275911), ax})})});
  const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  uint32_t poly = c_f32(a[0]);
  for (int i = 1; i < 5; ++i) poly = m.op(spv::OpFAdd, f, {c_f32(a[i]), m.op(spv::OpFMul, f, {t, poly})});
  poly = m.op(spv::OpFMul, f, {t, poly});
  uint32_t e = glsl(f, spv::GlslExp, {m.op(spv::OpFNegate, f, {m.op(spv::OpFMul, f, {ax, ax})})});
  uint32_t y = m.op(spv::OpFSub, f, {c_f32(1.0), m.op(spv::OpFMul, f, {poly, e})});
  uint32_t neg = m.op(spv::OpFOrdLessThan, M.t_bool, {x, c_f32(0.0)});
  return m.op(spv::OpSelect, f, {neg, m.op(spv::OpFNegate, f, {y}), y});
}

uint32_t KernelLowering::cast(const ir::Cast& op) {
  return convert(expr(op.a), op.a.dtype(), op.dtype, op.loc);
}

}  // namespace tg::vulkan
