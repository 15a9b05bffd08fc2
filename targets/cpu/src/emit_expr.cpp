// Expressions, conversions and element memory access for the cpu emitter (see emitter.h).
//
//   tile IR:  Xf[i, j] = exp(Xf[i, j] - row_max[i])          (Xf, row_max f32 fragments)
//   LLVM IR:  %a = load float, ptr %xf.ij ; %m = load float, ptr %rm.i
//             %d = fsub float %a, %m ; %e = <exp of %d inline, emit_math.cpp>
//             store float %e, ptr %xf.ij
#include <llvm/IR/Intrinsics.h>

#include <cmath>

#include "emitter.h"
#include "tilegen/ir/int_semantics.h"
#include "tilegen/ir/visitor.h"

namespace tg::cpu {

using namespace ir;
using llvm::Value;

namespace {

/// Float dtypes held in a float register and rounded after every operation.
bool is_emulated_float(DType t) { return t == bf16 || t == fp8_e4m3 || t == fp8_e5m2 || t == fp4_e2m1; }

/// Whether evaluating e may read memory (or report a failed access check): a select around it
/// must then branch (lazy), as the bounds pass relies on select(in_range, load, 0) never
/// performing an out-of-range load.
struct ReadsMemory : IRVisitor {
  bool found = false;
  using IRVisitor::visit;
  void visit(const ir::Load*) override { found = true; }
  void visit(const ir::AccessCheck*) override { found = true; }
};
bool reads_memory(const Expr& e) {
  ReadsMemory r;
  r.visit_expr(e);
  return r.found;
}

/// The operations int_semantics.h's division and shift recipes are written in, as LLVM
/// instructions on registers of one integer type.
struct LlvmIntOps {
  using Value = llvm::Value*;
  llvm::IRBuilder<>& B;
  llvm::Type* type;
  bool is_signed;
  Value imm(int64_t v) { return llvm::ConstantInt::get(type, uint64_t(v), true); }
  Value add(Value a, Value b) { return B.CreateAdd(a, b); }
  Value sub(Value a, Value b) { return B.CreateSub(a, b); }
  Value mul(Value a, Value b) { return B.CreateMul(a, b); }
  Value div_trunc(Value a, Value b) { return is_signed ? B.CreateSDiv(a, b) : B.CreateUDiv(a, b); }
  Value bit_and(Value a, Value b) { return B.CreateAnd(a, b); }
  Value bit_xor(Value a, Value b) { return B.CreateXor(a, b); }
  Value shl(Value a, Value n) { return B.CreateShl(a, n); }
  Value shr(Value a, Value n) { return is_signed ? B.CreateAShr(a, n) : B.CreateLShr(a, n); }
  Value eq(Value a, Value b) { return B.CreateICmpEQ(a, b); }
  Value ne(Value a, Value b) { return B.CreateICmpNE(a, b); }
  Value lt(Value a, Value b) { return is_signed ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b); }
  Value both(Value p, Value q) { return B.CreateAnd(p, q); }
  Value either(Value p, Value q) { return B.CreateOr(p, q); }
  Value select(Value c, Value x, Value y) { return B.CreateSelect(c, x, y); }
};

}  // namespace

llvm::Type* Emitter::reg_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return B.getInt1Ty();
    case TypeCode::I4:
    case TypeCode::U4:
    case TypeCode::I8:
    case TypeCode::U8: return B.getInt8Ty();
    case TypeCode::I16: return B.getInt16Ty();
    case TypeCode::I32:
    case TypeCode::U32: return B.getInt32Ty();
    case TypeCode::I64: return B.getInt64Ty();
    case TypeCode::F16: return B.getHalfTy();
    case TypeCode::F64: return B.getDoubleTy();
    default: return B.getFloatTy();  // f32, bf16, fp8, fp4
  }
}

llvm::Type* Emitter::mem_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return B.getInt8Ty();
    case TypeCode::BF16: return B.getInt16Ty();
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2:
    case TypeCode::F4E2M1: return B.getInt8Ty();
    default: return reg_type(t);
  }
}

