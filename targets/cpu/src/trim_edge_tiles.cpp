// trim_edge_tiles (see trim_edge_tiles.h): edge blocks' gemms over the rows, columns and K steps
// that exist.
#include "trim_edge_tiles.h"

#include <functional>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg::cpu {

using namespace ir;

namespace {

bool is_const(const Expr& e, int64_t v) { return e.as_int() && *e.as_int() == v; }

bool whole(const Region& r) {
  if (r.offsets.size() != r.buffer->shape.size()) return false;
  for (std::size_t d = 0; d < r.offsets.size(); ++d) {
    auto n = r.buffer->shape[d].as_int();
    if (!is_const(r.offsets[d], 0) || !n || !is_const(r.extents[d], *n)) return false;
  }
  return true;
}

/// Whether a statement names buffer b anywhere (loads, stores, regions).
bool names(const Stmt& s, const BufferNode* b) {
  struct Find : IRVisitor {
    const BufferNode* b;
    bool found = false;
    void visit_region(const Region& r) override {
      found = found || r.buffer.get() == b;
      IRVisitor::visit_region(r);
    }
    void visit(const Load* op) override {
      found = found || op->buffer.get() == b;
      IRVisitor::visit(op);
    }
    void visit(const Store* op) override {
      found = found || op->buffer.get() == b;
      IRVisitor::visit(op);
    }
    void visit(const Atomic* op) override {
      found = found || op->buffer.get() == b;
      IRVisitor::visit(op);
    }
    void visit(const Reduce* op) override { found = found || op->src.get() == b || op->dst.get() == b; }
    void visit(const Mma* op) override {
      for (const MmaOperand* o : {&op->a, &op->b, &op->c}) found = found || o->buffer.get() == b;
    }
  } f;
  f.b = b;
  f.visit_stmt(s);
  return f.found;
}

/// A loop nest updating b element by element: `for i { for j { b[i, j] = f(b[i, j], ...) } }`,
/// every load of b at the store's own indices, the loop variables.
bool pointwise_update(const Stmt& s, const BufferNode* b) {
  std::vector<const VarNode*> vars;
  Stmt at = s;
  while (auto* f = at.as<For>()) vars.push_back(f->var.node()), at = f->body;
  auto* st = at.as<Store>();
  if (!st || st->buffer.get() != b || st->shuffle() || st->indices.size() != vars.size()) return false;
  for (std::size_t d = 0; d < vars.size(); ++d)
    if (st->indices[d].as<VarNode>() != vars[d]) return false;
  struct Loads : IRVisitor {
    const BufferNode* b;
    const std::vector<Expr>* at;
    bool ok = true;
    void visit(const Load* op) override {
      if (op->buffer.get() == b)
        for (std::size_t d = 0; d < op->indices.size(); ++d) ok = ok && op->indices[d].same_as((*at)[d]);
      IRVisitor::visit(op);
    }
  } loads;
  loads.b = b, loads.at = &st->indices;
  loads.visit_expr(st->value);
  return loads.ok;
}

/// offset = X·n for the constant n: a multiple of n (the block's first row or column).
bool multiple_of(const Expr& offset, int64_t n) {
  auto* m = offset.as<Binary>();
  return m && m->op == BinOp::Mul && (is_const(m->b, n) || is_const(m->a, n));
}

/// One dimension an edge block trims: when `cond` holds, `extent` instead of the tile's.
struct Trim {
  Expr cond;
  int64_t extent = 0;
  enum Dim { M, N, K } dim = M;
};

Stmt trimmed_gemm(const Gemm& g, const std::vector<std::pair<Trim::Dim, int64_t>>& extents) {
  auto out = std::make_shared<Gemm>(g);
  for (auto [dim, n] : extents) {
    const Expr e = make_int(n, g.c.extents[0].dtype());
    if (dim == Trim::M) out->a.extents[g.trans_a ? 1 : 0] = e, out->c.extents[0] = e;
    if (dim == Trim::N) out->b.extents[g.trans_b ? 0 : 1] = e, out->c.extents[1] = e;
    if (dim == Trim::K) out->a.extents[g.trans_a ? 0 : 1] = e, out->b.extents[g.trans_b ? 1 : 0] = e;
  }
  return Stmt(std::move(out));
}

/// if trims[0].cond { <the rest, trimmed> } else { <the rest> }, down to the gemms. The last K
/// step is trimmed only in blocks that trim no rows or columns: an edge block's gemm would
/// otherwise get a fourth and an eighth variant (each a micro-kernel of its own to compile) for
/// one K step of a few blocks.
Stmt edge_tree(const Gemm& g, const std::vector<Trim>& trims, std::size_t i,
               std::vector<std::pair<Trim::Dim, int64_t>>& chosen) {
  if (i == trims.size()) return chosen.empty() ? Stmt() : trimmed_gemm(g, chosen);
  if (trims[i].dim == Trim::K && !chosen.empty()) return edge_tree(g, trims, i + 1, chosen);
  chosen.push_back({trims[i].dim, trims[i].extent});
  Stmt then_body = edge_tree(g, trims, i + 1, chosen);
  chosen.pop_back();
  Stmt else_body = edge_tree(g, trims, i + 1, chosen);
  auto s = std::make_shared<If>(g.loc);
  s->cond = trims[i].cond;
  s->then_body = then_body;
  s->else_body = else_body ? else_body : Stmt(std::make_shared<Gemm>(g));
  return Stmt(std::move(s));
}

class TrimEdgeTiles : public IRMutator {
 public:
  explicit TrimEdgeTiles(int vector) : vector_(std::max(1, vector)) {}

