// Statements and functions of the IR text form (docs/ir_text.md), read back as print() wrote them:
//
//   func scale(X: f32[N] global, s: f32, N: size) {
//     kernel grid((N + 127) / 128) threads(128) -> (bx; tx) {
//       let i: i32 = bx*128 + tx
//       if i < N {
//         X[i] = X[i] * s
//       }
//     }
//   }
//
// Names resolve through lexical scopes (params, kernel vars and buffers, loop vars, lets); a
// `let` scopes over the rest of its block. Errors are tg::Error at "<source>:line".
#include "tilegen/ir/parser.h"

#include <limits>
#include <set>

#include "text_parser.h"

namespace tg {

namespace text {

using namespace ir;

namespace {

std::string too_deep() {
  return "text nests deeper than " + std::to_string(kMaxDepth) +
         " levels (blocks, lets, parentheses and operators count); split it into smaller pieces";
}

bool is_scope_word(const Token& t, Scope* scope = nullptr) {
  for (Scope s : {Scope::Global, Scope::Shared, Scope::Fragment, Scope::Local}) {
    if (t.ident(name_of(s))) {
      if (scope) *scope = s;
      return true;
    }
  }
  return false;
}
}  // namespace

Parser::Parser(std::string_view text, const std::string& source_name)
    : name_(source_name), toks_(tokenize(text, source_name)) {}

Parser::Nest::Nest(Parser& p) : p_(p) {
  if (++p_.depth_ > kMaxDepth) {
    --p_.depth_;
    p_.fail(too_deep());
  }
}

// ---- Tokens

const Token& Parser::peek(std::size_t ahead) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }

const Token& Parser::next() {
  const Token& t = peek();
  if (pos_ + 1 < toks_.size()) ++pos_;
  return t;
}

bool Parser::accept(std::string_view punct) {
  if (!peek().punct(punct)) return false;
  next();
  return true;
}

bool Parser::accept_word(std::string_view word) {
  if (!peek().ident(word)) return false;
  next();
  return true;
}

void Parser::expect(std::string_view punct, const std::string& context) {
  if (!accept(punct))
    fail("expected '" + std::string(punct) + "' " + context + ", found " + peek().describe());
}

void Parser::expect_word(std::string_view word, const std::string& context) {
  if (!accept_word(word))
    fail("expected '" + std::string(word) + "' " + context + ", found " + peek().describe());
}

std::string Parser::expect_name(const std::string& what) {
  const Token& t = peek();
  if (t.kind != TokKind::Ident) fail("expected " + what + ", found " + t.describe());
  if (is_reserved(t.text)) fail("expected " + what + ", found '" + t.text + "', which is a reserved word");
  return next().text;
}

DType Parser::expect_dtype(const std::string& context) {
  const Token& t = peek();
  auto d = t.kind == TokKind::Ident ? DType::from_name(t.text) : std::nullopt;
  if (!d) fail("expected a type (f16, f32, i32, ...) " + context + ", found " + t.describe());
  next();
  return *d;
}

// A small integer attribute: threads(128), stages=3, axis=1, swizzle(3). A sign is allowed so
// any int the IR holds prints and reads back; the verifier judges the value.
int Parser::expect_small_int(const std::string& what) {
  bool negative = accept("-");
  const Token& t = peek();
  if (t.kind != TokKind::Int) fail("expected an integer for " + what + ", found " + t.describe());
  next();
  uint64_t limit = negative ? uint64_t(1) << 31 : uint64_t(std::numeric_limits<int>::max());
  if (t.magnitude > limit) fail_at(t.line, what + " " + t.text + " does not fit in 32 bits");
  return negative ? int(-int64_t(t.magnitude)) : int(t.magnitude);
}

void Parser::fail(const std::string& message) const { fail_at(peek().line, message); }
void Parser::fail_at(int line, const std::string& message) const {
  throw Error(message, SourceLoc(name_, line));
}

// ---- Scopes

void Parser::declare(const std::string& name, Symbol s, int line) {
  auto& scope = scopes_.back();
  if (scope.count(name)) fail_at(line, "'" + name + "' is already declared here; give it another name");
  scope.emplace(name, std::move(s));
}

const Parser::Symbol* Parser::find(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto f = it->find(name); f != it->end()) return &f->second;
  return nullptr;
}