Value* Emitter::constant(DType t, double v) {
  if (t.is_float())
    return llvm::ConstantFP::get(reg_type(t), is_emulated_float(t) ? round_float_to(t, v) : v);
  if (t.is_bool()) return B.getInt1(v != 0);
  return llvm::ConstantInt::get(reg_type(t), uint64_t(int64_t(v)), true);
}

/// fp8 / fp4 bits → float: a constant table (256 or 16 entries) the vectoriser can gather from.
Value* Emitter::fp8_table(DType t) {
  std::string name = std::string("tg.decode.") + std::string(t.name());
  if (auto* g = mod.getNamedGlobal(name)) return g;
  int n = t == fp4_e2m1 ? 16 : 256;
  std::vector<llvm::Constant*> vals;
  for (int i = 0; i < n; ++i)
    vals.push_back(llvm::ConstantFP::get(
        B.getFloatTy(), t == fp4_e2m1 ? fp4_bits_to_float(uint8_t(i)) : fp8_bits_to_float(t, uint8_t(i))));
  auto* ty = llvm::ArrayType::get(B.getFloatTy(), uint64_t(n));
  return new llvm::GlobalVariable(mod, ty, true, llvm::GlobalValue::InternalLinkage,
                                  llvm::ConstantArray::get(ty, vals), name);
}

Value* Emitter::round_to(Value* v, DType t) {
  if (t == bf16) return from_bits(to_bits(v, t), t);
  if (t == fp8_e4m3 || t == fp8_e5m2 || t == fp4_e2m1) return from_bits(to_bits(v, t), t);
  return v;
}

// f32 → e4m3 / e5m2 / e2m1 bits with float_to_fp8_bits' (float_to_fp4_bits') rounding, in integer
// and float operations the vectoriser keeps in vectors: ties to even, e4m3 and e2m1 saturating at
// their largest finite value, e5m2 overflowing to inf. Normal range: drop 23 - mbits bits of the f32
// pattern, ties to even (a carry rolls into the exponent), and rebias; below the smallest normal:
// |v| in units of the smallest subnormal, rounded to even (exact: a power-of-two scale). NaN → 0x7F
// for fp8 (its sign dropped), 0 for fp4. The vulkan and GPU-source targets spell the same steps.
Value* Emitter::encode_small_float(Value* v, DType t) {
  const int ebits = t == fp8_e5m2   ? 5
                    : t == fp8_e4m3 ? 4
                                    : 2,
            mbits = t == fp8_e5m2   ? 2
                    : t == fp8_e4m3 ? 3
                                    : 1;
  const int bias = (1 << (ebits - 1)) - 1, drop = 23 - mbits;
  llvm::Type* i32 = B.getInt32Ty();
  Value* u = B.CreateBitCast(v, i32);
  Value* a = B.CreateAnd(u, 0x7fffffff);
  Value* lsb = B.CreateAnd(B.CreateLShr(a, uint64_t(drop)), 1);
  Value* r = B.CreateAdd(a, B.CreateAdd(B.getInt32((1u << (drop - 1)) - 1), lsb));
  Value* normal = B.CreateSub(B.CreateLShr(r, uint64_t(drop)), B.getInt32(uint32_t(127 - bias) << mbits));
  Value* mag = B.CreateBitCast(a, B.getFloatTy());
  Value* scaled = B.CreateFMul(mag, llvm::ConstantFP::get(B.getFloatTy(), std::ldexp(1.0, bias - 1 + mbits)));
  Value* units = B.CreateFPToSI(B.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, scaled), i32);
  Value* sub = B.CreateFCmpOLT(mag, llvm::ConstantFP::get(B.getFloatTy(), std::ldexp(1.0, 1 - bias)));
  Value* code = B.CreateSelect(sub, units, normal);
  const int largest = (1 << (ebits + mbits)) - 1;  // every exponent and mantissa bit set
  if (t == fp8_e5m2)                               // past 57344 (0x7B): inf
    code = B.CreateSelect(B.CreateICmpUGT(code, B.getInt32(0x7B)), B.getInt32(0x7C), code);
  else  // e4m3: 448 (0x7E) is the largest finite, e2m1: 6 (0x7)
    code = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, code,
                                   B.getInt32(uint32_t(t == fp8_e4m3 ? largest - 1 : largest)));
  code = B.CreateOr(code, B.CreateShl(B.CreateLShr(u, 31), uint64_t(ebits + mbits)));
  code = B.CreateSelect(B.CreateFCmpUNO(v, v), B.getInt32(t == fp4_e2m1 ? 0 : 0x7F), code);
  return B.CreateTrunc(code, B.getInt8Ty());
}

