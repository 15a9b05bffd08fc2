// The loader by dlopen and the instance. The plugin links no Vulkan library, so it loads on
// every machine and probe() can say why Vulkan is missing.
#include "vk_loader.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "tilegen/common/vendor_library.h"
#include "tilegen/env.h"
#include "tilegen/ir/error.h"

namespace tg::vulkan {

namespace {

std::mutex g_messages_mu;
std::vector<std::string> g_messages;

// Validation messages are collected, not printed: the context turns them into a tg::Error at
// the next submit or pipeline build, so a test fails on them.
VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                     void*) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  std::lock_guard<std::mutex> lock(g_messages_mu);
  g_messages.emplace_back(data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

bool env_on(const char* name) { return env::flag(name, false); }

bool has_layer(const Instance& in, const char* name) {
  uint32_t n = 0;
  if (in.vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (in.vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool open_library(Instance& in) {
  static VendorLibrary lib({"libvulkan.so.1"}, "install the Vulkan loader, libvulkan1, and a driver");
  lib.bind(in.vkGetInstanceProcAddr, "vkGetInstanceProcAddr", "reinstall the Vulkan loader");
  if (!lib.ok()) {
    in.error = lib.error();
    return false;
  }
#define TG_VK_GLOBAL(name) in.name = reinterpret_cast<PFN_##name>(in.vkGetInstanceProcAddr(nullptr, #name));
#include "vk_symbols.inc"
#undef TG_VK_GLOBAL
  if (!in.vkCreateInstance || !in.vkEnumerateInstanceVersion || !in.vkEnumerateInstanceLayerProperties) {
    in.error =
        "the Vulkan loader is older than 1.1 (no vkEnumerateInstanceVersion); Vulkan 1.3 needs a newer one";
    return false;
  }
  uint32_t version = 0;
  in.vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_3) {
    in.error = "the Vulkan loader supports Vulkan " + std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
               std::to_string(VK_API_VERSION_MINOR(version)) + "; tilegen needs 1.3 (update libvulkan1)";
    return false;
  }
  return true;
}

void create_instance(Instance& in) {
  VkApplicationInfo app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "tilegen";
  app.pEngineName = "tilegen";
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ci = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ci.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  in.validation = env_on("TILEGEN_VULKAN_VALIDATION") && has_layer(in, layer);
  if (in.validation) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &layer;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = &debug_ext;
  }
  VkResult r = in.vkCreateInstance(&ci, nullptr, &in.handle);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    in.error =
        "no Vulkan device (no Vulkan 1.3 driver is installed: vkCreateInstance returned "
        "VK_ERROR_INCOMPATIBLE_DRIVER)";
    return;
  }
  if (r != VK_SUCCESS) {
    in.error = "vkCreateInstance failed: " + result_name(r);
    return;
  }
#define TG_VK_INSTANCE(name)                                                          \
  in.name = reinterpret_cast<PFN_##name>(in.vkGetInstanceProcAddr(in.handle, #name)); \
  if (!in.name && in.error.empty()) in.error = "the Vulkan loader lacks " #name "; update libvulkan1";
#define TG_VK_OPTIONAL(name) \
  in.name = reinterpret_cast<PFN_##name>(in.vkGetInstanceProcAddr(in.handle, #name));
#include "vk_symbols.inc"
#undef TG_VK_INSTANCE
#undef TG_VK_OPTIONAL
  if (in.validation && in.vkCreateDebugUtilsMessengerEXT) {
    VkDebugUtilsMessengerCreateInfoEXT mi = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
    mi.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    mi.pfnUserCallback = on_validation_message;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;  // lives as long as the instance
    in.vkCreateDebugUtilsMessengerEXT(in.handle, &mi, nullptr, &messenger);
  }
}

}  // namespace

const Instance& instance() {
  static Instance* in = [] {
    auto* p = new Instance;  // never destroyed: see the struct's comment
    if (open_library(*p)) create_instance(*p);
    return p;
  }();
  return *in;
}

Instance application_instance(VkInstance handle, PFN_vkGetInstanceProcAddr get_proc) {
  Instance in;
  in.handle = handle;
  in.vkGetInstanceProcAddr = get_proc ? get_proc : instance().vkGetInstanceProcAddr;
  if (!in.vkGetInstanceProcAddr)
    throw Error("vulkan: no vkGetInstanceProcAddr: " + instance().error +
                "; pass the application's as VulkanDevice::get_instance_proc_addr");
#define TG_VK_INSTANCE(name)                                                       \
  in.name = reinterpret_cast<PFN_##name>(in.vkGetInstanceProcAddr(handle, #name)); \
  if (!in.name)                                                                    \
    throw Error("vulkan: the application's instance gives no " #name               \
                " (vkGetInstanceProcAddr returned null); create it with apiVersion 1.3 or later");
#define TG_VK_OPTIONAL(name) in.name = reinterpret_cast<PFN_##name>(in.vkGetInstanceProcAddr(handle, #name));
#include "vk_symbols.inc"
#undef TG_VK_INSTANCE
#undef TG_VK_OPTIONAL
  return in;
}

void DeviceFns::load(const Instance& in, VkDevice device) {
#define TG_VK_DEVICE(name)                                                    \
  name = reinterpret_cast<PFN_##name>(in.vkGetDeviceProcAddr(device, #name)); \
  if (!name) throw Error("vulkan: the driver lacks " #name "; update the Vulkan driver");
#include "vk_symbols.inc"
#undef TG_VK_DEVICE
  vkCmdPushDescriptorSetKHR = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
      in.vkGetDeviceProcAddr(device, "vkCmdPushDescriptorSetKHR"));
}

std::string result_name(VkResult r) {
  switch (r) {
#define TG_NAME(x) \
  case x: return #x;
    TG_NAME(VK_SUCCESS)
    TG_NAME(VK_NOT_READY)
    TG_NAME(VK_TIMEOUT)
    TG_NAME(VK_INCOMPLETE)
    TG_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    TG_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TG_NAME(VK_ERROR_INITIALIZATION_FAILED)
    TG_NAME(VK_ERROR_DEVICE_LOST)
    TG_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    TG_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    TG_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    TG_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    TG_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    TG_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    TG_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TG_NAME(VK_ERROR_FRAGMENTED_POOL)
    TG_NAME(VK_ERROR_UNKNOWN)
    TG_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    TG_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TG_NAME(VK_ERROR_FRAGMENTATION)
    TG_NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    TG_NAME(VK_PIPELINE_COMPILE_REQUIRED)
    TG_NAME(VK_ERROR_INVALID_SHADER_NV)
#undef TG_NAME
    default: return "VkResult " + std::to_string(int(r));
  }
}

void check(VkResult r, const char* call, const std::string& what) {
  if (r == VK_SUCCESS) return;
  throw Error(std::string("vulkan: ") + call + " failed: " + result_name(r) +
              (what.empty() ? "" : ": " + what));
}

std::vector<std::string> take_validation_messages() {
  std::lock_guard<std::mutex> lock(g_messages_mu);
  std::vector<std::string> out;
  out.swap(g_messages);
  return out;
}

}  // namespace tg::vulkan
