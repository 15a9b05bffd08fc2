// Queries and barrier clean-up shared by the GPU lowering passes.
#include "stmt_build.h"

#include <set>

#include "thread_footprint.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::lower {

namespace {

bool is_barrier(const Stmt& s) { return s && s->kind == ir::StmtKind::Barrier; }

// The leading index of a multi-buffered tile names its slot: `K_s[(ko + 1) % 2, r, c]` is written
// where `K_s[ko % 2, r, c]` is read. A Slot is such an index in the form (v + c) mod s (floor
// modulo, as the IR's) or a constant c (s == 0), where v is the variable of a block-level loop
// enclosing both statements compared — the same value in every thread, so two accesses whose
// slots differ touch different elements whatever else their indices say.
struct Slot {
  const ir::VarNode* var = nullptr;
  int64_t c = 0, s = 0;
  // Whether no value of the variable makes the two slots equal.
  bool disjoint(const Slot& o) const {
    if (s == 0 && o.s == 0) return c != o.c;
    if (s == 0 || o.s == 0 || var != o.var || s != o.s) return false;
    return ((c - o.c) % s + s) % s != 0;
  }
};

// Which loop variables a slot may name, and by how many iterations an access is seen shifted:
// the previous iteration's accesses (shift -1) against this one's, or the next one's (+1).
struct SlotScope {
  std::set<const ir::VarNode*> loops;  // the enclosing block-level loops' variables
  const ir::VarNode* shifted = nullptr;
  int64_t shift = 0;
};

std::optional<Slot> slot_of(const Expr& e, const SlotScope& scope) {
  if (!e.defined()) return std::nullopt;
  if (auto k = e.as_int()) return Slot{nullptr, *k, 0};
  const auto* mod = e.as<ir::Binary>();
  if (!mod || mod->op != ir::BinOp::Mod) return std::nullopt;
  auto s = mod->b.as_int();
  if (!s || *s <= 0) return std::nullopt;
  const ir::VarNode* v = nullptr;
  int64_t c = 0;
  if (const auto* var = mod->a.as<ir::VarNode>()) {
    v = var;
  } else if (const auto* add = mod->a.as<ir::Binary>();
             add && (add->op == ir::BinOp::Add || add->op == ir::BinOp::Sub)) {
    const auto* var_a = add->a.as<ir::VarNode>();
    auto k_b = add->b.as_int();
    if (var_a && k_b) {
      v = var_a, c = add->op == ir::BinOp::Add ? *k_b : -*k_b;
    } else if (const auto* var_b = add->b.as<ir::VarNode>();
               var_b && add->op == ir::BinOp::Add && add->a.as_int()) {
      v = var_b, c = *add->a.as_int();
    }
  }
  if (!v || !scope.loops.count(v)) return std::nullopt;
  if (v == scope.shifted) c += scope.shift;
  return Slot{v, c, *s};
}

// Each access of a buffer with its slot (nullopt: unknown), for the buffers in `keep`.
// Asynchronous writes are kept apart: a bulk copy's writes into shared memory and into its
// mbarrier, and an mbarrier_arrive / mbarrier_expect_tx (an atomic update of the barrier). What
// orders them before a later access is an mbarrier wait, never a block barrier (a barrier after
// issuing a bulk copy does not make its data land), so they conflict only with earlier accesses
// (Access::conflicts). An mbarrier_wait reads its barrier; an mbarrier_init writes it.
class SlotAccesses : public BufferAccessVisitor {
 public:
  using Slots = std::map<const ir::BufferNode*, std::vector<std::optional<Slot>>>;
  SlotAccesses(const SlotScope& scope, Slots& reads, Slots& writes, Slots& async_writes)
      : scope_(scope), reads_(reads), writes_(writes), async_writes_(async_writes) {}

