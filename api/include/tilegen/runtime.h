// The runtime facade: find targets, pick one, compile, allocate, launch, profile.
//
//   auto target = tg::Target::select();
//   auto kernel = target.compile(matmul_relu(4096, 4096, 4096, 128, 128, 32));
//   kernel(a, b, c);                 // tg::DeviceBuffer or tg::HostTensor arguments
//   auto t = kernel.profile({a, b, c});
// docs/runtime.md describes the whole API.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <variant>
#include <vector>

#include "tilegen/builder.h"
#include "tilegen/plugin.h"

// TILEGEN_DLPACK: libtilegen was built with <dlpack/dlpack.h> (CMake defines it for users of the
// tilegen target), so tg::from_dlpack and tg::to_dlpack exist.
#if TILEGEN_DLPACK
#include <dlpack/dlpack.h>
#endif

namespace tg {

/// Every plugin found, available or not (with the reason), in discovery order: the directories
/// of TILEGEN_PLUGIN_PATH, the install's plugin directory, libtilegen.so's own, file names
/// sorted in each; then interp.
struct TargetStatus {
  std::string name;
  bool available = false;
  std::string reason;
  std::string path;  // the shared library, or "(built in)"
  std::vector<TargetInfo> devices;
};
/// Loads and probes every plugin found, in this process.
std::vector<TargetStatus> targets();
/// targets(), with each plugin not loaded yet first loaded and probed in a child process: one
/// that dies there (a constructor that aborts, a probe() that dereferences null) or hangs is
/// listed as unavailable with what happened, and never loaded here. `tilegen targets` uses it.
/// It forks: call it before the program starts threads of its own.
std::vector<TargetStatus> targets_isolated();
/// The names of the plugins found and interp, in discovery order, without loading any.
std::vector<std::string> target_names();

/// One device of a targets() list: all[target].devices[device].
struct DeviceChoice {
  std::size_t target = 0;
  int device = 0;
};
/// The available devices of `all` (a targets() list, in discovery order) in the order
/// Target::select() tries them, best first, ranked by their TargetInfo alone: hardware GPUs
/// through their vendor's target, then GPUs through a portable one (vulkan), the native cpu,
/// then software devices (lavapipe, interp last); ties keep the discovery order.
std::vector<DeviceChoice> selection_order(const std::vector<TargetStatus>& all);

/// A host array: pointer (not owned), shape, dtype.
struct HostTensor {
  void* data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = f32;
  int64_t numel() const;
  std::size_t bytes() const { return storage_bytes(dtype, numel()); }
};

struct DeviceState;  // private: a plugin's open device, shared by its buffers and kernels

/// Memory of a target's device: allocated by it (Target::alloc, upload), freed when the last copy
/// goes; or the application's (Target::wrap, from_dlpack), never freed by tilegen. Copies share
/// the memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  const std::vector<int64_t>& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t numel() const;
  std::size_t bytes() const { return storage_bytes(dtype_, numel()); }
  void* device_ptr() const { return ptr_.get(); }
  /// The API's own handle of the memory, for the application's own commands: the device pointer
  /// on cuda and hip, the host pointer on cpu and interp, the VkBuffer (as void*) on vulkan.
  void* native_handle() const;
  void upload(const void* host, std::size_t bytes, Loc loc = Loc::current());
  void download(void* host, std::size_t bytes, Loc loc = Loc::current()) const;
  const std::string& target() const;
  /// The device's index in its target (Target::get(target(), device_index())); -1 for the
  /// application's device (Target::adopt_vulkan).
  int device_index() const;
  /// False for memory tilegen did not allocate (Target::wrap, from_dlpack): its owner frees it.
  bool owns_memory() const { return owns_; }

 private:
  friend class Target;
  friend class CompiledKernel;
  friend struct RuntimeAccess;  // the runtime's own files (runtime_internal.h)
  std::shared_ptr<DeviceState> dev_;
  bool owns_ = true;
  std::shared_ptr<void> ptr_;
  std::vector<int64_t> shape_;
  DType dtype_ = f32;
};

