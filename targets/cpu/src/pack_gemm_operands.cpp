// pack_gemm_operands (see pack_gemm_operands.h): a block column's B panel copied once, for
// several row blocks run in order.
#include "pack_gemm_operands.h"

#include <unordered_set>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg::cpu {

using namespace ir;

namespace {

using BufferSet = std::unordered_set<const BufferNode*>;

/// Every buffer a statement names (loads, stores, regions, reductions, matrix operands).
struct Touched : IRVisitor {
  BufferSet read, written;
  void visit_region(const Region& r) override {
    read.insert(r.buffer.get());
    IRVisitor::visit_region(r);
  }
  void visit(const Load* op) override {
    read.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    written.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Atomic* op) override {
    written.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Copy* op) override {
    written.insert(op->dst.buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Fill* op) override {
    written.insert(op->dst.buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Gemm* op) override {
    written.insert(op->c.buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    read.insert(op->src.get()), read.insert(op->dst.get()), written.insert(op->dst.get());
  }
  void visit(const Mma* op) override {
    for (const MmaOperand* o : {&op->a, &op->b, &op->c}) read.insert(o->buffer.get());
    written.insert(op->c.buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const LdMatrix* op) override {
    read.insert(op->src.get()), written.insert(op->regs.get());
    IRVisitor::visit(op);
  }
  bool names(const BufferNode* b) const { return read.count(b) || written.count(b); }
};

Touched touched(const Stmt& s) {
  Touched t;
  t.visit_stmt(s);
  return t;
}

bool is_zero(const Expr& e) { return e.as_int() && *e.as_int() == 0; }

/// The region is all of its buffer.
bool whole(const Region& r) {
  if (r.offsets.size() != r.buffer->shape.size()) return false;
  for (std::size_t d = 0; d < r.offsets.size(); ++d) {
    auto e = r.extents[d].as_int(), s = r.buffer->shape[d].as_int();
    if (!is_zero(r.offsets[d]) || !e || !s || *e != *s) return false;
  }
  return true;
}

/// The scratch buffer a statement overwrites entirely without reading it first, or null.
const BufferNode* overwritten(const Stmt& s) {
  const Region* dst = nullptr;
  if (auto* c = s.as<Copy>()) dst = &c->dst;
  if (auto* f = s.as<Fill>()) dst = &f->dst;
  if (auto* g = s.as<Gemm>(); g && g->clear_c) dst = &g->c;
  return dst && whole(*dst) ? dst->buffer.get() : nullptr;
}

/// Whether every scratch buffer of `scratch` that `stmts` (run in order, `loop` entered once
/// where it stands) use is overwritten entirely before anything reads it: the row blocks can
/// then share the scratch without the zeroing a new block gets.
bool written_before_read(const std::vector<Stmt>& stmts, const BufferSet& scratch, BufferSet& defined) {
  for (const Stmt& s : stmts) {
    if (auto* f = s.as<For>(); f && f->body.as<Seq>()) {
      if (!written_before_read(f->body.as<Seq>()->stmts, scratch, defined)) return false;
      continue;
    }
    const BufferNode* out = overwritten(s);
    Touched t = touched(s);
    for (const BufferNode* b : t.read)
      if (b != out && scratch.count(b) && !defined.count(b)) return false;
    for (const BufferNode* b : t.written)
      if (b != out && scratch.count(b) && !defined.count(b)) return false;
    if (out) defined.insert(out);
  }
  return true;
}

/// The K loop's B tile copy, as the pass reads it.
struct TileCopy {
  const Copy* copy = nullptr;
  const Gemm* gemm = nullptr;
  int dim = 0;  // the source (and tile) dimension that moves with the loop variable
};

/// src offset d is offset(0) + ko·extent: the tile steps along d with the loop.
bool steps_along(const Region& src, std::size_t d, const Var& ko) {
  auto ext = src.extents[d].as_int();
  if (!ext) return false;
  const Expr at0 = substitute(src.offsets[d], {{ko, make_int(0, ko.dtype())}});
  const Expr diff = simplify_expr(src.offsets[d] - at0 - ko * make_int(*ext, ko.dtype()));
  return is_zero(diff);
}

/// In the loop body: copy G[...] -> Bs (Bs whole, Shared) and gemm(_, Bs -> _), Bs's source
/// moving with ko in one dimension and otherwise reading only `column` (bx) and constants.
std::optional<TileCopy> b_tile_copy(const For& loop, const Var& column) {
  auto* seq = loop.body.as<Seq>();
  if (!seq) return std::nullopt;
  for (const Stmt& s : seq->stmts) {
    auto* c = s.as<Copy>();
    if (!c || c->src.buffer->scope != Scope::Global || c->dst.buffer->scope != Scope::Shared ||
        !whole(c->dst) || c->src.extents.size() != c->dst.extents.size())
      continue;
    const BufferNode* tile = c->dst.buffer.get();
    const Gemm* reader = nullptr;
    int uses = 0;
    bool copied = false;  // the gemm must read this iteration's tile: the copy comes first
    for (const Stmt& o : seq->stmts) {
      if (o.same_as(s)) {
        copied = true;
        continue;
      }
      if (touched(o).names(tile)) ++uses;
      if (auto* g = o.as<Gemm>(); g && copied && g->b.buffer.get() == tile && whole(g->b) && !g->each_step)
        reader = g;
    }
    if (!reader || uses != 1 || reader->a.buffer.get() == tile || reader->c.buffer.get() == tile) continue;
    std::optional<int> dim;
    bool ok = true;
    for (std::size_t d = 0; d < c->src.offsets.size() && ok; ++d) {
      for (const VarNode* v : vars_in(c->src.offsets[d]))
        if (v != loop.var.node() && v != column.node()) ok = false;
      if (!ok || !vars_in(c->src.offsets[d]).count(loop.var.node())) continue;
      if (dim || !steps_along(c->src, d, loop.var)) ok = false;
      dim = int(d);
    }
    if (!ok || !dim) continue;
    for (std::size_t d = 0; d < c->src.extents.size(); ++d)
      if (!c->src.extents[d].as_int() || *c->src.extents[d].as_int() != *c->dst.extents[d].as_int())
        ok = false;
    if (ok) return TileCopy{c, reader, *dim};
  }
  return std::nullopt;
}

class PackGemmOperands : public IRMutator {
 public:
  explicit PackGemmOperands(const PackGemmOptions& o) : opt_(o) {}

  Stmt visit(const Kernel* op, const Stmt& self) override {
    if (op->grid.size() != 2 || opt_.rows < 2) return self;
    auto gy = op->grid[1].as_int();
    auto* seq = op->body.as<Seq>();
    if (!gy || *gy < 2 || !seq) return self;
    const Var &bx = op->block_vars[0], &by = op->block_vars[1];
    // The one K loop of the body with a B tile copy.
    const For* loop = nullptr;
    std::optional<TileCopy> tc;
    for (const Stmt& s : seq->stmts)
      if (auto* f = s.as<For>(); f && (f->for_kind == ForKind::Serial || f->for_kind == ForKind::Pipelined)) {
        if (auto t = b_tile_copy(*f, bx)) {
          if (loop) return self;
          loop = f, tc = t;
        }
      }
    if (!loop || !is_zero(loop->min) || !loop->extent.as_int()) return self;
    const int64_t steps = *loop->extent.as_int();
    const Copy& copy = *tc->copy;
    const Buffer tile = copy.dst.buffer, src = copy.src.buffer;
    // B is read only, so the panel copied at the start holds what every tile copy would read;
    // the tile is used by the loop alone.
    for (const Stmt& s : seq->stmts) {
      const Touched t = touched(s);
      if (t.written.count(src.get()) || (s.get() != loop && t.names(tile.get()))) return self;
    }
    // The row blocks share the other scratch buffers, which must not depend on being zeroed.
    BufferSet scratch;
    for (const Buffer& b : op->buffers)
      if (b.get() != tile.get()) scratch.insert(b.get());
    BufferSet defined;
    if (!written_before_read(seq->stmts, scratch, defined)) return self;

    std::vector<Expr> shape = tile->shape;
    const Expr& tile_rows = shape[std::size_t(tc->dim)];
    shape[std::size_t(tc->dim)] = make_int(*tile_rows.as_int() * steps, tile_rows.dtype());
    const Buffer panel =
        Buffer::make(tile->name + "_panel", shape, tile->dtype, Scope::Shared, {}, tile->loc);
    if (!panel.const_numel() || *panel.const_numel() * tile->dtype.bits() / 8 > opt_.max_panel_bytes)
      return self;

    // copy B[offset(ko = 0) +: extent·steps along dim] -> panel
    auto pack = std::make_shared<Copy>(copy);
    pack->src.offsets[std::size_t(tc->dim)] = simplify_expr(
        substitute(copy.src.offsets[std::size_t(tc->dim)], {{loop->var, make_int(0, loop->var.dtype())}}));
    pack->src.extents[std::size_t(tc->dim)] = shape[std::size_t(tc->dim)];
    pack->dst = Region::full(panel);

    // The loop without the tile copy, its gemm reading step ko of the panel.
    const int64_t extent = *copy.dst.extents[std::size_t(tc->dim)].as_int();
    auto gemm = std::make_shared<Gemm>(*tc->gemm);
    gemm->b = Region::full(panel);
    gemm->b.extents = tc->gemm->b.extents;
    gemm->b.offsets[std::size_t(tc->dim)] = loop->var * make_int(extent, loop->var.dtype());
    std::vector<Stmt> body;
    for (const Stmt& s : loop->body.as<Seq>()->stmts)
      if (s.get() != tc->copy) body.push_back(s.get() == tc->gemm ? Stmt(gemm) : s);
    auto new_loop = std::make_shared<For>(*loop);
    new_loop->body = make_seq(std::move(body), loop->loc);
    std::vector<Stmt> rest;
    for (const Stmt& s : seq->stmts) rest.push_back(s.get() == loop ? Stmt(new_loop) : s);

    // for row in serial(0 +: rows) { if by*rows + row < gy { rest[by := by*rows + row] } }
    const int64_t rows = std::min<int64_t>(opt_.rows, *gy);
    const Var row(by.name() + "_row", by.dtype(), op->loc);
    const Expr old_by = by * make_int(rows, by.dtype()) + row;
    Stmt per_row = substitute(make_seq(std::move(rest), op->loc), {{by, old_by}});
    if (*gy % rows) {
      auto guard = std::make_shared<If>(op->loc);
      guard->cond = old_by < make_int(*gy, by.dtype());
      guard->then_body = per_row;
      per_row = Stmt(std::move(guard));
    }
    auto rows_loop = std::make_shared<For>(op->loc);
    rows_loop->var = row;
    rows_loop->min = make_int(0, row.dtype());
    rows_loop->extent = make_int(rows, row.dtype());
    rows_loop->for_kind = ForKind::Serial;
    rows_loop->body = per_row;

    auto k = std::make_shared<Kernel>(*op);
    k->grid[1] = make_int((*gy + rows - 1) / rows, op->grid[1].dtype());
    for (Buffer& b : k->buffers)
      if (b.get() == tile.get()) b = panel;
    k->body = make_seq({Stmt(std::move(pack)), Stmt(std::move(rows_loop))}, op->loc);
    return Stmt(std::move(k));
  }

 private:
  PackGemmOptions opt_;
};

}  // namespace

Function pack_gemm_operands(const Function& f, const PackGemmOptions& opt) {
  return PackGemmOperands(opt).mutate_function(f);
}

}  // namespace tg::cpu
