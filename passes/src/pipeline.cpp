// The default pipeline: bind the sizes, canonicalise, predicate the ragged edges, fold what the
// guards made decidable, then keep masks to the tiles they can reach.
#include "tilegen/passes/pipeline.h"

#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/bounds.h"
#include "tilegen/passes/guard_masks.h"
#include "tilegen/passes/simplify.h"

namespace tg {

std::vector<PassEntry> default_pipeline(const std::map<std::string, int64_t>& sizes) {
  return {
      bind_sizes_pass(sizes), {"simplify", simplify},       {"bounds", insert_bounds_checks},
      {"simplify", simplify}, {"guard_masks", guard_masks},
  };
}

}  // namespace tg