/// One launch argument: a device buffer, a host tensor, or a scalar. A host tensor is used in
/// place on a target whose memory is the host's (cpu, interp) when its pointer is aligned to its
/// element; otherwise it is copied in before the launch, and back after it when the kernel writes
/// that tensor (inputs are never written).
using KernelArg = std::variant<const DeviceBuffer*, HostTensor, double, int64_t>;

struct ProfileOptions {
  int warmup = 3;
  int runs = 20;
  bool flush_l2 = true;  // where the target has a cache to flush
  /// Run and time on the application's stream (cuda, hip) or VkQueue (vulkan, on the device of
  /// Target::adopt_vulkan) instead of the device's own. A command buffer is a tg::Error: nothing
  /// recorded runs before the application submits it, so there is nothing to time.
  std::optional<Stream> stream = std::nullopt;
};
struct ProfileResult {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

class CompiledKernel {
 public:
  const std::string& name() const;
  /// Target code: CUDA C++, HIP C++, LLVM IR, SPIR-V disassembly, or IR text for interp.
  /// A kernel with symbolic sizes has these only after its first launch (before it, a tg::Error
  /// at the caller's line).
  const std::string& source(Loc loc = Loc::current()) const;
  const std::string& assembly(Loc loc = Loc::current()) const;
  const std::vector<uint8_t>& binary(Loc loc = Loc::current()) const;
  /// IR after each pass, by pass name, in pipeline order.
  const std::vector<std::pair<std::string, std::string>>& stages(Loc loc = Loc::current()) const;
  /// The pass-output function (sizes bound).
  const Function& lowered(Loc loc = Loc::current()) const;

  /// Launch with checked arguments (in parameter order, sizes omitted). A mismatch of shape,
  /// dtype, device or count is a tg::Error naming the parameter and the launch site, and so is
  /// a tensor the kernel writes that shares memory with another argument (every target compiles
  /// tensors as non-overlapping; passing one buffer to two read-only parameters is fine).
  void launch(const std::vector<KernelArg>& args, Loc loc = Loc::current()) const;
  /// launch() on the application's stream (a CUstream on cuda, a hipStream_t on hip, a VkQueue of
  /// the adopted device on vulkan), in order with the work the application queued there. On
  /// device buffers alone it returns once the kernel is queued; with a HostTensor argument (or
  /// check_bounds) it waits for the stream, as the copies back need. On vulkan,
  /// Stream::command_buffer(cmd) records the kernel and its barriers into the application's
  /// command buffer (device buffers only) and returns; the application submits it. A target
  /// without streams (cpu, interp), vulkan on its own device, or a handle of another device, is a
  /// tg::Error. docs/runtime.md has the ordering rules.
  void launch(const std::vector<KernelArg>& args, Stream stream, Loc loc = Loc::current()) const;
  /// kernel(a, b, alpha): launch(). The first argument carries the call site, so a mismatch is
  /// reported at the line of the call, as launch() does.
  struct FirstArg {
    template <typename T> FirstArg(const T& v, Loc l = Loc::current()) : arg(to_arg(v)), loc(l) {}
    KernelArg arg;
    Loc loc;
  };
  template <typename... A> void operator()(FirstArg first, const A&... rest) const {
    launch(std::vector<KernelArg>{first.arg, to_arg(rest)...}, first.loc);
  }
  void operator()(Loc loc = Loc::current()) const { launch({}, loc); }
  ProfileResult profile(const std::vector<KernelArg>& args, ProfileOptions opt = {}, Loc loc = Loc::current()) const;

  struct Impl;
  explicit CompiledKernel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  static KernelArg to_arg(const DeviceBuffer& b) { return &b; }
  static KernelArg to_arg(const HostTensor& t) { return t; }
  static KernelArg to_arg(double v) { return v; }
  static KernelArg to_arg(float v) { return double(v); }
  static KernelArg to_arg(int v) { return int64_t(v); }
  static KernelArg to_arg(int64_t v) { return v; }
  std::shared_ptr<Impl> impl_;
};

class Target {
 public:
  /// TILEGEN_TARGET if set, else the best available device that opens, in selection_order():
  /// hardware GPUs (cuda, hip, then vulkan), the native cpu target, software devices (lavapipe),
  /// interp.
  static Target select(Loc loc = Loc::current());
  /// A named target ("cuda", "cpu", "interp", ...), device index; throws if unavailable.
  static Target get(const std::string& name, int device = 0, Loc loc = Loc::current());

