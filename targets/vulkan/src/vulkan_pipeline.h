// The vulkan target's lowering as a list, and its params: what vulkan_plugin.cpp's pipeline()
// and codegen() read, in the codegen library so the tests build the same list without loading
// the plugin. docs/passes.md shows the list (tests/unit/test_pipeline_docs.cpp checks it):
//
//   gpu_pipeline(...)          the shared GPU lowering, down to per-thread code
//   → pad_shared_rows          vector tiles' rows padded by 16 bytes where they fit (pad_rows)
//   → hold_accumulators        coopmat accumulators kept in the unit's registers across a loop (coopmat)
//   → prefetch_tiles           the K loop's next tiles loaded into registers before the compute (prefetch)
//   → double_buffer_tiles      its tiles in two shared slots, one barrier a step (double_buffer)
// The copy passes need vector_copies=1: they act on tiles the emitter holds as uvec4s.
//
// With coopmat=0 every pass sees the device without its matrix units (the plain path).
#pragma once
#include <vector>

#include "spirv_codegen.h"
#include "tilegen/plugin.h"

namespace tg::vulkan {

/// coopmat, vector_copies, pad_rows, prefetch, double_buffer (plugin.h's ParamKey).
std::vector<ParamKey> vulkan_param_keys();

/// The device's features as the passes and the code generator use them: parse_arch(info.arch),
/// without cooperative matrices where the param coopmat is 0.
Features device_features(const TargetInfo& info, const CompileOptions& opt);

/// The fast paths the code generator takes (the param vector_copies).
FastPaths fast_paths(const CompileOptions& opt);

/// The whole lowering, from bind_sizes (opt.sizes) on, for a TargetInfo the plugin made.
std::vector<PassEntry> vulkan_pipeline(const CompileOptions& opt);

}  // namespace tg::vulkan
