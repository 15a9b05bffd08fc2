// The IR text form, written. The grammar is docs/ir_text.md; parser.cpp reads it back, and
// print(parse(print(f))) == print(f) for every function the builder makes. A small example:
//
//   func add_one(X: f32[N] global, N: size) {
//     kernel grid((N + 127) / 128) threads(128) -> (bx; tx) {
//       for i in parallel(0 +: 128) {
//         X[bx*128 + i] = X[bx*128 + i] + 1.0
//       }
//     }
//   }
#include "tilegen/ir/printer.h"

#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "text_syntax.h"
#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

using namespace ir;

// ---- Names. Vars and buffers are identified by node; the text by name. A name is given when a
// node is bound (param, kernel, loop, let, buffer declaration) and is unique among the names
// visible there, so the parser's lexical scopes resolve it back to one node.
class Names {
 public:
  void push() { scopes_.emplace_back(); }
  void pop() {
    for (auto& [node, name] : scopes_.back()) {
      --visible_[name];
      bound_[node].pop_back();
    }
    scopes_.pop_back();
  }
  const std::string& bind(const void* node, const std::string& raw) {
    std::string base = text::sanitize_name(raw), name = base;
    // Suffixes continue where the last clash of this base stopped, so many clashes stay linear.
    // Reading back is exact whatever suffix is chosen: a printed name is kept when not in sight.
    for (int& k = next_suffix_[base]; visible_[name] > 0;) name = base + "_" + std::to_string(++k);
    ++visible_[name];
    scopes_.back().push_back({node, name});
    auto& stack = bound_[node];
    stack.push_back(name);
    return stack.back();
  }
  std::string lookup(const void* node, const std::string& raw) const {
    auto it = bound_.find(node);
    if (it != bound_.end() && !it->second.empty()) return it->second.back();
    return text::sanitize_name(raw);  // not bound anywhere we printed: malformed IR
  }

 private:
  std::vector<std::vector<std::pair<const void*, std::string>>> scopes_;
  std::unordered_map<std::string, int> visible_;
  std::unordered_map<std::string, int> next_suffix_;
  std::unordered_map<const void*, std::vector<std::string>> bound_;
};

// Vars and buffers used but bound nowhere in the printed tree (the free ones of print(Stmt) and
// print(Expr)), in order of first use, so they get unique names at the root.
class FreeRefs : public IRVisitor {
 public:
  std::vector<std::pair<const void*, std::string>> refs;
  std::unordered_set<const void*> bound;

