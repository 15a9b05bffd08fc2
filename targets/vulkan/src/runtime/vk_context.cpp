// The device, its queue and command buffer, memory and copies, the pipeline cache.
#include "vk_context.h"

#include <cstdio>
#include <cstring>

#include "tilegen/ir/error.h"
#include "tilegen/kernel_cache.h"

namespace tg::vulkan {

namespace {

constexpr VkDeviceSize kStagingChunk = 64u << 20;

// What tilegen enables: the device's support for each feature the code generator may use.
void select_features(const FeatureChain& s, FeatureChain& e) {
#define TG_ENABLE(part, name) e.part.name = s.part.name;
  TG_ENABLE(core.features, shaderInt64)
  TG_ENABLE(core.features, shaderInt16)
  TG_ENABLE(core.features, shaderFloat64)
  TG_ENABLE(v11, storageBuffer16BitAccess)
  TG_ENABLE(v11, uniformAndStorageBuffer16BitAccess)
  TG_ENABLE(v11, storagePushConstant16)
  TG_ENABLE(v12, storageBuffer8BitAccess)
  TG_ENABLE(v12, uniformAndStorageBuffer8BitAccess)
  TG_ENABLE(v12, storagePushConstant8)
  TG_ENABLE(v12, shaderFloat16)
  TG_ENABLE(v12, shaderInt8)
  TG_ENABLE(v12, shaderBufferInt64Atomics)
  TG_ENABLE(v12, shaderSharedInt64Atomics)
  TG_ENABLE(v12, scalarBlockLayout)
  TG_ENABLE(v12, vulkanMemoryModel)
  TG_ENABLE(v12, vulkanMemoryModelDeviceScope)
  TG_ENABLE(v13, subgroupSizeControl)
  TG_ENABLE(v13, computeFullSubgroups)
  TG_ENABLE(v13, maintenance4)
  TG_ENABLE(v13, synchronization2)
  TG_ENABLE(atomic_float, shaderBufferFloat32Atomics)
  TG_ENABLE(atomic_float, shaderBufferFloat32AtomicAdd)
  TG_ENABLE(atomic_float, shaderSharedFloat32Atomics)
  TG_ENABLE(atomic_float, shaderSharedFloat32AtomicAdd)
  TG_ENABLE(coopmat, cooperativeMatrix)
#undef TG_ENABLE
}

}  // namespace

VulkanContext::VulkanContext(PhysicalDevice device) : phys_(std::move(device)), in_(&instance()) {
  if (!phys_.unusable.empty()) throw Error("vulkan: " + phys_.unusable);
  in_->vkGetPhysicalDeviceMemoryProperties(phys_.handle, &mem_);
  create_device();
  create_queue_objects();
  find_mapped_memory();
  create_pipeline_cache();
}

VulkanContext::VulkanContext(PhysicalDevice device, AdoptedDevice adopted)
    : phys_(std::move(device)), adopted_(std::make_unique<AdoptedDevice>(std::move(adopted))) {
  in_ = &adopted_->instance;
  in_->vkGetPhysicalDeviceMemoryProperties(phys_.handle, &mem_);
  device_ = adopted_->device;
  queue_ = adopted_->queue;
  vk_.load(*in_, device_);
  create_queue_objects();
  find_mapped_memory();
  create_pipeline_cache();
}

void VulkanContext::find_mapped_memory() {
  const VkMemoryPropertyFlags mapped = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (!phys_.discrete)
    for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i)
      device_mapped_ |= (mem_.memoryTypes[i].propertyFlags & mapped) == mapped;
}

void VulkanContext::create_device() {
  const Instance& in = *in_;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo q = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  q.queueFamilyIndex = phys_.queue_family;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  std::vector<const char*> ext;
  const bool coopmat = phys_.has_coopmat && phys_.supported.coopmat.cooperativeMatrix;
  if (phys_.has_atomic_float) ext.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (coopmat) ext.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  FeatureChain enabled;
  enabled.link(phys_.has_atomic_float, coopmat);
  select_features(phys_.supported, enabled);
  VkDeviceCreateInfo ci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &enabled.core);
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = uint32_t(ext.size());
  ci.ppEnabledExtensionNames = ext.data();
  check(in.vkCreateDevice(phys_.handle, &ci, nullptr, &device_), "vkCreateDevice", phys_.name);
  vk_.load(in, device_);
  vk_.vkGetDeviceQueue(device_, phys_.queue_family, 0, &queue_);
}

