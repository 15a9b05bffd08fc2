// What one Vulkan physical device offers tilegen: the codegen Features (spirv_codegen.h), the
// TargetInfo the passes see, the compute queue family, and the feature structures to enable.
//
//   llvmpipe (lavapipe)  → software, "vk1.3;sg=8;f16s;i8s;f16;i64;f64;sgops;fadd;smem=32768;thr=1024"
//   NVIDIA H200          → hardware, "...;sg=32;...;cm=coopmat_16x16x16_f16_f16,coopmat_16x16x16_f16_f32,..."
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "spirv_codegen.h"
#include "tilegen/plugin.h"
#include "vk_loader.h"

namespace tg::vulkan {

/// The feature structures tilegen reads and enables, chained through pNext. A copy relinks its
/// own chain (the pointers point into the object itself).
struct FeatureChain {
  VkPhysicalDeviceFeatures2 core =
      vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  VkPhysicalDeviceVulkan11Features v11 =
      vk_struct<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  VkPhysicalDeviceVulkan12Features v12 =
      vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceVulkan13Features v13 =
      vk_struct<VkPhysicalDeviceVulkan13Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float =
      vk_struct<VkPhysicalDeviceShaderAtomicFloatFeaturesEXT>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat =
      vk_struct<VkPhysicalDeviceCooperativeMatrixFeaturesKHR>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR);
  bool with_atomic_float = false, with_coopmat = false;
  FeatureChain() { link(false, false); }
  FeatureChain(const FeatureChain& o) { *this = o; }
  FeatureChain& operator=(const FeatureChain& o);
  /// Link core → v11 → v12 → v13 [→ atomic_float] [→ coopmat]: the extension structures only
  /// where the device has the extension (a driver may reject structures it does not know).
  void link(bool atomic_float_ext, bool coopmat_ext);
};

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  bool software = false;  // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe, SwiftShader)
  bool discrete = false;  // memory across a bus: device-local memory, copies through staging
  uint32_t api_version = 0;
  std::string cache_id;       // pipelineCacheUUID, vendor and device ids: names the pipeline-cache file
  uint32_t queue_family = 0;  // the compute queue tilegen submits to
  bool timestamps = false;    // the queue family writes timestamps
  uint32_t timestamp_bits = 64;
  float timestamp_period_ns = 1;
  uint32_t min_subgroup = 0, max_subgroup = 0;  // differ where the size is chosen per pipeline
  bool require_subgroup_size = false;           // so pipelines pin Features::subgroup_size
  VkPhysicalDeviceLimits limits{};
  bool has_atomic_float = false, has_coopmat = false;
  bool push_descriptors = false;      // VK_KHR_push_descriptor enabled (adopted devices only)
  uint32_t max_push_descriptors = 0;  // its maxPushDescriptors
  FeatureChain supported;
  Features features;
  TargetInfo info;
  std::string unusable;  // why tilegen cannot use this device; empty when it can
};

/// Every physical device, best first (discrete, integrated, virtual, other, CPU), with
/// TILEGEN_VULKAN_DEVICE applied (an index into this order, or part of the device's name);
/// unusable devices are kept with the reason. Throws tg::Error when the filter matches none.
std::vector<PhysicalDevice> enumerate_devices();

/// The application's device (Target::adopt_vulkan) as tilegen may use it: what describe() finds,
/// less what `ci` (the VkDeviceCreateInfo it was made with) did not enable, features and
/// extensions alike, with queue family `family` (timestamps as that family writes them).
PhysicalDevice describe_enabled(const Instance& in, VkPhysicalDevice h, const VkDeviceCreateInfo& ci,
                                uint32_t family);

/// probe(): the usable devices' TargetInfos, or unavailable with the reason.
ProbeResult probe_devices(std::vector<PhysicalDevice>* usable);

}  // namespace tg::vulkan
