// Tiles fitted to a device's shared memory (Sample tile parameters halved until the lowered
// kernel fits), so a sample's defaults run on a device smaller than the GPUs they were sized for.
#include <algorithm>
#include <limits>
#include <set>

#include "sample_support.h"
#include "tilegen/ir/error.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/pass_manager.h"

namespace tg::samples {

namespace {

// The shared memory of the largest kernel of `k` once lowered by `pipeline` for `target`, in the
// bytes of the IR's storage formats (what TargetInfo::shared_mem_bytes counts); nullopt when the
// kernel does not lower. Where the pipeline placed the shared buffers (place_shared_memory, the
// last pass of cuda and hip: padding included, buffers of disjoint lifetimes on the same bytes),
// the placements are read; without placements every buffer is its own allocation (vulkan's
// Workgroup variables), so the sizes add up.
std::optional<int64_t> lowered_shared_bytes(const Kernel& k, const TargetInfo& target,
                                            const std::vector<PassEntry>& pipeline) {
  // place_shared_memory refuses a kernel over the limit, which is what this measures: it places
  // here without one (the passes before it still size their stages to the device).
  std::vector<PassEntry> measuring = pipeline;
  for (PassEntry& e : measuring)
    if (e.name == "place_shared_memory")
      e.run = [run = e.run](const Function& f, const TargetInfo& info) {
        TargetInfo unlimited = info;
        unlimited.shared_mem_bytes = std::numeric_limits<int64_t>::max() / 2;
        return run(f, unlimited);
      };
  Function lowered;
  try {
    PassManagerOptions quiet;
    quiet.keep_stages = false;
    lowered = PassManager(measuring).run(bind_sizes(k.function(), {}), target, quiet);
  } catch (const Error&) {
    return std::nullopt;
  }
  std::vector<const ir::Kernel*> kernels;
  if (const auto* single = lowered.body.as<ir::Kernel>()) kernels.push_back(single);
  if (const auto* seq = lowered.body.as<ir::Seq>())
    for (const Stmt& s : seq->stmts)
      if (const auto* kk = s.as<ir::Kernel>()) kernels.push_back(kk);
  int64_t most = 0;
  for (const ir::Kernel* kk : kernels) {
    int64_t placed_end = 0, sum = 0;
    for (const Buffer& b : kk->buffers) {
      if (b->scope != Scope::Shared) continue;
      if (b->placed()) {
        placed_end = std::max(placed_end, b->placed_offset + b->placed_bytes);
      } else {
        auto n = b.const_numel();
        sum += n ? int64_t(storage_bytes(b->dtype, *n)) : int64_t(0);
      }
    }
    most = std::max(most, placed_end + sum);
  }
  return most;
}

// The sample built at p, when p is in range and the sample accepts it.
std::optional<Kernel> try_build(const Sample& s, const Params& p, DType t) {
  try {
    return s.build(resolve(s, p), t);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

bool is_tile_param(const std::string& name) { return name.rfind("block_", 0) == 0; }

Params fit_to_device(const Sample& s, const Params& p, DType t, const TargetInfo& target,
                     const std::vector<PassEntry>& pipeline, const std::set<std::string>& fixed,
                     int64_t budget) {
  const int64_t limit = budget > 0 ? budget : target.shared_mem_bytes;
  Params cur = p;
  std::optional<Kernel> k = try_build(s, cur, t);
  if (!k) return p;
  for (int step = 0; step < 16; ++step) {
    std::optional<int64_t> bytes = lowered_shared_bytes(*k, target, pipeline);
    if (!bytes || *bytes <= limit) return cur;
    // Halve the largest tile parameter the user left to us that the sample accepts halved.
    std::vector<std::string> names;
    for (const auto& [name, value] : cur)
      if (is_tile_param(name) && !fixed.count(name) && value >= 2) names.push_back(name);
    std::stable_sort(names.begin(), names.end(),
                     [&](const std::string& a, const std::string& b) { return cur.at(a) > cur.at(b); });
    bool shrunk = false;
    for (const std::string& name : names) {
      Params next = cur;
      next[name] = cur.at(name) / 2;
      if (std::optional<Kernel> nk = try_build(s, next, t)) {
        cur = std::move(next), k = std::move(nk), shrunk = true;
        break;
      }
    }
    if (!shrunk) return p;  // nothing left to shrink: the compile reports what does not fit
  }
  return p;
}

}  // namespace tg::samples
