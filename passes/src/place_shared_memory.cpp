// place_shared_memory (see the header).
#include "tilegen/passes/place_shared_memory.h"

#include <map>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_layout.h"
#include "tilegen/passes/shared_memory_plan.h"

namespace tg {

namespace {

class Place : public IRMutator {
 public:
  explicit Place(const TargetInfo& info) : info_(info) {}

  using IRMutator::visit;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    // Padding included (gpu_layout.h), rounded to the plan's 16-byte granule.
    auto bytes_of = [](const Buffer& b) {
      return (int64_t(storage_bytes(b->dtype, gpu::stored_elements(*b.get()))) + 15) / 16 * 16;
    };
    SharedMemoryPlan plan = plan_shared_memory(*op, bytes_of, info_.shared_mem_bytes, info_.device_name);
    for (auto& [b, offset] : plan.offsets) {
      auto n = std::make_shared<ir::BufferNode>(*b.get());
      n->placed_offset = offset;
      n->placed_bytes = bytes_of(b);
      placed_[b.get()] = Buffer(std::move(n));
    }
    return IRMutator::visit(op, self);
  }

  Buffer mutate_buffer(const Buffer& b) override {
    auto it = b ? placed_.find(b.get()) : placed_.end();
    return it != placed_.end() ? it->second : IRMutator::mutate_buffer(b);
  }

 private:
  const TargetInfo& info_;
  std::map<const ir::BufferNode*, Buffer> placed_;
};

}  // namespace

Function place_shared_memory(const Function& f, const TargetInfo& info) {
  Place pass(info);
  return pass.mutate_function(f);
}

}  // namespace tg
