// The target-neutral pass pipeline, as a list (Triton's stage table): the launch's sizes bound
// (bind_sizes_pass), the ragged edges predicated, and what the guards made decidable folded. It is
// the interp target's whole pipeline; a target with its own lowering starts from this list and
// appends its passes. docs/passes.md shows each target's list, checked against the plugins.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tilegen/passes/pass_manager.h"

namespace tg {

/// `sizes`: the values bind_sizes puts in (CompileOptions::sizes); none for a function whose
/// sizes are already constant.
std::vector<PassEntry> default_pipeline(const std::map<std::string, int64_t>& sizes = {});

}  // namespace tg
