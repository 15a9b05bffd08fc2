// The bounds pass: clear Copy::check_bounds where the Global side is proven in range, and guard
// element loads and stores of Global buffers inside loops where it is not (see bounds.h).
#include "tilegen/passes/bounds.h"

#include "stmt_build.h"
#include "tilegen/passes/range_tracking_mutator.h"

namespace tg {

using namespace ir;

namespace {

// Scopes (what holds inside kernels, loops, lets, ifs and select arms) come from the base.
class BoundsInserter : public RangeTrackingMutator {
 public:
  using RangeTrackingMutator::RangeTrackingMutator;
  using RangeTrackingMutator::visit;

  // ---- Element accesses

  Expr visit(const Load* op, const Expr& self) override {
    Expr e = RangeTrackingMutator::visit(op, self);
    auto* load = e.as<Load>();
    if (loop_depth() == 0 || !load || load->buffer->scope != tg::Scope::Global) return e;
    Expr guard = unproven(Buffer(load->buffer), load->indices);
    return guard.defined() ? make_select(guard, e, lower::zero_of(e.dtype())) : e;
  }

  Stmt visit(const Store* op, const Stmt& self) override { return guard_write(op, self); }
  Stmt visit(const Atomic* op, const Stmt& self) override { return guard_write(op, self); }

  Stmt visit(const Copy* op, const Stmt& self) override {
    Stmt s = RangeTrackingMutator::visit(op, self);
    auto* c = s.as<Copy>();
    if (!c->check_bounds || !in_bounds(c->src) || !in_bounds(c->dst)) return s;
    auto n = std::make_shared<Copy>(*c);
    n->check_bounds = false;
    return Stmt(std::move(n));
  }

 private:
  Expr unproven(const Buffer& b, const std::vector<Expr>& idx) const {
    return unproven_bounds(b->shape, idx);
  }

  // Every element of a Global region lies inside its buffer: 0 ≤ offset, offset + extent ≤ shape.
  bool in_bounds(const Region& r) const {
    if (r.buffer->scope != tg::Scope::Global) return true;
    std::size_t rank = r.buffer.rank();
    if (r.offsets.size() != rank || r.extents.size() != rank) return false;
    for (std::size_t d = 0; d < rank; ++d) {
      const Expr& off = r.offsets[d];
      if (!ctx_.prove(make_binary(BinOp::Ge, off, make_int(0, off.dtype())))) return false;
      if (!ctx_.prove(make_binary(BinOp::Le, make_binary(BinOp::Add, off, r.extents[d]), r.buffer->shape[d])))
        return false;
    }
    return true;
  }

  // Store and Atomic: inside a loop, an unproven Global write is wrapped in If(guard); its value
  // is then evaluated knowing the guard, so loads that share its indices need no guard of their own.
  template <typename Node>
  Stmt guard_write(const Node* op, const Stmt& self) {
    if (loop_depth() == 0 || op->buffer->scope != tg::Scope::Global)
      return RangeTrackingMutator::visit(op, self);
    Buffer b = mutate_buffer(op->buffer);
    std::vector<Expr> idx;
    for (auto& i : op->indices) idx.push_back(mutate(i));
    Expr guard = unproven(b, idx);
    Expr v = guard.defined() ? mutate_assuming(op->value, guard, true) : mutate(op->value);
    bool same = b.same_as(op->buffer) && v.same_as(op->value);
    for (std::size_t i = 0; i < idx.size(); ++i) same = same && idx[i].same_as(op->indices[i]);
    if (same && !guard.defined()) return self;
    auto n = std::make_shared<Node>(*op);
    n->buffer = b;
    n->indices = std::move(idx);
    n->value = v;
    if (!guard.defined()) return Stmt(std::move(n));
    auto w = std::make_shared<If>(op->loc);
    w->cond = guard;
    w->then_body = Stmt(std::move(n));
    return Stmt(std::move(w));
  }
};

}  // namespace

Function insert_bounds_checks(const Function& f, const TargetInfo&) {
  BoundsInserter b(RangeContext::for_function(f));
  return b.mutate_function(f);
}

}  // namespace tg