  const std::string& name() const;
  const TargetInfo& info() const;
  TargetPlugin& plugin() const;

  /// Compile; symbolic sizes are specialised at each new launch shape (opt.sizes must be empty).
  /// The options are resolved here (resolve_compile_options: environment defaults read once).
  CompiledKernel compile(const Kernel& k, const CompileOptions& opt = {}, Loc loc = Loc::current()) const;
  /// Run the pass pipeline and codegen without a device (for `tilegen source`), for `info`, with
  /// the symbolic sizes bound to opt.sizes and the options resolved as compile() resolves them.
  static Artifact codegen_for(TargetPlugin& plugin, const TargetInfo& info, const Function& f,
                              const CompileOptions& opt,
                              std::vector<std::pair<std::string, std::string>>* stages = nullptr);

  DeviceBuffer alloc(std::vector<int64_t> shape, DType t, Loc loc = Loc::current()) const;
  DeviceBuffer upload(const HostTensor& h, Loc loc = Loc::current()) const;
  /// A buffer over memory of this device that the application allocated: not owned, never freed
  /// by tilegen; the application keeps it alive while the buffer, or a launch on it, may use it.
  /// Checked: ptr is not null, the shape's byte size fits, ptr is aligned to the element and to
  /// what the target's kernels need (16 bytes on GPUs), and, where the target can tell, that it
  /// is memory of this device (cuda asks the driver; host targets take any host pointer; vulkan
  /// takes none on its own device, and on the application's device (adopt_vulkan) a VkBuffer, as
  /// void*, whose memory requirement holds the shape: docs/runtime.md).
  DeviceBuffer wrap(void* ptr, std::vector<int64_t> shape, DType t, Loc loc = Loc::current()) const;

  /// The vulkan target on the application's Vulkan device (plugin.h, VulkanDevice): kernels,
  /// buffers and copies run on its VkDevice, with function pointers from its instance, and tilegen
  /// destroys none of its handles (the application keeps them alive while this Target, or a
  /// buffer or kernel of it, lives). Launches may then go to its queues or command buffers
  /// (Stream). A device tilegen cannot use (Vulkan older than 1.3, no vulkanMemoryModel or
  /// VK_KHR_push_descriptor enabled, the queue family not among create_info's) is a tg::Error at
  /// `loc` naming what to enable. Each call opens a context of its own.
  static Target adopt_vulkan(const VulkanDevice& device, Loc loc = Loc::current());

  struct Impl;
  explicit Target(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  friend struct RuntimeAccess;
  std::shared_ptr<Impl> impl_;
};

/// Load (or find already loaded) a plugin by name; nullptr with `reason` set when it fails.
TargetPlugin* find_plugin(const std::string& name, std::string* reason = nullptr);

#if TILEGEN_DLPACK
/// A DeviceBuffer over a DLPack tensor's memory (byte_offset applied) on `target`, which must be
/// the tensor's device: kDLCPU takes a host-memory target (cpu or interp), kDLCUDA the cuda
/// target's device of that id, kDLROCM hip's. The buffer calls the tensor's deleter, once, when
/// its last copy goes. Its dtype must be one tilegen has (f16, bf16, f32, f64, i8, u8, i16, i32,
/// u32, i64) and its strides compact row-major (or null). On a tg::Error the tensor is not taken:
/// its deleter is not called and the caller still owns it.
DeviceBuffer from_dlpack(DLManagedTensor* tensor, const Target& target, Loc loc = Loc::current());
/// from_dlpack on the target of the tensor's device: kDLCPU → cpu, kDLCUDA → cuda (device_id),
/// kDLROCM → hip (device_id); any other device is a tg::Error.
DeviceBuffer from_dlpack(DLManagedTensor* tensor, Loc loc = Loc::current());
/// A DLPack tensor over the buffer's memory, compact row-major, which keeps the buffer (and its
/// memory) alive until the consumer calls its deleter. A target whose buffers are not addresses
/// (vulkan), or a dtype DLPack 0.6 has no code for (fp8, 4-bit, bool), is a tg::Error.
DLManagedTensor* to_dlpack(const DeviceBuffer& buffer, Loc loc = Loc::current());
#endif

}  // namespace tg
