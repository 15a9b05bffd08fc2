// The shared emitter of GPU source targets (see gpu_source.h): names, expressions, statements.
#include "tilegen/common/gpu_source.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "tilegen/ir/access_check.h"
#include "tilegen/ir/int_semantics.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/vector_move.h"

namespace tg::gpu {

namespace {

// A float value rounded to t's format, held as float (fp8 and fp4 through their bits, with the
// interpreter's ties to even and saturation).
std::string round_to(DType t, const std::string& v) {
  if (t == f16) return "tg_round_f16(" + v + ")";
  if (t == bf16) return "tg_round_bf16(" + v + ")";
  if (t == fp8_e4m3 || t == fp8_e5m2)
    return "tg_" + std::string(t.name()) + "_to_f32(tg_f32_to_" + std::string(t.name()) + "(" + v + "))";
  if (t == fp4_e2m1) return "tg_e2m1_to_f32(tg_f32_to_e2m1(" + v + "))";
  return v;
}

std::string float_literal(double v, DType t) {
  const bool dbl = t == f64;
  if (std::isnan(v)) return dbl ? "tg_f64_from_bits(0x7ff8000000000000ULL)" : "tg_f32_from_bits(0x7fc00000u)";
  if (std::isinf(v)) {
    std::string inf = dbl ? "tg_f64_from_bits(0x7ff0000000000000ULL)" : "tg_f32_from_bits(0x7f800000u)";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, dbl ? "%.17g" : "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return dbl ? s : s + "f";
}

// `round(x)` → `x` where `v` is exactly one call of `round` (its parenthesis closes at the end):
// converting x to f16 rounds it as round(x) then converting does.
std::string unrounded(const std::string& v, const std::string& round) {
  if (v.size() < round.size() + 1 || v.compare(0, round.size(), round) != 0 || v.back() != ')') return v;
  int depth = 0;
  for (std::size_t i = round.size() - 1; i < v.size(); ++i) {
    depth += v[i] == '(' ? 1 : v[i] == ')' ? -1 : 0;
    if (depth == 0) return i == v.size() - 1 ? v.substr(round.size(), v.size() - round.size() - 1) : v;
  }
  return v;
}

bool is_zero(const Expr& e) {
  auto v = e.as_int();
  return v && *v == 0;
}

const std::set<std::string>& reserved() {
  static const std::set<std::string> r = {
      "int",       "float",    "double",   "char",     "short",     "long",        "for",      "if",
      "else",      "while",    "do",       "return",   "const",     "auto",        "half",     "signed",
      "unsigned",  "void",     "bool",     "true",     "false",     "new",         "delete",   "this",
      "class",     "struct",   "template", "typename", "register",  "default",     "switch",   "case",
      "break",     "continue", "static",   "extern",   "inline",    "volatile",    "union",    "enum",
      "goto",      "sizeof",   "operator", "private",  "public",    "protected",   "friend",   "virtual",
      "namespace", "using",    "try",      "catch",    "throw",     "asm",         "min",      "max",
      "exp",       "log",      "abs",      "dim3",     "threadIdx", "blockIdx",    "blockDim", "gridDim",
      "warpSize",  "uint4",    "float4",   "int4",     "tg_smem",   "tg_smem_base"};
  return r;
}

}  // namespace

std::string SourceEmitter::emit() {
  const ir::Kernel& k = *p_.kernel;
  std::string params;
  for (const Param& prm : f_.params) {
    if (prm.kind == Param::Kind::Size)
      throw Error("size " + prm.name() + " is not bound; the " + target_name() +
                      " target compiles specialised kernels",
                  f_.loc);
    const bool tensor = prm.kind == Param::Kind::Tensor;
    std::string n = declare(tensor ? prm.buffer->name : prm.var.name(),
                            tensor ? (const void*)prm.buffer.get() : prm.var.get());
    params += (params.empty() ? "" : ", ") + (tensor ? storage_type(prm.buffer->dtype) + "* __restrict__ " + n
                                                     : value_type(prm.var.dtype()) + " " + n);
  }
  params += extra_params();
  os_ << kernel_head(params) << " {\n";
  indent_ = 1;
  declare_buffers();
  for (std::size_t d = 0; d < k.block_vars.size(); ++d)
    line("const int " + declare(k.block_vars[d].name(), k.block_vars[d].get()) + " = " + block_index(int(d)) +
         ";");
  line("const int " + declare(k.thread_var.name(), k.thread_var.get()) + " = " + thread_index() + ";");
  stmt(k.body);
  os_ << "}\n";
  return os_.str();
}

void SourceEmitter::declare_buffers() {
  const ir::Kernel& k = *p_.kernel;
  if (p_.shared.bytes > 0) declare_shared(p_.shared.bytes);
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
    line("__attribute__((aligned(16))) " + storage_type(b->dtype) + " " + declare(b->name, b.get()) + "[" +
         std::to_string(count) + "];");
  }
  if (std::any_of(k.buffers.begin(), k.buffers.end(),
                  [](const Buffer& b) { return b->scope == Scope::Fragment; }))
    throw Error("kernel " + p_.name + " still has fragments; run the gpu pipeline (partition_threads) first",
                k.loc);
}

// ---- names: the IR's, made valid and unique within the kernel.
std::string SourceEmitter::declare(const std::string& want, const void* key) {
  std::string base;
  for (char c : want) base += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
  if (base.empty() || std::isdigit((unsigned char)base[0]) || reserved().count(base)) base = "v_" + base;
  std::string n = base;
  for (int i = 1; used_.count(n); ++i) n = base + "_" + std::to_string(i);
  used_.insert(n);
  names_[key] = n;
  return n;
}

std::string SourceEmitter::name(const void* key, const std::string& fallback) {
  auto it = names_.find(key);
  if (it == names_.end())
    throw Error(target_name() + " codegen: " + fallback + " is used before it is declared");
  return it->second;
}

void SourceEmitter::line(const std::string& s) {
  os_ << std::string(std::size_t(indent_) * 2, ' ') << s << "\n";
}

std::string SourceEmitter::operand_address(const ir::MmaOperand& o) {
  return "&" + name(o.buffer.get(), o.buffer->name) + "[" + expr(o.offset) + "]";
}

std::string SourceEmitter::element_address(const ir::BufferNode& b, const std::vector<Expr>& idx) {
  return "&" + name(&b, b.name) + "[" + linear_index(b, idx) + "]";
}

void SourceEmitter::async_store(int64_t bytes, const ir::BufferNode& dst, const std::vector<Expr>& dst_index,
                                const std::string& src) {
  std::string i = linear_index(dst, dst_index);
  async_move(bytes, "&" + name(&dst, dst.name) + "[" + (dst.dtype.is_packed() ? "(" + i + ") >> 1" : i) + "]",
             src);
}

int64_t SourceEmitter::placed_offset(const ir::BufferNode& b) {
  auto it = std::find_if(p_.shared.offsets.begin(), p_.shared.offsets.end(),
                         [&](const auto& e) { return e.first.get() == &b; });
  if (it == p_.shared.offsets.end())
    throw Error(target_name() + " codegen: " + b.name + " is not a placed shared buffer");
  return it->second;
}

std::string SourceEmitter::shared_offset(const ir::BufferNode& b, const std::vector<Expr>& idx) {
  const int64_t at = placed_offset(b);
  std::string i = "(tg_u32)(" + linear_index(b, idx) + ")";
  std::string bytes =
      b.dtype.is_packed() ? "(" + i + " >> 1)" : i + " * " + std::to_string(b.dtype.bits() / 8) + "u";
  return "(" + bytes + " + " + std::to_string(at) + "u)";
}

void SourceEmitter::ldmatrix(const ir::LdMatrix& op) {
  throw Error("the " + target_name() + " target has no ldmatrix instruction; the pass use_ldmatrix is cuda's",
              op.loc);
}

void SourceEmitter::mbarrier(const ir::MBarrier& op) {
  throw Error("the " + target_name() + " target has no transaction barriers (mbarrier); the pass bulk_copies "
              "writes them only where TargetInfo::bulk_copy is set",
              op.loc);
}

void SourceEmitter::bulk_copy(const ir::BulkCopy& op) {
  throw Error("the " + target_name() + " target has no bulk tensor copies; the pass bulk_copies writes them "
              "only where TargetInfo::bulk_copy is set",
              op.loc);
}

std::string SourceEmitter::shared_tile_offset(const ir::BufferNode& b, const std::vector<Expr>& idx) {
  const int64_t at = placed_offset(b);
  std::string i = "(tg_u32)(" + linear_index(b, idx, /*swizzle=*/false) + ")";
  return "(" + i + " * " + std::to_string(b.dtype.bits() / 8) + "u + " + std::to_string(at) + "u)";
}

std::string SourceEmitter::linear_index(const ir::BufferNode& b, const std::vector<Expr>& idx, bool swizzle) {
  if (b.layout.kind == Layout::Kind::Swizzle && b.scope == Scope::Shared && idx.size() >= 2) {
    // Layout::Kind::Swizzle (buffer.h): strips of W elements, each R rows, then the XOR on bytes.
    const std::size_t n = idx.size();
    const std::vector<int64_t> st = strides_of(b);
    const int64_t e = b.dtype.bits() / 8, rows = *b.shape[n - 2].as_int(), cols = *b.shape[n - 1].as_int();
    const int64_t w = (int64_t(16) << b.layout.param) / e;
    std::string lead;
    for (std::size_t d = 0; d + 2 < n; ++d)
      lead += "(" + expr(idx[d]) + ") * " + std::to_string(st[d]) + " + ";
    std::string r = "(" + expr(idx[n - 2]) + ")", c = "(" + expr(idx[n - 1]) + ")";
    std::string lin = cols == w
                          ? lead + r + " * " + std::to_string(w) + " + " + c
                          : lead + c + " / " + std::to_string(w) + " * " + std::to_string(rows * w) + " + " +
                                r + " * " + std::to_string(w) + " + " + c + " % " + std::to_string(w);
    if (!swizzle) return lin;
    int log_e = 0;
    while ((int64_t(1) << log_e) < e) ++log_e;
    lin = "(" + lin + ")";
    return "(" + lin + " ^ (((" + lin + " >> " + std::to_string(7 - log_e) + ") & " +
           std::to_string((1 << b.layout.param) - 1) + ") << " + std::to_string(4 - log_e) + "))";
  }
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

// Returns false (and emits nothing) when the loop is not a vector move (vector_move.h).
bool SourceEmitter::vector_move(const ir::For& op) {
  std::optional<VectorMove> m = match_vector_move(op);
  if (!m) return false;
  const ir::Store& st = *m->store;
  const ir::Load& ld = *m->load;
  const bool packed = st.buffer->dtype.is_packed();  // two elements a byte: address bytes
  auto at = [&](const ir::BufferNode& b, const std::vector<Expr>& idx) {
    std::string i = linear_index(b, idx);
    return "&" + name(&b, b.name) + "[" + (packed ? "(" + i + ") >> 1" : i) + "]";
  };
  std::string dst = at(*st.buffer.get(), m->dst_index), src = at(*ld.buffer, m->src_index);
  if (st.async && m->bytes >= 4)
    async_store(m->bytes, *st.buffer.get(), m->dst_index, src);
  else
    SourceEmitter::async_move(m->bytes, dst, src);  // the plain vector move
  return true;
}

std::string SourceEmitter::load(const ir::Load& op) {
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

std::string SourceEmitter::cast(DType to, const Expr& a) {
  std::string v = expr(a);
  DType from = a.dtype();
  if (to == from) return v;
  if (to.is_bool()) return "((" + v + ") != 0)";
  if (to == f16 || to == bf16 || to == fp8_e4m3 || to == fp8_e5m2 || to == fp4_e2m1)
    return round_to(to, "(float)(" + v + ")");
  if (to == f32) return "((float)(" + v + "))";
  if (to == f64) return "((double)(" + v + "))";
  if (to.is_float())
    throw Error("the " + target_name() + " target cannot convert to " + std::string(to.name()) +
                    " in a kernel yet; keep " + std::string(to.name()) + " for inputs",
                a->loc);
  if (to.is_packed()) {  // wrap to 4 bits
    std::string w = "((int)(" + v + ") & 15)";
    return to.is_signed_int() ? "((" + w + " ^ 8) - 8)" : w;
  }
  return "((" + value_type(to) + ")(" + storage_type(to) + ")(" + v + "))";
}

std::string SourceEmitter::binary(const ir::Binary& op) {
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
      else if (int k = ir::log2_exact(op.b.as_int().value_or(-1)); k >= 0)  // as int_semantics.h does
        r = div ? "(" + a + " >> " + std::to_string(k) + ")"
                : "(" + a + " & " + std::to_string((int64_t(1) << k) - 1) + ")";
      else  // guarded: int_semantics.h's recipe, written out in the device header
        r = gpu_int_helper(op.op, t) + "(" + a + ", " + b + ")";
      break;
    }
    case BinOp::Min:  // floats: IEEE minNum/maxNum, as the interpreter (a NaN operand gives the other)
      r = t.is_float() ? "tg_fmin(" + a + ", " + b + ")"
                       : "tg_min<" + value_type(t) + ">(" + a + ", " + b + ")";
      break;
    case BinOp::Max:
      r = t.is_float() ? "tg_fmax(" + a + ", " + b + ")"
                       : "tg_max<" + value_type(t) + ">(" + a + ", " + b + ")";
      break;
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
    case BinOp::Shl:
    case BinOp::Shr: r = gpu_int_helper(op.op, t) + "(" + a + ", " + b + ")"; break;
  }
  return round_to(op.dtype, r);
}

std::string SourceEmitter::call(const ir::Call& op) {
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
    throw Error("the " + target_name() + " target computes " + ir::name_of(op.fn) + " on floats only",
                op.loc);
  }
  switch (op.fn) {
    case Intrinsic::Exp: return fn("expf", "exp");
    case Intrinsic::Exp2: return fn("tg_exp2f", "exp2");  // the target's fast 2^x (device header)
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

std::string SourceEmitter::expr(const Expr& e) {
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
    case ir::ExprKind::AccessCheck: return access_check(*e.as<ir::AccessCheck>());
  }
  return "";
}

// (cond || tg_access_failed(record, site, block x, y, z, thread, index 0, ..., index 7)): the
// device header's recorder runs only where the check fails, and says false.
std::string SourceEmitter::access_check(const ir::AccessCheck& op) {
  const Param* record = find_access_record(f_);
  if (!record) throw Error("access_check without the function's access record", op.loc);
  std::string args = name(record->buffer.get(), record->buffer->name) + ", " + std::to_string(op.site);
  for (std::size_t d = 0; d < 3; ++d)
    args += ", " + (d < op.block.size() ? expr(op.block[d]) : std::string("0"));
  args += ", " + expr(op.thread);
  for (std::size_t d = 0; d < std::size_t(kAccessRecordMaxIndices); ++d)
    args += ", " + (d < op.indices.size() ? "(tg_i64)(" + expr(op.indices[d]) + ")" : std::string("0"));
  return "(" + expr(op.cond) + " || tg_access_failed(" + args + "))";
}

void SourceEmitter::store(const ir::Store& op) {
  std::string buf = name(op.buffer.get(), op.buffer->name), at = linear_index(*op.buffer.get(), op.indices);
  DType t = op.buffer->dtype;
  if (op.shuffle())
    return line(buf + "[" + at + "] = tg_shfl_xor((" + value_type(t) + ")(" + expr(op.value) + "), " +
                std::to_string(op.shuffle_xor) + ", " + std::to_string(op.shuffle_width) + ");");
  if (const auto* src = op.value.as<ir::Load>(); op.async && src && t.bits() >= 32 && !t.is_packed())
    return async_move(t.bits() / 8, "&" + buf + "[" + at + "]",
                      "&" + name(src->buffer.get(), src->buffer->name) + "[" +
                          linear_index(*src->buffer, src->indices) + "]");
  // Same-format element moves copy the bits (no conversion round trip).
  if (const auto* src = op.value.as<ir::Load>(); src && src->buffer->dtype == t && !t.is_packed())
    return line(buf + "[" + at + "] = " + name(src->buffer.get(), src->buffer->name) + "[" +
                linear_index(*src->buffer, src->indices) + "];");
  std::string v = expr(op.value);
  // A value already rounded to the element's type converts once (f32 scores → f16 P: one cvt).
  if (t == f16) return line(buf + "[" + at + "] = tg_f32_to_f16(" + unrounded(v, "tg_round_f16(") + ");");
  if (t == bf16) return line(buf + "[" + at + "] = tg_f32_to_bf16(" + unrounded(v, "tg_round_bf16(") + ");");
  if (t == int4 || t == uint4) return line("tg_st_4(" + buf + ", " + at + ", " + v + ");");
  if (t == fp4_e2m1) return line("tg_st_4(" + buf + ", " + at + ", tg_f32_to_e2m1(" + v + "));");
  if (t == fp8_e4m3 || t == fp8_e5m2) {
    // A value already rounded to the element's format (round_to: decode(encode(x))) stores its bits.
    const std::string name = std::string(t.name()), bits = unrounded(v, "tg_" + name + "_to_f32(");
    if (bits != v && bits.rfind("tg_f32_to_" + name + "(", 0) == 0)
      return line(buf + "[" + at + "] = " + bits + ";");
    return line(buf + "[" + at + "] = tg_f32_to_" + name + "(" + v + ");");
  }
  line(buf + "[" + at + "] = " + v + ";");
}

void SourceEmitter::async_move(int64_t bytes, const std::string& dst, const std::string& src) {
  const std::string t = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : bytes == 4 ? "tg_u32" : "tg_u16";
  line("*reinterpret_cast<" + t + "*>(" + dst + ") = *reinterpret_cast<const " + t + "*>(" + src + ");");
}

void SourceEmitter::atomic(const ir::Atomic& op) {
  DType t = op.buffer->dtype;
  if (t != f32 && t != i32)
    throw Error(
        "the " + target_name() + " target performs atomics on f32 and i32 only; accumulate in one of those",
        op.loc);
  std::string target =
      "&" + name(op.buffer.get(), op.buffer->name) + "[" + linear_index(*op.buffer.get(), op.indices) + "]";
  const char* fn = op.op == AtomicOp::Add   ? "tg_atomic_add"
                   : op.op == AtomicOp::Max ? "tg_atomic_max"
                                            : "tg_atomic_min";
  line(std::string(fn) + "(" + target + ", " + expr(op.value) + ");");
}

void SourceEmitter::let(const ir::Let& op) {
  std::string v = expr(op.value);  // before the name exists: the value cannot see it
  bool again = bound_.count(op.var.get());
  if (again) line("{"), ++indent_;
  bound_.insert(op.var.get());
  line("const " + value_type(op.var.dtype()) + " " + declare(op.var.name(), op.var.get()) + " = " + v + ";");
  stmt(op.body);
  if (again) --indent_, line("}");
}

void SourceEmitter::loop(const ir::For& op) {
  if (op.for_kind == ForKind::Vectorized && vector_move(op)) return;
  std::string lo = expr(op.min), n = expr(op.extent);
  if (op.for_kind == ForKind::Unrolled || op.for_kind == ForKind::Vectorized) line("#pragma unroll");
  std::string v = declare(op.var.name(), op.var.get()), t = value_type(op.var.dtype());
  std::string end = is_zero(op.min) ? n : lo + " + " + n;
  line("for (" + t + " " + v + " = " + lo + "; " + v + " < " + end + "; ++" + v + ") {");
  block(op.body);
  line("}");
}

void SourceEmitter::stmt(const Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Seq:
      for (const Stmt& x : s.as<ir::Seq>()->stmts) stmt(x);
      return;
    case ir::StmtKind::Store: return store(*s.as<ir::Store>());
    case ir::StmtKind::Atomic: return atomic(*s.as<ir::Atomic>());
    case ir::StmtKind::Barrier: return barrier();
    case ir::StmtKind::AsyncWait: return async_wait(s.as<ir::AsyncWait>()->in_flight);
    case ir::StmtKind::LdMatrix: return ldmatrix(*s.as<ir::LdMatrix>());
    case ir::StmtKind::Prefetch: return;  // a hint a target may ignore: no GPU pass writes one
    case ir::StmtKind::Mma: return mma(*s.as<ir::Mma>());
    case ir::StmtKind::MmaSync: return mma_sync(*s.as<ir::MmaSync>());
    case ir::StmtKind::MBarrier: return mbarrier(*s.as<ir::MBarrier>());
    case ir::StmtKind::BulkCopy: return bulk_copy(*s.as<ir::BulkCopy>());
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
    case ir::StmtKind::Let: return let(*s.as<ir::Let>());
    case ir::StmtKind::For: return loop(*s.as<ir::For>());
    default:
      throw Error("the " + target_name() +
                      " target emits per-thread code only; run the gpu pipeline (partition_threads) first",
                  s->loc);
  }
}

void SourceEmitter::block(const Stmt& s) {
  ++indent_;
  stmt(s);
  --indent_;
}

}  // namespace tg::gpu