  void access(const Buffer& b, BufferAccess how) override {
    if (b->scope != Scope::Local) {
      std::optional<Slot> sl =
          pending_.defined() && pending_buffer_ == b.get() ? slot_of(pending_, scope_) : std::nullopt;
      if (is_read(how)) reads_[b.get()].push_back(sl);
      if (is_write(how)) writes_[b.get()].push_back(sl);
    }
    pending_ = Expr(), pending_buffer_ = nullptr;
  }
  using BufferAccessVisitor::visit;
  void visit(const ir::Load* op) override {
    expect(op->buffer.get(), op->indices);
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (!op->async) expect(op->buffer.get(), op->indices);  // an async store lands later
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::LdMatrix* op) override {
    expect(op->src.get(), op->src_indices);
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::BulkCopy* op) override {
    access(op->src.buffer, BufferAccess::Read);
    record(async_writes_, op->dst.buffer.get(), op->dst.offsets);
    record(async_writes_, op->barrier.get(), op->barrier_indices);
    IRVisitor::visit(op);
  }
  void visit(const ir::MBarrier* op) override {
    const bool init = op->op == ir::MBarrier::Op::Init, wait = op->op == ir::MBarrier::Op::Wait;
    record(init ? writes_ : wait ? reads_ : async_writes_, op->buffer.get(), op->indices);
    IRVisitor::visit(op);
  }

 private:
  void record(Slots& into, const ir::BufferNode* b, const std::vector<Expr>& idx) {
    if (b->scope != Scope::Local) into[b].push_back(idx.empty() ? std::nullopt : slot_of(idx[0], scope_));
  }
  void expect(const ir::BufferNode* b, const std::vector<Expr>& idx) {
    pending_ = idx.empty() ? Expr() : idx[0];
    pending_buffer_ = b;
  }
  const SlotScope& scope_;
  Slots& reads_;
  Slots& writes_;
  Slots& async_writes_;
  Expr pending_;
  const ir::BufferNode* pending_buffer_ = nullptr;
};

bool slots_disjoint(const std::vector<std::optional<Slot>>& a, const std::vector<std::optional<Slot>>& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (!x || !y || !x->disjoint(*y)) return false;
  return true;
}

// What a statement reads and writes of memory other threads see (every buffer but locals): the
// buffers, the slots of their accesses, and, worked out only when two statements meet on a buffer
// in a slot, which thread touches which of its elements (thread_footprint.h), so that statements
// that give every element to one thread need no barrier between them.
class Access {
 public:
  Access() = default;

  bool same_buffers(const Access& o) const {
    return reads_ == o.reads_ && writes_ == o.writes_ && async_writes_ == o.async_writes_;
  }

  static Access of(const Stmt& s, const ThreadSpace& space, const SlotScope& scope) {
    Access a;
    a.space_ = space;
    SlotAccesses(scope, a.read_slots_, a.write_slots_, a.async_write_slots_).visit_stmt(s);
    for (auto& [b, v] : a.read_slots_) a.reads_.insert(b);
    for (auto& [b, v] : a.write_slots_) a.writes_.insert(b);
    for (auto& [b, v] : a.async_write_slots_) a.async_writes_.insert(b);
    if (!a.reads_.empty() || !a.writes_.empty() || !a.async_writes_.empty()) a.sources_.push_back(s);
    return a;
  }
  void merge(const Access& o) {
    reads_.insert(o.reads_.begin(), o.reads_.end());
    writes_.insert(o.writes_.begin(), o.writes_.end());
    async_writes_.insert(o.async_writes_.begin(), o.async_writes_.end());
    for (auto& [b, v] : o.read_slots_) read_slots_[b].insert(read_slots_[b].end(), v.begin(), v.end());
    for (auto& [b, v] : o.write_slots_) write_slots_[b].insert(write_slots_[b].end(), v.begin(), v.end());
    for (auto& [b, v] : o.async_write_slots_)
      async_write_slots_[b].insert(async_write_slots_[b].end(), v.begin(), v.end());
    sources_.insert(sources_.end(), o.sources_.begin(), o.sources_.end());
    if (!space_.tx) space_ = o.space_;
    footprints_.reset();
  }
  // A barrier is needed between *this (before) and `next` (after): one buffer both touch, one of
  // them writing, in slots that may be the same, where some element is touched by two different
  // threads. An asynchronous write (SlotAccesses) counts only as `next`'s: it must not start
  // before the other threads' earlier accesses (a bulk copy into a slot they read, the re-arming
  // of a barrier they wait on); as this one's it needs no barrier, none would order it.
  bool conflicts(const Access& next) const {
    for (const ir::BufferNode* b : writes_)
      if ((next.reads_.count(b) && crosses(b, Role::Write, next, Role::Read)) ||
          (next.writes_.count(b) && crosses(b, Role::Write, next, Role::Write)) ||
          (next.async_writes_.count(b) && crosses(b, Role::Write, next, Role::Async)))
        return true;
    for (const ir::BufferNode* b : reads_)
      if ((next.writes_.count(b) && crosses(b, Role::Read, next, Role::Write)) ||
          (next.async_writes_.count(b) && crosses(b, Role::Read, next, Role::Async)))
        return true;
    return false;
  }

