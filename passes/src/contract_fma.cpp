// contract_fma (see the header).
#include "tilegen/passes/contract_fma.h"

#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

bool contractible(DType t) { return t == f32 || t == f64; }

const ir::Binary* product(const Expr& e, DType t) {
  const auto* b = e.as<ir::Binary>();
  return b && b->op == ir::BinOp::Mul && b->dtype == t ? b : nullptr;
}

Expr fused(DType t, Expr a, Expr b, Expr c, const SourceLoc& loc) {
  auto call = std::make_shared<ir::Call>(t, ir::Intrinsic::Fma,
                                         std::vector<Expr>{std::move(a), std::move(b), std::move(c)});
  call->loc = loc;
  return Expr(std::move(call));
}

struct Contract : IRMutator {
  Expr visit(const ir::Binary* op, const Expr& self) override {
    Expr e = IRMutator::visit(op, self);  // operands first (inner sums fuse too)
    const auto* b = e.as<ir::Binary>();
    if (!b || !contractible(b->dtype) || (b->op != ir::BinOp::Add && b->op != ir::BinOp::Sub)) return e;
    const bool sub = b->op == ir::BinOp::Sub;
    if (const ir::Binary* p = product(b->b, b->dtype))  // a ± x*y
      return fused(b->dtype, sub ? make_unary(ir::UnOp::Neg, p->a) : p->a, p->b, b->a, b->loc);
    if (const ir::Binary* p = product(b->a, b->dtype))  // x*y ± a
      return fused(b->dtype, p->a, p->b, sub ? make_unary(ir::UnOp::Neg, b->b) : b->b, b->loc);
    return e;
  }
};

}  // namespace

Expr contract_fma_expr(const Expr& e) { return Contract().mutate(e); }

Function contract_fma(const Function& f, const TargetInfo&) { return Contract().mutate_function(f); }

}  // namespace tg
