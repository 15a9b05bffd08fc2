// The default pipeline: canonicalise, predicate the ragged edges, then fold what the guards
// made decidable.
#include "tilegen/passes/pipeline.h"

#include "tilegen/passes/bounds.h"
#include "tilegen/passes/simplify.h"

namespace tg {

std::vector<PassEntry> default_pipeline() {
  return {
      {"simplify", simplify},
      {"bounds", insert_bounds_checks},
      {"simplify", simplify},
  };
}

}  // namespace tg
