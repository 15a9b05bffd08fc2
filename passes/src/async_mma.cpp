// swizzle_shared_tiles and fence_async_proxy (see the header).
#include "tilegen/passes/async_mma.h"

#include <map>
#include <set>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/error.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

bool async_unit(const ir::Mma& op) {
  const MatrixUnit* u = find_matrix_unit(op.unit);
  return u && u->async;
}

// swizzle(bits) for a tile; a tg::Error where no swizzle fits (async_tiling in
// infer_fragment_layouts chooses the unit only for tiles one fits).
Layout swizzle_for(const ir::BufferNode& b, const ir::Mma& user) {
  const int bits = swizzle_bits_of(b);
  if (bits == 0)
    throw Error("swizzle_shared_tiles: the async mma " + user.unit + " reads " + b.name +
                    ", whose rows are not a whole number of 32-, 64- or 128-byte strips in groups of 8 rows; "
                    "give the tile a width of 16, 32 or a multiple of 64 2-byte elements",
                user.loc);
  return Layout{Layout::Kind::Swizzle, bits, ""};
}

class Swizzle : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    for (auto& [b, user] : lower::async_mma_tiles(op->body)) {
      Layout l = swizzle_for(*b, *user);
      if (b->layout == l) continue;
      auto n = std::make_shared<ir::BufferNode>(*b);
      n->layout = l;
      swizzled_[b] = Buffer(std::move(n));
    }
    return IRMutator::visit(op, self);
  }
  Buffer mutate_buffer(const Buffer& b) override {
    auto it = b ? swizzled_.find(b.get()) : swizzled_.end();
    return it != swizzled_.end() ? it->second : IRMutator::mutate_buffer(b);
  }

 private:
  std::map<const ir::BufferNode*, Buffer> swizzled_;
};

// Where a proxy_fence is needed: a thread's writes through the generic proxy that the async
// proxy then reads — its stores into a tile async mmas read (plain stores, and async ones, which
// land at its async_waits), and mbarrier_init (the copy engine completes bulk copies on the
// barrier). Bulk copies write through the async proxy and need none.
struct FenceNeeds : IRVisitor {
  std::set<const ir::BufferNode*> tiles;
  bool async_stores = false, inits = false;
  using IRVisitor::visit;
  void visit(const ir::Store* op) override {
    if (tiles.count(op->buffer.get())) async_stores |= op->async;
    IRVisitor::visit(op);
  }
  void visit(const ir::MBarrier* op) override {
    if (op->op == ir::MBarrier::Op::Init) inits = true;
    IRVisitor::visit(op);
  }
};

