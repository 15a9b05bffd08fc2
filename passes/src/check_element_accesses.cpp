// check_element_accesses (see the header): loads and stores whose range is not proven get an
// AccessCheck; the function gets the access record those checks write.
#include "tilegen/passes/check_element_accesses.h"

#include "stmt_build.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/passes/range_tracking_mutator.h"

namespace tg {

using namespace ir;

namespace {

class AccessChecker : public RangeTrackingMutator {
 public:
  using RangeTrackingMutator::RangeTrackingMutator;
  using RangeTrackingMutator::visit;

  int checks() const { return next_site_; }

  Stmt visit(const Kernel* op, const Stmt& self) override {
    const Kernel* outer = kernel_;
    kernel_ = op;
    Stmt s = located(op->loc, [&] { return RangeTrackingMutator::visit(op, self); });
    kernel_ = outer;
    return s;
  }

  Stmt visit(const For* op, const Stmt& self) override {
    return located(op->loc, [&] {
      bool parallel = op->for_kind == ForKind::Parallel;
      block_level_ += parallel;
      Stmt s = RangeTrackingMutator::visit(op, self);
      block_level_ -= parallel;
      return s;
    });
  }
  Stmt visit(const Let* op, const Stmt& self) override {
    return located(op->loc, [&] { return RangeTrackingMutator::visit(op, self); });
  }
  Stmt visit(const If* op, const Stmt& self) override {
    return located(op->loc, [&] { return RangeTrackingMutator::visit(op, self); });
  }
  Stmt visit(const Copy* op, const Stmt& self) override { return collective(op, self); }
  Stmt visit(const Fill* op, const Stmt& self) override { return collective(op, self); }
  Stmt visit(const Gemm* op, const Stmt& self) override { return collective(op, self); }
  Stmt visit(const Reduce* op, const Stmt& self) override { return collective(op, self); }

  Expr visit(const Load* op, const Expr& self) override {
    Expr e = RangeTrackingMutator::visit(op, self);
    auto* load = e.as<Load>();
    Expr guard = load ? unproven_bounds(load->buffer->shape, load->indices) : Expr();
    if (!guard.defined()) return e;
    SourceLoc loc = op->loc.known() ? op->loc : loc_;
    Expr check = make_check(guard, AccessKind::Load, *load->buffer, load->indices, loc);
    return make_select(check, e, lower::zero_of(e.dtype()));
  }

  Stmt visit(const Store* op, const Stmt& self) override { return guard_write(op, AccessKind::Store, self); }
  Stmt visit(const Atomic* op, const Stmt& self) override {
    return guard_write(op, AccessKind::Atomic, self);
  }

 private:
  template <typename F>
  Stmt located(const SourceLoc& loc, F&& f) {
    SourceLoc outer = loc_;
    if (loc.known()) loc_ = loc;
    Stmt s = f();
    loc_ = outer;
    return s;
  }

  template <typename Node>
  Stmt collective(const Node* op, const Stmt& self) {
    return located(op->loc, [&] {
      ++block_level_;
      Stmt s = RangeTrackingMutator::visit(op, self);
      --block_level_;
      return s;
    });
  }

  Expr make_check(const Expr& cond, AccessKind access, const BufferNode& b, const std::vector<Expr>& idx,
                  const SourceLoc& loc) {
    auto c = std::make_shared<AccessCheck>(loc);
    c->cond = cond;
    c->access = access;
    c->buffer = b.name;
    c->indices = idx;
    c->shape = b.shape;
    if (kernel_)
      for (const Var& v : kernel_->block_vars) c->block.push_back(v);
    bool per_thread = kernel_ && kernel_->thread_var.defined() && block_level_ == 0;
    c->thread = per_thread ? Expr(kernel_->thread_var) : make_int(-1);
    c->site = next_site_++;
    return Expr(std::move(c));
  }

  // Store and Atomic: if (check) { the access }, its value evaluated knowing the check holds.
  template <typename Node>
  Stmt guard_write(const Node* op, AccessKind access, const Stmt& self) {
    return located(op->loc, [&] {
      std::vector<Expr> idx;
      for (auto& i : op->indices) idx.push_back(mutate(i));
      Buffer b = mutate_buffer(op->buffer);
      Expr guard = unproven_bounds(b->shape, idx);
      Expr v = guard.defined() ? mutate_assuming(op->value, guard, true) : mutate(op->value);
      bool same = b.same_as(op->buffer) && v.same_as(op->value);
      for (std::size_t i = 0; i < idx.size(); ++i) same = same && idx[i].same_as(op->indices[i]);
      if (same && !guard.defined()) return self;
      auto n = std::make_shared<Node>(*op);
      n->buffer = b;
      n->indices = idx;
      n->value = v;
      if (!guard.defined()) return Stmt(std::move(n));
      return lower::make_if(make_check(guard, access, *b.get(), idx, loc_), Stmt(std::move(n)), op->loc);
    });
  }

  const Kernel* kernel_ = nullptr;
  int block_level_ = 0;  // inside a parallel loop or a collective statement: no thread of its own
  int next_site_ = 0;
  SourceLoc loc_;  // the innermost statement with a known call site
};

}  // namespace

Function check_element_accesses(const Function& f, const TargetInfo&) {
  for (const Param& p : f.params)
    if (p.name() == kAccessRecordName)
      throw Error(std::string("a parameter is named ") + kAccessRecordName +
                      ", the name check_bounds gives its access record; rename it",
                  f.loc);
  AccessChecker checker(RangeContext::for_function(f));
  Function out = checker.mutate_function(f);
  if (checker.checks() == 0) return out;
  Param record;
  record.kind = Param::Kind::Tensor;
  record.buffer = make_access_record();
  out.params.push_back(record);
  return out;
}

}  // namespace tg
