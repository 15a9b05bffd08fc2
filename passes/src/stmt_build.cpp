// Queries and barrier clean-up shared by the GPU lowering passes.
#include "stmt_build.h"

#include <set>

#include "tilegen/ir/buffer_access.h"

namespace tg::lower {

namespace {

bool is_barrier(const Stmt& s) { return s && s->kind == ir::StmtKind::Barrier; }

// What a statement reads and writes of memory other threads see (every buffer but locals).
struct Access : BufferAccessVisitor {
  std::set<const ir::BufferNode*> reads, writes;

  static bool block(const ir::BufferNode* b) { return b->scope != Scope::Local; }
  void read(const ir::BufferNode* b) {
    if (block(b)) reads.insert(b);
  }
  void write(const ir::BufferNode* b) {
    if (block(b)) writes.insert(b);
  }
  void access(const Buffer& b, BufferAccess how) override {
    if (is_read(how)) read(b.get());
    if (is_write(how)) write(b.get());
  }

  static Access of(const Stmt& s) {
    Access a;
    a.visit_stmt(s);
    return a;
  }
  void merge(const Access& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  // A barrier is needed between *this (before) and `next` (after).
  bool conflicts(const Access& next) const {
    auto meets = [](const std::set<const ir::BufferNode*>& x, const std::set<const ir::BufferNode*>& y) {
      for (auto* b : x)
        if (y.count(b)) return true;
      return false;
    };
    return meets(writes, next.reads) || meets(writes, next.writes) || meets(reads, next.writes);
  }
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
// nothing. The invariant, for every sequence it returns: between any two accesses of one
// non-local buffer, at least one a write, that executions of the original code separated by a
// barrier, the result executes a barrier too. Proof sketch: `cur` over-approximates the accesses
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
        entry.merge(Access::of(n->body));
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
      Access a = Access::of(s0);
      if (held && cur.conflicts(a)) {
        out.push_back(held);
        held = Stmt();
        cur = Access();
      }
      Stmt t = thin(s0, cur);
      if (always_syncs(t)) {
        cur = Access::of(t);  // a superset of what follows its last barrier
      } else {
        cur.merge(a);
      }
      out.push_back(std::move(t));
    }
    if (held && !kernel_end) out.push_back(held);
    return make_seq(std::move(out), loc);
  }
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

Stmt drop_redundant_barriers(const Stmt& kernel_body) {
  return BarrierThinning().thin(FlattenSeqs().mutate(kernel_body), Access(), /*kernel_end=*/true);
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
