// A Vulkan device made the way an application makes its own, for the tests of
// Target::adopt_vulkan: the loader opened with dlopen (the test binary links no Vulkan library),
// an instance with the Khronos validation layer and its synchronization validation where the
// layer is installed (every message kept, so a test fails on a hazard tilegen's barriers leave),
// a device with the features the options ask for, and the few commands a test records itself.
#pragma once
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg::testing {

/// A Vulkan structure with its sType set and every other member zero.
template <typename T>
T vk_init(VkStructureType type) {
  T s{};
  s.sType = type;
  return s;
}

/// The validation layer's warnings and errors on the application's instance.
struct ValidationLog {
  std::mutex mu;
  std::vector<std::string> messages;
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    out.swap(messages);
    return out;
  }
};

inline VKAPI_ATTR VkBool32 VKAPI_CALL
keep_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                        const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  auto* log = static_cast<ValidationLog*>(user);
  std::lock_guard<std::mutex> lock(log->mu);
  log->messages.emplace_back(data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

/// What the application's device is created with.
struct AppDeviceOptions {
  bool push_descriptor = true;    // VK_KHR_push_descriptor
  bool memory_model = true;       // vulkanMemoryModel
  bool storage_16bit = true;      // storageBuffer16BitAccess (f16 tensors)
  bool features_in_chain = true;  // VkPhysicalDeviceVulkan1xFeatures; false: the older structures
  uint32_t queues = 2;            // of the compute family (at most what it has)
  std::string device_name;        // the physical device to take (empty: the first with 1.3)
};

/// The loader, an instance, a physical device, a device and its queues, as an application holds
/// them; `skip` says why there are none. Destroyed in the reverse order.
class AppVulkan {
 public:
  explicit AppVulkan(const AppDeviceOptions& opt = {}) {
    lib_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      skip = "libvulkan.so.1 not found";
      return;
    }
    gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib_, "vkGetInstanceProcAddr"));
    if (!create_instance()) return;
    if (!pick_device(opt)) return;
    create_device(opt);
  }
  ~AppVulkan() {
    if (device) {
      fn<PFN_vkDeviceWaitIdle>("vkDeviceWaitIdle")(device);
      if (pool) fn<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(device, pool, nullptr);
      fn<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
    }
    if (messenger)
      ifn<PFN_vkDestroyDebugUtilsMessengerEXT>("vkDestroyDebugUtilsMessengerEXT")(instance, messenger,
                                                                                  nullptr);
    if (instance) ifn<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
    if (lib_) dlclose(lib_);
  }
  AppVulkan(const AppVulkan&) = delete;
  AppVulkan& operator=(const AppVulkan&) = delete;

  template <typename F>
  F ifn(const char* name) const {
    return reinterpret_cast<F>(gipa(instance, name));
  }
  template <typename F>
  F fn(const char* name) const {
    return reinterpret_cast<F>(ifn<PFN_vkGetDeviceProcAddr>("vkGetDeviceProcAddr")(device, name));
  }

  /// What Target::adopt_vulkan takes; create_info points into this object.
  tg::VulkanDevice handles() const {
    tg::VulkanDevice d;
    d.instance = instance;
    d.api_version = VK_API_VERSION_1_3;
    d.physical_device = physical;
    d.device = device;
    d.create_info = &create_info;
    d.queue_family = family;
    d.queue = queues.at(0);
    d.get_instance_proc_addr = reinterpret_cast<void*>(gipa);
    return d;
  }

  /// A primary command buffer of the compute family, begun (recording) when `begin`.
  VkCommandBuffer command_buffer(bool begin = true) {
    VkCommandBufferAllocateInfo ai =
        vk_init<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check(fn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(device, &ai, &cmd), "allocate");
    if (begin) {
      VkCommandBufferBeginInfo bi =
          vk_init<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(fn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cmd, &bi), "begin");
    }
    return cmd;
  }
  /// End `cmd`, submit it to `queue` and wait for it.
  void submit_and_wait(VkCommandBuffer cmd, VkQueue queue) {
    check(fn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cmd), "end");
    VkFenceCreateInfo fi = vk_init<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    VkFence fence = VK_NULL_HANDLE;
    check(fn<PFN_vkCreateFence>("vkCreateFence")(device, &fi, nullptr, &fence), "fence");
    VkSubmitInfo si = vk_init<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(fn<PFN_vkQueueSubmit>("vkQueueSubmit")(queue, 1, &si, fence), "submit");
    check(fn<PFN_vkWaitForFences>("vkWaitForFences")(device, 1, &fence, VK_TRUE, UINT64_MAX), "wait");
    fn<PFN_vkDestroyFence>("vkDestroyFence")(device, fence, nullptr);
    fn<PFN_vkFreeCommandBuffers>("vkFreeCommandBuffers")(device, pool, 1, &cmd);
  }
  /// A buffer of the application's own: storage and transfer usage, host-visible coherent memory,
  /// mapped.
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
  };
  Buffer make_buffer(VkDeviceSize bytes) {
    Buffer b;
    VkBufferCreateInfo bi = vk_init<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = bytes;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    check(fn<PFN_vkCreateBuffer>("vkCreateBuffer")(device, &bi, nullptr, &b.buffer), "buffer");
    VkMemoryRequirements req;
    fn<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements")(device, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    ifn<PFN_vkGetPhysicalDeviceMemoryProperties>("vkGetPhysicalDeviceMemoryProperties")(physical, &mp);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo ai = vk_init<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && ai.memoryTypeIndex == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
        ai.memoryTypeIndex = i;
    check(fn<PFN_vkAllocateMemory>("vkAllocateMemory")(device, &ai, nullptr, &b.memory), "memory");
    check(fn<PFN_vkBindBufferMemory>("vkBindBufferMemory")(device, b.buffer, b.memory, 0), "bind");
    check(fn<PFN_vkMapMemory>("vkMapMemory")(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "map");
    return b;
  }
  void destroy_buffer(Buffer& b) {
    fn<PFN_vkDestroyBuffer>("vkDestroyBuffer")(device, b.buffer, nullptr);
    fn<PFN_vkFreeMemory>("vkFreeMemory")(device, b.memory, nullptr);
    b = Buffer{};
  }

  /// A barrier from everything before to everything after, the host's reads included: what an
  /// application records after its own writes before it reads them back.
  void full_barrier(VkCommandBuffer cmd) const {
    VkMemoryBarrier mb = vk_init<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
    fn<PFN_vkCmdPipelineBarrier>("vkCmdPipelineBarrier")(
        cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  std::string skip;  // why there is no device; empty when there is
  bool validation = false;
  ValidationLog log;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  std::string physical_name;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  std::vector<VkQueue> queues;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkDeviceCreateInfo create_info = vk_init<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);

 private:
  static void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw std::runtime_error(std::string("test's Vulkan call failed: ") + what);
  }

  bool create_instance() {
    auto enumerate_layers = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
        gipa(nullptr, "vkEnumerateInstanceLayerProperties"));
    uint32_t n = 0;
    enumerate_layers(&n, nullptr);
    std::vector<VkLayerProperties> layers(n);
    enumerate_layers(&n, layers.data());
    const char* layer = "VK_LAYER_KHRONOS_validation";
    for (const auto& l : layers) validation |= std::strcmp(l.layerName, layer) == 0;
    VkApplicationInfo app = vk_init<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    app.pApplicationName = "tilegen test application";
    app.apiVersion = VK_API_VERSION_1_3;
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features =
        vk_init<VkValidationFeaturesEXT>(VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT);
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    VkInstanceCreateInfo ci = vk_init<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    ci.pApplicationInfo = &app;
    if (validation) {
      ci.pNext = &features;
      ci.enabledLayerCount = 1;
      ci.ppEnabledLayerNames = &layer;
      ci.enabledExtensionCount = 1;
      ci.ppEnabledExtensionNames = &ext;
    }
    auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    if (create(&ci, nullptr, &instance) != VK_SUCCESS) {
      instance = VK_NULL_HANDLE;
      skip = "vkCreateInstance failed (no Vulkan 1.3 driver?)";
      return false;
    }
    if (validation) {
      VkDebugUtilsMessengerCreateInfoEXT mi = vk_init<VkDebugUtilsMessengerCreateInfoEXT>(
          VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
      mi.messageSeverity =
          VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      mi.messageType =
          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
      mi.pfnUserCallback = keep_validation_message;
      mi.pUserData = &log;
      ifn<PFN_vkCreateDebugUtilsMessengerEXT>("vkCreateDebugUtilsMessengerEXT")(instance, &mi, nullptr,
                                                                                &messenger);
    }
    return true;
  }

  bool pick_device(const AppDeviceOptions& opt) {
    uint32_t n = 0;
    auto enumerate = ifn<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
    enumerate(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> all(n);
    enumerate(instance, &n, all.data());
    for (VkPhysicalDevice p : all) {
      VkPhysicalDeviceProperties props;
      ifn<PFN_vkGetPhysicalDeviceProperties>("vkGetPhysicalDeviceProperties")(p, &props);
      if (props.apiVersion < VK_API_VERSION_1_3) continue;
      if (!opt.device_name.empty() && opt.device_name != props.deviceName) continue;
      physical = p;
      physical_name = props.deviceName;
      break;
    }
    if (!physical) {
      skip = "no Vulkan 1.3 device" + (opt.device_name.empty() ? "" : " named " + opt.device_name);
      return false;
    }
    uint32_t qn = 0;
    auto families =
        ifn<PFN_vkGetPhysicalDeviceQueueFamilyProperties>("vkGetPhysicalDeviceQueueFamilyProperties");
    families(physical, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> q(qn);
    families(physical, &qn, q.data());
    for (uint32_t i = 0; i < qn; ++i)
      if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        family = i;
        family_queues_ = q[i].queueCount;
        return true;
      }
    skip = "no compute queue family";
    return false;
  }

  void create_device(const AppDeviceOptions& opt) {
    // What the device supports, then switched off where the options say.
    v13_.pNext = nullptr;
    v12_.pNext = &v13_;
    v11_.pNext = &v12_;
    features2_.pNext = &v11_;
    ifn<PFN_vkGetPhysicalDeviceFeatures2>("vkGetPhysicalDeviceFeatures2")(physical, &features2_);
    v12_.vulkanMemoryModel = v12_.vulkanMemoryModel && opt.memory_model;
    v12_.vulkanMemoryModelDeviceScope = v12_.vulkanMemoryModelDeviceScope && opt.memory_model;
    v11_.storageBuffer16BitAccess = v11_.storageBuffer16BitAccess && opt.storage_16bit;
    v11_.uniformAndStorageBuffer16BitAccess = v11_.uniformAndStorageBuffer16BitAccess && opt.storage_16bit;
    v11_.storagePushConstant16 = v11_.storagePushConstant16 && opt.storage_16bit;
    if (opt.features_in_chain) {
      create_info.pNext = &features2_;
    } else {  // the Vulkan 1.0/1.1 way: per-feature structures, pEnabledFeatures
      memory_model_.vulkanMemoryModel = v12_.vulkanMemoryModel;
      storage16_.storageBuffer16BitAccess = v11_.storageBuffer16BitAccess;
      float16_.shaderFloat16 = v12_.shaderFloat16;
      storage16_.pNext = &float16_;
      memory_model_.pNext = &storage16_;
      create_info.pNext = &memory_model_;
      create_info.pEnabledFeatures = &features2_.features;
    }
    priorities_.assign(std::min(opt.queues, family_queues_), 1.0f);
    queue_info_.queueFamilyIndex = family;
    queue_info_.queueCount = uint32_t(priorities_.size());
    queue_info_.pQueuePriorities = priorities_.data();
    create_info.queueCreateInfoCount = 1;
    create_info.pQueueCreateInfos = &queue_info_;
    if (opt.push_descriptor) extensions_.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    create_info.enabledExtensionCount = uint32_t(extensions_.size());
    create_info.ppEnabledExtensionNames = extensions_.data();
    auto create = ifn<PFN_vkCreateDevice>("vkCreateDevice");
    if (create(physical, &create_info, nullptr, &device) != VK_SUCCESS) {
      device = VK_NULL_HANDLE;
      skip = "vkCreateDevice failed on " + physical_name;
      return;
    }
    for (uint32_t i = 0; i < queue_info_.queueCount; ++i) {
      VkQueue h = VK_NULL_HANDLE;
      fn<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(device, family, i, &h);
      queues.push_back(h);
    }
    VkCommandPoolCreateInfo pi = vk_init<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pi.queueFamilyIndex = family;
    check(fn<PFN_vkCreateCommandPool>("vkCreateCommandPool")(device, &pi, nullptr, &pool), "command pool");
  }

  void* lib_ = nullptr;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  uint32_t family_queues_ = 0;
  VkPhysicalDeviceFeatures2 features2_ =
      vk_init<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  VkPhysicalDeviceVulkan11Features v11_ =
      vk_init<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  VkPhysicalDeviceVulkan12Features v12_ =
      vk_init<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceVulkan13Features v13_ =
      vk_init<VkPhysicalDeviceVulkan13Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model_ =
      vk_init<VkPhysicalDeviceVulkanMemoryModelFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  VkPhysicalDevice16BitStorageFeatures storage16_ =
      vk_init<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  VkPhysicalDeviceShaderFloat16Int8Features float16_ = vk_init<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  std::vector<float> priorities_;
  VkDeviceQueueCreateInfo queue_info_ =
      vk_init<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  std::vector<const char*> extensions_;
};

}  // namespace tg::testing