// A proxy_fence before each barrier that some such write may precede since the last fence:
//   async_wait 1; barrier          →  async_wait 1; proxy_fence; barrier
//   mma_wait 1; barrier; fills     →  unchanged (the fills' writes are fenced after they land)
// `dirty` (such a write since the last fence) flows forward; a loop is entered with what its
// previous iterations leave, an if leaves what either branch does.
class Fence : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    needs_ = FenceNeeds();
    for (auto& [b, user] : lower::async_mma_tiles(op->body)) needs_.tiles.insert(b);
    needs_.visit_stmt(op->body);
    if (needs_.tiles.empty() && !needs_.inits) return self;
    dirty_ = false;
    return IRMutator::visit(op, self);
  }
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      if (s->kind == ir::StmtKind::Barrier) {
        if (dirty_ && !fenced_before(out)) {
          out.push_back(lower::make_mma_sync(ir::MmaSync::Op::ProxyFence, 0, s->loc));
          changed = true;
        }
        dirty_ = false;
        out.push_back(s);
        continue;
      }
      Stmt m = mutate(s);
      changed |= !m.same_as(s);
      out.push_back(std::move(m));
    }
    if (!changed) return self;
    auto n = std::make_shared<ir::Seq>(*op);
    n->stmts = std::move(out);
    return Stmt(std::move(n));
  }
  // A barrier alone as a loop's or branch's body.
  Stmt visit(const ir::Barrier* op, const Stmt& self) override {
    const bool fence = dirty_;
    dirty_ = false;
    return fence ? make_seq({lower::make_mma_sync(ir::MmaSync::Op::ProxyFence, 0, op->loc), self}, op->loc)
                 : self;
  }
  // Statements that hold no others: a write into a tile makes it dirty.
  // An async store lands at the async_wait that completes it: the write is there.
  Stmt visit(const ir::Store* op, const Stmt& self) override { return op->async ? self : leaf(self); }
  Stmt visit(const ir::Atomic*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Copy*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Fill*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Reduce*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Mma*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::LdMatrix*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Hold*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::Gemm*, const Stmt& self) override { return leaf(self); }
  Stmt visit(const ir::BulkCopy*, const Stmt& self) override { return self; }  // the async proxy's
  Stmt visit(const ir::AsyncWait*, const Stmt& self) override {
    dirty_ |= needs_.async_stores;
    return self;
  }
  Stmt visit(const ir::MBarrier* op, const Stmt& self) override {
    if (op->op == ir::MBarrier::Op::Init) dirty_ = true;
    return self;
  }
  Stmt visit(const ir::MmaSync* op, const Stmt& self) override {
    if (op->op == ir::MmaSync::Op::ProxyFence) dirty_ = false;
    return self;
  }
  Stmt visit(const ir::If* op, const Stmt& self) override {
    const bool in = dirty_;
    Stmt then_body = mutate(op->then_body);
    const bool after_then = dirty_;
    dirty_ = in;
    Stmt else_body = op->else_body ? mutate(op->else_body) : op->else_body;
    dirty_ |= after_then;
    if (then_body.same_as(op->then_body) && else_body.same_as(op->else_body)) return self;
    auto n = std::make_shared<ir::If>(*op);
    n->then_body = std::move(then_body);
    n->else_body = std::move(else_body);
    return Stmt(std::move(n));
  }
  Stmt visit(const ir::For* op, const Stmt& self) override {
    // Entered dirty when it is, or when one iteration entered so leaves it dirty (then also every
    // later one: the flow is monotone); left dirty when entered so (the loop may run no iteration)
    // or when its last iteration leaves it so.
    const bool in = dirty_;
    if (!in) {  // a probe walk only where the entry may change (nested loops: not 2^depth walks)
      Fence probe(*this);
      probe.mutate(op->body);
      dirty_ = probe.dirty_;
    }
    Stmt body = mutate(op->body);
    dirty_ |= in;
    if (body.same_as(op->body)) return self;
    auto n = std::make_shared<ir::For>(*op);
    n->body = std::move(body);
    return Stmt(std::move(n));
  }

 private:
  Stmt leaf(const Stmt& self) {
    for_each_buffer_access(self, [&](const Buffer& b, BufferAccess how) {
      if (is_write(how) && needs_.tiles.count(b.get())) dirty_ = true;
    });
    return self;
  }
  static bool fenced_before(const std::vector<Stmt>& out) {
    if (out.empty()) return false;
    const auto* w = out.back().as<ir::MmaSync>();
    return w && w->op == ir::MmaSync::Op::ProxyFence;
  }
  FenceNeeds needs_;
  bool dirty_ = false;
};

bool is_wait(const Stmt& s, int in_flight) {
  const auto* w = s.as<ir::MmaSync>();
  return w && w->op == ir::MmaSync::Op::Wait && w->in_flight == in_flight;
}

