#include "tilegen/passes/async_copies.h"

#include <set>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/vector_move.h"

namespace tg {

namespace {

using lower::fills_shared_from_global;
using lower::has_bulk_copies;

Stmt wait_for(int in_flight, const SourceLoc& loc) {
  auto w = std::make_shared<ir::AsyncWait>(loc);
  w->in_flight = in_flight;
  return Stmt(std::move(w));
}

// Inside one fill statement: its vector moves from global to shared become async, and a barrier
// nested in it waits for every copy first.
struct MarkFill : IRMutator {
  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (std::optional<VectorMove> m = match_vector_move(*op); m && m->bytes >= 4 &&
                                                              m->store->buffer->scope == Scope::Shared &&
                                                              m->load->buffer->scope == Scope::Global)
      return async_body(op);
    return IRMutator::visit(op, self);
  }
  Stmt visit(const ir::Barrier* op, const Stmt& self) override {
    return make_seq({wait_for(0, op->loc), self}, op->loc);
  }

  // The vector move's loop with its store made async (its lets kept).
  static Stmt async_body(const ir::For* op) {
    struct MarkStore : IRMutator {
      Stmt visit(const ir::Store* s, const Stmt&) override {
        auto n = std::make_shared<ir::Store>(*s);
        n->async = true;
        return Stmt(std::move(n));
      }
    } mark;
    auto n = std::make_shared<ir::For>(*op);
    n->body = mark.mutate(op->body);
    return Stmt(std::move(n));
  }
};

struct AsyncCopies : IRMutator {
  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt rebuilt = IRMutator::visit(op, self);
    const auto* loop = rebuilt.as<ir::For>();
    const auto* seq = loop->body.as<ir::Seq>();
    if (loop->for_kind != ForKind::Pipelined || loop->stages < 2 || !seq || has_bulk_copies(loop->body))
      return rebuilt;  // bulk copies complete on mbarriers (bulk_copies), not in async groups
    const std::vector<Stmt>& stmts = seq->stmts;
    std::size_t i = 0;
    while (i < stmts.size() && stmts[i]->kind == ir::StmtKind::Barrier) ++i;
    std::vector<Stmt> out;
    if (i == stmts.size() || !fills_shared_from_global(stmts[i])) {
      // No fills (the guard of every later tile folded away): the tiles are the prologue's, whose
      // groups this loop still has to wait for, one an iteration.
      // Barrier thinning may have left the body's barrier at its end (after this iteration's
      // reads): the wait then needs a barrier of its own before the reads.
      out.push_back(wait_for(loop->stages - 1, loop->loc));
      if (stmts[0]->kind != ir::StmtKind::Barrier) out.push_back(lower::make_barrier(loop->loc));
      out.insert(out.end(), stmts.begin(), stmts.end());
      auto n = std::make_shared<ir::For>(*loop);
      n->body = make_seq(std::move(out), seq->loc);
      return Stmt(std::move(n));
    }
    out.assign(stmts.begin(), stmts.begin() + std::ptrdiff_t(i));
    MarkFill mark;
    // The wait goes before the first barrier after the fills. Where no statement before that
    // barrier reads a tile the fills write, the reads after it are this iteration's, whose tile
    // was filled stages - 1 iterations ago: the stages - 1 newer groups may stay in flight. Where
    // this iteration's reads come first (barrier thinning left one barrier, at the end), the
    // reads after it are the next iteration's, and only stages - 2 groups may.
    // A loop that only fills (the prologue) leaves stages - 2 in flight: its first tile is
    // complete when the main loop starts, as its reads before its first wait need.
    std::set<const ir::BufferNode*> filled;
    for (const Stmt& st : stmts)
      if (fills_shared_from_global(st))
        for_each_buffer_access(st, [&](const Buffer& b, BufferAccess how) {
          if (is_write(how) && b->scope == Scope::Shared) filled.insert(b.get());
        });
    bool reads_filled = false;
    for (const Stmt& st : stmts)
      if (!fills_shared_from_global(st))
        for_each_buffer_access(st, [&](const Buffer& b, BufferAccess how) {
          if (is_read(how) && filled.count(b.get())) reads_filled = true;
        });
    bool in_fills = true, read_before = !reads_filled, waited = false;
    for (; i < stmts.size(); ++i) {
      if (!waited && stmts[i]->kind == ir::StmtKind::Barrier) {
        out.push_back(wait_for(loop->stages - (read_before ? 2 : 1), stmts[i]->loc));
        waited = true;
      }
      bool fill = false;
      if (!waited) {
        if (in_fills && fills_shared_from_global(stmts[i])) {
          fill = true;
        } else {
          in_fills = false;
          for_each_buffer_access(stmts[i], [&](const Buffer& b, BufferAccess how) {
            if (is_read(how) && filled.count(b.get())) read_before = true;
          });
        }
      }
      out.push_back(fill ? mark.mutate(stmts[i]) : stmts[i]);
    }
    if (!waited) out.push_back(wait_for(0, loop->loc));
    auto n = std::make_shared<ir::For>(*loop);
    n->body = make_seq(std::move(out), seq->loc);
    return Stmt(std::move(n));
  }
};

}  // namespace

Function async_copies(const Function& f, const TargetInfo& info) {
  if (!info.async_copy) return f;
  AsyncCopies pass;
  return pass.mutate_function(f);
}

}  // namespace tg
