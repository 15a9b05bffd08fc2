// pad_shared_tiles (see the header).
#include "tilegen/passes/pad_shared_tiles.h"

#include <map>
#include <set>

#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

bool wants_padding(const ir::BufferNode& b) {
  // A user's swizzle is padded instead, as it always was (swizzle_shared_tiles swizzles the tiles
  // async mmas read, after this pass).
  bool free = b.layout.is_default() || b.layout.kind == Layout::Kind::Swizzle;
  if (b.scope != Scope::Shared || b.shape.size() < 2 || !free || b.dtype.is_packed()) return false;
  auto cols = b.shape.back().as_int();
  return cols && *cols > 0 && (*cols * b.dtype.bits() / 8) % 32 == 0;
}

class Pad : public IRMutator {
 public:
  // Tiles the copy engine fills (bulk copies) stay dense, or get swizzle_shared_tiles' swizzle:
  // it writes a box's rows back to back.
  explicit Pad(const Function& f) {
    struct Scan : IRVisitor {
      std::set<const ir::BufferNode*>* out;
      using IRVisitor::visit;
      void visit(const ir::BulkCopy* op) override { out->insert(op->dst.buffer.get()); }
    } scan;
    scan.out = &bulk_;
    scan.visit_stmt(f.body);
  }
  Buffer mutate_buffer(const Buffer& b) override {
    if (!b || !wants_padding(*b.get()) || bulk_.count(b.get())) return IRMutator::mutate_buffer(b);
    auto it = padded_.find(b.get());
    if (it != padded_.end()) return it->second;
    auto n = std::make_shared<ir::BufferNode>(*b.get());
    n->layout = Layout{Layout::Kind::Padded, 128 / b->dtype.bits(), ""};
    return padded_[b.get()] = Buffer(std::move(n));
  }

 private:
  std::map<const ir::BufferNode*, Buffer> padded_;
  std::set<const ir::BufferNode*> bulk_;
};

}  // namespace

Function pad_shared_tiles(const Function& f, const TargetInfo&) {
  Pad pass(f);
  return pass.mutate_function(f);
}

}  // namespace tg