Buffer Parser::expect_buffer(const std::string& what) {
  int line = peek().line;
  std::string n = expect_name(what);
  const Symbol* s = find(n);
  if (!s) fail_at(line, "unknown buffer '" + n + "'");
  if (!s->buffer) fail_at(line, "'" + n + "' is a variable; " + what + " must be a buffer");
  return s->buffer;
}

// ---- Blocks

// '{' statements '}' in a scope of its own.
Stmt Parser::block(const std::string& context) {
  Nest nest(*this);
  expect("{", context);
  push_scope();
  Stmt s = statements();
  pop_scope();
  expect("}", "to close the block " + context);
  return s;
}

// Statements up to the closing '}' (not consumed). Each `let` scopes over the rest of the block:
// the lets are read in a loop and nested afterwards, from the last one outwards.
Stmt Parser::statements() {
  struct PendingLet {
    Var var;
    Expr value;
    SourceLoc loc;
    std::size_t first;  // index of the first statement of its body
  };
  SourceLoc loc = here();
  std::vector<Stmt> stmts;
  std::vector<PendingLet> lets;
  int depth_before = depth_;
  while (!peek().punct("}") && peek().kind != TokKind::End) {
    if (peek().ident("let")) {
      SourceLoc let_loc = here();
      next();
      if (++depth_ > kMaxDepth) fail(too_deep());
      int line = peek().line;
      std::string n = expect_name("a name after let");
      expect(":", "after the name of let " + n);
      DType t = expect_dtype("of let " + n);
      expect("=", "after the type of let " + n);
      Expr value = expression();
      Var v(n, t, SourceLoc(name_, line));
      push_scope();
      declare(n, Symbol{v, {}}, line);
      lets.push_back({v, value, let_loc, stmts.size()});
      continue;
    }
    stmts.push_back(statement());
  }
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    auto let = std::make_shared<Let>(it->loc);
    let->var = it->var;
    let->value = it->value;
    let->body = make_seq(std::vector<Stmt>(stmts.begin() + std::ptrdiff_t(it->first), stmts.end()), it->loc);
    stmts.resize(it->first);
    stmts.push_back(Stmt(std::move(let)));
    pop_scope();
  }
  depth_ = depth_before;
  return make_seq(std::move(stmts), loc);
}

Stmt Parser::statement() {
  const Token& t = peek();
  if (t.kind == TokKind::Ident) {
    if (t.text == "kernel") return kernel();
    if (t.text == "for") return loop();
    if (t.text == "if") return branch();
    if (t.text == "copy") return copy();
    if (t.text == "fill") return fill();
    if (t.text == "gemm") return gemm();
    if (t.text == "reduce") return reduce();
    if (t.text == "atomic") return atomic();
    if (t.text == "mma") return mma();
    if (t.text == "barrier") return Stmt(std::make_shared<Barrier>(SourceLoc(name_, next().line)));
    if (t.text == "async") {  // async S[i] = G[j]: an asynchronous element copy
      next();
      Stmt s = store();
      auto n = std::make_shared<Store>(*s.as<Store>());
      n->async = true;
      return Stmt(std::move(n));
    }
    if (t.text == "shuffle_xor") {  // shuffle_xor(2 of 32) R[i] = v: a lane exchange
      next();
      expect("(", "after shuffle_xor");
      int mask = expect_small_int("the lane mask of shuffle_xor");
      expect_word("of", "after the lane mask of shuffle_xor");
      int width = expect_small_int("the lanes of shuffle_xor's group");
      expect(")", "after shuffle_xor's group size");
      Stmt s = store();
      auto n = std::make_shared<Store>(*s.as<Store>());
      n->shuffle_xor = mask;
      n->shuffle_width = width;
      return Stmt(std::move(n));
    }
    if (t.text == "ldmatrix") return ldmatrix();
    if (t.text == "prefetch") return prefetch();
    if (t.text == "mbarrier_init" || t.text == "mbarrier_arrive" || t.text == "mbarrier_expect_tx" ||
        t.text == "mbarrier_wait")
      return mbarrier();
    if (t.text == "bulk_copy") return bulk_copy();
    if (t.text == "hold") return hold();
    if (t.text == "async_wait") {
      auto w = std::make_shared<AsyncWait>(here());
      next();
      w->in_flight = expect_small_int("the number of async groups left in flight");
      return Stmt(std::move(w));
    }
    if (t.text == "mma_fence" || t.text == "proxy_fence" || t.text == "mma_wait") {
      auto w = std::make_shared<MmaSync>(here());
      w->op = t.text == "mma_fence"     ? MmaSync::Op::Fence
              : t.text == "proxy_fence" ? MmaSync::Op::ProxyFence
                                        : MmaSync::Op::Wait;
      next();
      if (w->op == MmaSync::Op::Wait)
        w->in_flight = expect_small_int("the number of mma groups left in flight");
      return Stmt(std::move(w));
    }
    if (t.text == "set_max_registers") {
      auto w = std::make_shared<MmaSync>(here());
      w->op = MmaSync::Op::Registers;
      next();
      w->registers = expect_small_int("the registers a thread may hold");
      return Stmt(std::move(w));
    }
    if (t.text == "else") fail("'else' without an 'if' just before it");
    if (is_scope_word(t)) fail("buffer declarations must come first in a kernel body, before any statement");
    if (!is_reserved(t.text)) return store();
  }
  fail("expected a statement, found " + t.describe());
}

