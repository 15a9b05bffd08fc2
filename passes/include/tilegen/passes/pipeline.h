// The target-neutral pass pipeline, as a list (Triton's stage table): what the interp target
// runs after the runtime has bound the launch's sizes (bind_sizes.h).
//
//   simplify → bounds → simplify
//
// A target with its own lowering starts from this list and appends its passes.
#pragma once
#include <vector>

#include "tilegen/passes/pass_manager.h"

namespace tg {

std::vector<PassEntry> default_pipeline();

}  // namespace tg
