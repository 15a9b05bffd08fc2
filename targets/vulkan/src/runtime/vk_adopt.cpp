// Target::adopt_vulkan: the application's instance, physical device, device and queue, checked,
// then a context on them that destroys none of them.
//
//   VulkanDevice{instance, VK_API_VERSION_1_3, physical, device, &create_info, family, queue}
//     → PhysicalDevice: what create_info enabled (describe_enabled), TargetInfo from that
//     → AdoptedDevice: the application's entry points (its vkGetInstanceProcAddr), every queue
//       of `family` that create_info made (what use_stream checks a VkQueue against)
#include "vk_adopt.h"

#include <algorithm>

#include "tilegen/ir/error.h"
#include "vk_context.h"

namespace tg::vulkan {

namespace {

void require(const void* handle, const char* field, const char* what) {
  if (!handle)
    throw Error(std::string("vulkan: VulkanDevice::") + field + " is null; pass the application's " + what);
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v));
}

void check_physical_device(const Instance& in, VkPhysicalDevice h) {
  uint32_t n = 0;
  check(in.vkEnumeratePhysicalDevices(in.handle, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> all(n);
  check(in.vkEnumeratePhysicalDevices(in.handle, &n, all.data()), "vkEnumeratePhysicalDevices");
  if (std::find(all.begin(), all.begin() + n, h) == all.begin() + n)
    throw Error(
        "vulkan: VulkanDevice::physical_device is not one of the instance's physical devices "
        "(vkEnumeratePhysicalDevices); pass the one the device was created on");
}

// Every queue create_info made in `family`: vkGetDeviceQueue is valid for exactly those.
std::vector<VkQueue> family_queues(const DeviceFns& vk, VkDevice device, const VkDeviceCreateInfo& ci,
                                   uint32_t family) {
  std::vector<VkQueue> out;
  for (uint32_t i = 0; i < ci.queueCreateInfoCount; ++i) {
    const VkDeviceQueueCreateInfo& q = ci.pQueueCreateInfos[i];
    if (q.queueFamilyIndex != family) continue;
    if (q.flags)
      throw Error("vulkan: the device's queues of family " + std::to_string(family) +
                  " were created with flags (protected queues); give tilegen a family of plain queues");
    for (uint32_t j = 0; j < q.queueCount; ++j) {
      VkQueue h = VK_NULL_HANDLE;
      vk.vkGetDeviceQueue(device, family, j, &h);
      out.push_back(h);
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<DeviceContext> adopt_device(const VulkanDevice& d, TargetInfo& info) {
  require(d.instance, "instance", "VkInstance");
  require(d.physical_device, "physical_device", "VkPhysicalDevice");
  require(d.device, "device", "VkDevice");
  require(d.create_info, "create_info", "VkDeviceCreateInfo the device was created with");
  require(d.queue, "queue", "VkQueue of VulkanDevice::queue_family, for tilegen's own submissions");
  if (d.api_version < VK_API_VERSION_1_3)
    throw Error(
        "vulkan: the instance was created for Vulkan " + version_text(d.api_version) +
        " (VulkanDevice::api_version); tilegen needs 1.3: create it with VkApplicationInfo::apiVersion "
        "= VK_API_VERSION_1_3 (and say so in api_version)");
  const auto& ci = *static_cast<const VkDeviceCreateInfo*>(d.create_info);
  if (ci.sType != VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO)
    throw Error("vulkan: VulkanDevice::create_info does not point at a VkDeviceCreateInfo (its sType is " +
                std::to_string(int(ci.sType)) + "); pass the one given to vkCreateDevice");
  AdoptedDevice a;
  a.instance = application_instance(static_cast<VkInstance>(d.instance),
                                    reinterpret_cast<PFN_vkGetInstanceProcAddr>(d.get_instance_proc_addr));
  auto physical = static_cast<VkPhysicalDevice>(d.physical_device);
  check_physical_device(a.instance, physical);
  PhysicalDevice p = describe_enabled(a.instance, physical, ci, d.queue_family);
  if (!p.unusable.empty()) throw Error("vulkan: " + p.unusable);
  a.device = static_cast<VkDevice>(d.device);
  a.queue = static_cast<VkQueue>(d.queue);
  DeviceFns fns;
  fns.load(a.instance, a.device);
  if (!fns.vkCmdPushDescriptorSetKHR)
    throw Error(
        "vulkan: the device gives no vkCmdPushDescriptorSetKHR although VK_KHR_push_descriptor is "
        "enabled; update the Vulkan driver");
  a.queues = family_queues(fns, a.device, ci, d.queue_family);
  if (std::find(a.queues.begin(), a.queues.end(), a.queue) == a.queues.end())
    throw Error("vulkan: VulkanDevice::queue is not a queue of family " + std::to_string(d.queue_family) +
                " of the device; pass one from vkGetDeviceQueue(device, queue_family, i)");
  info = p.info;
  return std::make_unique<VulkanContext>(std::move(p), std::move(a));
}

}  // namespace tg::vulkan
