// keep_loops_rolled (see the header).
#include "keep_loops_rolled.h"

#include "tilegen/ir/visitor.h"

namespace tg::vulkan {

namespace {

struct Contents : IRVisitor {
  bool barrier = false, mma = false;
  void visit(const ir::Barrier*) override { barrier = true; }
  void visit(const ir::Mma* op) override {
    mma = true;
    IRVisitor::visit(op);
  }
};

struct KeepRolled : IRMutator {
  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt rebuilt = IRMutator::visit(op, self);
    if (op->for_kind != ForKind::Serial || op->rolled) return rebuilt;
    Contents c;
    c.visit_stmt(op->body);
    if (!c.barrier || c.mma) return rebuilt;
    auto n = std::make_shared<ir::For>(*rebuilt.as<ir::For>());
    n->rolled = true;
    return Stmt(std::move(n));
  }
};

}  // namespace

Function keep_loops_rolled(const Function& f) { return KeepRolled().mutate_function(f); }

}  // namespace tg::vulkan
