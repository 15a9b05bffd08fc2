// The vulkan target's pipeline and params (see the header).
#include "vulkan_pipeline.h"

#include "passes/hold_accumulators.h"
#include "passes/mma_tiles_from_shared.h"
#include "passes/unroll_hints.h"
#include "passes/pad_shared_rows.h"
#include "passes/prefetch_tiles.h"
#include "tilegen/passes/gpu_pipeline.h"

namespace tg::vulkan {

namespace {

// The params: the cooperative-matrix path, and the fast paths one by one, for measuring each.
// The environment variables are defaults the runtime reads into the params, never read here.
const ParamKey kCoopmat =
    ParamKey::on_off("coopmat", true, "TILEGEN_VULKAN_COOPMAT",
                     "cooperative-matrix gemm where the device has it; 0: the plain path");
const ParamKey kVectorCopies =
    ParamKey::on_off("vector_copies", true, "TILEGEN_VULKAN_VECTOR", "16-byte global-to-shared copies");
const ParamKey kPadRows =
    ParamKey::on_off("pad_rows", true, "TILEGEN_VULKAN_PAD",
                     "shared rows padded against bank conflicts (the pass pad_shared_rows)");
const ParamKey kPrefetch =
    ParamKey::on_off("prefetch", true, "TILEGEN_VULKAN_PREFETCH",
                     "the next tile's loads issued before the gemm (the pass prefetch_tiles)");
const ParamKey kDoubleBuffer = ParamKey::on_off(
    "double_buffer", true, "TILEGEN_VULKAN_DOUBLE",
    "prefetched tiles in two shared slots, one barrier a step (the pass double_buffer_tiles)");

// A pass of this target, run with the device's features as the params leave them.
PassEntry device_pass(const std::string& name, Function (*pass)(const Function&, const Features&),
                      const CompileOptions& opt) {
  return {name, [pass, opt](const Function& f, const TargetInfo& info) {
            return pass(f, device_features(info, opt));
          }};
}

}  // namespace

std::vector<ParamKey> vulkan_param_keys() {
  return {kCoopmat, kVectorCopies, kPadRows, kPrefetch, kDoubleBuffer};
}

Features device_features(const TargetInfo& info, const CompileOptions& opt) {
  Features f = parse_arch(info.arch);
  if (!param_on(opt, kCoopmat)) f.coopmat_units.clear();
  return f;
}

FastPaths fast_paths(const CompileOptions& opt) {
  FastPaths p;
  p.vector_copies = param_on(opt, kVectorCopies);
  return p;
}

std::vector<PassEntry> vulkan_pipeline(const CompileOptions& opt) {
  std::vector<PassEntry> passes = gpu_pipeline(checks_accesses(opt), opt.sizes);
  // The copy passes work on the tiles the emitter holds as uvec4s, which it does with vector
  // copies only. The accumulators are held before prefetch_tiles adds its prologue, so the
  // prologue's loads overlap the moves into the matrices.
  const bool vector = param_on(opt, kVectorCopies);
  if (vector && param_on(opt, kPadRows))
    passes.push_back(device_pass("pad_shared_rows", pad_shared_rows, opt));
  if (param_on(opt, kCoopmat)) passes.push_back(device_pass("hold_accumulators", hold_accumulators, opt));
  if (vector && param_on(opt, kPrefetch)) {
    passes.push_back(device_pass("prefetch_tiles", prefetch_tiles, opt));
    if (param_on(opt, kDoubleBuffer))
      passes.push_back(device_pass("double_buffer_tiles", double_buffer_tiles, opt));
  }
  if (param_on(opt, kCoopmat))
    passes.push_back(device_pass("mma_tiles_from_shared", mma_tiles_from_shared, opt));
  passes.push_back({"unroll_hints", [](const Function& f, const TargetInfo&) { return unroll_hints(f); }});
  if (!param_on(opt, kCoopmat))  // every pass sees the device without its units, as codegen does
    for (PassEntry& p : passes)
      p.run = [run = std::move(p.run)](const Function& f, const TargetInfo& info) {
        TargetInfo plain = info;
        plain.matrix_units.clear();
        return run(f, plain);
      };
  return passes;
}

}  // namespace tg::vulkan