// Register value → the integer bits stored in memory.
Value* Emitter::to_bits(Value* v, DType t) {
  switch (t.code) {
    case TypeCode::BF16: {
      Value* u = B.CreateBitCast(v, B.getInt32Ty());
      Value* lsb = B.CreateAnd(B.CreateLShr(u, 16), 1);
      Value* r = B.CreateLShr(B.CreateAdd(u, B.CreateAdd(B.getInt32(0x7FFF), lsb)), 16);
      Value* nan = B.CreateOr(B.CreateLShr(u, 16), 0x40);
      return B.CreateTrunc(B.CreateSelect(B.CreateFCmpUNO(v, v), nan, r), B.getInt16Ty());
    }
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2:
    case TypeCode::F4E2M1: return encode_small_float(v, t);
    case TypeCode::Bool: return B.CreateZExt(v, B.getInt8Ty());
    default: return v;
  }
}

Value* Emitter::from_bits(Value* v, DType t) {
  switch (t.code) {
    case TypeCode::BF16:
      return B.CreateBitCast(B.CreateShl(B.CreateZExt(v, B.getInt32Ty()), 16), B.getFloatTy());
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2:
    case TypeCode::F4E2M1: {
      Value* table = fp8_table(t);
      auto* aty = llvm::cast<llvm::GlobalVariable>(table)->getValueType();
      Value* p = B.CreateInBoundsGEP(aty, table, {B.getInt64(0), B.CreateZExt(v, B.getInt64Ty())});
      return B.CreateLoad(B.getFloatTy(), p);
    }
    case TypeCode::Bool: return B.CreateICmpNE(v, B.getInt8(0));
    default: return v;
  }
}

Value* Emitter::wrap(Value* v, DType t) {
  if (t == int4) return B.CreateAShr(B.CreateShl(v, 4), 4);
  if (t == uint4) return B.CreateAnd(v, 15);
  return v;
}

// C conversions: float → int truncates toward zero and saturates; int → int wraps; narrow floats
// round to nearest even.
Value* Emitter::convert(Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* rt = reg_type(to);
  if (to.is_bool()) {
    if (from.is_float()) return B.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return B.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from.is_bool()) return to.is_float() ? round_to(B.CreateUIToFP(v, rt), to) : B.CreateZExt(v, rt);
  if (!from.is_float() && !to.is_float()) return wrap(B.CreateIntCast(v, rt, from.is_signed_int()), to);
  if (!from.is_float()) {  // int → float: exact in f64; f32 and narrower round from float
    llvm::Type* wide = to == f64 ? B.getDoubleTy() : B.getFloatTy();
    Value* f = from.is_signed_int() ? B.CreateSIToFP(v, wide) : B.CreateUIToFP(v, wide);
    return convert(f, to == f64 ? f64 : f32, to);
  }
  if (!to.is_float()) {  // float → int, saturating
    if (from == f16) v = B.CreateFPExt(v, B.getFloatTy());
    bool is_signed = to.is_signed_int();
    llvm::Type* it = to == int4 || to == uint4 ? B.getIntNTy(4) : rt;
    auto id = is_signed ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    Value* r = B.CreateIntrinsic(id, {it, v->getType()}, {v});
    return it == rt ? r : B.CreateIntCast(r, rt, is_signed);
  }
  // float → float
  if (to == f64) return B.CreateFPExt(from == f16 ? B.CreateFPExt(v, B.getFloatTy()) : v, rt);
  Value* f = v;
  if (from == f64)
    f = B.CreateFPTrunc(v, B.getFloatTy());
  else if (from == f16)
    f = B.CreateFPExt(v, B.getFloatTy());
  if (to == f16) return B.CreateFPTrunc(f, rt);
  return round_to(f, to);  // f32 (unchanged), bf16, fp8, fp4
}

