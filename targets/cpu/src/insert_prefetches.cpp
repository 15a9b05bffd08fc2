// insert_prefetches (see insert_prefetches.h): the next iteration's tile copies, prefetched from
// the steps of a pipelined loop's gemms.
#include "insert_prefetches.h"

#include <algorithm>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg::cpu {

using namespace ir;

namespace {

constexpr int64_t kLineBytes = 64;

/// A lowered tile copy Shared[...] = ... Global[...] ... over rows × cols.
struct TileCopy {
  Var row_var, col_var;  // the copy's outer and inner parallel loop variables
  int64_t rows = 0, cols = 0;
  const Load* src = nullptr;  // the Global load, its indices in row_var, col_var, the loop's var
  SourceLoc loc;
};

/// The first load of a Global buffer in a copy's value (under its bounds select).
const Load* global_load(const Expr& e) {
  struct Find : IRVisitor {
    const Load* found = nullptr;
    void visit(const Load* op) override {
      if (!found && op->buffer->scope == Scope::Global) found = op;
      if (!found) IRVisitor::visit(op);
    }
  } f;
  f.visit_expr(e);
  return f.found;
}

/// for c0 in parallel { for c1 in parallel { Shared[...] = ... Global[...] ... } } with constant
/// extents: a lowered copy of a Global tile into a Shared one.
bool tile_copy(const Stmt& s, TileCopy& out) {
  auto* rows = s.as<For>();
  if (!rows || rows->for_kind != ForKind::Parallel) return false;
  auto* cols = rows->body.as<For>();
  if (!cols || cols->for_kind != ForKind::Parallel) return false;
  auto* st = cols->body.as<Store>();
  if (!st || st->buffer->scope != Scope::Shared) return false;
  auto r = rows->extent.as_int(), c = cols->extent.as_int();
  const Load* src = global_load(st->value);
  if (!r || !c || !src || src->buffer->dtype.is_packed()) return false;
  out = TileCopy{rows->var, cols->var, *r, *c, src, rows->loc};
  return true;
}

/// Whether s is or holds a gemm (trim_edge_tiles puts an edge block's gemms under ifs).
bool runs_gemm(const Stmt& s) {
  struct Find : IRVisitor {
    bool found = false;
    void visit(const Gemm*) override { found = true; }
  } f;
  f.visit_stmt(s);
  return f.found;
}

/// The tile copies of a pipelined loop whose body also runs a gemm: what its next iteration
/// will copy; empty for any other loop.
std::vector<TileCopy> next_tile_copies(const For& loop) {
  std::vector<TileCopy> out;
  if (loop.for_kind != ForKind::Pipelined) return out;
  auto* seq = loop.body.as<Seq>();
  if (!seq) return out;
  bool gemm = false;
  for (const Stmt& s : seq->stmts) {
    TileCopy c;
    if (tile_copy(s, c)) out.push_back(c);
    gemm = gemm || runs_gemm(s);
  }
  if (!gemm) out.clear();
  return out;
}

/// The prefetches of step `t` (of `steps`): for each copy, its lines t·q .. t·q + q - 1 of the
/// next iteration of `loop_var`.
Stmt step_hints(const std::vector<TileCopy>& copies, const Var& loop_var, const Var& t, int64_t steps) {
  RangeContext ctx;
  ctx.enter_loop(t, make_int(0, t.dtype()), make_int(steps, t.dtype()));
  const Expr next = make_binary(BinOp::Add, loop_var, make_int(1, loop_var.dtype()));
  std::vector<Stmt> hints;
  for (const TileCopy& c : copies) {
    const Buffer src(c.src->buffer);
    const int64_t per_line = std::max<int64_t>(1, kLineBytes * 8 / src->dtype.bits());
    const int64_t lines_per_row = (c.cols + per_line - 1) / per_line;
    const int64_t lines = c.rows * lines_per_row, q = (lines + steps - 1) / steps;
    for (int64_t u = 0; u < q; ++u) {
      Expr line =
          make_binary(BinOp::Add, make_binary(BinOp::Mul, t, make_int(q, t.dtype())), make_int(u, t.dtype()));
      Expr row = make_binary(BinOp::Div, line, make_int(lines_per_row, t.dtype()));
      Expr col = make_binary(BinOp::Mul, make_binary(BinOp::Mod, line, make_int(lines_per_row, t.dtype())),
                             make_int(per_line, t.dtype()));
      const std::vector<std::pair<Var, Expr>> at = {{loop_var, next},
                                                    {c.row_var, make_cast(c.row_var.dtype(), row)},
                                                    {c.col_var, make_cast(c.col_var.dtype(), col)}};
      auto p = std::make_shared<Prefetch>(c.loc);
      p->buffer = src;
      for (const Expr& i : c.src->indices) p->indices.push_back(simplify_expr(substitute(i, at), ctx));
      p->write = false;
      p->locality = 3;  // into every cache level: the copy reads it within one iteration
      hints.push_back(Stmt(std::move(p)));
    }
  }
  return make_seq(std::move(hints));
}

class InsertPrefetches : public IRMutator {
 public:
  explicit InsertPrefetches(const EmitOptions& opt) : opt_(opt) {}

  // The copies of the innermost pipelined loop that has them apply to every gemm inside it.
  Stmt visit(const For* op, const Stmt& self) override {
    std::vector<TileCopy> next = next_tile_copies(*op);
    if (next.empty()) return IRMutator::visit(op, self);
    std::vector<TileCopy> outer_copies = std::move(copies_);
    Var outer_var = loop_var_;
    copies_ = std::move(next), loop_var_ = op->var;
    Stmt s = IRMutator::visit(op, self);
    copies_ = std::move(outer_copies), loop_var_ = outer_var;
    return s;
  }

  Stmt visit(const Gemm* op, const Stmt& self) override {
    if (copies_.empty() || op->each_step) return IRMutator::visit(op, self);
    const int64_t steps = gemm_steps(*op, opt_);
    if (steps <= 0) return IRMutator::visit(op, self);
    auto g = std::make_shared<Gemm>(*op);
    g->step = Var("t", i32, op->loc);
    g->steps = int(steps);
    g->each_step = step_hints(copies_, loop_var_, g->step, steps);
    return Stmt(std::move(g));
  }

 private:
  const EmitOptions& opt_;
  std::vector<TileCopy> copies_;  // of the innermost pipelined loop being visited
  Var loop_var_;
};

}  // namespace

Function insert_prefetches(const Function& f, const EmitOptions& opt) {
  return InsertPrefetches(opt).mutate_function(f);
}

}  // namespace tg::cpu