// ---- Kernels

// kernel grid(g0, g1) threads(128) -> (bx, by; tx) { declarations; statements }
Stmt Parser::kernel() {
  auto k = std::make_shared<Kernel>(here());
  next();
  expect_word("grid", "after kernel");
  expect("(", "after grid");
  k->grid = expression_list(")", "after the grid sizes");
  expect_word("threads", "after grid(...)");
  expect("(", "after threads");
  k->threads = expect_small_int("threads");
  expect(")", "after the thread count");
  expect("->", "before the kernel's index variables, as in -> (bx, by; tx)");
  expect("(", "before the kernel's index variables");
  push_scope();
  if (!peek().punct(";") && !peek().punct(")")) {
    do k->block_vars.push_back(kernel_var("a block index variable"));
    while (accept(","));
  }
  if (accept(";")) k->thread_var = kernel_var("the thread index variable");
  expect(")", "after the kernel's index variables");
  Nest nest(*this);
  expect("{", "to open the kernel body");
  while (is_scope_word(peek())) k->buffers.push_back(buffer_decl());
  k->body = statements();
  expect("}", "to close the kernel body");
  pop_scope();
  return Stmt(std::move(k));
}

// `bx`, `bx: i64`, or `_` for none.
Var Parser::kernel_var(const std::string& what) {
  if (accept_word("_")) return Var();
  int line = peek().line;
  std::string n = expect_name(what);
  DType t = accept(":") ? expect_dtype("of " + n) : i32;
  Var v(n, t, SourceLoc(name_, line));
  declare(n, Symbol{v, {}}, line);
  return v;
}

// shared A_s: f16[128, 32] layout=swizzle(3)
Buffer Parser::buffer_decl() {
  SourceLoc loc = here();
  Scope scope = Scope::Shared;
  is_scope_word(next(), &scope);
  std::string n = expect_name("a buffer name after " + std::string(name_of(scope)));
  expect(":", "after the buffer name " + n);
  DType t = expect_dtype("of buffer " + n);
  expect("[", "before the shape of " + n);
  std::vector<Expr> shape = expression_list("]", "after the shape of " + n);
  Layout l = layout();
  Buffer b = Buffer::make(n, std::move(shape), t, scope, std::move(l), loc);
  if (accept_word("from_fragment")) {
    if (scope != Scope::Shared)
      fail("only a shared buffer can be from_fragment, not " + std::string(name_of(scope)) + " " + n);
    auto node = std::make_shared<ir::BufferNode>(*b.get());
    node->from_fragment = true;
    b = Buffer(std::move(node));
  }
  if (accept_word("placed")) {  // placed OFFSET +: BYTES (the pass place_shared_memory's plan)
    if (scope != Scope::Shared)
      fail("only a shared buffer is placed in shared memory, not " + std::string(name_of(scope)) + " " + n);
    auto node = std::make_shared<ir::BufferNode>(*b.get());
    node->placed_offset = expect_small_int("the offset of " + n);
    expect("+:", "between the offset and the size of " + n);
    node->placed_bytes = expect_small_int("the size of " + n);
    b = Buffer(std::move(node));
  }
  declare(n, Symbol{{}, b}, loc.line);
  return b;
}