  Stmt visit(const Seq* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    auto* seq = s.as<Seq>();
    std::vector<Stmt> stmts = seq->stmts;
    bool changed = false;
    for (std::size_t i = 0; i < stmts.size(); ++i)
      if (auto* loop = stmts[i].as<For>())
        if (Stmt t = trim_loop(*loop, stmts, i); t) stmts[i] = t, changed = true;
    return changed ? make_seq(std::move(stmts), op->loc) : s;
  }

 private:
  // The loop stmts[i] with its gemm's edge variants, or null.
  Stmt trim_loop(const For& loop, const std::vector<Stmt>& stmts, std::size_t i) {
    auto* body = loop.body.as<Seq>();
    if (!body) return Stmt();
    const Gemm* g = nullptr;
    for (const Stmt& s : body->stmts)
      if (auto* x = s.as<Gemm>(); x && !x->each_step && x->c.buffer.rank() == 2 && x->a.buffer.rank() == 2 &&
                                  x->b.buffer.rank() == 2 && whole(x->c))
        g = x;
    if (!g) return Stmt();
    const BufferNode* cf = g->c.buffer.get();
    for (const Stmt& s : body->stmts)
      if (s.get() != g && names(s, cf)) return Stmt();
    std::vector<Trim> trims = row_col_trims(*g, stmts, i);
    if (auto k = k_trim(loop, *g)) trims.push_back(*k);
    if (trims.empty()) return Stmt();
    std::vector<Stmt> out;
    for (const Stmt& s : body->stmts) {
      std::vector<std::pair<Trim::Dim, int64_t>> chosen;
      out.push_back(s.get() == g ? edge_tree(*g, trims, 0, chosen) : s);
    }
    auto l = std::make_shared<For>(loop);
    l->body = make_seq(std::move(out), body->loc);
    return Stmt(std::move(l));
  }

  // Rows and columns: the fragment copied out with bounds checks at multiples of its shape, and
  // nothing else after the loop reading it but element-wise updates.
  std::vector<Trim> row_col_trims(const Gemm& g, const std::vector<Stmt>& stmts, std::size_t i) {
    const BufferNode* cf = g.c.buffer.get();
    const Copy* out = nullptr;
    for (std::size_t j = i + 1; j < stmts.size(); ++j) {
      if (!names(stmts[j], cf)) continue;
      auto* c = stmts[j].as<Copy>();
      if (!out && c && c->src.buffer.get() == cf && whole(c->src) && c->check_bounds &&
          c->dst.buffer->scope == Scope::Global && c->dst.buffer.rank() == 2) {
        out = c;
        continue;
      }
      if (out || !pointwise_update(stmts[j], cf)) return {};
    }
    if (!out) return {};
    std::vector<Trim> trims;
    const int64_t bm = *g.c.buffer->shape[0].as_int(), bn = *g.c.buffer->shape[1].as_int();
    auto M = out->dst.buffer->shape[0].as_int(), N = out->dst.buffer->shape[1].as_int();
    const Expr &r0 = out->dst.offsets[0], &c0 = out->dst.offsets[1];
    if (M && *M % bm && multiple_of(r0, bm))
      trims.push_back({r0 + make_int(bm, r0.dtype()) > make_int(*M, r0.dtype()), *M % bm, Trim::M});
    const int64_t cols = N ? std::min(bn, (*N % bn + vector_ - 1) / vector_ * vector_) : bn;
    if (N && *N % bn && cols < bn && multiple_of(c0, bn))
      trims.push_back({c0 + make_int(bn, c0.dtype()) > make_int(*N, c0.dtype()), cols, Trim::N});
    return trims;
  }

  // K steps: the loop's last step, where its bounds-checked A tile copy passes K (zeros there).
  std::optional<Trim> k_trim(const For& loop, const Gemm& g) {
    auto n = loop.extent.as_int();
    if (!is_const(loop.min, 0) || !n) return std::nullopt;
    const std::size_t kd = g.trans_a ? 0 : 1;
    const BufferNode* as = g.a.buffer.get();
    if (!whole(g.a)) return std::nullopt;
    for (const Stmt& s : loop.body.as<Seq>()->stmts) {
      auto* c = s.as<Copy>();
      if (!c || c->dst.buffer.get() != as || !whole(c->dst) || !c->check_bounds ||
          c->src.buffer->scope != Scope::Global || c->src.buffer.rank() != 2)
        continue;
      auto bk = as->shape[kd].as_int(), K = c->src.buffer->shape[kd].as_int();
      if (!bk || !K) return std::nullopt;
      const Expr step = loop.var * make_int(*bk, loop.var.dtype());
      if (!is_const(simplify_expr(c->src.offsets[kd] - step), 0)) return std::nullopt;
      const int64_t last = *K - (*n - 1) * *bk;
      if (last <= 0 || last >= *bk) return std::nullopt;
      return Trim{loop.var == make_int(*n - 1, loop.var.dtype()), last, Trim::K};
    }
    return std::nullopt;
  }

  int vector_;
};

}  // namespace

Function trim_edge_tiles(const Function& f, int vector) { return TrimEdgeTiles(vector).mutate_function(f); }

}  // namespace tg::cpu
