// The Vulkan loader, opened with dlopen("libvulkan.so.1") on first use: the process-wide
// instance (with the Khronos validation layer when TILEGEN_VULKAN_VALIDATION=1 and the layer is
// installed), every entry point as a function pointer, and VkResult → tg::Error.
#pragma once
#include <string>
#include <vector>

#include "vk_khr_cooperative_matrix.h"

namespace tg::vulkan {

/// The loader and the instance. Created once, on first use, and kept for the life of the
/// process (drivers dislike an instance destroyed from a static destructor while threads run).
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  std::string error;        // why there is no usable instance; empty when there is
  bool validation = false;  // the Khronos validation layer is on
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define TG_VK_GLOBAL(name) PFN_##name name = nullptr;
#define TG_VK_INSTANCE(name) PFN_##name name = nullptr;
#define TG_VK_OPTIONAL(name) PFN_##name name = nullptr;
#include "vk_symbols.inc"
#undef TG_VK_GLOBAL
#undef TG_VK_INSTANCE
#undef TG_VK_OPTIONAL
};

/// A Vulkan structure with its sType (and pNext) set and every other member zero.
template <typename T>
T vk_struct(VkStructureType type, void* next = nullptr) {
  T s{};
  s.sType = type;
  s.pNext = next;
  return s;
}

/// The process's instance; check `error` before use.
const Instance& instance();

/// The application's instance (Target::adopt_vulkan): its entry points through its own
/// vkGetInstanceProcAddr (`get_proc`; null: the loader's), no validation of tilegen's. Throws
/// tg::Error naming an entry point the instance does not give.
Instance application_instance(VkInstance handle, PFN_vkGetInstanceProcAddr get_proc);

/// Device-level entry points of one VkDevice (through vkGetDeviceProcAddr: no loader dispatch).
struct DeviceFns {
#define TG_VK_DEVICE(name) PFN_##name name = nullptr;
#include "vk_symbols.inc"
#undef TG_VK_DEVICE
  /// VK_KHR_push_descriptor's, where the device enabled it (adopted devices): null otherwise.
  PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR = nullptr;
  /// Through in's vkGetDeviceProcAddr. Throws tg::Error naming the first entry point the driver
  /// does not provide.
  void load(const Instance& in, VkDevice device);
};

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or "VkResult -13" for codes this file does not name.
std::string result_name(VkResult r);

/// Throws tg::Error("vulkan: <call> failed: <result name>[: <what>]") unless r is VK_SUCCESS.
void check(VkResult r, const char* call, const std::string& what = {});

/// Validation-layer warnings and errors since the last call (empty without the layer).
std::vector<std::string> take_validation_messages();

}  // namespace tg::vulkan
