// An open Vulkan device as a tilegen DeviceContext: one compute queue, one command buffer and a
// fence (every submission is waited for, so launches are ordered and synchronous), buffers as
// opaque handles, a pipeline cache, a timestamp query pool for profile().
// On the application's device (adopt_vulkan, vk_adopt.cpp) the device and queue are its, and a
// launch may go to another of its queues (submitted, not waited for: a command buffer and fence
// per submission in flight) or into its command buffer (recorded only); descriptors are pushed
// (VK_KHR_push_descriptor), so nothing recorded refers to state tilegen rewrites later.
#pragma once
#include <functional>
#include <memory>
#include <optional>
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
  bool borrowed = false;  // the application's VkBuffer (Target::wrap): never destroyed here
};

struct LoadedKernels;

/// The application's device, as adopt_vulkan hands it over: none of it is destroyed by tilegen.
struct AdoptedDevice {
  Instance instance;  // the application's instance, its entry points through its loader
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  // tilegen's own submissions
  std::vector<VkQueue> queues;     // every queue of the family, for use_stream to check against
};

class VulkanContext final : public DeviceContext {
 public:
  explicit VulkanContext(PhysicalDevice device);
  /// On the application's device (vk_adopt.cpp checks it first).
  VulkanContext(PhysicalDevice device, AdoptedDevice adopted);
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
  void use_stream(const std::optional<Stream>& stream) override;
  void* native_handle(void* ptr) const override;
  /// On the application's device: `ptr` is a VkBuffer whose memory requirement holds `bytes`.
  void check_pointer(const void* ptr, std::size_t bytes) override;
  void* wrap_memory(void* ptr, std::size_t bytes) override;
  void unwrap_memory(void* wrapped) override;

  const DeviceFns& fns() const { return vk_; }
  VkDevice device() const { return device_; }
  const PhysicalDevice& physical() const { return phys_; }
  /// Wait for every submission to the application's queues still in flight (before a pipeline
  /// or buffer they may use is destroyed, or a buffer is copied from the host).
  void wait_for_submissions();

 private:
  struct Staging {
    BufferHandle buf;
  };
  /// Where launches go: the context's own queue (and wait), the application's queue, or the
  /// application's command buffer.
  enum class Mode : uint8_t { Own, Queue, Record };
  /// A command buffer and fence of one submission to the application's queue.
  struct InFlight {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    bool busy = false;
  };
  void create_device();
  void create_queue_objects();
  void find_mapped_memory();
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
  /// The barriers around a launch on the application's queue or command buffer (docs/runtime.md):
  /// everything before it in submission order, writes made visible to the kernels; the kernels'
  /// writes made visible to everything after, the host included.
  void barrier_before_launch(VkCommandBuffer cmd);
  void barrier_after_launch(VkCommandBuffer cmd);
  InFlight& free_submission();
  void reclaim_submissions();
  void refuse_in_record_mode(const char* what) const;
  void check_queue(VkQueue q) const;
  void check_command_buffer(VkCommandBuffer cmd) const;
  /// A launch in Mode::Queue or Mode::Record: `record` between the two barriers, in the
  /// application's command buffer or in one of tilegen's submitted to its queue.
  void launch_on_application(const std::function<void(VkCommandBuffer)>& record);
  void check_validation(const char* what);
  void check_capabilities(const std::vector<uint32_t>& words) const;
  void create_layouts(LoadedKernels& k, const Function& lowered);
  void create_pipelines(LoadedKernels& k, const Function& lowered);
  /// Descriptor writes, then per kernel: bind, push constants, dispatch, barrier.
  void record_kernels(VkCommandBuffer cmd, LoadedKernels& k, const Function& lowered,
                      const std::vector<LaunchArg>& args);

  PhysicalDevice phys_;
  const Instance* in_ = nullptr;            // &instance(), or the application's (adopted_)
  std::unique_ptr<AdoptedDevice> adopted_;  // the application's device, or null: the context's own
  Mode mode_ = Mode::Own;
  VkQueue app_queue_ = VK_NULL_HANDLE;        // Mode::Queue
  VkCommandBuffer app_cmd_ = VK_NULL_HANDLE;  // Mode::Record
  std::vector<InFlight> in_flight_;           // submissions to the application's queues
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
