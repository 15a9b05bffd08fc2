// issue_ahead (see the header).
#include "tilegen/passes/issue_ahead.h"

#include <set>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

using namespace lower;

// The head of a loop body: leading mbarrier waits, then `clear C; mma_fence; async mmas into C
// (tiles only); mma_wait 0`, and the statements after it.
struct Head {
  std::vector<Stmt> waits;
  Stmt clear, mmas;
  Buffer acc;
  std::vector<Stmt> rest;
};

// `for r in unrolled(0 +: N) { C[r] = 0 }` over all of a local C: C, else null.
Buffer cleared(const Stmt& s) {
  const auto* f = s.as<ir::For>();
  const auto* st = f ? f->body.as<ir::Store>() : nullptr;
  if (!st || !is_const(f->min, 0) || st->indices.size() != 1 || !st->indices[0].same_as(f->var) ||
      st->buffer->scope != Scope::Local || !st->value.as<ir::FloatImm>() ||
      st->value.as<ir::FloatImm>()->value != 0.0)
    return Buffer();
  auto n = st->buffer.const_numel();
  return n && is_const(f->extent, *n) ? st->buffer : Buffer();
}

// Whether s is made of async mmas into acc alone, with shared tile operands, and loops.
bool async_mmas_into(const Stmt& s, const Buffer& acc) {
  struct Scan : IRVisitor {
    const Buffer& acc;
    bool ok = true, any = false;
    explicit Scan(const Buffer& a) : acc(a) {}
    using IRVisitor::visit;
    void visit(const ir::Mma* op) override {
      const MatrixUnit* u = find_matrix_unit(op->unit);
      any = true;
      ok = ok && u && u->async && op->c.buffer.same_as(acc) && op->a.is_tile() && op->b.is_tile();
    }
    void visit(const ir::Store*) override { ok = false; }
    void visit(const ir::MmaSync*) override { ok = false; }
    void visit(const ir::MBarrier*) override { ok = false; }
    void visit(const ir::Barrier*) override { ok = false; }
    void visit(const ir::If*) override { ok = false; }
    void visit(const ir::Let*) override { ok = false; }
  } scan(acc);
  scan.visit_stmt(s);
  return scan.ok && scan.any;
}

bool is_sync(const Stmt& s, ir::MmaSync::Op op, int in_flight = -1) {
  const auto* m = s.as<ir::MmaSync>();
  return m && m->op == op && (in_flight < 0 || m->in_flight == in_flight);
}

// A body's statements, nested Seqs flattened.
void flatten(const Stmt& s, std::vector<Stmt>& out) {
  if (const auto* seq = s.as<ir::Seq>()) {
    for (const Stmt& x : seq->stmts) flatten(x, out);
    return;
  }
  out.push_back(s);
}

std::optional<Head> head_of(const Stmt& body) {
  std::vector<Stmt> stmts;
  flatten(body, stmts);
  Head h;
  std::size_t i = 0;
  for (; i < stmts.size(); ++i) {
    const auto* w = stmts[i].as<ir::MBarrier>();
    if (!w || w->op != ir::MBarrier::Op::Wait) break;
    h.waits.push_back(stmts[i]);
  }
  if (i + 4 >= stmts.size()) return std::nullopt;  // clear, fence, mmas, wait, and some rest
  h.acc = cleared(stmts[i]);
  if (!h.acc || !is_sync(stmts[i + 1], ir::MmaSync::Op::Fence) || !async_mmas_into(stmts[i + 2], h.acc) ||
      !is_sync(stmts[i + 3], ir::MmaSync::Op::Wait, 0))
    return std::nullopt;
  h.clear = stmts[i];
  h.mmas = stmts[i + 2];
  h.rest.assign(stmts.begin() + std::ptrdiff_t(i + 4), stmts.end());
  return h;
}

// Whether the rest may run while the head's mmas of the next iteration are in flight: it writes
// no shared tile they read and leaves their barriers alone.
bool rest_allows(const Head& h) {
  std::set<const ir::BufferNode*> tiles, bars;
  for_each_buffer_access(h.mmas, [&](const Buffer& b, BufferAccess) {
    if (b->scope == Scope::Shared) tiles.insert(b.get());
  });
  for (const Stmt& w : h.waits) bars.insert(w.as<ir::MBarrier>()->buffer.get());
  bool ok = true;
  for (const Stmt& s : h.rest)
    for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
      ok = ok && !(is_write(how) && tiles.count(b.get())) && !bars.count(b.get());
    });
  return ok;
}

class IssueAhead : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    added_.clear();
    Stmt body = mutate(op->body);
    return added_.empty() ? self : kernel_with(*op, std::move(body), added_);
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (op->for_kind != ForKind::Serial && op->for_kind != ForKind::Pipelined)
      return IRMutator::visit(op, self);
    std::optional<Head> h = head_of(op->body);
    if (!h || !rest_allows(*h)) return IRMutator::visit(op, self);
    const SourceLoc& loc = op->loc;
    const Var& j = op->var;
    const Expr end = op->min + op->extent;
    Buffer next = Buffer::make(h->acc->name + "_next", h->acc->shape, h->acc->dtype, Scope::Local, {}, loc);
    added_.push_back(next);
    // The head of iteration `at`, into `acc`, with or without its wait.
    auto head = [&](const Expr& at, const Buffer& acc, bool wait) {
      struct Rename : IRMutator {
        const ir::BufferNode* from;
        Buffer to;
        Buffer mutate_buffer(const Buffer& b) override {
          return b.get() == from ? to : IRMutator::mutate_buffer(b);
        }
      } rename;
      rename.from = h->acc.get(), rename.to = acc;
      std::vector<Stmt> s = h->waits;
      s.push_back(rename.mutate(h->clear));
      s.push_back(make_mma_sync(ir::MmaSync::Op::Fence, 0, loc));
      s.push_back(rename.mutate(h->mmas));
      if (wait) s.push_back(make_mma_sync(ir::MmaSync::Op::Wait, 0, loc));
      return substitute(make_seq(std::move(s), loc), {{j, at}});
    };
    Stmt prologue = make_if(op->min < end, head(op->min, h->acc, true), loc);
    Var r("r");
    const int64_t n = *h->acc.const_numel();
    Stmt move = make_for(r, 0, n, make_store(h->acc, {r}, next.load({r}), loc), ForKind::Unrolled, loc);
    std::vector<Stmt> body = {make_if(j + 1 < end, head(j + 1, next, false), loc)};
    for (const Stmt& s : h->rest) body.push_back(mutate(s));
    body.push_back(
        make_if(j + 1 < end, make_seq({make_mma_sync(ir::MmaSync::Op::Wait, 0, loc), move}, loc), loc));
    auto loop = std::make_shared<ir::For>(*op);
    loop->body = make_seq(std::move(body), op->body->loc);
    return make_seq({prologue, Stmt(std::move(loop))}, loc);
  }

 private:
  std::vector<Buffer> added_;
};

}  // namespace

Function issue_ahead(const Function& f, const TargetInfo& info) {
  if (info.warp_size <= 1) return f;
  IssueAhead pass;
  Function out = pass.mutate_function(f);
  if (out.body.same_as(f.body)) return f;  // no loop matched: no simplification either
  out.body = simplify_stmt(out.body, RangeContext::for_function(out));
  return out;
}

}  // namespace tg
