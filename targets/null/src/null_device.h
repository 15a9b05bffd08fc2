// The null target's device side: the DeviceContext a target implements, one hook at a time.
// The null target has no device, so its context keeps tensors in host memory and runs each launch
// on the reference interpreter; every hook says what it receives, what it returns and what the
// runtime does with the result, and a copy replaces each body with calls to its own runtime.
//
// Threading: the runtime calls one context from one host thread at a time (it holds a lock per
// device); every Target, buffer and kernel of one device shares its one context.
#pragma once
#include <memory>

#include "tilegen/host_device_context.h"

namespace tg::null_target {

// Host memory stands in for the device's, so the memory hooks are HostDeviceContext's (the one
// implementation cpu and interp use too). A device target derives from tg::DeviceContext instead
// and implements them with its runtime:
//
//   void* allocate(std::size_t bytes)
//     Device memory for a tensor of `bytes` bytes (0 included: return a distinct, non-null
//     pointer all the same). The pointer is only ever handed back to this context — release(),
//     the copies, LaunchArg::device_ptr — so it may be a device address or a handle. Throw a
//     tg::Error saying how much was asked for when there is not enough; the runtime adds the call
//     site (cuMemAlloc, hipMalloc, vkAllocateMemory).
//       Target::alloc({64, 64}, f32)  →  allocate(16384)  →  DeviceBuffer over the pointer
//   void release(void* ptr)
//     Frees what allocate() returned, when its last DeviceBuffer goes. Must not throw: the
//     runtime calls it from destructors.
//   void copy_to_device(void* dst, const void* src, std::size_t bytes)
//   void copy_to_host(void* dst, const void* src, std::size_t bytes)
//     Host → device and device → host, complete when the call returns (a device with queues
//     waits for its copy here). DeviceBuffer::upload/download, and host tensors passed to a
//     launch (copied in, and back out if the kernel writes them).
//   void synchronize()
//     Waits for every launch and copy issued so far (here: nothing; launch() returns when done).
//   void flush_l2()
//     Overwrites a buffer larger than the device's last-level cache, so each timed run of
//     CompiledKernel::profile reads its inputs from memory.
//   std::vector<double> time_launches(loaded, lowered, args, runs)
//     plugin.h's default: wall clock around launch and synchronize, one run at a time; a device
//     with timers (CUDA events, Vulkan timestamp queries) overrides it for device time.
//   MemorySpace memory_space() const
//   std::size_t pointer_alignment() const
//   void check_pointer(const void* ptr, std::size_t bytes)
//     What the context's buffers are (plugin.h's MemorySpace). HostDeviceContext's: Host, so a
//     HostTensor argument is used in place and Target::wrap / from_dlpack take any host pointer
//     aligned to its element. A GPU context returns Cuda or Rocm, asks 16-byte alignment (its
//     kernels move 16-byte vectors) and checks with its driver that a pointer is its device's
//     memory; plugin.h's default, Handles (buffers are handles, as vulkan's), takes none.
//   void use_stream(const std::optional<Stream>& stream)
//     Launches and copies go to the application's stream until the next call (nullopt: the
//     context's own again). stream->kind says what the handle is: a queue to submit to (a
//     CUstream, a VkQueue) or a command buffer to record into (vulkan's). plugin.h's default,
//     kept here, refuses every stream with a tg::Error.
//   void* native_handle(void* ptr) const
//     The API's own handle of a buffer allocate() returned, for the application's commands
//     (DeviceBuffer::native_handle): plugin.h's default, ptr itself, fits a context whose buffers
//     are addresses; vulkan returns the VkBuffer of its record.
//   void* wrap_memory(void* ptr, std::size_t bytes), void unwrap_memory(void* wrapped)
//     What a buffer over the application's memory holds once check_pointer took it
//     (Target::wrap), and its forgetting when the buffer goes (never freeing the memory).
//     plugin.h's defaults, ptr itself and nothing, fit a context whose buffers are addresses;
//     vulkan makes a record over the application's VkBuffer.
class NullContext final : public HostDeviceContext {
 public:
  NullContext() : HostDeviceContext("null") {}

  /// Makes codegen()'s artifact launchable, once per compiled specialisation; what it returns is
  /// handed to every launch() of it. It must work from a.source, a.binary and a.entry alone
  /// (a.state empty): on a kernel-cache hit that is all the runtime has. A load that throws on a
  /// cache hit makes the runtime evict the entry and compile afresh.
  ///   a = {source: "func add(...) {...}", entry: "add"}  →  the parsed function, ready to run
  /// A real target loads a.binary here (cuModuleLoadData, hipModuleLoadData, vkCreateComputePipelines)
  /// and looks up the a.entry kernels. Here the "module" is the IR text of a.source, parsed back.
  std::shared_ptr<void> load(const Artifact& a, const Function& lowered) override;
  /// Runs one launch of a loaded kernel. `args` follow lowered.params (sizes omitted: they are
  /// bound in `lowered` already), tensors as this context's pointers with shape and dtype,
  /// scalars converted to their parameter's dtype. The grid and block shapes are the lowered
  /// function's Kernel statements. It may return before the work is done (synchronize() waits),
  /// but launches run in the order issued. Here: the interpreter runs the loaded function.
  ///   launch(add, [{p0, [64], f32}, {p1, [64], f32}])  →  interpret(add, host args over p0, p1)
  void launch(const std::shared_ptr<void>& loaded, const Function& lowered,
              const std::vector<LaunchArg>& args) override;
};

}  // namespace tg::null_target