 private:
  const Footprints& footprints() const {
    if (!footprints_) {
      Footprints f;
      for (const Stmt& s : sources_) f.merge(thread_footprints(s, space_));
      footprints_ = std::move(f);
    }
    return *footprints_;
  }
  enum class Role { Read, Write, Async };
  const SlotAccesses::Slots& slots(Role r) const {
    return r == Role::Read ? read_slots_ : r == Role::Write ? write_slots_ : async_write_slots_;
  }
  bool crosses(const ir::BufferNode* b, Role mine_as, const Access& next, Role theirs_as) const {
    if (slots_disjoint(slots(mine_as).at(b), next.slots(theirs_as).at(b))) return false;
    // A footprint's writes hold the asynchronous ones too (thread_footprint.h: inexact).
    const auto& mine = mine_as == Role::Read ? footprints().reads : footprints().writes;
    const auto& theirs = theirs_as == Role::Read ? next.footprints().reads : next.footprints().writes;
    auto x = mine.find(b), y = theirs.find(b);
    // Not found: the statements never reach an access of b (their conditions were worked out).
    return x != mine.end() && y != theirs.end() && x->second.crosses(y->second);
  }

  std::set<const ir::BufferNode*> reads_, writes_, async_writes_;
  SlotAccesses::Slots read_slots_, write_slots_, async_write_slots_;
  std::vector<Stmt> sources_;  // the statements whose accesses these are
  ThreadSpace space_;
  mutable std::optional<Footprints> footprints_;
};

int barrier_count(const Stmt& s) {
  struct Count : IRVisitor {
    int n = 0;
    void visit(const ir::Barrier*) override { ++n; }
  } c;
  c.visit_stmt(s);
  return c.n;
}

bool ends_in_barrier(const Stmt& s) {
  const auto* seq = s.as<ir::Seq>();
  return seq ? !seq->stmts.empty() && is_barrier(seq->stmts.back()) : is_barrier(s);
}

// Whether every execution of s passes a barrier: a barrier, a sequence holding one, an if whose
// two branches do, a let over one, a serial loop that runs at least once over one.
bool always_syncs(const Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Barrier: return true;
    case ir::StmtKind::Seq:
      for (const Stmt& c : s.as<ir::Seq>()->stmts)
        if (always_syncs(c)) return true;
      return false;
    case ir::StmtKind::Let: return always_syncs(s.as<ir::Let>()->body);
    case ir::StmtKind::If: {
      const auto* n = s.as<ir::If>();
      return n->else_body && always_syncs(n->then_body) && always_syncs(n->else_body);
    }
    case ir::StmtKind::For: {
      const auto* n = s.as<ir::For>();
      auto trips = n->extent.as_int();
      return n->for_kind != ForKind::Parallel && trips && *trips >= 1 && always_syncs(n->body);
    }
    default: return false;
  }
}