// The command pool (of the queue family tilegen submits to), the command buffer and fence of the
// context's own submissions, the timestamp queries.
void VulkanContext::create_queue_objects() {
  VkCommandPoolCreateInfo pi = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = phys_.queue_family;
  check(vk_.vkCreateCommandPool(device_, &pi, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo ai =
      vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  check(vk_.vkAllocateCommandBuffers(device_, &ai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  check(vk_.vkCreateFence(device_, &fi, nullptr, &fence_), "vkCreateFence");
  if (phys_.timestamps) {
    VkQueryPoolCreateInfo qi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    check(vk_.vkCreateQueryPool(device_, &qi, nullptr, &queries_), "vkCreateQueryPool");
  }
}

// The driver's pipeline cache is kept beside tilegen's kernel cache (one file per device and
// driver build), so a second process skips the driver's shader compilation too. It is read and
// written by KernelCache's rules: a regular file of the user's, size-capped, in a trusted directory.
void VulkanContext::create_pipeline_cache() {
  std::string data;
  if (KernelCache::enabled()) {
    KernelCache cache;
    cache_dir_ = cache.dir();
    cache_name_ = "vulkan-pipelines-" + phys_.cache_id + ".bin";
    data = cache.read_file(cache_name_).value_or(std::string());
  }
  VkPipelineCacheCreateInfo ci =
      vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  // A foreign or corrupt file is ignored by the driver; should it fail anyway, start empty.
  if (vk_.vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    check(vk_.vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
  }
}

// A cache that cannot be written costs the next run a compile; one that is no longer trusted
// (check_trusted) is not written, and nothing may throw from the destructor that calls this.
void VulkanContext::save_pipeline_cache() {
  if (cache_name_.empty() || !pipeline_cache_) return;
  std::size_t n = 0;
  if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::string data(n, '\0');
  if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &n, data.data()) != VK_SUCCESS) return;
  data.resize(n);
  try {
    KernelCache(cache_dir_).write_file(cache_name_, data);
  } catch (const Error&) {
  }
}

VulkanContext::~VulkanContext() {
  if (!device_) return;
  // The application's device may be busy with its own work: wait for tilegen's alone.
  if (adopted_) {
    for (InFlight& f : in_flight_)
      if (f.busy) vk_.vkWaitForFences(device_, 1, &f.fence, VK_TRUE, UINT64_MAX);
  } else {
    vk_.vkDeviceWaitIdle(device_);
  }
  save_pipeline_cache();
  for (InFlight& f : in_flight_) vk_.vkDestroyFence(device_, f.fence, nullptr);  // the pool frees f.cmd
  destroy_buffer(staging_);
  destroy_buffer(flush_);
  if (queries_) vk_.vkDestroyQueryPool(device_, queries_, nullptr);
  if (pipeline_cache_) vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (fence_) vk_.vkDestroyFence(device_, fence_, nullptr);
  if (pool_) vk_.vkDestroyCommandPool(device_, pool_, nullptr);
  if (!adopted_) vk_.vkDestroyDevice(device_, nullptr);
}

// The first type allowed with all of want|prefer, else the first with want.
uint32_t VulkanContext::memory_type(uint32_t allowed, VkMemoryPropertyFlags want,
                                    VkMemoryPropertyFlags prefer) const {
  for (VkMemoryPropertyFlags flags : {want | prefer, want})
    for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i)
      if ((allowed & (1u << i)) && (mem_.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw Error("vulkan: device " + phys_.name + " has no memory type with property flags " +
              std::to_string(want) + " for a storage buffer");
}

// host_side: a staging buffer (host-visible, cached for fast reads back). Otherwise device
// memory, mapped as well where the device shares memory with the host (lavapipe, UMA GPUs).
BufferHandle VulkanContext::make_buffer(VkDeviceSize bytes, bool host_side) {
  BufferHandle b;
  b.size = bytes;
  VkBufferCreateInfo bi = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bi.size = std::max<VkDeviceSize>((bytes + 3) & ~VkDeviceSize(3), 4);  // vkCmdFillBuffer works in words
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vk_.vkCreateBuffer(device_, &bi, nullptr, &b.buffer), "vkCreateBuffer",
        std::to_string(bytes) + " bytes");
  VkMemoryRequirements req;
  vk_.vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  const bool map = host_side || device_mapped_;
  VkMemoryPropertyFlags want = 0, prefer = 0;
  if (host_side) want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (!host_side) want |= VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  if (map) want |= VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (map) prefer = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  VkMemoryAllocateInfo ai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  ai.allocationSize = req.size;
  try {
    ai.memoryTypeIndex = memory_type(req.memoryTypeBits, want, prefer);
    check(vk_.vkAllocateMemory(device_, &ai, nullptr, &b.memory), "vkAllocateMemory",
          std::to_string(bytes) + " bytes on " + phys_.name);
    check(vk_.vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
    if (map) check(vk_.vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  } catch (...) {
    destroy_buffer(b);
    throw;
  }
  return b;
}

void VulkanContext::destroy_buffer(BufferHandle& b) {
  if (b.buffer) vk_.vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory) vk_.vkFreeMemory(device_, b.memory, nullptr);  // unmaps too
  b = BufferHandle{};
}

void* VulkanContext::allocate(std::size_t bytes) { return new BufferHandle(make_buffer(bytes, false)); }

void VulkanContext::release(void* ptr) {
  if (!ptr) return;
  wait_for_submissions();  // a launch still queued on the application's queue may use it
  auto* b = static_cast<BufferHandle*>(ptr);
  destroy_buffer(*b);
  delete b;
}

BufferHandle& VulkanContext::staging(VkDeviceSize bytes) {
  VkDeviceSize want = std::min(bytes, kStagingChunk);
  if (staging_.size < want) {
    destroy_buffer(staging_);
    staging_ = make_buffer(want, true);
  }
  return staging_;
}

// Vulkan cannot tell which device a VkBuffer is of, or its usage: the size is what is checked;
// the rest is the caller's promise (a storage buffer of this device; transfer source and
// destination for upload and download), which the validation layer checks.
void VulkanContext::check_pointer(const void* ptr, std::size_t bytes) {
  if (!adopted_)
    throw Error(
        "this vulkan device is tilegen's own, so no VkBuffer of the application's belongs to it; "
        "open tilegen on the application's device (Target::adopt_vulkan) to wrap its buffers, or "
        "allocate with Target::alloc and copy in");
  VkMemoryRequirements req;
  vk_.vkGetBufferMemoryRequirements(device_, reinterpret_cast<VkBuffer>(const_cast<void*>(ptr)), &req);
  if (req.size < bytes)
    throw Error("the VkBuffer needs " + std::to_string(req.size) +
                " bytes of memory (vkGetBufferMemoryRequirements), " + "fewer than the tensor's " +
                std::to_string(bytes) + ": pass a buffer created with at least " + std::to_string(bytes) +
                " bytes");
}

void* VulkanContext::wrap_memory(void* ptr, std::size_t bytes) {
  auto* b = new BufferHandle;
  b->buffer = reinterpret_cast<VkBuffer>(ptr);
  b->size = bytes;
  b->borrowed = true;
  return b;
}

void VulkanContext::unwrap_memory(void* wrapped) {
  if (!wrapped) return;
  wait_for_submissions();  // a launch still queued on the application's queue may use it
  delete static_cast<BufferHandle*>(wrapped);
}

void* VulkanContext::native_handle(void* ptr) const {
  return ptr ? reinterpret_cast<void*>(static_cast<BufferHandle*>(ptr)->buffer) : nullptr;
}

void VulkanContext::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<BufferHandle*>(dst);
  refuse_in_record_mode("a copy to the device");
  wait_for_submissions();  // copies are synchronous: no launch still queued reads what they write
  if (!bytes) return;
  if (d->mapped) {
    std::memcpy(d->mapped, src, bytes);
    return;
  }
  // Discrete GPU: through the staging buffer, a chunk at a time.
  for (std::size_t off = 0; off < bytes; off += kStagingChunk) {
    VkDeviceSize n = std::min<VkDeviceSize>(bytes - off, kStagingChunk);
    BufferHandle& s = staging(n);
    std::memcpy(s.mapped, static_cast<const char*>(src) + off, n);
    submit_and_wait(
        [&](VkCommandBuffer cmd) {
          VkBufferCopy region{0, off, n};
          vk_.vkCmdCopyBuffer(cmd, s.buffer, d->buffer, 1, &region);
        },
        "a copy to the device");
  }
}

void VulkanContext::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  auto* s = static_cast<const BufferHandle*>(src);
  refuse_in_record_mode("a copy to the host");
  wait_for_submissions();  // nor writes what they read
  if (!bytes) return;
  if (s->mapped) {  // every submission ends with its writes made visible to the host
    std::memcpy(dst, s->mapped, bytes);
    return;
  }
  for (std::size_t off = 0; off < bytes; off += kStagingChunk) {
    VkDeviceSize n = std::min<VkDeviceSize>(bytes - off, kStagingChunk);
    BufferHandle& st = staging(n);
    submit_and_wait(
        [&](VkCommandBuffer cmd) {
          VkBufferCopy region{off, 0, n};
          vk_.vkCmdCopyBuffer(cmd, s->buffer, st.buffer, 1, &region);
        },
        "a copy to the host");
    std::memcpy(static_cast<char*>(dst) + off, st.mapped, n);
  }
}

// Every command buffer starts with a full memory barrier (the previous submission's writes
// become visible to this one's reads) and ends with one towards the host (copy_to_host reads
// mapped memory right after the fence).
void VulkanContext::begin() {
  check(vk_.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi =
      vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk_.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  VkMemoryBarrier mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vk_.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                           &mb, 0, nullptr, 0, nullptr);
}

void VulkanContext::end_submit_wait(const char* what) {
  VkMemoryBarrier mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk_.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
  check(vk_.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer", what);
  VkSubmitInfo si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(vk_.vkQueueSubmit(mode_ == Mode::Queue ? app_queue_ : queue_, 1, &si, fence_), "vkQueueSubmit", what);
  VkResult r = vk_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
  vk_.vkResetFences(device_, 1, &fence_);
  check(r, "vkWaitForFences", what);
  check_validation(what);
}

void VulkanContext::check_validation(const char* what) {
  if (!in_->validation) return;
  std::vector<std::string> msgs = take_validation_messages();
  if (msgs.empty()) return;
  std::string all;
  for (const std::string& m : msgs) all += "\n  " + m;
  throw Error(std::string("vulkan: the validation layer reported ") + std::to_string(msgs.size()) +
              " problem(s) during " + what + ":" + all);
}

void VulkanContext::synchronize() {
  refuse_in_record_mode("waiting for the device (synchronize)");
  check(vk_.vkQueueWaitIdle(mode_ == Mode::Queue ? app_queue_ : queue_), "vkQueueWaitIdle");
  wait_for_submissions();
}

// Writing a buffer larger than the last-level cache evicts the previous run's data (H200: a
// 60 MB L2; a CPU running lavapipe: its L3).
void VulkanContext::flush_l2() {
  const VkDeviceSize bytes = phys_.software ? (64u << 20) : (256u << 20);
  if (!flush_.buffer) flush_ = make_buffer(bytes, false);
  submit_and_wait([&](VkCommandBuffer cmd) { vk_.vkCmdFillBuffer(cmd, flush_.buffer, 0, VK_WHOLE_SIZE, 0); },
                  "the cache flush");
}

}  // namespace tg::vulkan
