// RangeTrackingMutator: an IRMutator that knows, at every node, what holds there. It owns the
// RangeContext and its scopes, so a pass that reasons about index ranges (simplify, bounds)
// overrides only the nodes it rewrites and reads ctx_ there.
//
//   kernel grid(8) threads(128) -> (bx; tx) {   bx in [0, 8), tx in [0, 128)
//     for i in [0, 4) {                          i in [0, 4), loop_depth() = 1
//       let r = bx * 4 + i                       r = bx*4 + i, so r in [0, 32)
//       if r < N { ... }  else { ... }           then: r - N + 1 ≤ 0; else: N - r ≤ 0
//       select(r < 16, A[r], 0)                  the same facts in a select's two arms
//     }
//   }
//
// Each scope is left exactly as it was entered (RangeContext::Scope), so what a loop or a
// branch learns never leaks into the statements after it.
#pragma once
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"

namespace tg {

class RangeTrackingMutator : public IRMutator {
 public:
  explicit RangeTrackingMutator(RangeContext ctx) : ctx_(std::move(ctx)) {}

  // Scopes: a kernel's block and thread ranges, a loop's variable (and a gemm's step index), a
  // let's definition, an if's (or select's) condition holding in one branch and failing in the other.
  Stmt visit(const ir::Kernel* op, const Stmt& self) override;
  Stmt visit(const ir::For* op, const Stmt& self) override;
  Stmt visit(const ir::Let* op, const Stmt& self) override;
  Stmt visit(const ir::If* op, const Stmt& self) override;
  Stmt visit(const ir::Gemm* op, const Stmt& self) override;  // its hints: step in [0, steps)
  Expr visit(const ir::Select* op, const Expr& self) override;
  using IRMutator::visit;

 protected:
  /// op's body with op->var in [min, min + extent) (min and extent already mutated).
  Stmt mutate_loop_body(const ir::For* op, const Expr& min, const Expr& extent);
  /// op's body with op->var bound to value (already mutated).
  Stmt mutate_let_body(const ir::Let* op, const Expr& value);
  /// s (or e) where cond holds (holds = true) or where it fails (holds = false). A null s stays null.
  Stmt mutate_assuming(const Stmt& s, const Expr& cond, bool holds);
  Expr mutate_assuming(const Expr& e, const Expr& cond, bool holds);
  /// The conjunction of 0 ≤ idx[d] and idx[d] < shape[d] over the bounds ctx_ does not prove;
  /// undefined when it proves every one (or the ranks differ: the verifier reports that).
  Expr unproven_bounds(const std::vector<Expr>& shape, const std::vector<Expr>& idx) const;
  /// How many For statements enclose the node being visited.
  int loop_depth() const { return loop_depth_; }

  RangeContext ctx_;  // what holds at the node being visited

 private:
  int loop_depth_ = 0;
};

}  // namespace tg