// Moves every barrier to the first statement that needs it and drops only those that separate
// nothing. The invariant, for every sequence it returns: between any two accesses of one element
// of a non-local buffer by two different threads, at least one a write, that executions of the
// original code separated by a barrier, the result executes a barrier too (one thread's own
// accesses are ordered by program order). Proof sketch: `cur` over-approximates the accesses
// since the last barrier executed (the enclosing code's and, in a loop body, the previous
// iteration's included). A barrier met in the sequence is held back, not dropped: it is placed
// before the first later statement whose accesses conflict with `cur`; every statement it passes
// conflicts with nothing in `cur`, so it needs no separation from what precedes the barrier, and
// ordering it before the barrier instead of after only removes a separation from statements it
// does not conflict with. One still held at the end of the sequence is kept (the code after the
// sequence, or the next loop iteration, may need it), except at the end of the kernel. After a
// statement that holds barriers on every path `cur` restarts from that statement's accesses;
// after one that may skip them (a branch, a loop of unknown trip count) it grows.
class BarrierThinning {
 public:
  explicit BarrierThinning(const ThreadSpace& space) : space_(space) {}
  Stmt thin(const Stmt& s, const Access& before, bool kernel_end = false) {
    switch (s->kind) {
      case ir::StmtKind::Seq: return thin_seq(s.as<ir::Seq>()->stmts, before, kernel_end, s->loc);
      case ir::StmtKind::Let: {
        auto n = std::make_shared<ir::Let>(*s.as<ir::Let>());
        n->body = thin(n->body, before, kernel_end);
        return Stmt(std::move(n));
      }
      case ir::StmtKind::If: {
        auto n = std::make_shared<ir::If>(*s.as<ir::If>());
        n->then_body = thin(n->then_body, before);
        if (n->else_body) n->else_body = thin(n->else_body, before);
        return Stmt(std::move(n));
      }
      case ir::StmtKind::For: {
        auto n = std::make_shared<ir::For>(*s.as<ir::For>());
        if (n->for_kind == ForKind::Parallel) return s;
        scope_.loops.insert(n->var.node());
        // What may have run since the last barrier when an iteration starts: what preceded the
        // loop, and every earlier iteration's accesses, in unknown slots. That entry is sound
        // whatever the thinned body becomes.
        Access entry = before;
        entry.merge(Access::of(n->body, space_, outside(n->var.node())));
        Stmt body = thin(n->body, entry);
        // A body that passes a barrier on every path leaves only the previous iteration's
        // accesses after its last barrier, in slots shifted by one; thinning moves barriers later
        // or merges them, never past the end of the body, so that tail of the body as written
        // holds the thinned one's. And where the thinned body ends in a barrier, nothing of an
        // earlier iteration is left unseparated: thinned again from `before` alone, it is kept if
        // it still ends in one. The tighter entries are taken only in pipelined loops (their
        // multi-buffered tiles: pipeline_shared) and where they save barriers (two slots: one
        // barrier an iteration instead of three). Serial loops keep the barrier at their head,
        // the form vulkan's prefetch_tiles and double_buffer_tiles rewrite.
        if (n->for_kind == ForKind::Pipelined && always_syncs(n->body)) {
          Access tight = before;
          tight.merge(tail_after_barrier(n->body, shifted(n->var.node(), -1)));
          Stmt candidate = thin(n->body, tight);
          if (!tight.same_buffers(before) && ends_in_barrier(candidate)) {
            Stmt again = thin(n->body, before);
            if (ends_in_barrier(again)) candidate = again;
          }
          if (barrier_count(candidate) < barrier_count(body)) body = candidate;
        }
        n->body = std::move(body);
        scope_.loops.erase(n->var.node());
        return Stmt(std::move(n));
      }
      default: return s;
    }
  }

 private:
  SlotScope shifted(const ir::VarNode* v, int64_t by) const {
    SlotScope sc = scope_;
    sc.loops.insert(v);
    sc.shifted = v, sc.shift = by;
    return sc;
  }
  SlotScope outside(const ir::VarNode* v) const {
    SlotScope sc = scope_;
    sc.loops.erase(v);
    return sc;
  }

