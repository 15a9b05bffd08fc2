// CUDA C++ emission (see cuda_codegen.h). Expressions are emitted in "value" types (float for
// every float format up to f32, double, int, long long, bool); buffers hold "storage" types
// (the formats' bits), converted at each load and store by the device-header helpers.
#include "cuda_codegen.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "ldmatrix_match.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/shared_memory_plan.h"

namespace tg::cuda {

namespace {

// Whether s stores a global load into a shared buffer: the first statement of a pipelined body's
// copy phase (pipeline_shared's guarded fill of a later iteration's slot).
bool fills_shared_from_global(const Stmt& s) {
  struct Find : IRVisitor {
    bool found = false, into_shared = false;
    void visit(const ir::Store* op) override {
      into_shared = op->buffer->scope == Scope::Shared;
      IRVisitor::visit(op);
      into_shared = false;
    }
    void visit(const ir::Load* op) override {
      if (into_shared && op->buffer->scope == Scope::Global) found = true;
      IRVisitor::visit(op);
    }
  } f;
  f.visit_stmt(s);
  return f.found;
}

std::string value_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return "bool";
    case TypeCode::U32: return "tg_u32";
    case TypeCode::I64: return "long long";
    case TypeCode::F64: return "double";
    default: return t.is_float() ? "float" : "int";
  }
}

std::string storage_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return "bool";
    case TypeCode::I8: return "signed char";
    case TypeCode::I16: return "short";
    case TypeCode::I32: return "int";
    case TypeCode::U32: return "tg_u32";
    case TypeCode::I64: return "long long";
    case TypeCode::F16:
    case TypeCode::BF16: return "tg_u16";
    case TypeCode::F32: return "float";
    case TypeCode::F64: return "double";
    default: return "tg_u8";  // u8, fp8, and the packed 4-bit types (two a byte)
  }
}

std::string round_to(DType t, const std::string& v) {
  if (t == f16) return "tg_round_f16(" + v + ")";
  if (t == bf16) return "tg_round_bf16(" + v + ")";
  return v;
}

std::string float_literal(double v, DType t) {
  const bool dbl = t == f64;
  if (std::isnan(v)) return dbl ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) {
    std::string inf = dbl ? "__longlong_as_double(0x7ff0000000000000LL)" : "__int_as_float(0x7f800000)";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, dbl ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return dbl ? s : s + "f";
}

// Shared tiles whose rows are a multiple of 32 bytes get 16 bytes of padding a row, so the
// threads of a warp reading a column-slice (the mma operand loads) hit distinct banks.
int64_t pitch_of(const ir::BufferNode& b) {
  auto cols = b.shape.back().as_int();
  if (!cols || b.scope != Scope::Shared || b.shape.size() < 2 || b.dtype.is_packed()) return cols.value_or(0);
  return (*cols * b.dtype.bits() / 8) % 32 == 0 ? *cols + 128 / b.dtype.bits() : *cols;
}

// Element strides of each dimension in storage (row-major, last dimension padded by pitch_of).
std::vector<int64_t> strides_of(const ir::BufferNode& b) {
  std::vector<int64_t> st(b.shape.size(), 1);
  for (std::size_t d = b.shape.size() - 1; d-- > 0;) {
    auto next = b.shape[d + 1].as_int();
    if (!next) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
    st[d] = st[d + 1] * (d + 1 == b.shape.size() - 1 ? pitch_of(b) : *next);
  }
  return st;
}

// Elements of storage a buffer occupies (padding included).
int64_t stored_elements(const ir::BufferNode& b) {
  auto first = b.shape.front().as_int();
  if (!first) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
  return b.shape.size() == 1 ? *first : strides_of(b)[0] * *first;
}

bool is_zero(const Expr& e) {
  auto v = e.as_int();
  return v && *v == 0;
}

