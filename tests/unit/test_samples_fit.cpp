// samples::fit_to_device: tiles sized for large GPUs halved until the lowered kernel fits a
// small device's shared memory; the user's own parameters never change.
#include <doctest/doctest.h>

#include "tilegen/passes/bind_sizes.h"
#include "gpu_targets.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/place_shared_memory.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

TargetInfo small_gpu(int64_t shared_bytes) {
  TargetInfo info;  // a lavapipe-like Vulkan device: 8-lane subgroups, no matrix units
  info.target = "vulkan";
  info.device_name = "small test device";
  info.software = true;
  info.warp_size = 8;
  info.shared_mem_bytes = shared_bytes;
  return info;
}

int64_t largest_shared_bytes(const Kernel& k, const TargetInfo& info) {
  Function lowered = PassManager(gpu_pipeline()).run(bind_sizes(k.function(), {}), info);
  int64_t bytes = 0;
  for (const Buffer& b : lowered.body.as<ir::Kernel>()->buffers)
    if (b->scope == Scope::Shared) bytes += int64_t(storage_bytes(b->dtype, *b.const_numel()));
  return bytes;
}

}  // namespace

TEST_CASE("fit_to_device: flash_attention's default tiles shrink to fit 32 KiB, sizes and the user's tiles stay") {
  const Sample& s = *find("flash_attention");
  const TargetInfo info = small_gpu(32 * 1024);
  Params p = resolve(s, {{"S", 257}, {"B", 1}, {"H", 2}, {"HKV", 1}});
  REQUIRE(largest_shared_bytes(s.build(p, f16), info) > 32 * 1024);  // the defaults do not fit

  Params fitted = fit_to_device(s, p, f16, info, gpu_pipeline(), {"S", "B", "H", "HKV"});
  CHECK(fitted.at("S") == 257);
  CHECK(fitted.at("D") == p.at("D"));
  CHECK(fitted.at("block_M") * fitted.at("block_N") < p.at("block_M") * p.at("block_N"));
  CHECK(largest_shared_bytes(s.build(fitted, f16), info) <= 32 * 1024);

  // A tile the user set stays, even where it alone cannot fit: the compile then says so.
  Params user = resolve(s, {{"block_N", 64}});
  Params kept = fit_to_device(s, user, f16, info, gpu_pipeline(), {"block_N"});
  CHECK(kept.at("block_N") == 64);
}

TEST_CASE("fit_to_device: tiles that fit are left as they are") {
  const Sample& s = *find("gemm");
  const TargetInfo info = small_gpu(227 * 1024);
  Params p = resolve(s, {});
  CHECK(fit_to_device(s, p, f16, info, gpu_pipeline(), {}) == p);
}

TEST_CASE("fit_to_device: with placed shared memory (cuda, hip) the placements count, padding included") {
  // The GPU source targets' pipeline: rows padded, then each buffer placed in one allocation,
  // which refuses a kernel over the limit. Fitting measures the placements and shrinks until
  // they fit; the fitted kernel then lowers, placements within the limit.
  std::vector<PassEntry> pipeline = gpu_pipeline();
  pipeline.push_back({"pad_shared_tiles", pad_shared_tiles});
  pipeline.push_back({"place_shared_memory", place_shared_memory});
  TargetInfo info = test::sm80();
  info.shared_mem_bytes = 40 * 1024;
  const Sample& s = *find("flash_attention");
  Params p = resolve(s, {{"S", 257}, {"B", 1}, {"H", 2}, {"HKV", 1}});
  CHECK_THROWS_AS(PassManager(pipeline).run(bind_sizes(s.build(p, f16).function(), {}), info), Error);
  Params fitted = fit_to_device(s, p, f16, info, pipeline, {"S", "B", "H", "HKV"});
  CHECK(fitted.at("block_M") * fitted.at("block_N") < p.at("block_M") * p.at("block_N"));
  Function lowered = PassManager(pipeline).run(bind_sizes(s.build(fitted, f16).function(), {}), info);
  int64_t end = 0;
  for (const Buffer& b : lowered.body.as<ir::Kernel>()->buffers)
    if (b->scope == Scope::Shared) {
      REQUIRE(b->placed());
      end = std::max(end, b->placed_offset + b->placed_bytes);
    }
  CHECK(end > 0);
  CHECK(end <= info.shared_mem_bytes);
}
