#include "tilegen/passes/gpu_pipeline.h"

#include "tilegen/passes/bulk_copies.h"
#include "tilegen/passes/check_element_accesses.h"
#include "tilegen/passes/infer_fragment_layouts.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/pipeline_shared.h"
#include "tilegen/passes/rasterize_blocks.h"

namespace tg {

std::vector<PassEntry> gpu_pipeline(bool check_accesses, const std::map<std::string, int64_t>& sizes) {
  std::vector<PassEntry> passes = default_pipeline(sizes);
  passes.push_back({"rasterize_blocks",
                    [](const Function& f, const TargetInfo& info) { return rasterize_blocks(f, info); }});
  passes.push_back({"infer_fragment_layouts", infer_fragment_layouts});
  // After the layouts: the shared memory it fits its stages into is then what stays shared (a
  // fragment in registers no longer counts against it).
  passes.push_back({"pipeline_shared", pipeline_shared});
  passes.push_back({"bulk_copies", bulk_copies});
  passes.push_back({"partition_threads", partition_threads});
  if (check_accesses) passes.push_back({"check_element_accesses", check_element_accesses});
  return passes;
}

}  // namespace tg
