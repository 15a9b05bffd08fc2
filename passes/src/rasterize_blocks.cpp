// rasterize_blocks (see the header).
#include "tilegen/passes/rasterize_blocks.h"

#include "stmt_build.h"
#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

using namespace lower;

struct HasMatrixWork : IRVisitor {
  bool found = false;
  void visit(const ir::Gemm*) override { found = true; }
  void visit(const ir::Mma*) override { found = true; }
};

struct Rasterize : IRMutator {
  int group;
  explicit Rasterize(int g) : group(g) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    if (op->grid.size() < 2) return self;
    auto gx = op->grid[0].as_int(), gy = op->grid[1].as_int();
    if (!gx || !gy || *gy < group || *gx < 2) return self;
    HasMatrixWork work;
    work.visit_stmt(op->body);
    if (!work.found) return self;
    const Var &bx = op->block_vars[0], &by = op->block_vars[1];
    Var block("block", bx.dtype()), rows("rows", bx.dtype()), nx(bx.name() + "_r", bx.dtype()),
        ny(by.name() + "_r", by.dtype());
    const int64_t panel = int64_t(group) * *gx;
    Stmt body = substitute(op->body, {{bx, nx}, {by, ny}});
    // Both stay inside the grid (a block of the last, shorter panel included), but interval
    // arithmetic cannot see it through the division by `rows`: the min states it, so that guards
    // such as bx_r*256 + c < N where the grid covers N exactly fold away (one min per block).
    body = make_let(nx, min(block % panel / rows, Expr(*gx - 1)), body, op->loc);
    body = make_let(ny, min(block / panel * group + block % panel % rows, Expr(*gy - 1)), body, op->loc);
    body = make_let(rows, min(Expr(*gy) - block / panel * group, Expr(group)), body, op->loc);
    body = make_let(block, by * *gx + bx, body, op->loc);
    auto k = std::make_shared<ir::Kernel>(*op);
    k->body = std::move(body);
    return Stmt(std::move(k));
  }
};

}  // namespace

Function rasterize_blocks(const Function& f, const TargetInfo&, int group) {
  if (group < 2) return f;
  return Rasterize(group).mutate_function(f);
}

}  // namespace tg
