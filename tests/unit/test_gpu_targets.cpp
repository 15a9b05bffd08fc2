// gpu_targets.h's models of the NVIDIA and AMD GPUs against the plugins' own TargetInfo, field
// by field, where the build has the plugins' code generators; and the vendors' facts themselves.
#include <doctest/doctest.h>

#include <algorithm>

#include "gpu_targets.h"
#include "tilegen/ir/error.h"

using namespace tg;

#if defined(TILEGEN_HAVE_CUDA_CODEGEN) || defined(TILEGEN_HAVE_HIP_CODEGEN)
namespace {

void check_same(const TargetInfo& model, const TargetInfo& vendor) {
  INFO(vendor.target << " " << vendor.arch);
  CHECK(model.target == vendor.target);
  CHECK(model.arch == vendor.arch);
  CHECK(model.device_name == vendor.device_name);
  CHECK(model.software == vendor.software);
  CHECK(model.is_cpu == vendor.is_cpu);
  CHECK(model.portable == vendor.portable);
  CHECK(model.warp_size == vendor.warp_size);
  CHECK(model.max_threads == vendor.max_threads);
  CHECK(model.shared_mem_bytes == vendor.shared_mem_bytes);
  CHECK(model.vector_bytes == vendor.vector_bytes);
  CHECK(model.async_copy == vendor.async_copy);
  CHECK(model.lane_shuffle == vendor.lane_shuffle);
  CHECK(model.max_grid == vendor.max_grid);
  CHECK(model.matrix_units == vendor.matrix_units);
}

}  // namespace
#endif

#ifdef TILEGEN_HAVE_CUDA_CODEGEN
TEST_CASE("gpu targets: the sm_80 and sm_90 models are the cuda plugin's TargetInfo") {
  for (int sm : {80, 90}) check_same(test::model_nvidia(sm), cuda::nvidia_target_info(sm));
  check_same(test::model_nvidia(90, true), cuda::nvidia_target_info(90, true));
  CHECK(cuda::nvidia_target_info(80).shared_mem_bytes == 163 * 1024);
  CHECK(cuda::nvidia_target_info(90).shared_mem_bytes == 227 * 1024);
}
#endif

#ifdef TILEGEN_HAVE_HIP_CODEGEN
TEST_CASE("gpu targets: the gfx90a and gfx942 models are the hip plugin's TargetInfo") {
  for (const char* gfx : {"gfx90a", "gfx942"}) check_same(test::model_cdna(gfx), hip::amd_target_info(gfx));
}

TEST_CASE("amd_target_info: wave64, 64 KiB LDS, fp8 MFMA on gfx942 only, other archs rejected") {
  TargetInfo a = hip::amd_target_info("gfx90a"), b = hip::amd_target_info("gfx942");
  CHECK(a.warp_size == 64);
  CHECK(a.shared_mem_bytes == 64 * 1024);
  auto has = [](const TargetInfo& i, const std::string& u) {
    return std::find(i.matrix_units.begin(), i.matrix_units.end(), u) != i.matrix_units.end();
  };
  CHECK(has(a, "mfma_f32_16x16x16_f16"));
  CHECK(has(a, "mfma_f32_32x32x8_bf16"));
  CHECK_FALSE(has(a, "mfma_f32_16x16x32_fp8"));
  CHECK(has(b, "mfma_f32_16x16x32_fp8"));
  for (const std::string& u : b.matrix_units)
    CHECK(std::count(hip::mfma_units().begin(), hip::mfma_units().end(), u) == 1);
  CHECK_THROWS_WITH_AS(hip::amd_target_info("gfx1100"), doctest::Contains("gfx90a"), Error);
}
#endif