class Overlap : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt rebuilt = IRMutator::visit(op, self);
    const auto* loop = rebuilt.as<ir::For>();
    const auto* seq = loop->body.as<ir::Seq>();
    if (loop->for_kind != ForKind::Pipelined || !seq) return rebuilt;
    const std::vector<Stmt>& stmts = seq->stmts;
    // fills · X · mma_wait 0 · barrier, X holding the async mmas and the barrier before them; the
    // fills cp.async's (stores of global loads) or the copy engine's (bulk_copies).
    std::size_t nf = 0;
    while (nf < stmts.size() && (lower::fills_shared_from_global(stmts[nf]) || lower::has_bulk_copies(stmts[nf]))) ++nf;
    const std::size_t n = stmts.size();
    if (nf == 0 || n < nf + 3 || !is_wait(stmts[n - 2], 0) || stmts[n - 1]->kind != ir::StmtKind::Barrier)
      return rebuilt;
    std::vector<Stmt> x(stmts.begin() + std::ptrdiff_t(nf), stmts.end() - 2);
    if (!overlappable(x)) return rebuilt;
    std::vector<Stmt> body;
    for (const Stmt& s : x) {
      const auto* w = s.as<ir::AsyncWait>();
      if (w && w->in_flight > 0) {  // its group is now the previous iteration's fills
        auto nw = std::make_shared<ir::AsyncWait>(*w);
        --nw->in_flight;
        body.push_back(Stmt(std::move(nw)));
      } else {
        body.push_back(s);
      }
    }
    body.push_back(lower::make_mma_sync(ir::MmaSync::Op::Wait, 1, stmts[n - 2]->loc));
    body.push_back(stmts[n - 1]);
    const std::vector<Stmt> fills(stmts.begin(), stmts.begin() + std::ptrdiff_t(nf));
    std::vector<Stmt> out;
    auto loop_over = [&](int64_t from, int64_t count, const std::vector<Stmt>& tail) {
      auto nl = std::make_shared<ir::For>(*loop);
      nl->min = Expr(from), nl->extent = Expr(count);
      std::vector<Stmt> b = body;
      if (tail.empty()) b.pop_back();  // the barrier before the fills: without them it orders nothing
      b.insert(b.end(), tail.begin(), tail.end());
      nl->body = make_seq(std::move(b), seq->loc);
      out.push_back(Stmt(std::move(nl)));
    };
    // Where the fills' guards (a later tile exists) hold for the first iterations and fail for
    // the rest, the loop is split there: a branch around the fills while the mmas are in flight
    // makes ptxas serialize the wgmmas (its C7514), and the unguarded fills need none.
    if (std::optional<int64_t> held = guarded_prefix(*loop, fills)) {
      const int64_t lo = *loop->min.as_int(), count = *loop->extent.as_int();
      std::vector<Stmt> unguarded;
      for (const Stmt& f : fills) unguarded.push_back(f.as<ir::If>()->then_body);
      if (*held > 0) loop_over(lo, *held, unguarded);
      if (*held < count) loop_over(lo + *held, count - *held, {});
    } else {
      body.insert(body.end(), fills.begin(), fills.end());
      auto nl = std::make_shared<ir::For>(*loop);
      nl->body = make_seq(std::move(body), seq->loc);
      out.push_back(Stmt(std::move(nl)));
    }
    out.push_back(lower::make_mma_sync(ir::MmaSync::Op::Wait, 0, stmts[n - 2]->loc));
    return make_seq(std::move(out), loop->loc);
  }

 private:
  // With a constant range and each fill an `if` (no else) whose condition, at each iteration,
  // folds to a constant: the number of leading iterations where all hold, when all fail after.
  static std::optional<int64_t> guarded_prefix(const ir::For& loop, const std::vector<Stmt>& fills) {
    auto lo = loop.min.as_int(), count = loop.extent.as_int();
    if (!lo || !count || *count <= 0 || *count > 65536) return std::nullopt;
    for (const Stmt& f : fills) {
      const auto* g = f.as<ir::If>();
      if (!g || g->else_body) return std::nullopt;
    }
    std::optional<int64_t> held;
    for (int64_t i = 0; i < *count; ++i) {
      bool all = true, none = true;
      for (const Stmt& f : fills) {
        Expr c = simplify_expr(substitute(f.as<ir::If>()->cond, {{loop.var, Expr(*lo + i)}}));
        const auto* v = c.as<ir::IntImm>();
        if (!v) return std::nullopt;
        all &= v->value != 0, none &= v->value == 0;
      }
      if (!held && all) continue;
      if (!held) held = i;
      if (!none) return std::nullopt;
    }
    return held.value_or(*count);
  }

  // X issues async mmas, waits for nothing else of theirs, writes no shared memory (an mbarrier's
  // wait is not a write of data), and touches
  // their accumulators only through them (those stay in flight across the iteration's end).
  static bool overlappable(const std::vector<Stmt>& x) {
    struct Scan : IRVisitor {
      std::set<const ir::BufferNode*> acc;
      bool async = false, bad = false;
      using IRVisitor::visit;
      void visit(const ir::Mma* op) override {
        if (!async_unit(*op)) bad = true;
        async = true;
        acc.insert(op->c.buffer.get());
        if (!op->a.is_tile()) acc.insert(op->a.buffer.get());  // the RS form's A registers
      }
      void visit(const ir::MmaSync* op) override { bad |= op->op == ir::MmaSync::Op::Wait; }
      void visit(const ir::Store* op) override {
        bad |= op->async;
        IRVisitor::visit(op);
      }
      void visit(const ir::BulkCopy*) override { bad = true; }
      void visit(const ir::MBarrier* op) override {
        bad |= op->op != ir::MBarrier::Op::Wait;
        barriers.insert(op->buffer.get());
      }
      std::set<const ir::BufferNode*> barriers;
    } scan;
    for (const Stmt& s : x) scan.visit_stmt(s);
    if (!scan.async || scan.bad) return false;
    bool writes_shared = false;
    for (const Stmt& s : x)
      for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
        writes_shared |= is_write(how) && b->scope == Scope::Shared && !scan.barriers.count(b.get());
      });
    if (writes_shared) return false;
    // Accumulator accesses outside the mmas: any load or store of them.
    struct AccUse : IRVisitor {
      const std::set<const ir::BufferNode*>& acc;
      bool used = false;
      explicit AccUse(const std::set<const ir::BufferNode*>& a) : acc(a) {}
      using IRVisitor::visit;
      void visit(const ir::Mma*) override {}
      void visit(const ir::Load* op) override {
        used |= acc.count(op->buffer.get()) > 0;
        IRVisitor::visit(op);
      }
      void visit(const ir::Store* op) override {
        used |= acc.count(op->buffer.get()) > 0;
        IRVisitor::visit(op);
      }
    } use(scan.acc);
    for (const Stmt& s : x) use.visit_stmt(s);
    return !use.used;
  }
};

}  // namespace

int swizzle_bits_for(int64_t row_bytes, int64_t rows) {
  if (rows <= 0 || rows % 8 != 0) return 0;
  if (row_bytes == 32) return 1;
  if (row_bytes == 64) return 2;
  return row_bytes > 0 && row_bytes % 128 == 0 ? 3 : 0;
}

int swizzle_bits_of(const ir::BufferNode& b) {
  if (b.shape.size() < 2 || b.dtype.is_packed()) return 0;
  auto cols = b.shape.back().as_int(), rows = b.shape[b.shape.size() - 2].as_int();
  return cols && rows ? swizzle_bits_for(*cols * b.dtype.bits() / 8, *rows) : 0;
}

Function swizzle_shared_tiles(const Function& f, const TargetInfo&) {
  Swizzle pass;
  return pass.mutate_function(f);
}

Function overlap_async_mma(const Function& f, const TargetInfo&) {
  Overlap pass;
  return pass.mutate_function(f);
}

Function fence_async_proxy(const Function& f, const TargetInfo&) {
  Fence pass;
  return pass.mutate_function(f);
}

}  // namespace tg
