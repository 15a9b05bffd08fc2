// Physical devices: what each offers, in the order select() should prefer them, and the probe.
#include "vk_physical_device.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <type_traits>

#include "tilegen/ir/error.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::vulkan {

FeatureChain& FeatureChain::operator=(const FeatureChain& o) {
  core = o.core;
  v11 = o.v11;
  v12 = o.v12;
  v13 = o.v13;
  atomic_float = o.atomic_float;
  coopmat = o.coopmat;
  link(o.with_atomic_float, o.with_coopmat);
  return *this;
}

void FeatureChain::link(bool atomic_float_ext, bool coopmat_ext) {
  with_atomic_float = atomic_float_ext;
  with_coopmat = coopmat_ext;
  void** tail = &v13.pNext;
  core.pNext = &v11;
  v11.pNext = &v12;
  v12.pNext = &v13;
  v13.pNext = nullptr;
  atomic_float.pNext = nullptr;
  coopmat.pNext = nullptr;
  if (atomic_float_ext) *tail = &atomic_float, tail = &atomic_float.pNext;
  if (coopmat_ext) *tail = &coopmat;
}

namespace {

const char* component_name(VkComponentTypeKHR t) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_KHR: return "f32";
    case VK_COMPONENT_TYPE_SINT8_KHR: return "i8";
    case VK_COMPONENT_TYPE_SINT32_KHR: return "i32";
    default: return nullptr;  // bf16 needs VK_KHR_shader_bfloat16, which the codegen does not emit
  }
}

// The subgroup-scope shapes the device reports, as matrix-unit registry names. Only units the
// registry knows, with as many lanes as the subgroup has, reach the passes:
//   {M 16, N 16, K 16, A f16, B f16, C f32, Result f32, subgroup} → "coopmat_16x16x16_f16_f32"
std::vector<std::string> coopmat_units(const Instance& in, const PhysicalDevice& d) {
  std::vector<std::string> out;
  if (!d.has_coopmat || !d.supported.coopmat.cooperativeMatrix ||
      !in.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
    return out;
  uint32_t n = 0;
  if (in.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(d.handle, &n, nullptr) != VK_SUCCESS) return out;
  std::vector<VkCooperativeMatrixPropertiesKHR> props(
      n, vk_struct<VkCooperativeMatrixPropertiesKHR>(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR));
  if (in.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(d.handle, &n, props.data()) != VK_SUCCESS)
    return out;
  std::set<std::string> names;
  for (const auto& p : props) {
    const char *a = component_name(p.AType), *c = component_name(p.CType);
    if (p.scope != VK_SCOPE_SUBGROUP_KHR || p.AType != p.BType || p.CType != p.ResultType || !a || !c ||
        p.saturatingAccumulation)
      continue;
    std::string name = "coopmat_" + std::to_string(p.MSize) + "x" + std::to_string(p.NSize) + "x" +
                       std::to_string(p.KSize) + "_" + a + "_" + c;
    const MatrixUnit* u = find_matrix_unit(name);
    if (u && u->group_size == int(d.features.subgroup_size)) names.insert(name);
  }
  return {names.begin(), names.end()};
}

std::vector<VkQueueFamilyProperties> queue_families(const Instance& in, VkPhysicalDevice h) {
  uint32_t n = 0;
  in.vkGetPhysicalDeviceQueueFamilyProperties(h, &n, nullptr);
  std::vector<VkQueueFamilyProperties> q(n);
  in.vkGetPhysicalDeviceQueueFamilyProperties(h, &n, q.data());
  return q;
}

void use_queue_family(PhysicalDevice& d, uint32_t family, const VkQueueFamilyProperties& q) {
  d.queue_family = family;
  d.timestamp_bits = q.timestampValidBits;
  d.timestamps = d.timestamp_bits > 0 && d.limits.timestampPeriod > 0;
}

// A compute queue family that writes timestamps, preferring one without graphics (NVIDIA's
// async-compute family); false when the device has no compute queue at all.
bool choose_queue_family(const Instance& in, PhysicalDevice& d) {
  std::vector<VkQueueFamilyProperties> q = queue_families(in, d.handle);
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < q.size(); ++i) {
    if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0) continue;
    int score = (q[i].timestampValidBits ? 2 : 0) + ((q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) ? 0 : 1);
    if (score > best_score) best = int(i), best_score = score;
  }
  if (best < 0) return false;
  use_queue_family(d, uint32_t(best), q[std::size_t(best)]);
  return true;
}

