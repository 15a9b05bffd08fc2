// swizzle_shared_tiles and fence_async_proxy (see the header).
#include "tilegen/passes/async_mma.h"

#include <map>

#include "stmt_build.h"
#include "tilegen/ir/error.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

bool async_unit(const ir::Mma& op) {
  const MatrixUnit* u = find_matrix_unit(op.unit);
  return u && u->async;
}

// The shared buffers async mmas read as tiles.
struct AsyncTiles : IRVisitor {
  std::map<const ir::BufferNode*, const ir::Mma*> tiles;
  using IRVisitor::visit;
  void visit(const ir::Mma* op) override {
    if (async_unit(*op))
      for (const ir::MmaOperand* o : {&op->a, &op->b})
        if (o->is_tile() && o->buffer->scope == Scope::Shared) tiles.emplace(o->buffer.get(), op);
    IRVisitor::visit(op);
  }
};

// swizzle(bits) for a tile; a tg::Error where no swizzle fits (async_tiling in
// infer_fragment_layouts chooses the unit only for tiles one fits).
Layout swizzle_for(const ir::BufferNode& b, const ir::Mma& user) {
  auto cols = b.shape.back().as_int();
  std::optional<int64_t> rows;
  if (b.shape.size() >= 2) rows = b.shape[b.shape.size() - 2].as_int();
  const int bits =
      cols && rows && !b.dtype.is_packed() ? swizzle_bits_for(*cols * b.dtype.bits() / 8, *rows) : 0;
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
    AsyncTiles found;
    found.visit_stmt(op->body);
    for (auto& [b, user] : found.tiles) {
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

class Fence : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    AsyncTiles found;
    found.visit_stmt(op->body);
    if (found.tiles.empty()) return self;
    return IRMutator::visit(op, self);
  }
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      if (s->kind == ir::StmtKind::Barrier) {
        if (!fenced_before(out)) out.push_back(lower::make_mma_sync(ir::MmaSync::Op::ProxyFence, 0, s->loc));
        changed = true;
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
    return make_seq({lower::make_mma_sync(ir::MmaSync::Op::ProxyFence, 0, op->loc), self}, op->loc);
  }

 private:
  static bool fenced_before(const std::vector<Stmt>& out) {
    if (out.empty()) return false;
    const auto* w = out.back().as<ir::MmaSync>();
    return w && w->op == ir::MmaSync::Op::ProxyFence;
  }
};

}  // namespace

int swizzle_bits_for(int64_t row_bytes, int64_t rows) {
  if (rows <= 0 || rows % 8 != 0) return 0;
  if (row_bytes == 32) return 1;
  if (row_bytes == 64) return 2;
  return row_bytes > 0 && row_bytes % 128 == 0 ? 3 : 0;
}

Function swizzle_shared_tiles(const Function& f, const TargetInfo&) {
  Swizzle pass;
  return pass.mutate_function(f);
}

Function fence_async_proxy(const Function& f, const TargetInfo&) {
  Fence pass;
  return pass.mutate_function(f);
}

}  // namespace tg