Value* Emitter::expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:  // not through double: i64 constants above 2^53 must stay exact
      if (e.dtype().is_bool()) return B.getInt1(e.as<IntImm>()->value != 0);
      return llvm::ConstantInt::get(reg_type(e.dtype()), uint64_t(e.as<IntImm>()->value), true);
    case ExprKind::FloatImm: return constant(e.dtype(), e.as<FloatImm>()->value);
    case ExprKind::Var: {
      auto it = vars_.find(e.as<VarNode>());
      if (it == vars_.end())
        throw Error("cpu: variable '" + e.as<VarNode>()->name +
                        "' is not bound here (an unbound size or a "
                        "variable used outside its scope)",
                    e->loc);
      return it->second;
    }
    case ExprKind::Binary: return binary(e.as<Binary>());
    case ExprKind::Unary: {
      auto* u = e.as<Unary>();
      Value* a = expr(u->a);
      if (u->op == UnOp::Neg) return e.dtype().is_float() ? B.CreateFNeg(a) : wrap(B.CreateNeg(a), e.dtype());
      if (u->op == UnOp::Not) return B.CreateNot(a);
      return wrap(B.CreateNot(a), e.dtype());
    }
    case ExprKind::Select: return select(e.as<ir::Select>());
    case ExprKind::Cast: return cast(e.as<ir::Cast>());
    case ExprKind::Call: return call(e.as<Call>());
    case ExprKind::Load: {
      auto* l = e.as<ir::Load>();
      Buffer b(l->buffer);
      return load(b, flat_index(b, l->indices));
    }
    case ExprKind::AccessCheck: return access_check(e.as<ir::AccessCheck>());
  }
  throw Error("cpu: unknown expression", e->loc);
}

Value* Emitter::cast(const ir::Cast* op) { return convert(expr(op->a), op->a.dtype(), op->dtype); }

Value* Emitter::select(const ir::Select* op) {
  Value* c = expr(op->cond);
  if (!reads_memory(op->t) && !reads_memory(op->f)) return B.CreateSelect(c, expr(op->t), expr(op->f));
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  auto* tb = llvm::BasicBlock::Create(ctx, "sel.t", fn);
  auto* fb = llvm::BasicBlock::Create(ctx, "sel.f", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "sel.done", fn);
  B.CreateCondBr(c, tb, fb);
  B.SetInsertPoint(tb);
  Value* tv = expr(op->t);
  llvm::BasicBlock* tend = B.GetInsertBlock();
  B.CreateBr(done);
  B.SetInsertPoint(fb);
  Value* fv = expr(op->f);
  llvm::BasicBlock* fend = B.GetInsertBlock();
  B.CreateBr(done);
  B.SetInsertPoint(done);
  llvm::PHINode* phi = B.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, tend);
  phi->addIncoming(fv, fend);
  return phi;
}

Value* Emitter::compare(DType t, Value* a, Value* b, BinOp op) {
  using P = llvm::CmpInst::Predicate;
  if (t.is_float()) {
    P p = op == BinOp::Eq   ? P::FCMP_OEQ
          : op == BinOp::Ne ? P::FCMP_UNE
          : op == BinOp::Lt ? P::FCMP_OLT
          : op == BinOp::Le ? P::FCMP_OLE
          : op == BinOp::Gt ? P::FCMP_OGT
                            : P::FCMP_OGE;
    return B.CreateFCmp(p, a, b);
  }
  bool s = t.is_signed_int();
  P p = op == BinOp::Eq   ? P::ICMP_EQ
        : op == BinOp::Ne ? P::ICMP_NE
        : op == BinOp::Lt ? (s ? P::ICMP_SLT : P::ICMP_ULT)
        : op == BinOp::Le ? (s ? P::ICMP_SLE : P::ICMP_ULE)
        : op == BinOp::Gt ? (s ? P::ICMP_SGT : P::ICMP_UGT)
                          : (s ? P::ICMP_SGE : P::ICMP_UGE);
  return B.CreateICmp(p, a, b);
}

