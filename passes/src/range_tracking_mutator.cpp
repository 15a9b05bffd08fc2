// RangeTrackingMutator (see the header): the scope handling shared by simplify and bounds.
#include "tilegen/passes/range_tracking_mutator.h"

namespace tg {

using namespace ir;

Expr RangeTrackingMutator::unproven_bounds(const std::vector<Expr>& shape,
                                           const std::vector<Expr>& idx) const {
  Expr guard;
  if (idx.size() != shape.size()) return guard;
  auto conjoin = [&](const Expr& c) { guard = guard.defined() ? make_binary(BinOp::And, guard, c) : c; };
  for (std::size_t d = 0; d < idx.size(); ++d) {
    Expr lo = make_binary(BinOp::Ge, idx[d], make_int(0, idx[d].dtype()));
    Expr hi = make_binary(BinOp::Lt, idx[d], shape[d]);
    if (!ctx_.prove(lo)) conjoin(lo);
    if (!ctx_.prove(hi)) conjoin(hi);
  }
  return guard;
}

Stmt RangeTrackingMutator::visit(const Kernel* op, const Stmt& self) {
  RangeContext::Scope s(ctx_);
  ctx_.enter_kernel(*op);
  return IRMutator::visit(op, self);
}

Stmt RangeTrackingMutator::visit(const For* op, const Stmt& self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  return rebuilt(op, self, mn, ext, mutate_loop_body(op, mn, ext));
}

Stmt RangeTrackingMutator::visit(const Let* op, const Stmt& self) {
  Expr v = mutate(op->value);
  return rebuilt(op, self, v, mutate_let_body(op, v));
}

Stmt RangeTrackingMutator::visit(const If* op, const Stmt& self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate_assuming(op->then_body, c, true);
  Stmt e = mutate_assuming(op->else_body, c, false);
  return rebuilt(op, self, c, t, e);
}

Stmt RangeTrackingMutator::visit(const Gemm* op, const Stmt& self) {
  Region a = mutate_region(op->a), b = mutate_region(op->b), c = mutate_region(op->c);
  Stmt hints = op->each_step;
  if (hints && op->step.defined()) {
    RangeContext::Scope s(ctx_);
    DType t = op->step.dtype();
    ctx_.enter_loop(op->step, make_int(0, t), make_int(op->steps, t));
    hints = mutate(hints);
  }
  return rebuilt(op, self, a, b, c, hints);
}

Expr RangeTrackingMutator::visit(const Select* op, const Expr& self) {
  Expr c = mutate(op->cond);
  Expr t = mutate_assuming(op->t, c, true), f = mutate_assuming(op->f, c, false);
  if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return self;
  return make_select(c, t, f);
}

Stmt RangeTrackingMutator::mutate_loop_body(const For* op, const Expr& min, const Expr& extent) {
  RangeContext::Scope s(ctx_);
  ctx_.enter_loop(op->var, min, extent);
  ++loop_depth_;
  Stmt body = mutate(op->body);
  --loop_depth_;
  return body;
}

Stmt RangeTrackingMutator::mutate_let_body(const Let* op, const Expr& value) {
  RangeContext::Scope s(ctx_);
  ctx_.enter_let(op->var, value);
  return mutate(op->body);
}

Stmt RangeTrackingMutator::mutate_assuming(const Stmt& st, const Expr& cond, bool holds) {
  if (!st) return st;
  RangeContext::Scope s(ctx_);
  holds ? ctx_.assume(cond) : ctx_.assume_not(cond);
  return mutate(st);
}

Expr RangeTrackingMutator::mutate_assuming(const Expr& e, const Expr& cond, bool holds) {
  RangeContext::Scope s(ctx_);
  holds ? ctx_.assume(cond) : ctx_.assume_not(cond);
  return mutate(e);
}

}  // namespace tg
