// pad_shared_tiles (see the header).
#include "tilegen/passes/pad_shared_tiles.h"

#include <map>

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
  Buffer mutate_buffer(const Buffer& b) override {
    if (!b || !wants_padding(*b.get())) return IRMutator::mutate_buffer(b);
    auto it = padded_.find(b.get());
    if (it != padded_.end()) return it->second;
    auto n = std::make_shared<ir::BufferNode>(*b.get());
    n->layout = Layout{Layout::Kind::Padded, 128 / b->dtype.bits(), ""};
    return padded_[b.get()] = Buffer(std::move(n));
  }

 private:
  std::map<const ir::BufferNode*, Buffer> padded_;
};

}  // namespace

Function pad_shared_tiles(const Function& f, const TargetInfo&) {
  Pad pass;
  return pass.mutate_function(f);
}

}  // namespace tg