// Float arithmetic in the register type (half arithmetic is done in float and rounded by LLVM);
// the modulo is a - b*floor(a/b) in double, as the interpreter computes it.
Value* Emitter::float_op(DType t, Value* a, Value* b, BinOp op) {
  Value* r = nullptr;
  switch (op) {
    case BinOp::Add: r = B.CreateFAdd(a, b); break;
    case BinOp::Sub: r = B.CreateFSub(a, b); break;
    case BinOp::Mul: r = B.CreateFMul(a, b); break;
    case BinOp::Div: r = B.CreateFDiv(a, b); break;
    case BinOp::Min: r = B.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, b); break;
    case BinOp::Max: r = B.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, b); break;
    case BinOp::Mod: {
      Value *da = convert(a, t, f64), *db = convert(b, t, f64);
      Value* q = B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, B.CreateFDiv(da, db));
      return convert(B.CreateFSub(da, B.CreateFMul(db, q)), f64, t);
    }
    default: throw Error(std::string("cpu: operator ") + name_of(op) + " on floats");
  }
  return round_to(r, t);
}

// Integer arithmetic wraps; Div/Mod/Shl/Shr follow int_semantics.h (guarded: no trap, no
// poison); `known` is the right operand when it is a constant.
Value* Emitter::int_op(DType t, Value* a, Value* b, BinOp op, std::optional<int64_t> known) {
  bool s = t.is_signed_int();
  LlvmIntOps ops{B, a->getType(), s};
  switch (op) {
    case BinOp::Add: return wrap(B.CreateAdd(a, b), t);
    case BinOp::Sub: return wrap(B.CreateSub(a, b), t);
    case BinOp::Mul: return wrap(B.CreateMul(a, b), t);
    case BinOp::Min: return B.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
    case BinOp::Max: return B.CreateBinaryIntrinsic(s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case BinOp::BitAnd:
    case BinOp::And: return B.CreateAnd(a, b);
    case BinOp::BitOr:
    case BinOp::Or: return B.CreateOr(a, b);
    case BinOp::BitXor: return B.CreateXor(a, b);
    case BinOp::Shl:
    case BinOp::Shr: return wrap(lower_int_shift(ops, op == BinOp::Shl, a, b, t, known), t);
    case BinOp::Div:
    case BinOp::Mod: return wrap(lower_int_div(ops, op == BinOp::Div, a, b, t, known), t);
    default: throw Error(std::string("cpu: operator ") + name_of(op) + " on integers");
  }
}

Value* Emitter::binary(const ir::Binary* op) {
  DType t = op->a.dtype();
  Value* a = expr(op->a);
  Value* b = expr(op->b);
  if (is_comparison(op->op)) return compare(t, a, b, op->op);
  if (t.is_float()) return float_op(t, a, b, op->op);
  return int_op(t, a, b, op->op, op->b.as_int());
}

Value* Emitter::call(const ir::Call* op) {
  DType t = op->dtype;
  std::vector<Value*> args;
  for (auto& a : op->args) args.push_back(expr(a));
  if (!t.is_float()) {
    if (op->fn == Intrinsic::Abs)
      return wrap(B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], B.getFalse()), t);
    throw Error(std::string("cpu: ") + name_of(op->fn) + " on integers; cast to a float type first", op->loc);
  }
  // Narrow floats compute in float and round back, as the interpreter computes in double and rounds.
  DType ct = t == f64 ? f64 : f32;
  for (auto& a : args) a = convert(a, t, ct);
  llvm::Type* ty = reg_type(ct);
  auto un = [&](llvm::Intrinsic::ID id) { return B.CreateUnaryIntrinsic(id, args[0]); };
  auto libm = [&](const char* f32_name, const char* f64_name) {
    auto* fty = llvm::FunctionType::get(ty, {ty}, false);
    llvm::FunctionCallee fn = mod.getOrInsertFunction(ct == f64 ? f64_name : f32_name, fty);
    return B.CreateCall(fn, {args[0]});
  };
  Value* one = llvm::ConstantFP::get(ty, 1.0);
  // f32 exp inline (emit_math.cpp); narrow types keep the library's, whose rounding the
  // interpreter's double-then-round matches exactly more often.
  auto exp = [&](Value* x, bool base2) {
    return t == f32 ? exp_f32(x, base2)
                    : B.CreateUnaryIntrinsic(base2 ? llvm::Intrinsic::exp2 : llvm::Intrinsic::exp, x);
  };
  Value* r = nullptr;
  switch (op->fn) {
    case Intrinsic::Exp: r = exp(args[0], false); break;
    case Intrinsic::Exp2: r = exp(args[0], true); break;
    case Intrinsic::Log: r = un(llvm::Intrinsic::log); break;
    case Intrinsic::Log2: r = un(llvm::Intrinsic::log2); break;
    case Intrinsic::Sqrt: r = un(llvm::Intrinsic::sqrt); break;
    case Intrinsic::Rsqrt: r = B.CreateFDiv(one, un(llvm::Intrinsic::sqrt)); break;
    case Intrinsic::Abs: r = un(llvm::Intrinsic::fabs); break;
    case Intrinsic::Tanh: r = libm("tanhf", "tanh"); break;
    case Intrinsic::Sin: r = un(llvm::Intrinsic::sin); break;
    case Intrinsic::Cos: r = un(llvm::Intrinsic::cos); break;
    case Intrinsic::Floor: r = un(llvm::Intrinsic::floor); break;
    case Intrinsic::Ceil: r = un(llvm::Intrinsic::ceil); break;
    case Intrinsic::Round: r = un(llvm::Intrinsic::roundeven); break;
    case Intrinsic::Erf: r = libm("erff", "erf"); break;
    case Intrinsic::Sigmoid: {
      Value* e = exp(B.CreateFNeg(args[0]), false);
      r = B.CreateFDiv(one, B.CreateFAdd(one, e));
      break;
    }
    case Intrinsic::Pow: r = B.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]); break;
    case Intrinsic::Fma:
      r = B.CreateIntrinsic(llvm::Intrinsic::fma, {ty}, {args[0], args[1], args[2]});
      break;
  }
  return convert(r, ct, t);
}

