// warp_roles (see the header).
#include "tilegen/passes/warp_roles.h"

#include <algorithm>
#include <optional>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

using namespace lower;

// Statements with the empty ones (null) left out; null where none is left.
Stmt seq_of(std::vector<Stmt> stmts, const SourceLoc& loc) {
  std::vector<Stmt> kept;
  for (Stmt& s : stmts)
    if (s) kept.push_back(std::move(s));
  if (kept.empty()) return Stmt();
  return make_seq(std::move(kept), loc);
}

// Whether e reads memory (a Load or an access check) or the thread index.
bool impure(const Expr& e, const Var& tx) {
  struct Scan : IRVisitor {
    using IRVisitor::visit;
    bool loads = false;
    void visit(const ir::Load*) override { loads = true; }
    void visit(const ir::AccessCheck*) override { loads = true; }
  } scan;
  scan.visit_expr(e);
  return scan.loads || vars_in(e).count(tx.node()) > 0;
}

// The loop variables around a statement, with their constant bounds where they have them.
struct Loop {
  const ir::VarNode* var;
  std::optional<int64_t> min, end;
};

// One fill of the ring as bulk_copies writes it: `if tx == 0 { mbarrier_expect_tx full[slot], n
// bulk_copy ... on full[slot] ... }` under guards `if g { ... }` (no else).
struct Fill {
  std::vector<Expr> guards;
  const ir::Seq* issue;  // the expect_tx and the copies
  Expr slot;
  SourceLoc loc;
};

class Roles {
 public:
  Roles(const ir::Kernel& k, const TargetInfo& info)
      : k_(k), info_(info), tx_(k.thread_var), producer_threads_(info.warp_size) {}

  // The kernel with roles, or nullopt where one of the header's conditions fails.
  std::optional<Stmt> run() {
    const int T = k_.threads, W = info_.warp_size;
    if (!tx_.defined() || W < 1 || T % W != 0 || T + W > info_.max_threads) return std::nullopt;
    // Lets at the top (rasterize_blocks' block order), then the sequence holding the ring.
    std::vector<const ir::Let*> lets;
    Stmt at = k_.body;
    while (const auto* l = at.as<ir::Let>()) {
      if (impure(l->value, tx_)) return std::nullopt;  // the producer evaluates it too
      lets.push_back(l);
      at = l->body;
    }
    std::vector<Stmt> top = stmts_of(at);
    std::size_t i = 0;
    while (i < top.size() && !init_block(top[i])) ++i;
    if (i == top.size()) return std::nullopt;
    std::size_t b = i + 1;
    if (b < top.size() && is_proxy_fence(top[b])) ++b;
    if (b >= top.size() || !top[b].as<ir::Barrier>()) return std::nullopt;
    const SourceLoc& loc = top[b]->loc;
    std::vector<Stmt> pre(top.begin(), top.begin() + std::ptrdiff_t(i));
    std::vector<Stmt> region(top.begin() + std::ptrdiff_t(b + 1), top.end());
    for (const Stmt& s : pre)
      if (!plain(s)) return std::nullopt;
    const Stmt body = make_seq(region, loc);
    empty_ = Buffer::make(free_name("empty"), {Expr(S_)}, i64, Scope::Shared, {}, loc);
    if (info_.roles_async_reads_only && !slots_read_by_async_mmas_only(body)) return std::nullopt;
    std::optional<Stmt> consumer = consume(body);
    if (!consumer || arrivals_ == 0 || writes_shared(*consumer)) return std::nullopt;
    loops_.clear();
    std::optional<Stmt> producer = produce(body);
    if (!producer || !bool(*producer)) return std::nullopt;

    std::vector<Stmt> out;
    if (Stmt p = seq_of(pre, loc); p) out.push_back(make_if(tx_ < T, p, loc));
    out.push_back(with_empty_init(top[i], T));
    for (std::size_t j = i + 1; j <= b; ++j) out.push_back(top[j]);
    auto roles = std::make_shared<ir::If>(loc);
    roles->cond = tx_ < T;
    roles->concurrent = true;
    Stmt consumers = bool(*consumer) ? *consumer : make_seq({}, loc);
    Stmt producers = make_if(tx_ == T, *producer, loc);
    const auto [mine, theirs] = register_split(T, shared_bytes(k_) + 8 * S_, local_registers(k_));
    if (mine > 0) {  // a producer warpgroup gives registers back, the consumers take them
      producer_threads_ = 128;
      consumers = make_seq({registers(theirs, loc), consumers}, loc);
      producers = make_seq({registers(mine, loc), producers}, loc);
    }
    roles->then_body = consumers;
    roles->else_body = producers;
    out.push_back(Stmt(std::move(roles)));
    Stmt result = make_seq(std::move(out), loc);
    for (std::size_t j = lets.size(); j-- > 0;)
      result = make_let(lets[j]->var, lets[j]->value, result, lets[j]->loc);
    return result;
  }

