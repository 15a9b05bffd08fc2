// widen_gemm_tiles (see the header).
#include "widen_gemm_tiles.h"

#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "micro_kernel.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/visitor.h"

namespace tg::cpu {

namespace {

bool narrow_float(DType t) { return t == f16 || t == fp8_e4m3 || t == fp8_e5m2; }

// Every access of each candidate tile, and those the pass allows: a copy into it from a Global
// tensor of its dtype, a micro-kernel gemm's A or B.
struct Uses : BufferAccessVisitor {
  std::map<const ir::BufferNode*, int> all, allowed;
  std::vector<std::pair<const ir::BufferNode*, const ir::BufferNode*>> gemm_operands;  // (A, B)
  void access(const Buffer& b, BufferAccess) override {
    if (b->scope == Scope::Shared && narrow_float(b->dtype)) ++all[b.get()];
  }
  using BufferAccessVisitor::visit;
  void visit(const ir::Copy* op) override {
    const Buffer &s = op->src.buffer, &d = op->dst.buffer;
    if (s->scope == Scope::Global && s->dtype == d->dtype) ++allowed[d.get()];
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::Gemm* op) override {
    if (gemm_has_microkernel(*op))
      for (const Buffer* b : {&op->a.buffer, &op->b.buffer})
        if (b->get() != op->c.buffer.get()) ++allowed[b->get()];
    gemm_operands.emplace_back(op->a.buffer.get(), op->b.buffer.get());
    BufferAccessVisitor::visit(op);
  }
};

class Widen : public IRMutator {
 public:
  explicit Widen(std::set<const ir::BufferNode*> tiles) : tiles_(std::move(tiles)) {}
  Buffer mutate_buffer(const Buffer& b) override {
    if (!b || !tiles_.count(b.get())) return IRMutator::mutate_buffer(b);
    auto it = widened_.find(b.get());
    if (it != widened_.end()) return it->second;
    auto n = std::make_shared<ir::BufferNode>(*b.get());
    n->dtype = f32;
    return widened_[b.get()] = Buffer(std::move(n));
  }

 private:
  std::set<const ir::BufferNode*> tiles_;
  std::map<const ir::BufferNode*, Buffer> widened_;
};

}  // namespace

Function widen_gemm_tiles(const Function& f) {
  Uses uses;
  uses.visit_stmt(f.body);
  std::set<const ir::BufferNode*> tiles;
  for (const auto& [b, n] : uses.all) {
    auto it = uses.allowed.find(b);
    if (it != uses.allowed.end() && it->second == n && b->layout.is_default()) tiles.insert(b);
  }
  // A gemm's A and B keep one dtype (the verifier's rule): both widen, or neither.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [a, b] : uses.gemm_operands)
      if (tiles.count(a) != tiles.count(b)) changed |= tiles.erase(a) + tiles.erase(b) > 0;
  }
  if (tiles.empty()) return f;
  Widen pass(std::move(tiles));
  return pass.mutate_function(f);
}

}  // namespace tg::cpu