// ---- Memory

Value* Emitter::base(const Buffer& b) {
  auto it = bases_.find(b.get());
  if (it == bases_.end()) throw Error("cpu: buffer " + b->name + " is not declared in this kernel", b->loc);
  return it->second;
}

// Element strides of a buffer: row-major from its constant shape, the last dimension's rows
// padded where gemm_b_row_padding chose to (emit_kernel.cpp).
const std::vector<int64_t>& Emitter::strides(const Buffer& b) {
  auto it = strides_.find(b.get());
  if (it != strides_.end()) return it->second;
  std::vector<int64_t> st(b->shape.size(), 1);
  for (std::size_t d = b->shape.size(); d-- > 1;) {
    auto n = b->shape[d].as_int();
    if (!n) throw Error("cpu: buffer " + b->name + " has a symbolic shape after size binding", b->loc);
    st[d - 1] = st[d] * (*n + (d + 1 == b->shape.size() ? row_pad(b) : 0));
  }
  return strides_.emplace(b.get(), std::move(st)).first->second;
}

int64_t Emitter::row_pad(const Buffer& b) const {
  auto it = row_padding_.find(b.get());
  return it == row_padding_.end() ? 0 : it->second;
}

int64_t Emitter::storage_size(const Buffer& b) const {
  int64_t n = *b.const_numel();
  if (int64_t pad = row_pad(b)) {
    const int64_t row = *b->shape.back().as_int();
    n = n / row * (row + pad);
  }
  return int64_t(storage_bytes(b->dtype, n));
}

// Row-major flat index in i64: Σ idx[d] · stride[d].
Value* Emitter::flat_index(const Buffer& b, const std::vector<Expr>& idx) {
  const std::vector<int64_t>& st = strides(b);
  Value* flat = B.getInt64(0);
  for (std::size_t d = 0; d < idx.size(); ++d) {
    Value* i = B.CreateIntCast(expr(idx[d]), B.getInt64Ty(), idx[d].dtype().is_signed_int());
    flat = B.CreateAdd(flat, B.CreateMul(i, B.getInt64(st[d]), "", false, true), "", false, true);
  }
  return flat;
}

void Emitter::tag_access(llvm::Instruction* i) {
  if (access_groups_.empty()) return;
  if (access_groups_.size() == 1) {
    i->setMetadata(llvm::LLVMContext::MD_access_group, access_groups_[0]);
    return;
  }
  std::vector<llvm::Metadata*> groups(access_groups_.begin(), access_groups_.end());
  i->setMetadata(llvm::LLVMContext::MD_access_group, llvm::MDNode::get(ctx, groups));
}