  const Buffer& empty() const { return empty_; }
  int producer_threads() const { return producer_threads_; }

 private:
  // With register reallocation (TargetInfo::reallocate_registers) and T a whole number of
  // warpgroups: the producer a warpgroup of its own at 40 registers a thread, the consumers with
  // what that leaves of the register file's share of this block (as many blocks a multiprocessor
  // as the shared memory lets, at most 2, and no more than leave each consumer the registers its
  // local buffers hold plus kAddressRegisters): (producer, consumers) registers, or (0, 0) where
  // the consumers would gain nothing (they keep the compiler's count, the producer is one warp).
  //   T = 128, 2 blocks: 65536 / 512 = 128 at entry → (40, 216);  T = 256, 1 block: 168 → (40, 232).
  //   attention at T = 256 (two warpgroups of 64 rows: O 64, scores 32, P 16 registers, ...): 2
  //   blocks by shared memory would leave 96 → 1 block, (40, 232).
  std::pair<int, int> register_split(int T, int64_t shared, int64_t local_registers) const {
    constexpr int G = 128, kProducer = 40, kAddressRegisters = 32;
    if (!info_.reallocate_registers || info_.register_file <= 0 || T % G != 0 || T + G > info_.max_threads)
      return {0, 0};
    const int threads = T + G;
    int64_t blocks = std::clamp<int64_t>(info_.shared_mem_bytes / std::max<int64_t>(shared + 1024, 1), 1, 2);
    auto split = [&](int64_t b) {
      const int64_t entry = std::min<int64_t>(256, info_.register_file / (b * threads) / 8 * 8);
      return std::pair<int64_t, int64_t>(
          entry, std::min<int64_t>(256, (entry * threads - int64_t(kProducer) * G) / T / 8 * 8));
    };
    while (blocks > 1 && split(blocks).second < local_registers + kAddressRegisters) --blocks;
    const auto [entry, consumers] = split(blocks);
    if (consumers <= entry) return {0, 0};
    return {kProducer, int(consumers)};
  }

  // The 32-bit registers a thread's local buffers take (16-bit elements two to a register).
  static int64_t local_registers(const ir::Kernel& k) {
    int64_t regs = 0;
    for (const Buffer& b : k.buffers)
      if (b->scope == Scope::Local)
        regs += (int64_t(storage_bytes(b->dtype, b.const_numel().value_or(0))) + 3) / 4;
    return regs;
  }

  static int64_t shared_bytes(const ir::Kernel& k) {
    int64_t bytes = 0;
    for (const Buffer& b : k.buffers)
      if (b->scope == Scope::Shared) bytes += int64_t(storage_bytes(b->dtype, b.const_numel().value_or(0)));
    return bytes;
  }

  static Stmt registers(int n, const SourceLoc& loc) {
    auto r = std::make_shared<ir::MmaSync>(loc);
    r->op = ir::MmaSync::Op::Registers;
    r->registers = n;
    return Stmt(std::move(r));
  }

  // bulk_copies' `if tx == 0 { for s in serial(0 +: S) { mbarrier_init full[s], 1 } }`.
  bool init_block(const Stmt& s) {
    const auto* g = s.as<ir::If>();
    if (!g || g->else_body || !is_thread_zero(g->cond)) return false;
    const auto* f = g->then_body.as<ir::For>();
    const auto* init = f ? f->body.as<ir::MBarrier>() : nullptr;
    if (!init || init->op != ir::MBarrier::Op::Init || !is_const(f->min, 0) || !f->extent.as_int() ||
        init->indices.size() != 1 || !init->indices[0].same_as(f->var) || !is_const(init->value, 1))
      return false;
    full_ = init->buffer;
    S_ = *f->extent.as_int();
    return S_ >= 2 && full_.rank() == 1 && equal(full_->shape[0], Expr(S_));
  }

