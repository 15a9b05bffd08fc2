// An open Vulkan device as a tilegen DeviceContext: one compute queue, one command buffer and a
// fence (every submission is waited for, so launches are ordered and synchronous), buffers as
// opaque handles, a pipeline cache, a timestamp query pool for profile().
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tilegen/plugin.h"
#include "vk_physical_device.h"

namespace tg::vulkan {

/// What allocate() returns: the void* a tilegen DeviceBuffer holds points at one of these.
struct BufferHandle {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;   // bytes asked for
  void* mapped = nullptr;  // host pointer where the memory is host-visible (lavapipe, UMA)
  bool coherent = true;
};

struct LoadedKernels;

class VulkanContext final : public DeviceContext {
 public:
  explicit VulkanContext(PhysicalDevice device);
  ~VulkanContext() override;

  void* allocate(std::size_t bytes) override;
  void release(void* ptr) override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  std::shared_ptr<void> load(const Artifact& a, const Function& lowered) override;
  void launch(const std::shared_ptr<void>& loaded, const Function& lowered,
              const std::vector<LaunchArg>& args) override;
  void synchronize() override;
  std::vector<double> time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                    const std::vector<LaunchArg>& args, int runs) override;
  void flush_l2() override;

  const DeviceFns& fns() const { return vk_; }
  VkDevice device() const { return device_; }
  const PhysicalDevice& physical() const { return phys_; }

 private:
  struct Staging {
    BufferHandle buf;
  };
  void create_device();
  void create_pipeline_cache();
  void save_pipeline_cache();
  BufferHandle make_buffer(VkDeviceSize bytes, bool host_side);
  void destroy_buffer(BufferHandle& b);
  uint32_t memory_type(uint32_t allowed, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const;
  BufferHandle& staging(VkDeviceSize bytes);
  /// Record with `record`, submit, wait; then report validation messages as a tg::Error.
  template <typename F>
  void submit_and_wait(F&& record, const char* what);
  void begin();
  void end_submit_wait(const char* what);
  void check_validation(const char* what);
  void check_capabilities(const std::vector<uint32_t>& words) const;
  void create_layouts(LoadedKernels& k, const Function& lowered);
  void create_pipelines(LoadedKernels& k, const Function& lowered);
  /// Descriptor writes, then per kernel: bind, push constants, dispatch, barrier.
  void record_kernels(VkCommandBuffer cmd, LoadedKernels& k, const Function& lowered,
                      const std::vector<LaunchArg>& args);

  PhysicalDevice phys_;
  VkPhysicalDeviceMemoryProperties mem_{};
  DeviceFns vk_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  BufferHandle staging_;
  BufferHandle flush_;
  uint32_t device_type_ = 0, host_type_ = 0;
  bool device_mapped_ = false;          // device buffers are host-visible and mapped
  std::string cache_dir_, cache_name_;  // the pipeline cache file, in the kernel cache directory
};

template <typename F>
void VulkanContext::submit_and_wait(F&& record, const char* what) {
  begin();
  record(cmd_);
  end_submit_wait(what);
}

}  // namespace tg::vulkan
