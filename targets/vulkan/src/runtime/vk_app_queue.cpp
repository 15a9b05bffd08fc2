// The application's queues and command buffers (use_stream on an adopted device): which handles
// are taken, the barriers around a launch there, and the submissions still in flight.
//
//   kernel.launch(args, tg::Stream{queue})                   barrier, dispatches, barrier → a
//                                                             command buffer of tilegen's, submitted
//                                                             to `queue` with a fence; not waited for
//   kernel.launch(args, tg::Stream::command_buffer(cmd))     barrier, dispatches, barrier → `cmd`
#include <cstring>

#include "tilegen/ir/error.h"
#include "vk_context.h"

namespace tg::vulkan {

namespace {

// Every dispatchable handle of one VkDevice (the device, its queues, its command buffers) begins
// with the same loader dispatch pointer: the loader's interface requires it of every driver.
bool same_device(const void* handle, VkDevice device) {
  void* a = nullptr;
  void* b = nullptr;
  std::memcpy(&a, handle, sizeof a);
  std::memcpy(&b, static_cast<const void*>(device), sizeof b);
  return a == b;
}

// Once per submission there: the host's writes before vkQueueSubmit are visible to it without a
// barrier (the submission's own guarantee), the device's are not.
constexpr VkPipelineStageFlags kBeforeSrc = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
constexpr VkAccessFlags kBeforeSrcAccess = VK_ACCESS_MEMORY_WRITE_BIT;
constexpr VkPipelineStageFlags kAfterDst = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT;
constexpr VkAccessFlags kAfterDstAccess =
    VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;

}  // namespace

void VulkanContext::check_queue(VkQueue q) const {
  if (!q) throw Error("the VkQueue is null; pass a queue of the adopted device (vkGetDeviceQueue)");
  for (VkQueue mine : adopted_->queues)
    if (mine == q) return;
  if (!same_device(q, device_))
    throw Error(
        "the VkQueue belongs to another VkDevice than the one tilegen was opened on "
        "(Target::adopt_vulkan); pass a queue of that device");
  throw Error("the VkQueue is not one of the adopted device's queues of family " +
              std::to_string(phys_.queue_family) + " (its VkDeviceCreateInfo made " +
              std::to_string(adopted_->queues.size()) +
              "); pass one of those, the family VulkanDevice::queue_family names");
}

// Vulkan has no query for a command buffer's state: that it is recording, and on a queue family
// with compute, is the application's promise (the validation layer checks it).
void VulkanContext::check_command_buffer(VkCommandBuffer cmd) const {
  if (!cmd)
    throw Error(
        "the VkCommandBuffer is null; pass a command buffer of the adopted device, between "
        "vkBeginCommandBuffer and vkEndCommandBuffer");
  if (!same_device(cmd, device_))
    throw Error(
        "the VkCommandBuffer belongs to another VkDevice than the one tilegen was opened on "
        "(Target::adopt_vulkan); record into a command buffer of that device");
}

void VulkanContext::use_stream(const std::optional<Stream>& stream) {
  if (!stream) {
    mode_ = Mode::Own;
    app_queue_ = VK_NULL_HANDLE;
    app_cmd_ = VK_NULL_HANDLE;
    return;
  }
  if (!adopted_)
    throw Error(
        "this vulkan device is tilegen's own, so no queue or command buffer of the application's "
        "belongs to it; open tilegen on the application's device (Target::adopt_vulkan) to "
        "launch there");
  if (stream->kind == Stream::Kind::Queue) {
    auto q = static_cast<VkQueue>(stream->handle);
    check_queue(q);
    mode_ = Mode::Queue;
    app_queue_ = q;
  } else {
    auto cmd = static_cast<VkCommandBuffer>(stream->handle);
    check_command_buffer(cmd);
    mode_ = Mode::Record;
    app_cmd_ = cmd;
  }
}

void VulkanContext::refuse_in_record_mode(const char* what) const {
  if (mode_ != Mode::Record) return;
  throw Error(std::string(what) +
              " is needed, but a launch into a command buffer runs only when the application submits "
              "it, after launch() returns; pass DeviceBuffers (not HostTensors) and compile without "
              "check_bounds to record, or launch on a queue (Stream{queue})");
}

void VulkanContext::barrier_before_launch(VkCommandBuffer cmd) {
  VkMemoryBarrier mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = kBeforeSrcAccess;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vk_.vkCmdPipelineBarrier(cmd, kBeforeSrc, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
}

void VulkanContext::barrier_after_launch(VkCommandBuffer cmd) {
  VkMemoryBarrier mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = kAfterDstAccess;
  vk_.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kAfterDst, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
}

void VulkanContext::reclaim_submissions() {
  for (InFlight& f : in_flight_)
    if (f.busy && vk_.vkGetFenceStatus(device_, f.fence) == VK_SUCCESS) {
      check(vk_.vkResetFences(device_, 1, &f.fence), "vkResetFences");
      f.busy = false;
    }
}

void VulkanContext::wait_for_submissions() {
  for (InFlight& f : in_flight_)
    if (f.busy) check(vk_.vkWaitForFences(device_, 1, &f.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  reclaim_submissions();
}

// A finished submission's command buffer and fence, or new ones; at most kMaxInFlight at once
// (the oldest is then waited for), so a loop of launches cannot grow them without bound.
VulkanContext::InFlight& VulkanContext::free_submission() {
  constexpr std::size_t kMaxInFlight = 64;
  reclaim_submissions();
  for (InFlight& f : in_flight_)
    if (!f.busy) return f;
  if (in_flight_.size() >= kMaxInFlight) {
    std::vector<VkFence> fences;
    for (InFlight& f : in_flight_) fences.push_back(f.fence);
    check(vk_.vkWaitForFences(device_, uint32_t(fences.size()), fences.data(), VK_FALSE, UINT64_MAX),
          "vkWaitForFences");
    reclaim_submissions();
    for (InFlight& f : in_flight_)
      if (!f.busy) return f;
  }
  InFlight f;
  VkCommandBufferAllocateInfo ai =
      vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  check(vk_.vkAllocateCommandBuffers(device_, &ai, &f.cmd), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  if (VkResult r = vk_.vkCreateFence(device_, &fi, nullptr, &f.fence); r != VK_SUCCESS) {
    vk_.vkFreeCommandBuffers(device_, pool_, 1, &f.cmd);
    check(r, "vkCreateFence");
  }
  in_flight_.push_back(f);
  return in_flight_.back();
}

// Mode::Queue: recorded into a command buffer of tilegen's and submitted to the application's
// queue; the fence tells later calls when its command buffer may be reused. Mode::Record: into
// the application's command buffer, which it submits.
void VulkanContext::launch_on_application(const std::function<void(VkCommandBuffer)>& record) {
  if (mode_ == Mode::Record) {
    barrier_before_launch(app_cmd_);
    record(app_cmd_);
    barrier_after_launch(app_cmd_);
    return;
  }
  InFlight& f = free_submission();
  check(vk_.vkResetCommandBuffer(f.cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi =
      vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk_.vkBeginCommandBuffer(f.cmd, &bi), "vkBeginCommandBuffer");
  barrier_before_launch(f.cmd);
  record(f.cmd);
  barrier_after_launch(f.cmd);
  check(vk_.vkEndCommandBuffer(f.cmd), "vkEndCommandBuffer", "a launch on the application's queue");
  VkSubmitInfo si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &f.cmd;
  check(vk_.vkQueueSubmit(app_queue_, 1, &si, f.fence), "vkQueueSubmit",
        "a launch on the application's queue");
  f.busy = true;
}

}  // namespace tg::vulkan
