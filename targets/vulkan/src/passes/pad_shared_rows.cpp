// pad_shared_rows (see the header).
#include "passes/pad_shared_rows.h"

#include "tile_storage.h"
#include "tilegen/ir/visitor.h"

namespace tg::vulkan {

namespace {

constexpr int kPad = 8;  // elements: 16 bytes of a 16-bit tile

// Rows of 64 bytes or a multiple: 32 16-bit elements.
bool wants_padding(const ir::BufferNode& b) {
  auto last = b.shape.back().as_int();
  return b.shape.size() >= 2 && b.layout.is_default() && last && *last * 2 % 64 == 0;
}

class PadRows : public IRMutator {
 public:
  explicit PadRows(const Features& device) : device_(device) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    std::set<const ir::BufferNode*> tiles = vector_tiles(op->body);
    padded_.clear();
    for (const ir::BufferNode* b : tiles)
      if (wants_padding(*b)) {
        auto node = std::make_shared<ir::BufferNode>(*b);
        node->layout = Layout{Layout::Kind::Padded, kPad, {}};
        padded_.push_back({b, Buffer(node)});
      }
    if (padded_.empty()) return self;
    Stmt out = IRMutator::visit(op, self);
    const auto* k = out.as<ir::Kernel>();
    if (workgroup_bytes(*k, device_, vector_tiles(k->body)) > int64_t(device_.max_shared_bytes)) return self;
    return out;
  }

  Buffer mutate_buffer(const Buffer& b) override {
    for (auto& [from, to] : padded_)
      if (from == b.get()) return to;
    return IRMutator::mutate_buffer(b);
  }

 private:
  const Features& device_;
  std::vector<std::pair<const ir::BufferNode*, Buffer>> padded_;
};

}  // namespace

Function pad_shared_rows(const Function& f, const Features& device) {
  PadRows pass(device);
  return pass.mutate_function(f);
}

}  // namespace tg::vulkan