int log2_if_power(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return -1;
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

const std::set<std::string>& reserved() {
  static const std::set<std::string> r = {
      "int",       "float",    "double",   "char",     "short",     "long",      "for",      "if",
      "else",      "while",    "do",       "return",   "const",     "auto",      "half",     "signed",
      "unsigned",  "void",     "bool",     "true",     "false",     "new",       "delete",   "this",
      "class",     "struct",   "template", "typename", "register",  "default",   "switch",   "case",
      "break",     "continue", "static",   "extern",   "inline",    "volatile",  "union",    "enum",
      "goto",      "sizeof",   "operator", "private",  "public",    "protected", "friend",   "virtual",
      "namespace", "using",    "try",      "catch",    "throw",     "asm",       "min",      "max",
      "exp",       "log",      "abs",      "dim3",     "threadIdx", "blockIdx",  "blockDim", "gridDim",
      "warpSize",  "uint4",    "float4",   "int4",     "tg_smem"};
  return r;
}

// One __global__ function.
class KernelEmitter {
 public:
  KernelEmitter(const Function& f, const KernelPlan& p, const EmitOptions& o)
      : f_(f), p_(p), ldmatrix_(o.ldmatrix), cp_async_(o.cp_async) {}

  std::string emit() {
    const ir::Kernel& k = *p_.kernel;
    std::string params;
    for (const Param& prm : f_.params) {
      if (prm.kind == Param::Kind::Size)
        throw Error("size " + prm.name() + " is not bound; the cuda target compiles specialised kernels",
                    f_.loc);
      std::string n =
          declare(prm.kind == Param::Kind::Tensor ? prm.buffer->name : prm.var.name(),
                  prm.kind == Param::Kind::Tensor ? (const void*)prm.buffer.get() : prm.var.get());
      params += (params.empty() ? "" : ", ") + (prm.kind == Param::Kind::Tensor
                                                    ? storage_type(prm.buffer->dtype) + "* __restrict__ " + n
                                                    : value_type(prm.var.dtype()) + " " + n);
    }
    os_ << "extern \"C\" __global__ void __launch_bounds__(" << k.threads << ") " << p_.name << "(" << params
        << ") {\n";
    indent_ = 1;
    if (p_.shared.bytes > 0) line("extern __shared__ __align__(16) tg_u8 tg_smem[];");
    for (auto& [b, off] : p_.shared.offsets) {
      std::string t = storage_type(b->dtype);
      line(t + "* " + declare(b->name, b.get()) + " = reinterpret_cast<" + t + "*>(tg_smem + " +
           std::to_string(off) + ");");
    }
    for (const Buffer& b : k.buffers) {
      if (b->scope != Scope::Local) continue;
      auto n = b.const_numel();
      if (!n) throw Error("local " + b->name + " needs a constant shape", b->loc);
      int64_t count = b->dtype.is_packed() ? (*n + 1) / 2 : *n;
      line("__align__(16) " + storage_type(b->dtype) + " " + declare(b->name, b.get()) + "[" +
           std::to_string(count) + "];");
    }
    if (std::any_of(k.buffers.begin(), k.buffers.end(),
                    [](const Buffer& b) { return b->scope == Scope::Fragment; }))
      throw Error(
          "kernel " + p_.name + " still has fragments; run the gpu pipeline (partition_threads) first",
          k.loc);
    static const char* dims[] = {"x", "y", "z"};
    for (std::size_t d = 0; d < k.block_vars.size(); ++d)
      line("const int " + declare(k.block_vars[d].name(), k.block_vars[d].get()) + " = blockIdx." + dims[d] +
           ";");
    line("const int " + declare(k.thread_var.name(), k.thread_var.get()) + " = threadIdx.x;");
    stmt(k.body);
    os_ << "}\n";
    return os_.str();
  }

 private:
  // ---- names: the IR's, made valid and unique within the kernel.
  std::string declare(const std::string& want, const void* key) {
    std::string base;
    for (char c : want) base += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
    if (base.empty() || std::isdigit((unsigned char)base[0]) || reserved().count(base)) base = "v_" + base;
    std::string n = base;
    for (int i = 1; used_.count(n); ++i) n = base + "_" + std::to_string(i);
    used_.insert(n);
    names_[key] = n;
    return n;
  }
  std::string name(const void* key, const std::string& fallback) {
    auto it = names_.find(key);
    if (it == names_.end()) throw Error("cuda codegen: " + fallback + " is used before it is declared");
    return it->second;
  }
  void line(const std::string& s) { os_ << std::string(std::size_t(indent_) * 2, ' ') << s << "\n"; }

  // ---- expressions
  std::string linear_index(const ir::BufferNode& b, const std::vector<Expr>& idx) {
    const bool wide = stored_elements(b) >= (int64_t(1) << 31);
    const std::vector<int64_t> st = strides_of(b);
    std::string out;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      std::string term = wide ? "(long long)(" + expr(idx[d]) + ")" : expr(idx[d]);
      if (st[d] != 1) term = "(" + term + ") * " + std::to_string(st[d]);
      out = out.empty() ? term : out + " + " + term;
    }
    return out.empty() ? "0" : out;
  }

  // ---- vector moves: for v in vectorized(0 +: V) { let ... { dst[..v..] = src[..v..] } } where
  // both element indices advance by 1 with v from a multiple of V, becomes one 2-, 4-, 8- or
  // 16-byte move. Returns false (and emits nothing) when the loop is not of that form.
  static Expr flat_index(const ir::BufferNode& b, const std::vector<Expr>& idx) {
    std::vector<int64_t> st = strides_of(b);
    Expr flat = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) flat = flat + idx[d] * Expr(st[d]);
    return flat;
  }
  static bool aligned_unit_step(const Expr& flat, const Var& v, int64_t width) {
    LinearForm f = linear_form(flat);
    if (f.constant % width != 0) return false;
    int64_t step = 0;
    for (auto& [term, coeff] : f.terms) {
      if (term.same_as(v))
        step += coeff;
      else if (coeff % width != 0 || uses_var(term, v))
        return false;
    }
    return step == 1;
  }
  static bool uses_var(const Expr& e, const Var& v) {
    struct Finder : IRVisitor {
      const ir::VarNode* v;
      bool found = false;
      void visit(const ir::VarNode* op) override { found |= op == v; }
    } finder;
    finder.v = v.node();
    finder.visit_expr(e);
    return finder.found;
  }
  bool vector_move(const ir::For& op) {
    auto width = op.extent.as_int();
    if (!width || !is_zero(op.min)) return false;
    Stmt body = op.body;
    std::vector<std::pair<Var, Expr>> lets;
    while (const auto* let = body.as<ir::Let>()) {
      lets.emplace_back(let->var, substitute(let->value, lets));
      body = let->body;
    }
    const auto* st = body.as<ir::Store>();
    const auto* ld = st ? st->value.as<ir::Load>() : nullptr;
    if (!ld || ld->buffer->dtype != st->buffer->dtype) return false;
    const bool packed = st->buffer->dtype.is_packed();  // two elements a byte: address bytes
    if (*width * st->buffer->dtype.bits() % 8 != 0) return false;
    const int64_t bytes = *width * st->buffer->dtype.bits() / 8;
    const char* type = bytes == 16  ? "uint4"
                       : bytes == 8 ? "uint2"
                       : bytes == 4 ? "tg_u32"
                       : bytes == 2 ? "tg_u16"
                                    : nullptr;
    if (!type) return false;
    std::vector<Expr> di, si;
    for (const Expr& e : st->indices) di.push_back(substitute(e, lets));
    for (const Expr& e : ld->indices) si.push_back(substitute(e, lets));
    Expr dflat = flat_index(*st->buffer.get(), di), sflat = flat_index(*ld->buffer, si);
    if (!aligned_unit_step(dflat, op.var, *width) || !aligned_unit_step(sflat, op.var, *width)) return false;
    std::vector<std::pair<Var, Expr>> at_zero = {{op.var, Expr(0)}};
    for (auto& e : di) e = substitute(e, at_zero);
    for (auto& e : si) e = substitute(e, at_zero);
    std::string t = type;
    auto at = [&](const ir::BufferNode& b, const std::vector<Expr>& idx) {
      std::string i = linear_index(b, idx);
      return packed ? "(" + i + ") >> 1" : i;
    };
    if (async_open_ && bytes >= 4 && st->buffer->scope == Scope::Shared &&
        ld->buffer->scope == Scope::Global) {
      line("tg_cp_async<" + std::to_string(bytes) + ">(&" + name(st->buffer.get(), st->buffer->name) + "[" +
           at(*st->buffer.get(), di) + "], &" + name(ld->buffer.get(), ld->buffer->name) + "[" +
           at(*ld->buffer, si) + "]);");
      return true;
    }
    line("*reinterpret_cast<" + t + "*>(&" + name(st->buffer.get(), st->buffer->name) + "[" +
         at(*st->buffer.get(), di) + "]) = *reinterpret_cast<const " + t + "*>(&" +
         name(ld->buffer.get(), ld->buffer->name) + "[" + at(*ld->buffer, si) + "]);");
    return true;
  }

  // An operand load that match_ldmatrix proves equal to one ldmatrix.
  bool ldmatrix(const ir::For& op) {
    if (!ldmatrix_ || !lane_.defined()) return false;
    auto m = match_ldmatrix(op, lane_, [](const ir::BufferNode& b) { return strides_of(b); });
    if (!m) return false;
    line("tg_ldmatrix_x" + std::to_string(m->matrices) + (m->trans ? "_trans" : "") +
         "(reinterpret_cast<tg_u32*>(&" + name(m->regs.get(), m->regs->name) + "[" + expr(m->reg_base) +
         "]), &" + name(m->src.get(), m->src->name) + "[" + expr(m->src_index) + "]);");
    return true;
  }

  std::string load(const ir::Load& op) {
    std::string buf = name(op.buffer.get(), op.buffer->name), at = linear_index(*op.buffer.get(), op.indices);
    switch (op.buffer->dtype.code) {
      case TypeCode::F16: return "tg_f16_to_f32(" + buf + "[" + at + "])";
      case TypeCode::BF16: return "tg_bf16_to_f32(" + buf + "[" + at + "])";
      case TypeCode::F8E4M3: return "tg_e4m3_to_f32(" + buf + "[" + at + "])";
      case TypeCode::F8E5M2: return "tg_e5m2_to_f32(" + buf + "[" + at + "])";
      case TypeCode::F4E2M1: return "tg_e2m1_to_f32(tg_ld_u4(" + buf + ", " + at + "))";
      case TypeCode::I4: return "tg_ld_i4(" + buf + ", " + at + ")";
      case TypeCode::U4: return "tg_ld_u4(" + buf + ", " + at + ")";
      default: return buf + "[" + at + "]";
    }
  }

  std::string cast(DType to, const Expr& a) {
    std::string v = expr(a);
    DType from = a.dtype();
    if (to == from) return v;
    if (to.is_bool()) return "((" + v + ") != 0)";
    if (to == f16 || to == bf16) return round_to(to, "(float)(" + v + ")");
    if (to == f32) return "((float)(" + v + "))";
    if (to == f64) return "((double)(" + v + "))";
    if (to.is_float())
      throw Error("the cuda target cannot convert to " + std::string(to.name()) + " in a kernel yet; keep " +
                      std::string(to.name()) + " for inputs",
                  a->loc);
    if (to.is_packed()) {  // wrap to 4 bits
      std::string w = "((int)(" + v + ") & 15)";
      return to.is_signed_int() ? "((" + w + " ^ 8) - 8)" : w;
    }
    return "((" + value_type(to) + ")(" + storage_type(to) + ")(" + v + "))";
  }

  std::string binary(const ir::Binary& op) {
    using ir::BinOp;
    std::string a = expr(op.a), b = expr(op.b);
    DType t = op.a.dtype();
    auto infix = [&](const char* s) { return "(" + a + " " + s + " " + b + ")"; };
    std::string r;
    switch (op.op) {
      case BinOp::Add: r = infix("+"); break;
      case BinOp::Sub: r = infix("-"); break;
      case BinOp::Mul: r = infix("*"); break;
      case BinOp::Div:
      case BinOp::Mod: {
        bool div = op.op == BinOp::Div;
        if (t.is_float())
          r = div ? infix("/") : "tg_floormod(" + a + ", " + b + ")";
        else if (int k = log2_if_power(op.b.as_int().value_or(-1)); k >= 0)
          r = div ? "(" + a + " >> " + std::to_string(k) + ")"
                  : "(" + a + " & " + std::to_string((int64_t(1) << k) - 1) + ")";
        else
          r = std::string(div ? "tg_floordiv<" : "tg_floormod<") + value_type(t) + ">(" + a + ", " + b + ")";
        break;
      }
      case BinOp::Min: r = "tg_min<" + value_type(t) + ">(" + a + ", " + b + ")"; break;
      case BinOp::Max: r = "tg_max<" + value_type(t) + ">(" + a + ", " + b + ")"; break;
      case BinOp::Eq: return infix("==");
      case BinOp::Ne: return infix("!=");
      case BinOp::Lt: return infix("<");
      case BinOp::Le: return infix("<=");
      case BinOp::Gt: return infix(">");
      case BinOp::Ge: return infix(">=");
      case BinOp::And: return infix("&&");
      case BinOp::Or: return infix("||");
      case BinOp::BitAnd: r = infix("&"); break;
      case BinOp::BitOr: r = infix("|"); break;
      case BinOp::BitXor: r = infix("^"); break;
      case BinOp::Shl: r = infix("<<"); break;
      case BinOp::Shr: r = infix(">>"); break;
    }
    return round_to(op.dtype, r);
  }

  std::string call(const ir::Call& op) {
    using ir::Intrinsic;
    const bool dbl = op.dtype == f64;
    std::vector<std::string> args;
    for (const Expr& e : op.args) args.push_back(expr(e));
    auto fn = [&](const char* f32name, const char* f64name) {
      std::string s = std::string(dbl ? f64name : f32name) + "(";
      for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      return round_to(op.dtype, s + ")");
    };
    if (!op.dtype.is_float()) {
      if (op.fn == Intrinsic::Abs) return "abs(" + args[0] + ")";
      throw Error(std::string("the cuda target computes ") + ir::name_of(op.fn) + " on floats only", op.loc);
    }
    switch (op.fn) {
      case Intrinsic::Exp: return fn("expf", "exp");
      case Intrinsic::Exp2: return fn("exp2f", "exp2");
      case Intrinsic::Log: return fn("logf", "log");
      case Intrinsic::Log2: return fn("log2f", "log2");
      case Intrinsic::Sqrt: return fn("sqrtf", "sqrt");
      case Intrinsic::Rsqrt:
        return round_to(op.dtype, dbl ? "(1.0 / sqrt(" + args[0] + "))" : "(1.0f / sqrtf(" + args[0] + "))");
      case Intrinsic::Abs: return fn("fabsf", "fabs");
      case Intrinsic::Tanh: return fn("tanhf", "tanh");
      case Intrinsic::Sin: return fn("sinf", "sin");
      case Intrinsic::Cos: return fn("cosf", "cos");
      case Intrinsic::Floor: return fn("floorf", "floor");
      case Intrinsic::Ceil: return fn("ceilf", "ceil");
      case Intrinsic::Round: return fn("roundf", "round");
      case Intrinsic::Erf: return fn("erff", "erf");
      case Intrinsic::Sigmoid: return fn("tg_sigmoid", "tg_sigmoid");
      case Intrinsic::Pow: return fn("powf", "pow");
      case Intrinsic::Fma: return fn("fmaf", "fma");
    }
    return "";
  }

  std::string expr(const Expr& e) {
    switch (e->kind) {
      case ir::ExprKind::IntImm: {
        int64_t v = e.as<ir::IntImm>()->value;
        if (e.dtype().is_bool()) return v ? "true" : "false";
        if (e.dtype() == i64) return "(" + std::to_string(v) + "LL)";
        return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
      }
      case ir::ExprKind::FloatImm: return float_literal(e.as<ir::FloatImm>()->value, e.dtype());
      case ir::ExprKind::Var: return name(e.get(), e.as<ir::VarNode>()->name);
      case ir::ExprKind::Binary: return binary(*e.as<ir::Binary>());
      case ir::ExprKind::Unary: {
        const auto* u = e.as<ir::Unary>();
        const char* op = u->op == ir::UnOp::Neg ? "-" : u->op == ir::UnOp::Not ? "!" : "~";
        return "(" + std::string(op) + expr(u->a) + ")";
      }
      case ir::ExprKind::Select: {
        const auto* s = e.as<ir::Select>();
        return "(" + expr(s->cond) + " ? " + expr(s->t) + " : " + expr(s->f) + ")";
      }
      case ir::ExprKind::Cast: return cast(e.dtype(), e.as<ir::Cast>()->a);
      case ir::ExprKind::Call: return call(*e.as<ir::Call>());
      case ir::ExprKind::Load: return load(*e.as<ir::Load>());
    }
    return "";
  }

  // ---- statements
  void store(const ir::Store& op) {
    std::string buf = name(op.buffer.get(), op.buffer->name), at = linear_index(*op.buffer.get(), op.indices);
    DType t = op.buffer->dtype;
    // Same-format element moves copy the bits (no conversion round trip).
    if (const auto* src = op.value.as<ir::Load>(); src && src->buffer->dtype == t && !t.is_packed())
      return line(buf + "[" + at + "] = " + name(src->buffer.get(), src->buffer->name) + "[" +
                  linear_index(*src->buffer, src->indices) + "];");
    std::string v = expr(op.value);
    if (t == f16) return line(buf + "[" + at + "] = tg_f32_to_f16(" + v + ");");
    if (t == bf16) return line(buf + "[" + at + "] = tg_f32_to_bf16(" + v + ");");
    if (t == int4 || t == uint4) return line("tg_st_4(" + buf + ", " + at + ", " + v + ");");
    if (t.is_float() && t.bits() < 16)
      throw Error("the cuda target cannot store " + std::string(t.name()) + " elements yet", op.loc);
    line(buf + "[" + at + "] = " + v + ";");
  }

  void atomic(const ir::Atomic& op) {
    DType t = op.buffer->dtype;
    if (t != f32 && t != i32)
      throw Error("the cuda target performs atomics on f32 and i32 only; accumulate in one of those", op.loc);
    std::string target =
        "&" + name(op.buffer.get(), op.buffer->name) + "[" + linear_index(*op.buffer.get(), op.indices) + "]";
    const char* fn = op.op == AtomicOp::Add   ? "atomicAdd"
                     : op.op == AtomicOp::Max ? "tg_atomic_max"
                                              : "tg_atomic_min";
    line(std::string(fn) + "(" + target + ", " + expr(op.value) + ");");
  }

  void mma(const ir::Mma& op) {
    if (op.unit != "mma_m16n8k16_f16_f32" && op.unit != "mma_m16n8k16_bf16_f32")
      throw Error("the cuda target has no instruction for matrix unit " + op.unit +
                      "; use mma_m16n8k16_f16_f32 or mma_m16n8k16_bf16_f32",
                  op.loc);
    auto ref = [&](const ir::MmaOperand& o) {
      return "&" + name(o.buffer.get(), o.buffer->name) + "[" + expr(o.offset) + "]";
    };
    line("tg_" + op.unit + "(" + ref(op.c) + ", " + ref(op.a) + ", " + ref(op.b) + ");");
  }

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case ir::StmtKind::Seq:
        for (const Stmt& x : s.as<ir::Seq>()->stmts) stmt(x);
        return;
      case ir::StmtKind::Store: return store(*s.as<ir::Store>());
      case ir::StmtKind::Atomic: return atomic(*s.as<ir::Atomic>());
      case ir::StmtKind::Barrier:
        if (async_open_)
          line("tg_cp_async_wait_all();");  // a barrier inside the copy phase: finish the copies
        return line("__syncthreads();");
      case ir::StmtKind::Mma: return mma(*s.as<ir::Mma>());
      case ir::StmtKind::If: {
        const auto* op = s.as<ir::If>();
        line("if (" + expr(op->cond) + ") {");
        block(op->then_body);
        if (op->else_body) {
          line("} else {");
          block(op->else_body);
        }
        return line("}");
      }
      case ir::StmtKind::Let: {
        const auto* op = s.as<ir::Let>();
        std::string v = expr(op->value);  // before the name exists: the value cannot see it
        if (const auto* m = op->value.as<ir::Binary>();
            m && m->op == ir::BinOp::Mod && m->a.same_as(p_.kernel->thread_var) && m->b.as_int() == 32)
          lane_ = op->var;  // the lane index, for ldmatrix
        bool again = bound_.count(op->var.get());
        if (again) line("{"), ++indent_;
        bound_.insert(op->var.get());
        line("const " + value_type(op->var.dtype()) + " " + declare(op->var.name(), op->var.get()) + " = " +
             v + ";");
        stmt(op->body);
        if (again) --indent_, line("}");
        return;
      }
      case ir::StmtKind::For: {
        const auto* op = s.as<ir::For>();
        if (op->for_kind == ForKind::Vectorized && vector_move(*op)) return;
        if (op->for_kind == ForKind::Unrolled && ldmatrix(*op)) return;
        std::string lo = expr(op->min), n = expr(op->extent);
        if (op->for_kind == ForKind::Unrolled || op->for_kind == ForKind::Vectorized) line("#pragma unroll");
        std::string v = declare(op->var.name(), op->var.get()), t = value_type(op->var.dtype());
        std::string end = is_zero(op->min) ? n : lo + " + " + n;
        line("for (" + t + " " + v + " = " + lo + "; " + v + " < " + end + "; ++" + v + ") {");
        if (cp_async_ && op->for_kind == ForKind::Pipelined && op->stages >= 2 && op->body.as<ir::Seq>())
          pipelined_body(*op);
        else
          block(op->body);
        return line("}");
      }
      default:
        throw Error(
            "the cuda target emits per-thread code only; run the gpu pipeline (partition_threads) first",
            s->loc);
    }
  }
  // The body of a loop that pipeline_shared multi-buffered (see its header for the contract):
  // its leading global-to-shared copies become cp.async, committed as one group at the first
  // barrier, which waits until at most stages - 1 groups are in flight.
  //   __syncthreads();  tg_cp_async<16>(...); ...  tg_cp_async_commit(); tg_cp_async_wait<2>();
  //   __syncthreads();  <reads>
  // Every iteration commits exactly one group (empty when the guarded fill was simplified away)
  // and waits for it before the barrier that precedes the reads. Without fills — the trip count is
  // at most stages - 1, so every tile came from the prologue — the wait goes before the leading
  // barrier, never after the reads:  tg_cp_async_commit(); tg_cp_async_wait<2>(); __syncthreads(); <reads>
  void pipelined_body(const ir::For& op) {
    ++indent_;
    const std::vector<Stmt>& stmts = op.body.as<ir::Seq>()->stmts;
    std::size_t i = 0;
    while (i < stmts.size() && stmts[i]->kind == ir::StmtKind::Barrier) ++i;
    if (i == stmts.size() || !fills_shared_from_global(stmts[i])) {
      line("tg_cp_async_commit();");
      line("tg_cp_async_wait<" + std::to_string(op.stages - 1) + ">();");
      for (const Stmt& s : stmts) stmt(s);
      --indent_;
      return;
    }
    for (std::size_t j = 0; j < i; ++j) stmt(stmts[j]);
    async_open_ = true;
    for (; i < stmts.size(); ++i) {
      if (async_open_ && stmts[i]->kind == ir::StmtKind::Barrier) {
        async_open_ = false;
        line("tg_cp_async_commit();");
        line("tg_cp_async_wait<" + std::to_string(op.stages - 1) + ">();");
      }
      stmt(stmts[i]);
    }
    if (async_open_) {  // no barrier after the copies: complete them here
      async_open_ = false;
      line("tg_cp_async_wait_all();");
    }
    --indent_;
  }

  void block(const Stmt& s) {
    ++indent_;
    stmt(s);
    --indent_;
  }

  const Function& f_;
  const KernelPlan& p_;
  std::ostringstream os_;
  int indent_ = 0;
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
  std::set<const void*> bound_;
  bool async_open_ = false;  // inside the copy phase of a pipelined loop body
  bool ldmatrix_ = true;
  bool cp_async_ = true;
  Var lane_;  // the innermost let of thread index mod 32
};

}  // namespace

