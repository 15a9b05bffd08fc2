// unroll_hints (see the header).
#include "unroll_hints.h"

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

struct UnrollHints : IRMutator {
  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt rebuilt = IRMutator::visit(op, self);
    if (op->for_kind != ForKind::Serial || op->rolled) return rebuilt;
    Contents c;
    c.visit_stmt(op->body);
    const std::optional<int64_t> trips = op->extent.as_int();
    const bool unroll = c.mma && trips && *trips <= kMaxUnrolledMmaSteps;
    const bool rolled = c.barrier && !c.mma;
    if (!unroll && !rolled) return rebuilt;
    auto n = std::make_shared<ir::For>(*rebuilt.as<ir::For>());
    if (unroll) n->for_kind = ForKind::Unrolled;
    n->rolled = rolled;
    return Stmt(std::move(n));
  }
};

}  // namespace

Function unroll_hints(const Function& f) { return UnrollHints().mutate_function(f); }

}  // namespace tg::vulkan