  bool is_thread_zero(const Expr& c) const {
    const auto* eq = c.as<ir::Binary>();
    return eq && eq->op == ir::BinOp::Eq && eq->a.same_as(tx_) && is_const(eq->b, 0);
  }

  static bool is_proxy_fence(const Stmt& s) {
    const auto* f = s.as<ir::MmaSync>();
    return f && f->op == ir::MmaSync::Op::ProxyFence;
  }

  // The init block with `mbarrier_init empty[s], T` beside full's.
  Stmt with_empty_init(const Stmt& s, int T) const {
    const auto* g = s.as<ir::If>();
    const auto* f = g->then_body.as<ir::For>();
    auto nf = std::make_shared<ir::For>(*f);
    nf->body = make_seq({f->body, make_mbarrier(ir::MBarrier::Op::Init, empty_, f->var, Expr(T), f->loc)}, f->loc);
    auto ng = std::make_shared<ir::If>(*g);
    ng->then_body = Stmt(std::move(nf));
    return Stmt(std::move(ng));
  }

  std::string free_name(const std::string& base) const {
    for (int n = 0;; ++n) {
      std::string name = base + (n ? std::to_string(n) : "");
      bool taken = false;
      for (const Buffer& b : k_.buffers) taken |= b->name == name;
      if (!taken) return name;
    }
  }

  // A statement the consumers may run apart from the producer before the ring's barrier: no
  // barrier, mbarrier or bulk copy in it.
  // With `waits`, an mbarrier_wait may stand in it (a consumer's wait on full).
  static bool plain(const Stmt& s, bool waits = false) {
    struct Scan : IRVisitor {
      using IRVisitor::visit;
      bool waits = false, bad = false;
      void visit(const ir::Barrier*) override { bad = true; }
      void visit(const ir::BulkCopy*) override { bad = true; }
      void visit(const ir::Kernel*) override { bad = true; }
      void visit(const ir::MBarrier* op) override { bad |= !waits || op->op != ir::MBarrier::Op::Wait; }
    } scan;
    scan.waits = waits;
    scan.visit_stmt(s);
    return !scan.bad;
  }

  // Whether every read of a buffer the bulk copies in s fill is an asynchronous mma's tile
  // operand (the header: a slot read by ldmatrix, a load or mma.sync keeps the kernel).
  static bool slots_read_by_async_mmas_only(const Stmt& s) {
    struct Slots : IRVisitor {
      using IRVisitor::visit;
      std::vector<const ir::BufferNode*> slots;
      void visit(const ir::BulkCopy* c) override { slots.push_back(c->dst.buffer.get()); }
    } fills;
    fills.visit_stmt(s);
    struct Reads : IRVisitor {
      using IRVisitor::visit;
      const std::vector<const ir::BufferNode*>* slots = nullptr;
      bool other = false;
      bool slot(const Buffer& b) const {
        return std::find(slots->begin(), slots->end(), b.get()) != slots->end();
      }
      void visit(const ir::BulkCopy*) override {}  // its region is the write
      void visit(const ir::Load* l) override {
        other |= slot(l->buffer);
        IRVisitor::visit(l);
      }
      void visit(const ir::LdMatrix* l) override {
        other |= slot(l->src);
        IRVisitor::visit(l);
      }
      void visit(const ir::Mma* m) override {
        const MatrixUnit* u = find_matrix_unit(m->unit);
        if (!u || !u->async) other |= slot(m->a.buffer) || slot(m->b.buffer);
        IRVisitor::visit(m);
      }
    } reads;
    reads.slots = &fills.slots;
    reads.visit_stmt(s);
    return !fills.slots.empty() && !reads.other;
  }