// Optional: layout=swizzle(bits) | layout=padded(pad) | layout=matrix_unit("name")
Layout Parser::layout() {
  Layout l;
  if (!accept_word("layout")) return l;
  expect("=", "after layout");
  if (accept_word("swizzle"))
    l.kind = Layout::Kind::Swizzle;
  else if (accept_word("padded"))
    l.kind = Layout::Kind::Padded;
  else if (accept_word("matrix_unit"))
    l.kind = Layout::Kind::MatrixUnit;
  else
    fail("expected swizzle, padded or matrix_unit after layout=, found " + peek().describe());
  expect("(", "after the layout kind");
  if (l.kind == Layout::Kind::MatrixUnit) {
    if (peek().kind != TokKind::String)
      fail("expected the matrix unit's name as a string, found " + peek().describe());
    l.matrix_unit = next().text;
  } else {
    l.param = expect_small_int("the layout parameter");
  }
  expect(")", "after the layout parameter");
  return l;
}

// ---- Control flow

// for i in pipelined(0 +: n, stages=3) { ... }
Stmt Parser::loop() {
  auto f = std::make_shared<For>(here());
  next();
  int line = peek().line;
  std::string n = expect_name("a loop variable after for");
  DType t = accept(":") ? expect_dtype("of loop variable " + n) : i32;
  expect_word("in", "after the loop variable " + n);
  const Token& kind = peek();
  bool known = false;
  for (ForKind k :
       {ForKind::Serial, ForKind::Parallel, ForKind::Pipelined, ForKind::Unrolled, ForKind::Vectorized})
    if (kind.ident(name_of(k))) f->for_kind = k, known = true;
  if (!known)
    fail("expected serial, parallel, pipelined, unrolled or vectorized after 'in', found " + kind.describe());
  next();
  expect("(", "after " + kind.text);
  f->min = expression();
  expect("+:", "between the loop's start and its trip count, as in (0 +: n)");
  f->extent = expression();
  while (accept(",")) {
    if (accept_word("rolled")) {
      if (f->rolled) fail("'rolled' is given twice in the loop range");
      f->rolled = true;
      continue;
    }
    if (f->stages != 0) fail("'stages' is given twice in the loop range");
    expect_word("stages", "after ',' in the loop range (stages=N or rolled)");
    expect("=", "after stages");
    f->stages = expect_small_int("stages");
  }
  expect(")", "after the loop range");
  f->var = Var(n, t, SourceLoc(name_, line));
  push_scope();
  declare(n, Symbol{f->var, {}}, line);
  f->body = block("of the loop over " + n);
  pop_scope();
  return Stmt(std::move(f));
}

Stmt Parser::branch() {
  auto s = std::make_shared<If>(here());
  next();
  s->cond = expression();
  if (accept(",")) {  // warp roles: `if tx < 128, concurrently { ... } else { ... }`
    expect_word("concurrently", "after the comma of an if condition (warp roles)");
    s->concurrent = true;
  }
  s->then_body = block("after the if condition");
  if (accept_word("else")) s->else_body = block("after else");
  return Stmt(std::move(s));
}

// ---- Tile and element operations

// `A` (the whole buffer) or `A[off +: extent, ...]`, one pair per dimension.
Region Parser::region(const std::string& what) {
  int line = peek().line;
  Buffer b = expect_buffer(what);
  if (!accept("[")) return Region::full(b);
  Region r;
  r.buffer = b;
  if (!accept("]")) {
    do {
      r.offsets.push_back(expression());
      expect("+:", "between the offset and the extent of a region of " + b->name);
      r.extents.push_back(expression());
    } while (accept(","));
    expect("]", "after the region of " + b->name);
  }
  if (r.offsets.size() != b.rank())
    fail_at(line, "the region of " + b->name + " gives " + std::to_string(r.offsets.size()) +
                      " dimensions but " + b->name + " has rank " + std::to_string(b.rank()));
  return r;
}

Stmt Parser::copy() {
  auto c = std::make_shared<Copy>(here());
  next();
  c->src = region("the copy's source");
  expect("->", "between the copy's source and destination");
  c->dst = region("the copy's destination");
  c->check_bounds = !accept_word("unchecked");
  return Stmt(std::move(c));
}