  // What s may access after the last barrier it executes (s always syncs): nothing after a
  // barrier, the last statements of a sequence back to one that syncs, and that one's own tail.
  Access tail_after_barrier(const Stmt& s, const SlotScope& scope) const {
    switch (s->kind) {
      case ir::StmtKind::Barrier: return Access();
      case ir::StmtKind::Seq: {
        Access tail;
        const auto& stmts = s.as<ir::Seq>()->stmts;
        for (std::size_t i = stmts.size(); i-- > 0;) {
          if (always_syncs(stmts[i])) {
            tail.merge(tail_after_barrier(stmts[i], scope));
            return tail;
          }
          tail.merge(Access::of(stmts[i], space_, scope));
        }
        return tail;
      }
      case ir::StmtKind::Let: return tail_after_barrier(s.as<ir::Let>()->body, scope);
      case ir::StmtKind::If: {
        const auto* n = s.as<ir::If>();
        Access tail = tail_after_barrier(n->then_body, scope);
        tail.merge(tail_after_barrier(n->else_body, scope));
        return tail;
      }
      case ir::StmtKind::For:  // runs at least once, each iteration passing a barrier: the last one's
        if (always_syncs(s)) return tail_after_barrier(s.as<ir::For>()->body, scope);
        return Access::of(s, space_, scope);
      default: return Access::of(s, space_, scope);
    }
  }

  Stmt thin_seq(const std::vector<Stmt>& stmts, const Access& before, bool kernel_end, const SourceLoc& loc) {
    std::vector<Stmt> out;
    Access cur = before;
    Stmt held;  // a barrier not placed yet
    for (const Stmt& s0 : stmts) {
      if (is_barrier(s0)) {
        held = s0;
        continue;
      }
      Access a = Access::of(s0, space_, scope_);
      if (held && cur.conflicts(a)) {
        out.push_back(held);
        held = Stmt();
        cur = Access();
      }
      Stmt t = thin(s0, cur);
      Stmt after = hoist_trailing_barrier(t);
      if (!after) after = hoist_branch_barrier(t);
      if (always_syncs(t)) {
        cur = tail_after_barrier(t, scope_);  // what follows its last barrier
      } else {
        cur.merge(a);
      }
      out.push_back(std::move(t));
      if (after) held = after;  // it now follows the loop, and is placed as any other
    }
    if (held && !kernel_end) out.push_back(held);
    return make_seq(std::move(out), loc);
  }

  // A loop whose body ends in a barrier that the next iteration does not need (what follows the
  // body's last barrier conflicts with nothing in the next iteration's body) loses it: `loop`
  // becomes the loop without it, and the barrier is returned, to follow the loop instead:
  //   for i { S; barrier }  →  for i { S }; barrier     (S: each thread its own elements)
  // The last iteration's accesses are still separated from what follows the loop, and no two
  // iterations needed separating. Null when the loop keeps its barrier.
  Stmt hoist_trailing_barrier(Stmt& loop) const {
    const auto* f = loop.as<ir::For>();
    if (!f || f->for_kind == ForKind::Parallel) return Stmt();
    const auto* body = f->body.as<ir::Seq>();
    if (!body || body->stmts.empty() || !is_barrier(body->stmts.back())) return Stmt();
    std::vector<Stmt> rest(body->stmts.begin(), body->stmts.end() - 1);
    SlotScope same = shifted(f->var.node(), 0);
    Access tail;  // what may run after the body's last barrier but the trailing one
    for (std::size_t i = rest.size(); i-- > 0;) {
      if (always_syncs(rest[i])) {
        tail.merge(tail_after_barrier(rest[i], same));
        break;
      }
      tail.merge(Access::of(rest[i], space_, same));
    }
    if (tail.conflicts(Access::of(f->body, space_, shifted(f->var.node(), +1)))) return Stmt();
    Stmt barrier = body->stmts.back();
    auto n = std::make_shared<ir::For>(*f);
    n->body = make_seq(std::move(rest), body->loc);
    loop = Stmt(std::move(n));
    return barrier;
  }

  // An if on a block-uniform condition (not the thread index, not warp roles) whose branch ends
  // in a barrier loses it, the barrier returned to follow the if and be placed as any other:
  //   if ko >= bx { S; barrier }  →  if ko >= bx { S }; barrier   (guard_masks' masked tiles)
  // On the path through that branch the barrier only moves later, past nothing it must precede
  // (thin_seq places it before the first conflicting statement); the other path gains one.
  Stmt hoist_branch_barrier(Stmt& s) const {
    const auto* n = s.as<ir::If>();
    if (!n || n->concurrent || (space_.tx && vars_in(n->cond).count(space_.tx))) return Stmt();
    auto trailing = [](const Stmt& b) {
      const auto* seq = b ? b.as<ir::Seq>() : nullptr;
      return seq && !seq->stmts.empty() && is_barrier(seq->stmts.back());
    };
    const bool t = trailing(n->then_body), e = trailing(n->else_body);
    if (!t && !e) return Stmt();
    auto strip = [](const Stmt& b) {
      const auto* seq = b.as<ir::Seq>();
      return make_seq(std::vector<Stmt>(seq->stmts.begin(), seq->stmts.end() - 1), seq->loc);
    };
    auto m = std::make_shared<ir::If>(*n);
    Stmt barrier = t ? n->then_body.as<ir::Seq>()->stmts.back() : n->else_body.as<ir::Seq>()->stmts.back();
    if (t) m->then_body = strip(n->then_body);
    if (e) m->else_body = strip(n->else_body);
    s = Stmt(std::move(m));
    return barrier;
  }