  // Whether s writes a shared buffer other than the ring's mbarriers.
  bool writes_shared(const Stmt& s) const {
    bool w = false;
    for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
      if (b->scope == Scope::Shared && is_write(how) && !b.same_as(full_) && !b.same_as(empty_)) w = true;
    });
    return w;
  }

  // s as one of the ring's fills, its guards peeled.
  std::optional<Fill> as_fill(const Stmt& s) const {
    Fill f;
    Stmt at = s;
    while (const auto* g = at.as<ir::If>()) {
      if (g->else_body || g->concurrent) return std::nullopt;
      if (is_thread_zero(g->cond)) {
        const auto* seq = g->then_body.as<ir::Seq>();
        if (!seq || seq->stmts.size() < 2) return std::nullopt;
        const auto* expect = seq->stmts[0].as<ir::MBarrier>();
        if (!expect || expect->op != ir::MBarrier::Op::ExpectTx || !expect->buffer.same_as(full_))
          return std::nullopt;
        for (std::size_t j = 1; j < seq->stmts.size(); ++j) {
          const auto* c = seq->stmts[j].as<ir::BulkCopy>();
          if (!c || !c->barrier.same_as(full_) || c->barrier_indices.size() != 1 ||
              !equal(c->barrier_indices[0], expect->indices[0]))
            return std::nullopt;
        }
        f.issue = seq;
        f.slot = expect->indices[0];
        f.loc = g->loc;
        return f;
      }
      f.guards.push_back(g->cond);
      at = g->then_body;
    }
    return std::nullopt;
  }

  bool holds_fill(const Stmt& s) const {
    struct Scan : IRVisitor {
      using IRVisitor::visit;
      bool found = false;
      void visit(const ir::BulkCopy*) override { found = true; }
      void visit(const ir::MBarrier* op) override { found |= op->op == ir::MBarrier::Op::ExpectTx; }
    } scan;
    scan.visit_stmt(s);
    return scan.found;
  }

  // The tile a fill of slot `slot` brings, t with slot = t % S, and whether t < S surely (its
  // first use of the slot, which waits for nobody): nullopt where slot has neither form.
  struct Tile {
    Expr t;
    bool first = false;
  };
  std::optional<Tile> tile_of(const Expr& slot) const {
    if (const auto* m = slot.as<ir::Binary>(); m && m->op == ir::BinOp::Mod && is_const(m->b, S_))
      return Tile{m->a, below_s(m->a)};
    if (below_s(slot)) return Tile{slot, true};
    return std::nullopt;
  }

  // Whether e is surely in [0, S): a constant, or a loop variable whose loop stays there.
  bool below_s(const Expr& e) const {
    if (auto c = e.as_int()) return *c >= 0 && *c < S_;
    const auto* v = e.as<ir::VarNode>();
    for (const Loop& l : loops_)
      if (v && l.var == v) return l.min && l.end && *l.min >= 0 && *l.end <= S_;
    return false;
  }

  Expr all_of(const std::vector<Expr>& conds) const {
    Expr c;
    for (const Expr& e : conds) c = c.defined() ? (c && e) : e;
    return c;
  }

  Stmt guarded(const std::vector<Expr>& guards, Stmt s, const SourceLoc& loc) const {
    Expr g = all_of(guards);
    return g.defined() ? make_if(simplify_expr(g), std::move(s), loc) : s;
  }

  Stmt with_loop(const ir::For* op, Stmt body) const {
    if (!body) return Stmt();
    auto n = std::make_shared<ir::For>(*op);
    n->body = std::move(body);
    return Stmt(std::move(n));
  }

  void push_loop(const ir::For* op) { loops_.push_back({op->var.node(), op->min.as_int(), end_of(op)}); }

  static std::optional<int64_t> end_of(const ir::For* op) {
    auto a = op->min.as_int(), n = op->extent.as_int();
    if (!a || !n) return std::nullopt;
    return *a + *n;
  }

  // The consumers' code: the fills gone, the barrier before each fill of tile t now an arrival
  // on empty[t % S] where t ≥ S; null where nothing is left, nullopt where the rules fail.
  std::optional<Stmt> consume(const Stmt& s) {
    if (const auto* seq = s.as<ir::Seq>()) {
      std::vector<Stmt> out;
      for (std::size_t j = 0; j < seq->stmts.size(); ++j) {
        const Stmt& x = seq->stmts[j];
        if (x.as<ir::Barrier>()) {
          std::optional<Fill> f = j + 1 < seq->stmts.size() ? as_fill(seq->stmts[j + 1]) : std::nullopt;
          std::optional<Tile> t = f ? tile_of(f->slot) : std::nullopt;
          if (!t || !fill_in_place(*f)) return std::nullopt;
          ++j;
          if (t->first) continue;  // the slot's first fill: no reads of it came before
          std::vector<Expr> g = f->guards;
          g.push_back(t->t >= Expr(S_));
          out.push_back(
              guarded(g, make_mbarrier(ir::MBarrier::Op::Arrive, empty_, f->slot, Expr(), x->loc), x->loc));
          ++arrivals_;
          continue;
        }
        if (std::optional<Fill> f = as_fill(x)) {
          std::optional<Tile> t = tile_of(f->slot);
          if (!t || !t->first || !fill_in_place(*f))
            return std::nullopt;  // a refill with no barrier before it
          continue;
        }
        std::optional<Stmt> c = consume(x);
        if (!c) return std::nullopt;
        out.push_back(*c);
      }
      return seq_of(std::move(out), seq->loc);
    }
    if (const auto* f = s.as<ir::For>()) {
      if (f->for_kind == ForKind::Parallel && holds_fill(f->body)) return std::nullopt;
      push_loop(f);
      std::optional<Stmt> b = consume_loop_body(*f);
      loops_.pop_back();
      if (!b) return std::nullopt;
      return with_loop(f, *b);
    }
    if (const auto* g = s.as<ir::If>()) {
      if (std::optional<Fill> f = as_fill(s)) {  // alone, not after a barrier: the slot's first fill
        std::optional<Tile> t = tile_of(f->slot);
        if (!t || !t->first || !fill_in_place(*f)) return std::nullopt;
        return Stmt();
      }
      std::optional<Stmt> t = consume(g->then_body);
      std::optional<Stmt> e = g->else_body ? consume(g->else_body) : std::optional<Stmt>(Stmt());
      if (!t || !e) return std::nullopt;
      if (!bool(*t) && !bool(*e)) return Stmt();
      auto n = std::make_shared<ir::If>(*g);
      n->then_body = bool(*t) ? *t : make_seq({}, g->loc);
      n->else_body = *e;
      return Stmt(std::move(n));
    }
    if (const auto* l = s.as<ir::Let>()) {
      std::optional<Stmt> b = consume(l->body);
      if (!b) return std::nullopt;
      return bool(*b) ? make_let(l->var, l->value, *b, l->loc) : Stmt();
    }
    // Anything else stays as it is, unless it holds a barrier that is not before a fill, or an
    // mbarrier operation other than a wait (the ring is the producer's and the arrivals ours).
    if (!plain(s, /*waits=*/true)) return std::nullopt;
    return s;
  }

  // A loop body; where it starts with a fill and ends with a barrier (pipeline_shared's order
  // without overlap_async_mma's: the barrier orders this iteration's reads before the next one's
  // refill), the barrier becomes the arrival for the next iteration's fill:
  //   for ko { if ko + 1 < n { <fill tile ko + 1> }  <reads of slot ko % 2>  barrier }
  //     →  for ko { <reads>
  //                  if ko + 1 < min + extent && ko + 2 < n && ko + 2 >= 2 { arrive empty[(ko + 2) % 2] } }
  std::optional<Stmt> consume_loop_body(const ir::For& f) {
    std::vector<Stmt> body = stmts_of(f.body);
    std::optional<Fill> head =
        body.size() >= 2 && body.back().as<ir::Barrier>() ? as_fill(body.front()) : std::nullopt;
    if (!head) return consume(f.body);
    std::optional<Tile> t = tile_of(head->slot);
    if (!t || !fill_in_place(*head)) return std::nullopt;
    // The first iteration's fill comes after no barrier of this loop: it must be its slot's first.
    const Expr first = simplify_expr(substitute(t->t, {{f.var, f.min}}));
    if (!first.as_int() || *first.as_int() < 0 || *first.as_int() >= S_) return std::nullopt;
    std::optional<Stmt> rest =
        consume(make_seq(std::vector<Stmt>(body.begin() + 1, body.end() - 1), f.body->loc));
    if (!rest) return std::nullopt;
    const std::vector<std::pair<Var, Expr>> next = {{f.var, f.var + Expr(1)}};
    std::vector<Expr> g = {f.var + Expr(1) < f.min + f.extent};
    for (const Expr& e : head->guards) g.push_back(substitute(e, next));
    // The tile from the slot's form before simplifying it ((ko + 1 + 1) % 2 is ko % 2, of tile ko + 2).
    std::optional<Tile> tn = tile_of(substitute(head->slot, next));
    if (!tn) return std::nullopt;
    const Expr slot = simplify_expr(tn->t % Expr(S_));
    if (!tn->first) g.push_back(tn->t >= Expr(S_));
    const SourceLoc& loc = body.back()->loc;
    ++arrivals_;
    return seq_of({*rest, guarded(g, make_mbarrier(ir::MBarrier::Op::Arrive, empty_, slot, Expr(), loc), loc)},
                  f.body->loc);
  }

  // A fill the producer can issue on its own: its guards and the loops around it free of loads
  // and of the thread index, inside at most one loop (its tile numbers then count one ring).
  bool fill_in_place(const Fill& f) const {
    for (const Expr& g : f.guards)
      if (impure(g, tx_)) return false;
    return loops_.size() <= 1;
  }

  // The producer's code: the loops and lets around the fills, each fill of tile t ≥ S waiting
  // first for the consumers' arrivals on empty[t % S]; null where s holds no fill.
  std::optional<Stmt> produce(const Stmt& s) {
    if (!holds_fill(s)) return Stmt();
    if (std::optional<Fill> f = as_fill(s)) {
      std::optional<Tile> t = tile_of(f->slot);
      if (!t) return std::nullopt;
      std::vector<Stmt> issue;
      if (!t->first) {
        Expr parity = simplify_expr((t->t / Expr(S_) + Expr(1)) % Expr(2));
        issue.push_back(make_if(t->t >= Expr(S_),
                                make_mbarrier(ir::MBarrier::Op::Wait, empty_, f->slot, parity, f->loc), f->loc));
      }
      for (const Stmt& x : f->issue->stmts) issue.push_back(x);
      return guarded(f->guards, make_seq(std::move(issue), f->loc), f->loc);
    }
    if (const auto* seq = s.as<ir::Seq>()) {
      std::vector<Stmt> out;
      for (const Stmt& x : seq->stmts) {
        std::optional<Stmt> p = produce(x);
        if (!p) return std::nullopt;
        out.push_back(*p);
      }
      return seq_of(std::move(out), seq->loc);
    }
    if (const auto* f = s.as<ir::For>()) {
      if (impure(f->min, tx_) || impure(f->extent, tx_)) return std::nullopt;
      push_loop(f);
      std::optional<Stmt> b = produce(f->body);
      loops_.pop_back();
      if (!b || !bool(*b)) return b;
      auto n = std::make_shared<ir::For>(*f);
      n->body = *b;
      if (n->for_kind == ForKind::Pipelined) {  // the producer's loop issues; it pipelines nothing
        n->for_kind = ForKind::Serial;
        n->stages = 0;
      }
      return Stmt(std::move(n));
    }
    if (const auto* g = s.as<ir::If>()) {
      if (impure(g->cond, tx_)) return std::nullopt;
      std::optional<Stmt> t = produce(g->then_body);
      std::optional<Stmt> e = g->else_body ? produce(g->else_body) : std::optional<Stmt>(Stmt());
      if (!t || !e) return std::nullopt;
      auto n = std::make_shared<ir::If>(*g);
      n->then_body = bool(*t) ? *t : make_seq({}, g->loc);
      n->else_body = *e;
      return Stmt(std::move(n));
    }
    if (const auto* l = s.as<ir::Let>()) {
      std::optional<Stmt> b = produce(l->body);
      if (!b || !bool(*b)) return b;
      if (!uses_var(*b, l->var)) return b;
      if (impure(l->value, tx_)) return std::nullopt;
      return make_let(l->var, l->value, *b, l->loc);
    }
    return std::nullopt;  // a fill inside a statement the producer cannot take apart
  }

  static bool uses_var(const Stmt& s, const Var& v) {
    struct Scan : IRVisitor {
      using IRVisitor::visit;
      const ir::VarNode* v = nullptr;
      bool used = false;
      void visit(const ir::VarNode* op) override { used |= op == v; }
    } scan;
    scan.v = v.node();
    scan.visit_stmt(s);
    return scan.used;
  }

  const ir::Kernel& k_;
  const TargetInfo& info_;
  Var tx_;
  Buffer full_, empty_;
  int64_t S_ = 0;
  int arrivals_ = 0;
  int producer_threads_;
  std::vector<Loop> loops_;
};

class WarpRoles : public IRMutator {
 public:
  explicit WarpRoles(const TargetInfo& info) : info_(info) {}
  using IRMutator::visit;

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    Roles roles(*op, info_);
    std::optional<Stmt> body = roles.run();
    if (!body) return self;
    auto k = std::make_shared<ir::Kernel>(*op);
    k->body = std::move(*body);
    k->threads = op->threads + roles.producer_threads();
    k->buffers.push_back(roles.empty());
    return Stmt(std::move(k));
  }

 private:
  const TargetInfo& info_;
};

}  // namespace

Function warp_roles(const Function& f, const TargetInfo& info) {
  if (!info.bulk_copy) return f;
  WarpRoles pass(info);
  return pass.mutate_function(f);
}

}  // namespace tg
