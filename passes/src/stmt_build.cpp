// Queries and barrier clean-up shared by the GPU lowering passes.
#include "stmt_build.h"

namespace tg::lower {

namespace {

struct BlockMemoryUse : IRVisitor {
  bool found = false;
  void note(const Buffer& b) {
    if (b && (b->scope == Scope::Shared || b->scope == Scope::Fragment)) found = true;
  }
  void visit(const ir::Load* op) override {
    note(Buffer(op->buffer));
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    note(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    note(op->buffer);
    IRVisitor::visit(op);
  }
  void visit_region(const Region& r) override {
    note(r.buffer);
    IRVisitor::visit_region(r);
  }
  void visit(const ir::Reduce* op) override {
    note(op->src);
    note(op->dst);
    IRVisitor::visit(op);
  }
};

bool is_barrier(const Stmt& s) { return s && s->kind == ir::StmtKind::Barrier; }

// Collapses runs of barriers inside every Seq.
struct BarrierRuns : IRMutator {
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      Stmt m = mutate(s);
      changed |= !m.same_as(s);
      // Splice nested Seqs so that barriers from neighbouring lowered statements meet.
      std::vector<Stmt> parts = m.as<ir::Seq>() ? m.as<ir::Seq>()->stmts : std::vector<Stmt>{m};
      changed |= bool(m.as<ir::Seq>());
      for (const Stmt& p : parts) {
        if (is_barrier(p) && !out.empty() && is_barrier(out.back())) {
          changed = true;
          continue;
        }
        out.push_back(p);
      }
    }
    return changed ? make_seq(std::move(out), op->loc) : self;
  }
};

}  // namespace

bool touches_block_memory(const Stmt& s) {
  BlockMemoryUse v;
  v.visit_stmt(s);
  return v.found;
}

Stmt fenced(Stmt s, const SourceLoc& loc) {
  if (!touches_block_memory(s)) return s;
  return make_seq({make_barrier(loc), std::move(s), make_barrier(loc)}, loc);
}

Stmt drop_redundant_barriers(const Stmt& kernel_body) {
  Stmt body = BarrierRuns().mutate(kernel_body);
  const auto* seq = body.as<ir::Seq>();
  if (!seq) return is_barrier(body) ? make_seq({}, body->loc) : body;
  std::vector<Stmt> stmts = seq->stmts;
  while (!stmts.empty() && is_barrier(stmts.front())) stmts.erase(stmts.begin());
  while (!stmts.empty() && is_barrier(stmts.back())) stmts.pop_back();
  return make_seq(std::move(stmts), seq->loc);
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