Stmt Parser::fill() {
  auto f = std::make_shared<Fill>(here());
  next();
  f->dst = region("the buffer to fill");
  expect("=", "after the region to fill");
  f->value = expression();
  return Stmt(std::move(f));
}

// gemm(A, B -> C, trans_a, trans_b, clear), the flags optional and in any order, then optionally
// the hints interleaved with its steps: interleave t in steps(42) { prefetch ... }
Stmt Parser::gemm() {
  auto g = std::make_shared<Gemm>(here());
  next();
  expect("(", "after gemm");
  g->a = region("gemm's A");
  expect(",", "after gemm's A");
  g->b = region("gemm's B");
  expect("->", "between gemm's B and C");
  g->c = region("gemm's C");
  std::set<std::string> seen;
  while (accept(",")) {
    const Token& flag = peek();
    bool* target = flag.ident("trans_a")   ? &g->trans_a
                   : flag.ident("trans_b") ? &g->trans_b
                   : flag.ident("clear")   ? &g->clear_c
                                           : nullptr;
    if (!target) fail("expected trans_a, trans_b or clear in gemm, found " + flag.describe());
    if (!seen.insert(flag.text).second) fail("gemm flag " + flag.text + " is given twice");
    *target = true;
    next();
  }
  expect(")", "after gemm's operands");
  if (!accept_word("interleave")) return Stmt(std::move(g));
  int line = peek().line;
  std::string n = expect_name("the step index after interleave");
  DType t = accept(":") ? expect_dtype("of step index " + n) : i32;
  expect_word("in", "after the step index " + n);
  expect_word("steps", "after 'in' in gemm's interleave");
  expect("(", "after steps");
  g->steps = expect_small_int("the gemm's step count");
  expect(")", "after the gemm's step count");
  g->step = Var(n, t, SourceLoc(name_, line));
  push_scope();
  declare(n, Symbol{g->step, {}}, line);
  g->each_step = block("of the gemm's interleaved hints");
  pop_scope();
  return Stmt(std::move(g));
}

// reduce max(S -> M, axis=1, clear)
Stmt Parser::reduce() {
  auto r = std::make_shared<Reduce>(here());
  next();
  const Token& op = peek();
  bool known = false;
  for (ReduceOp k : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::AbsMax})
    if (op.ident(name_of(k))) r->op = k, known = true;
  if (!known) fail("expected sum, max, min or absmax after reduce, found " + op.describe());
  next();
  expect("(", "after reduce " + op.text);
  r->src = expect_buffer("the reduction's source");
  expect("->", "between the reduction's source and destination");
  r->dst = expect_buffer("the reduction's destination");
  expect(",", "before axis=");
  expect_word("axis", "in reduce");
  expect("=", "after axis");
  r->axis = expect_small_int("axis");
  r->clear = false;
  if (accept(",")) {
    expect_word("clear", "after axis in reduce");
    r->clear = true;
  }
  expect(")", "after the reduction");
  return Stmt(std::move(r));
}

// A[i, j] = value
Stmt Parser::store() {
  auto s = std::make_shared<Store>(here());
  s->buffer = expect_buffer("the buffer to store to");
  expect("[", "after " + s->buffer->name + " in a store, as in " + s->buffer->name + "[i] = x");
  s->indices = indices(s->buffer);
  expect("=", "after " + s->buffer->name + "[...] in a store");
  s->value = expression();
  return Stmt(std::move(s));
}

// prefetch read G[i, j] locality=3
Stmt Parser::prefetch() {
  auto p = std::make_shared<Prefetch>(here());
  next();
  if (accept_word("write"))
    p->write = true;
  else if (!accept_word("read"))
    fail("expected read or write after prefetch, found " + peek().describe());
  p->buffer = expect_buffer("the buffer to prefetch from");
  expect("[", "after the prefetch's buffer " + p->buffer->name);
  p->indices = indices(p->buffer);
  expect_word("locality", "after the prefetch's element");
  expect("=", "after locality");
  p->locality = expect_small_int("the prefetch's locality");
  return Stmt(std::move(p));
}

