// check_index_ranges (see the header): a RangeTrackingMutator that rewrites nothing and reads,
// at each load, store and atomic, the interval of every index.
#include "tilegen/passes/check_index_ranges.h"

#include "tilegen/ir/printer.h"
#include "tilegen/passes/range_tracking_mutator.h"

namespace tg {

using namespace ir;

namespace {

std::string interval_text(Interval r) {
  if (r.is_point()) return std::to_string(r.lo);
  auto end = [](int64_t v) {
    return v == Interval::kNegInf   ? std::string("-inf")
           : v == Interval::kPosInf ? std::string("inf")
                                    : std::to_string(v);
  };
  return "in [" + end(r.lo) + ", " + end(r.hi) + "]";
}

class IndexRangeChecker : public RangeTrackingMutator {
 public:
  using RangeTrackingMutator::RangeTrackingMutator;
  using RangeTrackingMutator::visit;

  Expr visit(const Load* op, const Expr& self) override {
    check(Buffer(op->buffer), op->indices, "load from", op->loc);
    return RangeTrackingMutator::visit(op, self);
  }
  Stmt visit(const Store* op, const Stmt& self) override {
    check(op->buffer, op->indices, "store to", op->loc);
    return RangeTrackingMutator::visit(op, self);
  }
  Stmt visit(const Atomic* op, const Stmt& self) override {
    check(op->buffer, op->indices, (std::string("atomic_") + name_of(op->op) + " on").c_str(), op->loc);
    return RangeTrackingMutator::visit(op, self);
  }

  // Branches and loops the analysis proves never run are not checked: their facts contradict
  // each other, and an access there cannot go wrong.
  Stmt visit(const If* op, const Stmt& self) override {
    auto taken = ctx_.decide(op->cond);
    if (!taken) return RangeTrackingMutator::visit(op, self);
    mutate(op->cond);
    if (const Stmt& live = *taken ? op->then_body : op->else_body) mutate(live);
    return self;
  }
  Expr visit(const Select* op, const Expr& self) override {
    auto taken = ctx_.decide(op->cond);
    if (!taken) return RangeTrackingMutator::visit(op, self);
    mutate(op->cond);
    mutate(*taken ? op->t : op->f);
    return self;
  }
  Stmt visit(const For* op, const Stmt& self) override {
    if (ctx_.bounds(op->extent).hi > 0) return RangeTrackingMutator::visit(op, self);
    mutate(op->min);
    mutate(op->extent);
    return self;
  }

 private:
  void check(const Buffer& b, const std::vector<Expr>& indices, const char* what, const SourceLoc& at) const {
    if (!b || indices.size() != b.rank()) return;  // the verifier reports malformed accesses
    for (std::size_t d = 0; d < indices.size(); ++d) {
      if (!indices[d].defined() || !indices[d].dtype().is_int()) continue;
      Interval r = ctx_.bounds(indices[d]), dim = ctx_.bounds(b->shape[d]);
      bool below = r.has_upper() && r.hi < 0;
      bool above = r.has_lower() && dim.has_upper() && r.lo >= dim.hi;
      if (!below && !above) continue;
      throw Error(std::string(what) + " " + name_of(b->scope) + " " + b->name + ": index " +
                      std::to_string(d) + " is " + interval_text(r) + " wherever this runs, outside 0 to " +
                      print(b->shape[d]) + " - 1; fix the index or the loop bounds",
                  at);
    }
  }
};

}  // namespace

void check_index_ranges(const Function& f) {
  IndexRangeChecker checker(RangeContext::for_function(f));
  checker.mutate_function(f);
}

}  // namespace tg