std::set<std::string> device_extensions(const Instance& in, VkPhysicalDevice h) {
  uint32_t n = 0;
  in.vkEnumerateDeviceExtensionProperties(h, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> ext(n);
  in.vkEnumerateDeviceExtensionProperties(h, nullptr, &n, ext.data());
  std::set<std::string> out;
  for (const auto& e : ext) out.insert(e.extensionName);
  return out;
}

// Features for the code generator from the device's properties and feature structures.
void fill_features(const Instance& in, PhysicalDevice& d, const VkPhysicalDeviceSubgroupProperties& sg) {
  const FeatureChain& s = d.supported;
  Features& f = d.features;
  f.subgroup_size = sg.subgroupSize;
  f.float16_storage = s.v11.storageBuffer16BitAccess;
  f.int8_storage = s.v12.storageBuffer8BitAccess;
  f.float16_arith = s.v12.shaderFloat16;
  f.int64 = s.core.features.shaderInt64;
  f.int16 = s.core.features.shaderInt16;
  f.int8 = s.v12.shaderInt8;
  f.float64 = s.core.features.shaderFloat64;
  const VkSubgroupFeatureFlags ops =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  f.subgroup_arith =
      (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg.supportedOperations & ops) == ops;
  f.float_atomic_add = d.has_atomic_float && s.atomic_float.shaderBufferFloat32AtomicAdd;
  f.max_shared_bytes = d.limits.maxComputeSharedMemorySize;
  f.max_threads = std::min(d.limits.maxComputeWorkGroupInvocations, d.limits.maxComputeWorkGroupSize[0]);
  for (int i = 0; i < 3; ++i) f.max_grid[i] = d.limits.maxComputeWorkGroupCount[i];
  f.coopmat_units = coopmat_units(in, d);  // CompileOptions param coopmat=0 leaves them unused
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

PhysicalDevice describe(const Instance& in, VkPhysicalDevice h) {
  PhysicalDevice d;
  d.handle = h;
  VkPhysicalDeviceVulkan13Properties p13 =
      vk_struct<VkPhysicalDeviceVulkan13Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES);
  VkPhysicalDeviceSubgroupProperties sg = vk_struct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &p13);
  VkPhysicalDeviceProperties2 props =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg);
  in.vkGetPhysicalDeviceProperties2(h, &props);
  d.name = props.properties.deviceName;
  d.api_version = props.properties.apiVersion;
  d.type = props.properties.deviceType;
  d.software = props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  d.discrete = props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  d.limits = props.properties.limits;
  static const char* hex = "0123456789abcdef";
  for (uint8_t b : props.properties.pipelineCacheUUID) d.cache_id += {hex[b >> 4], hex[b & 15]};
  d.cache_id +=
      "-" + std::to_string(props.properties.vendorID) + "-" + std::to_string(props.properties.deviceID);
  d.timestamp_period_ns = d.limits.timestampPeriod;
  if (d.api_version < VK_API_VERSION_1_3) {
    d.unusable =
        "device " + d.name + " lacks Vulkan 1.3 (its driver reports " + version_text(d.api_version) + ")";
    return d;
  }
  std::set<std::string> ext = device_extensions(in, h);
  d.has_atomic_float = ext.count(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME) > 0;
  d.has_coopmat = ext.count(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) > 0;
  d.supported.link(d.has_atomic_float, d.has_coopmat);
  in.vkGetPhysicalDeviceFeatures2(h, &d.supported.core);
  d.min_subgroup = p13.minSubgroupSize;
  d.max_subgroup = p13.maxSubgroupSize;
  d.require_subgroup_size = d.supported.v13.subgroupSizeControl &&
                            p13.minSubgroupSize != p13.maxSubgroupSize &&
                            (p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  if (!d.supported.v12.vulkanMemoryModel)
    d.unusable = "device " + d.name + " lacks vulkanMemoryModel, which every module tilegen emits uses";
  else if (!choose_queue_family(in, d))
    d.unusable = "device " + d.name + " has no compute queue";
  fill_features(in, d, sg);
  d.info = target_info(d.features, d.name, d.software);
  return d;
}