// mbarrier_init bar[i], 1 · mbarrier_arrive bar[i] · mbarrier_expect_tx bar[i], 16384 ·
// mbarrier_wait bar[i], k / 2 % 2
Stmt Parser::mbarrier() {
  auto m = std::make_shared<MBarrier>(here());
  const std::string word = next().text;
  m->op = word == "mbarrier_init"        ? MBarrier::Op::Init
          : word == "mbarrier_arrive"    ? MBarrier::Op::Arrive
          : word == "mbarrier_expect_tx" ? MBarrier::Op::ExpectTx
                                         : MBarrier::Op::Wait;
  m->buffer = expect_buffer("the mbarrier's buffer");
  expect("[", "after " + word + "'s buffer " + m->buffer->name);
  m->indices = indices(m->buffer);
  if (m->op != MBarrier::Op::Arrive) {
    expect(",", "after " + word + "'s barrier");
    m->value = expression();
  }
  return Stmt(std::move(m));
}

// bulk_copy G[r +: 128, c +: 32] -> S[s, 0 +: 128, 0 +: 32] on bar[s]
Stmt Parser::bulk_copy() {
  auto c = std::make_shared<BulkCopy>(here());
  next();
  c->src = region("the bulk copy's source");
  expect("->", "between the bulk copy's source and destination");
  c->dst = region("the bulk copy's destination");
  expect_word("on", "after the bulk copy's destination (the mbarrier it completes on)");
  c->barrier = expect_buffer("the bulk copy's mbarrier");
  expect("[", "after the bulk copy's mbarrier " + c->barrier->name);
  c->barrier_indices = indices(c->barrier);
  return Stmt(std::move(c));
}

// ldmatrix x4 [trans] S[i, j] -> R[base]
Stmt Parser::ldmatrix() {
  auto l = std::make_shared<LdMatrix>(here());
  next();
  const Token& count = peek();
  if (count.kind != TokKind::Ident || (count.text != "x1" && count.text != "x2" && count.text != "x4"))
    fail("expected x1, x2 or x4 (the number of 8x8 matrices) after ldmatrix, found " + count.describe());
  l->matrices = count.text[1] - '0';
  next();
  if (peek().ident("trans")) next(), l->trans = true;
  l->src = expect_buffer("the ldmatrix's shared source");
  expect("[", "after the ldmatrix's source " + l->src->name);
  l->src_indices = indices(l->src);
  expect("->", "between the ldmatrix's shared source and its registers");
  l->regs = expect_buffer("the ldmatrix's registers");
  expect("[", "after the ldmatrix's registers " + l->regs->name);
  l->reg_base = expression();
  expect("]", "after the ldmatrix's first register");
  return Stmt(std::move(l));
}

// atomic add(A[i, j], value)
Stmt Parser::atomic() {
  auto a = std::make_shared<Atomic>(here());
  next();
  const Token& op = peek();
  bool known = false;
  for (AtomicOp k : {AtomicOp::Add, AtomicOp::Max, AtomicOp::Min})
    if (op.ident(name_of(k))) a->op = k, known = true;
  if (!known) fail("expected add, max or min after atomic, found " + op.describe());
  next();
  expect("(", "after atomic " + op.text);
  a->buffer = expect_buffer("the atomic's target");
  expect("[", "after the atomic's target " + a->buffer->name);
  a->indices = indices(a->buffer);
  expect(",", "after the atomic's target element");
  a->value = expression();
  expect(")", "after the atomic's value");
  return Stmt(std::move(a));
}

// mma "mma_m16n8k16_f16_f32" a=A_l[0], b=B_l[0], c=C_l[0]
// mma "coopmat_16x16x16_f16_f32" a=tile A_s[0, 16, 0], b=tile B_s[0, 0, 32], c=C_l[0]
Stmt Parser::mma() {
  auto m = std::make_shared<Mma>(here());
  next();
  if (peek().kind != TokKind::String)
    fail("expected the matrix unit's name as a string after mma, found " + peek().describe());
  m->unit = next().text;
  const char* names[] = {"a", "b", "c"};
  MmaOperand* ops[] = {&m->a, &m->b, &m->c};
  for (int i = 0; i < 3; ++i) {
    if (i) expect(",", std::string("before mma operand ") + names[i]);
    expect_word(names[i], "in mma");
    expect("=", std::string("after mma operand ") + names[i]);
    // `tile [trans] NAME[...]`; a buffer named tile is `tile[...]`, one named trans `tile trans[...]`
    const bool tile = peek().text == "tile" && peek(1).text != "[";
    if (tile) next();
    if (tile && peek().text == "trans" && peek(1).text != "[") next(), ops[i]->trans = true;
    ops[i]->buffer = expect_buffer(std::string("mma operand ") + names[i]);
    expect("[", std::string("after the buffer of mma operand ") + names[i]);
    if (tile) {
      ops[i]->tile.push_back(expression());
      while (peek().text == ",") next(), ops[i]->tile.push_back(expression());
      expect("]", std::string("after the tile indices of mma operand ") + names[i]);
    } else {
      ops[i]->offset = expression();
      expect("]", std::string("after the offset of mma operand ") + names[i]);
    }
  }
  return Stmt(std::move(m));
}