std::vector<KernelPlan> plan_kernels(const Function& f, const TargetInfo& info) {
  std::vector<const ir::Kernel*> kernels;
  if (const auto* k = f.body.as<ir::Kernel>())
    kernels.push_back(k);
  else if (const auto* s = f.body.as<ir::Seq>())
    for (const Stmt& st : s->stmts)
      if (const auto* k = st.as<ir::Kernel>()) kernels.push_back(k);
  std::vector<KernelPlan> out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    KernelPlan p;
    p.kernel = kernels[i];
    p.name = kernels.size() == 1 ? f.name : f.name + "_k" + std::to_string(i);
    SharedMemoryPlan plan = plan_shared_memory(
        *kernels[i],
        [](const Buffer& b) { return int64_t(storage_bytes(b->dtype, stored_elements(*b.get()))); },
        info.shared_mem_bytes, info.device_name);
    p.shared.offsets = std::move(plan.offsets);
    p.shared.bytes = plan.bytes;
    out.push_back(std::move(p));
  }
  if (out.empty()) throw Error("function " + f.name + " has no kernel to emit", f.loc);
  return out;
}

std::string emit_cuda(const Function& f, const TargetInfo& info, const EmitOptions& opt) {
  std::ostringstream os;
  os << "// " << f.name << ": generated by tilegen for " << info.arch << "\n#include \"tilegen_device.h\"\n";
  for (const KernelPlan& p : plan_kernels(f, info)) os << "\n" << KernelEmitter(f, p, opt).emit();
  return os.str();
}

}  // namespace tg::cuda