// Best first: the passes and select() see hardware GPUs before software ones.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 4;
    default: return 3;
  }
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// TILEGEN_VULKAN_DEVICE=1 keeps the second device of the ordered list; =nvidia keeps those
// whose name contains "nvidia" (any case).
std::vector<PhysicalDevice> apply_device_filter(std::vector<PhysicalDevice> all) {
  const char* env = std::getenv("TILEGEN_VULKAN_DEVICE");
  if (!env || !*env) return all;
  std::string want = env;
  std::vector<PhysicalDevice> kept;
  bool numeric = std::all_of(want.begin(), want.end(),
                             [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  for (std::size_t i = 0; i < all.size(); ++i)
    if (numeric ? std::to_string(i) == want : lower(all[i].name).find(lower(want)) != std::string::npos)
      kept.push_back(std::move(all[i]));
  if (kept.empty()) {
    std::string names;
    for (std::size_t i = 0; i < all.size(); ++i)
      names += (i ? ", " : "") + std::to_string(i) + ": " + all[i].name;
    throw Error("TILEGEN_VULKAN_DEVICE=" + want + " matches no Vulkan device (devices: " +
                (names.empty() ? "none" : names) + "); give an index or part of a name");
  }
  return kept;
}

// Where a Vulkan feature structure's VkBool32 members begin: after sType and pNext (the core
// VkPhysicalDeviceFeatures has neither).
template <typename T>
constexpr std::size_t first_feature() {
  if constexpr (std::is_same_v<T, VkPhysicalDeviceFeatures>)
    return 0;
  else
    return offsetof(T, pNext) + sizeof(void*);
}
template <typename T>
constexpr std::size_t kFirstFeature = first_feature<T>();

// a &= b over the VkBool32 members of a Vulkan feature structure (those after sType and pNext).
template <typename T>
void and_features(T& a, const T& b) {
  constexpr std::size_t first = kFirstFeature<T>;
  static_assert((sizeof(T) - first) % sizeof(VkBool32) == 0);
  for (std::size_t off = first; off < sizeof(T); off += sizeof(VkBool32)) {
    VkBool32 x, y;
    std::memcpy(&x, reinterpret_cast<const char*>(&a) + off, sizeof x);
    std::memcpy(&y, reinterpret_cast<const char*>(&b) + off, sizeof y);
    x = x && y;
    std::memcpy(reinterpret_cast<char*>(&a) + off, &x, sizeof x);
  }
}

// The features a VkDeviceCreateInfo enables, from pEnabledFeatures and its pNext chain: the
// Vulkan 1.1/1.2/1.3 structures, and the older per-feature structures they absorbed.
FeatureChain enabled_features(const VkDeviceCreateInfo& ci) {
  FeatureChain e;
  if (ci.pEnabledFeatures) e.core.features = *ci.pEnabledFeatures;
  for (auto* p = static_cast<const VkBaseInStructure*>(ci.pNext); p; p = p->pNext) {
    switch (int(p->sType)) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        e.core.features = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(p)->features;
        break;
#define TG_COPY(type, part)                                           \
  std::memcpy(reinterpret_cast<char*>(&e.part) + kFirstFeature<type>, \
              reinterpret_cast<const char*>(p) + kFirstFeature<type>, sizeof(type) - kFirstFeature<type>);
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        TG_COPY(VkPhysicalDeviceVulkan11Features, v11) break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES:
        TG_COPY(VkPhysicalDeviceVulkan12Features, v12) break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES:
        TG_COPY(VkPhysicalDeviceVulkan13Features, v13) break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT:
        TG_COPY(VkPhysicalDeviceShaderAtomicFloatFeaturesEXT, atomic_float) break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR:
        TG_COPY(VkPhysicalDeviceCooperativeMatrixFeaturesKHR, coopmat) break;
#undef TG_COPY
#define TG_FROM(type, field, part) e.part.field |= reinterpret_cast<const type*>(p)->field;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        TG_FROM(VkPhysicalDevice16BitStorageFeatures, storageBuffer16BitAccess, v11)
        TG_FROM(VkPhysicalDevice16BitStorageFeatures, uniformAndStorageBuffer16BitAccess, v11)
        TG_FROM(VkPhysicalDevice16BitStorageFeatures, storagePushConstant16, v11)
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        TG_FROM(VkPhysicalDevice8BitStorageFeatures, storageBuffer8BitAccess, v12)
        TG_FROM(VkPhysicalDevice8BitStorageFeatures, uniformAndStorageBuffer8BitAccess, v12)
        TG_FROM(VkPhysicalDevice8BitStorageFeatures, storagePushConstant8, v12)
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES:
        TG_FROM(VkPhysicalDeviceShaderFloat16Int8Features, shaderFloat16, v12)
        TG_FROM(VkPhysicalDeviceShaderFloat16Int8Features, shaderInt8, v12)
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES:
        TG_FROM(VkPhysicalDeviceVulkanMemoryModelFeatures, vulkanMemoryModel, v12)
        TG_FROM(VkPhysicalDeviceVulkanMemoryModelFeatures, vulkanMemoryModelDeviceScope, v12)
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES:
        TG_FROM(VkPhysicalDeviceSubgroupSizeControlFeatures, subgroupSizeControl, v13)
        TG_FROM(VkPhysicalDeviceSubgroupSizeControlFeatures, computeFullSubgroups, v13)
        break;
#undef TG_FROM
      default: break;
    }
  }
  return e;
}

}  // namespace