  std::vector<std::pair<const void*, std::string>> free() const {
    std::vector<std::pair<const void*, std::string>> out;
    for (auto& r : refs)
      if (!bound.count(r.first)) out.push_back(r);
    return out;
  }
  void visit(const VarNode* v) override { ref(v, v->name); }
  void visit(const Load* op) override {
    ref_buffer(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit_region(const Region& r) override {
    ref_buffer(r.buffer.get());
    IRVisitor::visit_region(r);
  }
  void visit(const Kernel* op) override {
    for (auto& v : op->block_vars) bind(v);
    bind(op->thread_var);
    for (auto& b : op->buffers) bound.insert(b.get());
    IRVisitor::visit(op);
  }
  void visit(const For* op) override {
    bind(op->var);
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    bind(op->var);
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    ref_buffer(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Atomic* op) override {
    ref_buffer(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Prefetch* op) override {
    ref_buffer(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Gemm* op) override {
    bind(op->step);
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    ref_buffer(op->src.get());
    ref_buffer(op->dst.get());
  }
  void visit(const Mma* op) override {
    for (auto* o : {&op->a, &op->b, &op->c}) ref_buffer(o->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Hold* op) override {
    ref_buffer(op->buffer.get());
    IRVisitor::visit(op);
  }

 private:
  void ref(const void* p, const std::string& name) {
    if (seen_.insert(p).second) refs.push_back({p, name});
  }
  void ref_buffer(const BufferNode* b) {
    if (b) ref(b, b->name);
  }
  void bind(const Var& v) {
    if (v.defined()) bound.insert(v.get());
  }
  std::unordered_set<const void*> seen_;
};

// ---- Precedence, loosest first; calls, loads and literals are atoms.
constexpr int kUnaryPrec = 11, kAtomPrec = 100;

int binary_prec(BinOp op) {
  switch (op) {
    case BinOp::Or: return 1;
    case BinOp::And: return 2;
    case BinOp::BitOr: return 3;
    case BinOp::BitXor: return 4;
    case BinOp::BitAnd: return 5;
    case BinOp::Eq:
    case BinOp::Ne: return 6;
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge: return 7;
    case BinOp::Shl:
    case BinOp::Shr: return 8;
    case BinOp::Add:
    case BinOp::Sub: return 9;
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Mod: return 10;
    case BinOp::Min:
    case BinOp::Max: return kAtomPrec;
  }
  return kAtomPrec;
}

int prec_of(const Expr& e) {
  if (auto* b = e.as<Binary>()) return binary_prec(b->op);
  if (e.as<Unary>()) return kUnaryPrec;
  return kAtomPrec;
}

bool is_numeric_literal(const Expr& e) {
  if (auto* i = e.as<IntImm>()) return !i->dtype.is_bool();
  return e.as<FloatImm>() != nullptr;
}

bool is_int_mul(const Expr& e) {
  auto* b = e.as<Binary>();
  return b && b->op == BinOp::Mul && b->dtype.is_int();
}

// Integer products of plain operands print tight, as index arithmetic reads best: `by*128 + tx`.
// Float math, and anything with parentheses or a sign, keeps its spaces.
bool is_simple(const Expr& e) {
  if (auto* i = e.as<IntImm>()) return i->value >= 0;
  if (auto* f = e.as<FloatImm>()) return !std::signbit(f->value);
  if (auto* b = e.as<Binary>()) {
    if (binary_prec(b->op) == kAtomPrec) return true;
    return is_int_mul(e) && is_simple(b->a) && is_simple(b->b) && !is_int_mul(b->b);
  }
  return e.defined() && !e.as<Unary>();
}

std::string type_suffix(DType t, DType default_type) {
  return t == default_type ? std::string() : ":" + std::string(t.name());
}

class Printer {
 public:
  explicit Printer(const PrintOptions& opt) : opt_(opt) { names_.push(); }

  void bind_free(const FreeRefs& refs, const std::unordered_set<const void*>& skip = {}) {
    for (auto& [node, name] : refs.free())
      if (!skip.count(node)) names_.bind(node, name);
  }
  std::string function(const Function& f);
  void stmts(const Stmt& s);
  void body(const Stmt& s);
  std::string expr(const Expr& e);
  std::string take() { return out_.str(); }

 private:
  std::string var_name(const Var& v) const { return v.defined() ? names_.lookup(v.get(), v.name()) : "_"; }
  std::string buffer_name(const BufferNode* b) const { return b ? names_.lookup(b, b->name) : "<null>"; }
  std::string bind_var(const Var& v) {
    if (!v.defined()) return "_";
    return names_.bind(v.get(), v.name());
  }
  std::string binding(const Var& v) {  // "i" or "i: i64"
    std::string n = bind_var(v);
    return v.defined() ? n + (v.dtype() == i32 ? "" : ": " + std::string(v.dtype().name())) : n;
  }
  std::string list(const std::vector<Expr>& es) {
    std::string s;
    for (std::size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + expr(es[i]);
    return s;
  }
  std::string operand(const Expr& e, bool parens) { return parens ? "(" + expr(e) + ")" : expr(e); }
  std::string binary(const Binary* b);
  std::string unary(const Unary* u);
  std::string literal(const Expr& e);
  std::string access_check(const AccessCheck* c);
  std::string region(const Region& r);
  std::string layout(const Layout& l);
  std::string param(const Param& p);
  std::string decl(const Buffer& b);

  void line(const std::string& text, const SourceLoc& loc);
  void block(const std::string& head, const Stmt& body, const SourceLoc& loc);
  void stmt(const Stmt& s);
  void kernel(const Kernel* k);
  void loop(const For* f);
  void branch(const If* op);
  void let(const Let* op);
  std::string tile_op(const Stmt& s);
  void gemm_steps(const Stmt& s);

  PrintOptions opt_;
  Names names_;
  int let_scopes_ = 0;  // scopes opened by lets in the blocks being printed
  std::ostringstream out_;
  int indent_ = 0;
};

// ---- Expressions

std::string Printer::literal(const Expr& e) {
  if (auto* i = e.as<IntImm>()) {
    if (i->dtype.is_bool()) return i->value ? "true" : "false";
    return std::to_string(i->value) + type_suffix(i->dtype, i32);
  }
  auto* f = e.as<FloatImm>();
  return text::format_float(f->value, f->dtype) + type_suffix(f->dtype, f32);
}

std::string Printer::binary(const Binary* b) {
  if (b->op == BinOp::Min || b->op == BinOp::Max)
    return std::string(name_of(b->op)) + "(" + expr(b->a) + ", " + expr(b->b) + ")";
  int p = binary_prec(b->op);
  bool lp = prec_of(b->a) < p, rp = prec_of(b->b) <= p;  // left-associative
  bool tight = b->op == BinOp::Mul && b->dtype.is_int() && !lp && !rp && is_simple(b->a) && is_simple(b->b) &&
               !is_int_mul(b->b);
  std::string op = name_of(b->op);
  return operand(b->a, lp) + (tight ? op : " " + op + " ") + operand(b->b, rp);
}

std::string Printer::unary(const Unary* u) {
  // `-5` reads back as the literal -5, so the negation of a literal keeps its parentheses.
  bool parens = prec_of(u->a) < kUnaryPrec || (u->op == UnOp::Neg && is_numeric_literal(u->a));
  return std::string(name_of(u->op)) + operand(u->a, parens);
}

std::string Printer::expr(const Expr& e) {
  if (!e.defined()) return "<null>";
  switch (e->kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm: return literal(e);
    case ExprKind::Var: return names_.lookup(e.get(), static_cast<const VarNode*>(e.get())->name);
    case ExprKind::Binary: return binary(e.as<Binary>());
    case ExprKind::Unary: return unary(e.as<Unary>());
    case ExprKind::Select: {
      auto* s = e.as<Select>();
      return "select(" + expr(s->cond) + ", " + expr(s->t) + ", " + expr(s->f) + ")";
    }
    case ExprKind::Cast: return "cast<" + std::string(e->dtype.name()) + ">(" + expr(e.as<Cast>()->a) + ")";
    case ExprKind::Call: return std::string(name_of(e.as<Call>()->fn)) + "(" + list(e.as<Call>()->args) + ")";
    case ExprKind::Load: {
      auto* l = e.as<Load>();
      return buffer_name(l->buffer.get()) + "[" + list(l->indices) + "]";
    }
    case ExprKind::AccessCheck: return access_check(e.as<AccessCheck>());
  }
  return "<?>";
}

// access_check(tx < 64, store "Y"[tx] of [64], (bx; tx), 0, "/src/user.cpp:12"): the buffer is a
// name, not a reference (see expr.h), and the call site is kept whole for the report.
std::string Printer::access_check(const AccessCheck* c) {
  std::string site = c->loc.known() ? c->loc.file + ":" + std::to_string(c->loc.line) : "";
  return "access_check(" + expr(c->cond) + ", " + name_of(c->access) + " " + text::quote(c->buffer) + "[" +
         list(c->indices) + "] of [" + list(c->shape) + "], (" + list(c->block) + "; " + expr(c->thread) +
         "), " + std::to_string(c->site) + ", " + text::quote(site) + ")";
}

// ---- Buffers and regions

std::string Printer::layout(const Layout& l) {
  switch (l.kind) {
    case Layout::Kind::RowMajor: return "";
    case Layout::Kind::Swizzle: return " layout=swizzle(" + std::to_string(l.param) + ")";
    case Layout::Kind::Padded: return " layout=padded(" + std::to_string(l.param) + ")";
    case Layout::Kind::MatrixUnit: return " layout=matrix_unit(" + text::quote(l.matrix_unit) + ")";
  }
  return "";
}

// A region covering its whole buffer prints as the buffer's name alone.
std::string Printer::region(const Region& r) {
  std::string name = buffer_name(r.buffer.get());
  if (!r.buffer) return name;
  bool full = r.offsets.size() == r.buffer.rank() && r.extents.size() == r.buffer.rank();
  for (std::size_t i = 0; full && i < r.offsets.size(); ++i) {
    auto* zero = r.offsets[i].as<IntImm>();
    full = zero && zero->dtype == i32 && zero->value == 0 && equal(r.extents[i], r.buffer->shape[i]);
  }
  if (full) return name;
  std::string s = name + "[";
  std::size_t n = std::max(r.offsets.size(), r.extents.size());
  for (std::size_t i = 0; i < n; ++i) {
    s += i ? ", " : "";
    s += (i < r.offsets.size() ? expr(r.offsets[i]) : "<null>") + " +: ";
    s += i < r.extents.size() ? expr(r.extents[i]) : "<null>";
  }
  return s + "]";
}

std::string Printer::decl(const Buffer& b) {
  return std::string(name_of(b->scope)) + " " + buffer_name(b.get()) + ": " + std::string(b->dtype.name()) +
         "[" + list(b->shape) + "]" + layout(b->layout) + (b->from_fragment ? " from_fragment" : "") +
         (b->placed() ? " placed " + std::to_string(b->placed_offset) + " +: " + std::to_string(b->placed_bytes) : "");
}

std::string Printer::param(const Param& p) {
  switch (p.kind) {
    case Param::Kind::Tensor: {
      if (!p.buffer) return "<null>";
      const Buffer& b = p.buffer;
      return buffer_name(b.get()) + ": " + std::string(b->dtype.name()) + "[" + list(b->shape) + "] " +
             name_of(b->scope) + layout(b->layout);
    }
    case Param::Kind::Scalar: return var_name(p.var) + ": " + std::string(p.var.dtype().name());
    case Param::Kind::Size:
      return var_name(p.var) + ": " + (p.var.dtype() == i32 ? "" : std::string(p.var.dtype().name()) + " ") +
             "size";
  }
  return "<?>";
}

// ---- Statements

void Printer::line(const std::string& text, const SourceLoc& loc) {
  out_ << std::string(std::size_t(2 * indent_), ' ') << text;
  if (opt_.locations && loc.known()) out_ << "  # " << loc.str();
  out_ << '\n';
}

void Printer::block(const std::string& head, const Stmt& s, const SourceLoc& loc) {
  line(head + " {", loc);
  ++indent_;
  body(s);
  --indent_;
}

// The statements of one textual block. A let's name stays visible to the block's end, as the
// parser sees it, even where the IR ended the let earlier: names then match on reading back.
void Printer::body(const Stmt& s) {
  int outer = let_scopes_;
  stmts(s);
  for (; let_scopes_ > outer; --let_scopes_) names_.pop();
}

// A Seq prints as its statements, one a line, nested Seqs flattened.
void Printer::stmts(const Stmt& s) {
  if (!s) return;
  if (auto* seq = s.as<Seq>()) {
    for (auto& x : seq->stmts) stmts(x);
    return;
  }
  stmt(s);
}

void Printer::kernel(const Kernel* k) {
  std::string head = "kernel grid(" + list(k->grid) + ") threads(" + std::to_string(k->threads) + ") -> (";
  names_.push();
  for (std::size_t i = 0; i < k->block_vars.size(); ++i) head += (i ? ", " : "") + binding(k->block_vars[i]);
  if (k->thread_var.defined()) head += "; " + binding(k->thread_var);
  head += ")";
  for (auto& b : k->buffers)
    if (b) names_.bind(b.get(), b->name);
  line(head + " {", k->loc);
  ++indent_;
  for (auto& b : k->buffers)
    if (b) line(decl(b), b->loc);
  body(k->body);
  --indent_;
  line("}", {});
  names_.pop();
}

void Printer::loop(const For* f) {
  std::string range = expr(f->min) + " +: " + expr(f->extent);
  if (f->for_kind == ForKind::Pipelined || f->stages != 0) range += ", stages=" + std::to_string(f->stages);
  if (f->rolled) range += ", rolled";
  names_.push();
  std::string head = "for " + binding(f->var) + " in " + name_of(f->for_kind) + "(" + range + ")";
  block(head, f->body, f->loc);
  line("}", {});
  names_.pop();
}

void Printer::branch(const If* op) {
  names_.push();
  block("if " + expr(op->cond) + (op->concurrent ? ", concurrently" : ""), op->then_body, op->loc);
  names_.pop();
  if (op->else_body) {
    names_.push();
    line("} else {", {});  // closes the then-block on the same line
    ++indent_;
    body(op->else_body);
    --indent_;
    names_.pop();
  }
  line("}", {});
}

// `let x: T = v` scopes over the statements after it, printed at the same indentation.
void Printer::let(const Let* op) {
  std::string value = expr(op->value);
  names_.push();
  ++let_scopes_;  // popped by body() at the end of the enclosing block
  std::string name = bind_var(op->var);
  std::string type = op->var.defined() ? std::string(op->var.dtype().name()) : "?";
  line("let " + name + ": " + type + " = " + value, op->loc);
  stmts(op->body);
}

// gemm(...) interleave t in steps(42) { hints }
void Printer::gemm_steps(const Stmt& s) {
  auto* g = s.as<Gemm>();
  std::string head = tile_op(s);  // the operands first: the step index is not visible in them
  names_.push();
  head += " interleave " + binding(g->step);
  block(head + " in steps(" + std::to_string(g->steps) + ")", g->each_step, g->loc);
  line("}", {});
  names_.pop();
}

std::string Printer::tile_op(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Copy: {
      auto* c = s.as<Copy>();
      return "copy " + region(c->src) + " -> " + region(c->dst) + (c->check_bounds ? "" : " unchecked");
    }
    case StmtKind::Fill: return "fill " + region(s.as<Fill>()->dst) + " = " + expr(s.as<Fill>()->value);
    case StmtKind::Gemm: {
      auto* g = s.as<Gemm>();
      return "gemm(" + region(g->a) + ", " + region(g->b) + " -> " + region(g->c) +
             (g->trans_a ? ", trans_a" : "") + (g->trans_b ? ", trans_b" : "") +
             (g->clear_c ? ", clear" : "") + ")";
    }
    case StmtKind::Reduce: {
      auto* r = s.as<Reduce>();
      return std::string("reduce ") + name_of(r->op) + "(" + buffer_name(r->src.get()) + " -> " +
             buffer_name(r->dst.get()) + ", axis=" + std::to_string(r->axis) + (r->clear ? ", clear" : "") +
             ")";
    }
    case StmtKind::Store: {
      auto* st = s.as<Store>();
      std::string head = st->async ? "async " : "";
      if (st->shuffle())
        head = "shuffle_xor(" + std::to_string(st->shuffle_xor) + " of " + std::to_string(st->shuffle_width) + ") ";
      return head + buffer_name(st->buffer.get()) + "[" + list(st->indices) + "] = " + expr(st->value);
    }
    case StmtKind::Atomic: {
      auto* a = s.as<Atomic>();
      return std::string("atomic ") + name_of(a->op) + "(" + buffer_name(a->buffer.get()) + "[" +
             list(a->indices) + "], " + expr(a->value) + ")";
    }
    case StmtKind::Mma: {
      auto* m = s.as<Mma>();
      auto op = [&](const MmaOperand& o) {
        return o.is_tile() ? "tile " + std::string(o.trans ? "trans " : "") + buffer_name(o.buffer.get()) +
                                 "[" + list(o.tile) + "]"
                           : buffer_name(o.buffer.get()) + "[" + expr(o.offset) + "]";
      };
      return "mma " + text::quote(m->unit) + " a=" + op(m->a) + ", b=" + op(m->b) + ", c=" + op(m->c);
    }
    case StmtKind::Barrier: return "barrier";
    case StmtKind::AsyncWait: return "async_wait " + std::to_string(s.as<AsyncWait>()->in_flight);
    case StmtKind::MmaSync: {
      auto* w = s.as<MmaSync>();
      switch (w->op) {
        case MmaSync::Op::Fence: return "mma_fence";
        case MmaSync::Op::ProxyFence: return "proxy_fence";
        case MmaSync::Op::Wait: return "mma_wait " + std::to_string(w->in_flight);
        case MmaSync::Op::Registers: return "set_max_registers " + std::to_string(w->registers);
      }
      return "mma_wait";
    }
    case StmtKind::MBarrier: {
      auto* m = s.as<MBarrier>();
      const char* word = m->op == MBarrier::Op::Init       ? "mbarrier_init "
                         : m->op == MBarrier::Op::Arrive   ? "mbarrier_arrive "
                         : m->op == MBarrier::Op::ExpectTx ? "mbarrier_expect_tx "
                                                           : "mbarrier_wait ";
      return word + buffer_name(m->buffer.get()) + "[" + list(m->indices) + "]" +
             (m->value.defined() ? ", " + expr(m->value) : "");
    }
    case StmtKind::BulkCopy: {
      auto* c = s.as<BulkCopy>();
      return "bulk_copy " + region(c->src) + " -> " + region(c->dst) + " on " + buffer_name(c->barrier.get()) +
             "[" + list(c->barrier_indices) + "]";
    }
    case StmtKind::Prefetch: {
      auto* p = s.as<Prefetch>();
      return std::string("prefetch ") + (p->write ? "write " : "read ") + buffer_name(p->buffer.get()) + "[" +
             list(p->indices) + "] locality=" + std::to_string(p->locality);
    }
    case StmtKind::LdMatrix: {
      auto* l = s.as<LdMatrix>();
      return "ldmatrix x" + std::to_string(l->matrices) + (l->trans ? " trans " : " ") + buffer_name(l->src.get()) +
             "[" + list(l->src_indices) + "] -> " + buffer_name(l->regs.get()) + "[" + expr(l->reg_base) + "]";
    }
    default: return "<?>";
  }
}

void Printer::stmt(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Kernel: return kernel(s.as<Kernel>());
    case StmtKind::For: return loop(s.as<For>());
    case StmtKind::If: return branch(s.as<If>());
    case StmtKind::Let: return let(s.as<Let>());
    case StmtKind::Seq: return stmts(s);
    case StmtKind::Gemm:
      if (s.as<Gemm>()->each_step) return gemm_steps(s);
      return line(tile_op(s), s->loc);
    case StmtKind::Hold: {
      auto* h = s.as<Hold>();
      names_.push();
      block("hold " + buffer_name(h->buffer.get()) + " as " + text::quote(h->unit), h->body, h->loc);
      names_.pop();
      return line("}", {});
    }
    default: return line(tile_op(s), s->loc);
  }
}

std::string Printer::function(const Function& f) {
  std::unordered_set<const void*> params;
  for (auto& p : f.params) {
    const void* node = p.kind == Param::Kind::Tensor ? static_cast<const void*>(p.buffer.get()) : p.var.get();
    if (!node) continue;
    params.insert(node);
    names_.bind(node, p.name());
  }
  FreeRefs refs;
  refs.visit_stmt(f.body);
  bind_free(refs, params);
  std::string head = "func " + (text::is_identifier(f.name) ? f.name : text::quote(f.name)) + "(";
  for (std::size_t i = 0; i < f.params.size(); ++i) head += (i ? ", " : "") + param(f.params[i]);
  line(head + ") {", f.loc);
  ++indent_;
  body(f.body);
  --indent_;
  line("}", {});
  return take();
}

}  // namespace

std::string print(const Function& f, const PrintOptions& opt) { return Printer(opt).function(f); }

std::string print(const Stmt& s, const PrintOptions& opt) {
  Printer p(opt);
  FreeRefs refs;
  refs.visit_stmt(s);
  p.bind_free(refs);
  p.body(s);
  return p.take();
}

std::string print(const Expr& e) {
  Printer p(PrintOptions{});
  FreeRefs refs;
  refs.visit_expr(e);
  p.bind_free(refs);
  return p.expr(e);
}

}  // namespace tg