// hold C_l as "coopmat_16x16x16_f16_f32" { ... }
Stmt Parser::hold() {
  auto h = std::make_shared<Hold>(here());
  next();
  h->buffer = expect_buffer("the held accumulator after hold");
  expect_word("as", "after the held accumulator " + h->buffer->name);
  if (peek().kind != TokKind::String)
    fail("expected the matrix unit's name as a string after hold ... as, found " + peek().describe());
  h->unit = next().text;
  h->body = block("after hold " + h->buffer->name + " as \"" + h->unit + "\"");
  return Stmt(std::move(h));
}

// ---- Functions

// Params: `A: f16[M, K] global`, `s: f32` (scalar), `M: size` or `M: i64 size`. Tensor shapes may
// name sizes declared later in the list, so they are read in a second pass.
void Parser::params(Function& f) {
  struct Pending {
    std::string name;
    DType type;
    std::size_t shape_pos;
    Scope scope;
    Layout layout;
    int line;
  };
  std::vector<std::pair<std::size_t, Pending>> tensors;  // index in f.params
  std::set<std::string> names;
  expect("(", "after the function name");
  if (!accept(")")) {
    do {
      int line = peek().line;
      std::string n = expect_name("a parameter name");
      if (!names.insert(n).second) fail_at(line, "parameter '" + n + "' is declared twice");
      expect(":", "after parameter " + n);
      Param p;
      DType t = i32;
      if (!peek().ident("size")) t = expect_dtype("of parameter " + n);
      if (accept("[")) {
        std::size_t shape_pos = pos_;
        for (int open = 1; open > 0; next()) {
          if (peek().kind == TokKind::End)
            fail("expected ']' after the shape of " + n + ", found end of text");
          open += peek().punct("[") ? 1 : peek().punct("]") ? -1 : 0;
          if (open == 0) break;
        }
        expect("]", "after the shape of " + n);
        Scope scope = Scope::Global;
        if (!is_scope_word(peek(), &scope))
          fail("expected a scope (global) after the shape of " + n + ", found " + peek().describe());
        next();
        tensors.push_back({f.params.size(), Pending{n, t, shape_pos, scope, layout(), line}});
      } else {
        p.kind = accept_word("size") ? Param::Kind::Size : Param::Kind::Scalar;
        p.var = Var(n, t, SourceLoc(name_, line));
        declare(n, Symbol{p.var, {}}, line);
      }
      f.params.push_back(p);
    } while (accept(","));
    expect(")", "after the parameters");
  }
  std::size_t resume = pos_;
  for (auto& [index, t] : tensors) {
    pos_ = t.shape_pos;
    std::vector<Expr> shape = expression_list("]", "after the shape of " + t.name);
    Param& p = f.params[index];
    p.buffer = Buffer::make(t.name, std::move(shape), t.type, t.scope, t.layout, SourceLoc(name_, t.line));
  }
  for (auto& [index, t] : tensors) declare(t.name, Symbol{{}, f.params[index].buffer}, t.line);
  pos_ = resume;
}

Function Parser::function() {
  Function f;
  f.loc = here();
  expect_word("func", "at the start of the text");
  const Token& n = peek();
  if (n.kind != TokKind::Ident && n.kind != TokKind::String)
    fail("expected the function's name after func, found " + n.describe());
  f.name = next().text;
  push_scope();
  params(f);
  f.body = block("of function " + f.name);
  pop_scope();
  if (peek().kind != TokKind::End)
    fail("expected end of text after the function, found " + peek().describe());
  return f;
}

}  // namespace text

Function parse_function(std::string_view text, const std::string& source_name) {
  return text::Parser(text, source_name).function();
}

}  // namespace tg
