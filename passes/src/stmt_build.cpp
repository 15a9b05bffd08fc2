// Queries and barrier clean-up shared by the GPU lowering passes.
#include "stmt_build.h"

#include <set>

#include "thread_footprint.h"
#include "tilegen/ir/buffer_access.h"

namespace tg::lower {

namespace {

bool is_barrier(const Stmt& s) { return s && s->kind == ir::StmtKind::Barrier; }

// What a statement reads and writes of memory other threads see (every buffer but locals): the
// buffers, and, worked out only when two statements meet on a buffer, which thread touches which
// of its elements (thread_footprint.h), so that statements that give every element to one thread
// need no barrier between them.
class Access {
 public:
  Access() = default;

  static Access of(const Stmt& s, const ThreadSpace& space) {
    Access a;
    a.space_ = space;
    for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
      if (b->scope == Scope::Local) return;
      if (is_read(how)) a.reads_.insert(b.get());
      if (is_write(how)) a.writes_.insert(b.get());
    });
    if (!a.reads_.empty() || !a.writes_.empty()) a.sources_.push_back(s);
    return a;
  }
  void merge(const Access& o) {
    reads_.insert(o.reads_.begin(), o.reads_.end());
    writes_.insert(o.writes_.begin(), o.writes_.end());
    sources_.insert(sources_.end(), o.sources_.begin(), o.sources_.end());
    if (!space_.tx) space_ = o.space_;
    footprints_.reset();
  }
  // A barrier is needed between *this (before) and `next` (after): one buffer both touch, one of
  // them writing, where some element is touched by two different threads.
  bool conflicts(const Access& next) const {
    for (const ir::BufferNode* b : writes_)
      if ((next.reads_.count(b) && crosses(b, true, next, false)) ||
          (next.writes_.count(b) && crosses(b, true, next, true)))
        return true;
    for (const ir::BufferNode* b : reads_)
      if (next.writes_.count(b) && crosses(b, false, next, true)) return true;
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
  bool crosses(const ir::BufferNode* b, bool write, const Access& next, bool next_write) const {
    const auto& mine = write ? footprints().writes : footprints().reads;
    const auto& theirs = next_write ? next.footprints().writes : next.footprints().reads;
    auto x = mine.find(b), y = theirs.find(b);
    // Not found: the statements never reach an access of b (their conditions were worked out).
    return x != mine.end() && y != theirs.end() && x->second.crosses(y->second);
  }

  std::set<const ir::BufferNode*> reads_, writes_;
  std::vector<Stmt> sources_;  // the statements whose accesses these are
  ThreadSpace space_;
  mutable std::optional<Footprints> footprints_;
};

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
        Access entry = before;
        entry.merge(Access::of(n->body, space_));
        n->body = thin(n->body, entry);
        return Stmt(std::move(n));
      }
      default: return s;
    }
  }

 private:
  Stmt thin_seq(const std::vector<Stmt>& stmts, const Access& before, bool kernel_end, const SourceLoc& loc) {
    std::vector<Stmt> out;
    Access cur = before;
    Stmt held;  // a barrier not placed yet
    for (const Stmt& s0 : stmts) {
      if (is_barrier(s0)) {
        held = s0;
        continue;
      }
      Access a = Access::of(s0, space_);
      if (held && cur.conflicts(a)) {
        out.push_back(held);
        held = Stmt();
        cur = Access();
      }
      Stmt t = thin(s0, cur);
      Stmt after = hoist_trailing_barrier(t);
      if (always_syncs(t)) {
        cur = Access::of(t, space_);  // a superset of what follows its last barrier
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
  // body's last barrier conflicts with nothing in the body) loses it: `loop` becomes the loop
  // without it, and the barrier is returned, to follow the loop instead:
  //   for i { S; barrier }  →  for i { S }; barrier     (S: each thread its own elements)
  // The last iteration's accesses are still separated from what follows the loop, and no two
  // iterations needed separating. Null when the loop keeps its barrier.
  Stmt hoist_trailing_barrier(Stmt& loop) const {
    const auto* f = loop.as<ir::For>();
    if (!f || f->for_kind == ForKind::Parallel) return Stmt();
    const auto* body = f->body.as<ir::Seq>();
    if (!body || body->stmts.empty() || !is_barrier(body->stmts.back())) return Stmt();
    std::vector<Stmt> rest(body->stmts.begin(), body->stmts.end() - 1);
    Access tail;  // what may run after the body's last barrier but the trailing one
    for (std::size_t i = rest.size(); i-- > 0;) {
      tail.merge(Access::of(rest[i], space_));
      if (always_syncs(rest[i])) break;
    }
    if (tail.conflicts(Access::of(f->body, space_))) return Stmt();
    Stmt barrier = body->stmts.back();
    auto n = std::make_shared<ir::For>(*f);
    n->body = make_seq(std::move(rest), body->loc);
    loop = Stmt(std::move(n));
    return barrier;
  }

  ThreadSpace space_;
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

Stmt fenced(Stmt s, const SourceLoc& loc) {
  return make_seq({make_barrier(loc), std::move(s), make_barrier(loc)}, loc);
}

Stmt drop_redundant_barriers(const Stmt& kernel_body, const Var& thread_var, int threads) {
  return BarrierThinning(ThreadSpace{thread_var.node(), threads}).thin(FlattenSeqs().mutate(kernel_body), Access(), /*kernel_end=*/true);
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