  ThreadSpace space_;
  SlotScope scope_;
};

// Splices nested Seqs into their parent, so that barriers of neighbouring lowered statements meet.
struct FlattenSeqs : IRMutator {
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    for (const Stmt& s : op->stmts) {
      Stmt m = mutate(s);
      if (const auto* inner = m.as<ir::Seq>())
        out.insert(out.end(), inner->stmts.begin(), inner->stmts.end());
      else
        out.push_back(m);
    }
    return make_seq(std::move(out), op->loc);
  }
};

}  // namespace

bool fills_shared_from_global(const Stmt& s) {
  struct Find : IRVisitor {
    bool found = false, into_shared = false;
    using IRVisitor::visit;
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

bool has_bulk_copies(const Stmt& s) {
  struct Find : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const ir::BulkCopy*) override { found = true; }
  } f;
  f.visit_stmt(s);
  return f.found;
}

std::map<const ir::BufferNode*, const ir::Mma*> async_mma_tiles(const Stmt& s) {
  struct Scan : IRVisitor {
    std::map<const ir::BufferNode*, const ir::Mma*> tiles;
    using IRVisitor::visit;
    void visit(const ir::Mma* op) override {
      const MatrixUnit* u = find_matrix_unit(op->unit);
      if (u && u->async)
        for (const ir::MmaOperand* o : {&op->a, &op->b})
          if (o->is_tile() && o->buffer->scope == Scope::Shared) tiles.emplace(o->buffer.get(), op);
      IRVisitor::visit(op);
    }
  } scan;
  scan.visit_stmt(s);
  return scan.tiles;
}

Stmt fenced(Stmt s, const SourceLoc& loc) {
  return make_seq({make_barrier(loc), std::move(s), make_barrier(loc)}, loc);
}

Stmt drop_redundant_barriers(const Stmt& kernel_body, const Var& thread_var, int threads) {
  return BarrierThinning(ThreadSpace{thread_var.node(), threads})
      .thin(FlattenSeqs().mutate(kernel_body), Access(), /*kernel_end=*/true);
}

}  // namespace tg::lower

namespace tg::lower {

std::vector<Expr> region_index(const Region& r, const std::vector<Expr>& squeezed) {
  std::vector<Expr> idx;
  std::size_t k = 0;
  for (std::size_t d = 0; d < r.offsets.size(); ++d) {
    if (is_const(r.extents[d], 1) || k >= squeezed.size())
      idx.push_back(r.offsets[d]);
    else
      idx.push_back(r.offsets[d] + squeezed[k++]);
  }
  return idx;
}

std::vector<Expr> matrix_index(const Region& r, const Expr& row, const Expr& col) {
  std::vector<Expr> idx = r.offsets;
  std::size_t n = idx.size();
  idx[n - 2] = idx[n - 2] + row;
  idx[n - 1] = idx[n - 1] + col;
  return idx;
}

Expr in_bounds(const Buffer& b, const std::vector<Expr>& idx) {
  Expr cond = true;
  for (std::size_t d = 0; d < idx.size(); ++d) cond = cond && idx[d] >= 0 && idx[d] < b->shape[d];
  return cond;
}

std::optional<std::vector<int64_t>> const_squeezed_extents(const Region& r) {
  std::vector<int64_t> out;
  for (const Expr& e : r.squeezed_extents()) {
    auto v = e.as_int();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace tg::lower
