// Target::adopt_vulkan's half in the plugin: the application's Vulkan device, checked, as a
// DeviceContext (vk_adopt.cpp).
#pragma once
#include <memory>

#include "tilegen/plugin.h"

namespace tg::vulkan {

/// A context on the application's device, and in `info` what the passes see of it (the features
/// and extensions its VkDeviceCreateInfo enabled). A handle that is null, a device older than
/// Vulkan 1.3 or created without what every kernel needs (vulkanMemoryModel,
/// VK_KHR_push_descriptor, subgroupSizeControl where the subgroup size varies), or a queue that is
/// not of queue_family, is a tg::Error saying what to change.
std::unique_ptr<DeviceContext> adopt_device(const VulkanDevice& device, TargetInfo& info);

}  // namespace tg::vulkan