PhysicalDevice describe_enabled(const Instance& in, VkPhysicalDevice h, const VkDeviceCreateInfo& ci,
                                uint32_t family) {
  PhysicalDevice d = describe(in, h);
  if (d.api_version < VK_API_VERSION_1_3) return d;  // unusable says why
  std::set<std::string> ext;
  for (uint32_t i = 0; i < ci.enabledExtensionCount; ++i) ext.insert(ci.ppEnabledExtensionNames[i]);
  d.has_atomic_float = d.has_atomic_float && ext.count(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  d.has_coopmat = d.has_coopmat && ext.count(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  d.push_descriptors = ext.count(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) > 0;
  FeatureChain e = enabled_features(ci);
  and_features(d.supported.core.features, e.core.features);
  and_features(d.supported.v11, e.v11);
  and_features(d.supported.v12, e.v12);
  and_features(d.supported.v13, e.v13);
  and_features(d.supported.atomic_float, e.atomic_float);
  and_features(d.supported.coopmat, e.coopmat);
  d.supported.link(d.has_atomic_float, d.has_coopmat);
  // What every kernel needs, so a device created without it is refused whole.
  std::vector<std::string> missing;
  if (!d.supported.v12.vulkanMemoryModel) missing.push_back("the feature vulkanMemoryModel");
  if (!d.push_descriptors) missing.push_back("the extension " VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (d.require_subgroup_size && !d.supported.v13.subgroupSizeControl)  // sizes vary: pipelines pin one
    missing.push_back("the feature subgroupSizeControl");
  std::vector<VkQueueFamilyProperties> q = queue_families(in, h);
  bool listed = false;
  for (uint32_t i = 0; i < ci.queueCreateInfoCount; ++i)
    listed |= ci.pQueueCreateInfos[i].queueFamilyIndex == family;
  if (!missing.empty()) {
    std::string all;
    for (std::size_t i = 0; i < missing.size(); ++i)
      all += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
    d.unusable = "the application's device " + d.name + " was created without " + all +
                 ", which tilegen needs: enable " + (missing.size() > 1 ? "them" : "it") +
                 " in the VkDeviceCreateInfo it is created with";
  } else if (family >= q.size() || !(q[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
    d.unusable = "queue family " + std::to_string(family) + " of device " + d.name +
                 (family >= q.size() ? " does not exist" : " has no compute") +
                 "; give VulkanDevice::queue_family a family with VK_QUEUE_COMPUTE_BIT";
  } else if (!listed) {
    d.unusable = "the device was created with no queue of family " + std::to_string(family) +
                 " (VulkanDevice::queue_family); give the family of VulkanDevice::queue";
  }
  if (d.unusable.empty()) use_queue_family(d, family, q[family]);
  VkPhysicalDeviceVulkan13Properties p13 =
      vk_struct<VkPhysicalDeviceVulkan13Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES);
  VkPhysicalDeviceSubgroupProperties sg = vk_struct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &p13);
  VkPhysicalDevicePushDescriptorPropertiesKHR push = vk_struct<VkPhysicalDevicePushDescriptorPropertiesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR, &sg);
  VkPhysicalDeviceProperties2 props =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &push);
  in.vkGetPhysicalDeviceProperties2(h, &props);
  d.max_push_descriptors = d.push_descriptors ? push.maxPushDescriptors : 0;
  fill_features(in, d, sg);
  d.info = target_info(d.features, d.name, d.software);
  return d;
}

std::vector<PhysicalDevice> enumerate_devices() {
  const Instance& in = instance();
  if (!in.error.empty()) throw Error(in.error);
  uint32_t n = 0;
  check(in.vkEnumeratePhysicalDevices(in.handle, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(n);
  check(in.vkEnumeratePhysicalDevices(in.handle, &n, handles.data()), "vkEnumeratePhysicalDevices");
  handles.resize(n);
  std::vector<std::pair<int, PhysicalDevice>> ranked;
  for (VkPhysicalDevice h : handles) {
    PhysicalDevice d = describe(in, h);
    int rank = type_rank(d.type);
    ranked.emplace_back(rank, std::move(d));
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<PhysicalDevice> out;
  for (auto& r : ranked) out.push_back(std::move(r.second));
  return apply_device_filter(std::move(out));
}

ProbeResult probe_devices(std::vector<PhysicalDevice>* usable) {
  ProbeResult r;
  std::vector<PhysicalDevice> all;
  try {
    all = enumerate_devices();
  } catch (const Error& e) {
    r.reason = e.message();
    return r;
  }
  std::string why;
  for (PhysicalDevice& d : all) {
    if (!d.unusable.empty()) {
      why += (why.empty() ? "" : "; ") + d.unusable;
      continue;
    }
    r.devices.push_back(d.info);
    if (usable) usable->push_back(std::move(d));
  }
  r.available = !r.devices.empty();
  if (!r.available) r.reason = all.empty() ? "no Vulkan device" : why;
  return r;
}

}  // namespace tg::vulkan
