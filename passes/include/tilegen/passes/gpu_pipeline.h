// The shared GPU lowering pipeline, as a list: default_pipeline (sizes bound, ragged edges
// predicated), then shared-memory pipelining, block rasterisation, register layouts for the
// matrix unit and the partition over threads; what the cuda, hip and vulkan targets run
// (docs/passes.md shows each target's list, checked against the plugins). Its output is
// per-thread code only (Kernel, For, Let, If, Store, Atomic, Barrier, Mma, with Shared and Local
// buffers), which the interpreter executes exactly, so every target's lowered IR can be checked
// against the samples' references without the hardware.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// `check_accesses`: end with check_element_accesses (CompileOptions check_bounds=all). `sizes`:
/// the values the first pass, bind_sizes, puts in (CompileOptions::sizes).
std::vector<PassEntry> gpu_pipeline(bool check_accesses = false,
                                    const std::map<std::string, int64_t>& sizes = {});

}  // namespace tg