Value* Emitter::load(const Buffer& b, Value* flat) {
  DType t = b->dtype;
  Value* p = base(b);
  if (t.is_packed()) {  // two a byte: element i in the low nibble of byte i/2 when even
    auto* ld = B.CreateLoad(B.getInt8Ty(), B.CreateInBoundsGEP(B.getInt8Ty(), p, B.CreateAShr(flat, 1)));
    tag_access(ld);
    Value* shift = B.CreateTrunc(B.CreateShl(B.CreateAnd(flat, 1), 2), B.getInt8Ty());
    Value* nib = B.CreateAnd(B.CreateLShr(ld, shift), 15);
    return t == fp4_e2m1 ? from_bits(nib, t) : wrap(nib, t);
  }
  llvm::Type* mt = mem_type(t);
  auto* ld = B.CreateLoad(mt, B.CreateInBoundsGEP(mt, p, flat));
  tag_access(ld);
  return from_bits(ld, t);
}

void Emitter::store(const Buffer& b, Value* flat, Value* v) {
  DType t = b->dtype;
  Value* p = base(b);
  if (t.is_packed()) {
    Value* addr = B.CreateInBoundsGEP(B.getInt8Ty(), p, B.CreateAShr(flat, 1));
    Value* nib = B.CreateAnd(t == fp4_e2m1 ? to_bits(v, t) : v, 15);
    Value* shift = B.CreateTrunc(B.CreateShl(B.CreateAnd(flat, 1), 2), B.getInt8Ty());
    // Read-modify-write of a shared byte: never tagged parallel (two iterations may share it).
    auto* old = B.CreateLoad(B.getInt8Ty(), addr);
    Value* keep = B.CreateAnd(old, B.CreateNot(B.CreateShl(B.getInt8(15), shift)));
    B.CreateStore(B.CreateOr(keep, B.CreateShl(nib, shift)), addr);
    return;
  }
  llvm::Type* mt = mem_type(t);
  tag_access(B.CreateStore(to_bits(v, t), B.CreateInBoundsGEP(mt, p, flat)));
}

// A compare-and-swap loop on the element's bits: one code path for every dtype and operation
// (x86 has no float atomics; LLVM would expand atomicrmw fadd the same way).
void Emitter::atomic(AtomicOp op, const Buffer& b, Value* flat, Value* v, const SourceLoc& loc) {
  DType t = b->dtype;
  if (t.is_packed() || t.is_bool())
    throw Error("cpu: atomic on " + std::string(t.name()) + " buffer " + b->name + " is not supported", loc);
  llvm::Type* it = B.getIntNTy(unsigned(t.bits()));
  Value* addr = B.CreateInBoundsGEP(it, base(b), flat);
  auto bits_of = [&](Value* x) {
    Value* m = to_bits(x, t);
    return m->getType()->isIntegerTy() ? m : B.CreateBitCast(m, it);
  };
  auto value_of = [&](Value* bits) {
    llvm::Type* mt = mem_type(t);
    return from_bits(mt->isIntegerTy() ? bits : B.CreateBitCast(bits, mt), t);
  };
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* old0 = B.CreateLoad(it, addr);
  auto* retry = llvm::BasicBlock::Create(ctx, "atomic", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "atomic.done", fn);
  B.CreateBr(retry);
  B.SetInsertPoint(retry);
  llvm::PHINode* old = B.CreatePHI(it, 2);
  old->addIncoming(old0, pre);
  Value* cur = value_of(old);
  BinOp bop = op == AtomicOp::Add ? BinOp::Add : op == AtomicOp::Max ? BinOp::Max : BinOp::Min;
  Value* next = t.is_float() ? float_op(t, cur, v, bop) : int_op(t, cur, v, bop, std::nullopt);
  auto* cx = B.CreateAtomicCmpXchg(addr, old, bits_of(next), llvm::MaybeAlign(),
                                   llvm::AtomicOrdering::SequentiallyConsistent,
                                   llvm::AtomicOrdering::SequentiallyConsistent);
  old->addIncoming(B.CreateExtractValue(cx, 0), B.GetInsertBlock());
  B.CreateCondBr(B.CreateExtractValue(cx, 1), done, retry);
  B.SetInsertPoint(done);
}

}  // namespace tg::cpu
