// The target plugin interface (after IREE's HAL driver: a narrow vtable, each hook commented).
// A plugin is libtilegen_<name>.so exporting
//
//   extern "C" const TgPluginEntry* tilegen_plugin_entry();
//
// The loader checks entry->abi_version == tg::kPluginAbiVersion before calling create().
// load() must work from an Artifact's source, binary and entry alone (empty `state`): that is
// what a kernel-cache hit hands it.
// targets/null/ is a skeleton plugin, every hook commented with what it receives and returns:
// copy it to start a target (docs/adding_a_target.md).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/pass_manager.h"

namespace tg {

// 2: TargetInfo gained max_grid (its layout changed). 3: TargetPlugin::param_keys.
// 4: TargetInfo gained portable (select() ranks devices by their TargetInfo, not plugin names).
// 5: CompileOptions::sizes, and pipeline() begins with bind_sizes_pass(opt.sizes).
// 6: param_keys() returns ParamKeys (values, default, environment variable), not names.
// 7: ir::BufferNode gained placed_offset/placed_bytes (place_shared_memory); ir::Prefetch, and
//    ir::Gemm gained its per-step hints (insert_prefetches); ir::Hold (hold_accumulators).
// 8: DeviceContext gained memory_space, pointer_alignment, check_pointer (host tensors in place,
//    Target::wrap, DLPack) and use_stream (launches on the application's stream).
// 9: Stream gained kind (a vulkan command buffer to record into); TargetPlugin::adopt_vulkan (the
//    application's VkDevice); DeviceContext::native_handle, wrap_memory, unwrap_memory.
inline constexpr uint32_t kPluginAbiVersion = 9;

/// Options of one compilation. `params` are target knobs ("fast_math", ...): the keys of
/// common_param_keys() and of the target's param_keys(); any other key, or a value its key does
/// not take, is a tg::Error. The runtime compiles with resolve_compile_options(opt): the options
/// are then all that a compile was asked, environment defaults included, and the kernel-cache
/// key is made of them.
struct CompileOptions {
  std::string arch;  // empty: the device's own
  std::map<std::string, std::string> params;
  bool verify_each_pass = true;
  std::string dump_after;  // pass name, "all", or empty; TILEGEN_DUMP_AFTER adds to it
  /// Values of the kernel's symbolic sizes, for the pipeline's first pass (bind_sizes_pass). The
  /// runtime fills it for each launch's shapes, so Target::compile takes it empty;
  /// Target::codegen_for and the `tilegen ir/source` commands take it from their caller.
  std::map<std::string, int64_t> sizes;
};

/// One CompileOptions::params key a target reads: the values it takes, its default, and the
/// environment variable that may give the default instead. Environment variables reach a compile
/// only this way, read by the runtime where it makes the options (resolve_compile_options), never
/// by a plugin: a plugin reads opt.params (param_on, param_text) and nothing else.
///   ParamKey::on_off("ldmatrix", true, "TILEGEN_CUDA_LDMATRIX", "ldmatrix loads (the pass use_ldmatrix)")
///   --param ldmatrix=off, or TILEGEN_CUDA_LDMATRIX=0  →  opt.params["ldmatrix"] == "0"
struct ParamKey {
  enum class Kind : uint8_t {
    Switch,  // 0, off, false / 1, on, true, in any case; canonical "0" and "1"
    Choice,  // one of `choices`, exactly
    Count,   // a whole number from `min` to `max`, in decimal
  };
  std::string name;  // "ldmatrix"
  Kind kind = Kind::Switch;
  std::string default_value;         // canonical; "0" or "1" for a Switch
  std::vector<std::string> choices;  // Choice
  int64_t min = 0, max = 0;          // Count
  std::string env;                   // the variable that gives the default, or empty: none
  std::string help;                  // what it does, in a few words

  static ParamKey on_off(std::string name, bool dflt, std::string env, std::string help);
  static ParamKey one_of(std::string name, std::vector<std::string> choices, std::string dflt,
                         std::string env, std::string help);
  static ParamKey count(std::string name, int64_t min, int64_t max, int64_t dflt, std::string env,
                        std::string help);
  /// What it takes, for errors and listings: "0 or 1 (or off/on, false/true)", "all or none",
  /// "a whole number from 0 to 4096".
  std::string takes() const;
  /// `value` in canonical form ("on" → "1", "007" → "7"), or a tg::Error that begins with
  /// `origin` (the param, or the environment variable, it came from) and says what it takes.
  std::string canonical(const std::string& value, const std::string& origin) const;
};

/// Keys every target takes. check_bounds: "all" checks every element access at run time and
/// reports the first out-of-range one (the pass check_element_accesses); "none", the default, does not.
const std::vector<ParamKey>& common_param_keys();

/// What compile() returns: every stage reachable by name.
struct Artifact {
  std::string source;          // CUDA C++, HIP C++, LLVM IR, SPIR-V disassembly, or IR text
  std::string assembly;        // PTX/SASS, GCN, x86, ... where the target has one
  std::vector<uint8_t> binary; // cubin, code object, object file, SPIR-V words
  std::string entry;           // symbol to launch
  std::string stats;           // per-kernel resource use (registers, shared memory, scratch), where reported
  std::shared_ptr<void> state; // target-private (a JIT'd function, a loaded module...)
};

/// One launch argument as a device context sees it.
struct LaunchArg {
  void* device_ptr = nullptr;          // tensors: device memory of this context
  std::vector<int64_t> shape;          // tensors
  DType dtype = f32;
  Scalar scalar;                       // scalars
  bool is_tensor = true;
};

/// A stream or queue the application owns, for a launch or a profile, or a command buffer it is
/// recording. tilegen never creates or destroys it. A null handle is a stream too (CUDA's and
/// HIP's legacy default stream), so "no stream" is std::nullopt, never a null handle.
///   Stream{cu_stream}                              cuda: a CUstream; hip: a hipStream_t
///   Stream{vk_queue}                               vulkan: a VkQueue of the adopted device, submitted to
///   Stream::command_buffer(vk_command_buffer)      vulkan: a VkCommandBuffer in the recording state,
///                                                  recorded into; the application submits it
/// docs/runtime.md ("The application's stream") has what each target does with each.
struct Stream {
  enum class Kind : uint8_t {
    Queue,          // what the work is submitted to: CUstream, hipStream_t, VkQueue
    CommandBuffer,  // what the work is recorded into, and nothing submitted: VkCommandBuffer
  };
  void* handle = nullptr;
  Kind kind = Kind::Queue;
  static Stream command_buffer(void* handle) { return {handle, Kind::CommandBuffer}; }
};

/// The application's Vulkan device, for Target::adopt_vulkan: tilegen runs on it, through the
/// application's loader, and never destroys any of it. Handles are Vulkan's as void* (VkInstance,
/// VkPhysicalDevice, VkDevice and VkQueue are pointers). docs/embedding.md §9 lists what the
/// device must have been created with.
struct VulkanDevice {
  void* instance = nullptr;         // VkInstance
  uint32_t api_version = 0;         // the instance's VkApplicationInfo::apiVersion: 1.3 or later
  void* physical_device = nullptr;  // VkPhysicalDevice of that instance
  void* device = nullptr;           // VkDevice made by vkCreateDevice(physical_device, create_info)
  /// The VkDeviceCreateInfo* the device was made with (its queues, extensions and feature
  /// structures), read during the call only: tilegen uses exactly what it enabled.
  const void* create_info = nullptr;
  uint32_t queue_family = 0;  // a compute queue family among create_info's queues
  void* queue = nullptr;      // a VkQueue of that family: tilegen's own submissions (copies, launches
                              // without a stream), which the application must not submit to meanwhile
  /// The application's vkGetInstanceProcAddr (reinterpret_cast<void*>); null: libvulkan.so.1's.
  void* get_instance_proc_addr = nullptr;
};

/// What the pointers a device context allocates are: what decides whether a host tensor runs in
/// place, and what memory Target::wrap and DLPack exchange with the application.
enum class MemorySpace : uint8_t {
  Handles,  // the plugin's own handles (vulkan: VkBuffer records): nothing is wrapped or exchanged
  Host,     // host memory (cpu, interp): any host pointer is this device's memory
  Cuda,     // CUDA device memory of the device opened (its probe index is its CUDA ordinal)
  Rocm,     // HIP device memory of the device opened (its probe index is its HIP ordinal)
};

/// An open device. Not thread-safe: one host thread at a time per context.
class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* ptr) = 0;
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// Prepare an artifact for launching on this device (load a module, ...). Called once.
  virtual std::shared_ptr<void> load(const Artifact& a, const Function& lowered) = 0;
  /// Launch synchronously-ordered work; args follow lowered.params, sizes omitted.
  virtual void launch(const std::shared_ptr<void>& loaded, const Function& lowered,
                      const std::vector<LaunchArg>& args) = 0;
  virtual void synchronize() = 0;
  /// Milliseconds of each of `runs` launches, timed on the device (events, timestamps).
  virtual std::vector<double> time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                            const std::vector<LaunchArg>& args, int runs);
  /// Evict the device's caches (L2) between timed runs, so each run reads its inputs from memory.
  /// Default: nothing to flush (the interpreter).
  virtual void flush_l2() {}

  /// Whose addresses this device's buffers are (MemorySpace). Host: the runtime runs a launch on
  /// HostTensor arguments in place (no copy) and Target::wrap takes any host pointer. Default:
  /// Handles. This and pointer_alignment() are constant for the context's life: the runtime asks
  /// them without the device's lock.
  virtual MemorySpace memory_space() const { return MemorySpace::Handles; }
  /// The alignment in bytes that this device's kernels need of a tensor's first element, besides
  /// the element's own size (which every target needs): GPU kernels move 16-byte vectors, so a
  /// pointer they take must be a multiple of 16. A tensor argument that is not is staged
  /// (HostTensor) or refused (Target::wrap, from_dlpack). Default: 16.
  virtual std::size_t pointer_alignment() const { return 16; }
  /// A tg::Error saying why, unless [ptr, ptr + bytes) is memory this device's kernels may use as
  /// a tensor (Target::wrap, from_dlpack check each pointer here):
  ///   cuda: a host pointer  →  "it is host memory, not memory of device 0"
  /// Default: refuses every pointer (a context whose buffers are handles, as vulkan's on its own
  /// device, cannot take memory it did not allocate).
  virtual void check_pointer(const void* ptr, std::size_t bytes);
  /// Launches, timings, copies and synchronize() go to the application's `stream` from this call
  /// until the next one; std::nullopt: back to the context's own. The runtime calls it under the
  /// device's lock around one launch or profile, and a handle it refuses is a tg::Error saying why
  /// (another device's stream). Default: refuses every stream (a target with no streams).
  virtual void use_stream(const std::optional<Stream>& stream);
  /// The API's own handle of a buffer this context allocated, for the application to use in its
  /// own commands (DeviceBuffer::native_handle): vulkan's VkBuffer. Default: ptr itself (the
  /// device address of cuda and hip, the host pointer of cpu).
  virtual void* native_handle(void* ptr) const { return ptr; }
  /// What a DeviceBuffer over the application's memory holds (Target::wrap), once check_pointer
  /// has taken [ptr, ptr + bytes): default ptr itself (an address is its own handle); vulkan, a
  /// record of its own over the application's VkBuffer. unwrap_memory(wrapped) forgets it when the
  /// buffer goes and never frees the application's memory. Default: nothing to forget.
  virtual void* wrap_memory(void* ptr, std::size_t bytes) { return ptr; }
  virtual void unwrap_memory(void* wrapped) {}
};

struct ProbeResult {
  bool available = false;
  std::string reason;              // why not, when unavailable
  std::vector<TargetInfo> devices; // one per device
};

class TargetPlugin {
 public:
  virtual ~TargetPlugin() = default;
  virtual std::string name() const = 0;
  /// Look for the runtime and devices (dlopen here, never at load time). Cheap; may be cached.
  virtual ProbeResult probe() = 0;
  /// The passes from the builder's IR to what codegen() accepts, in order, beginning with
  /// bind_sizes_pass(opt.sizes) (tilegen/passes/bind_sizes.h): the whole lowering is this list,
  /// so `tilegen ir --after all` shows every stage. The runtime refuses a list that does not
  /// begin so. docs/passes.md shows each target's list (a unit test holds it to this).
  virtual std::vector<PassEntry> pipeline(const TargetInfo& info, const CompileOptions& opt) = 0;
  /// Lowered IR (sizes bound) → source and binary. Must not need a device: `tilegen source`
  /// runs it on machines without one.
  virtual Artifact codegen(const Function& lowered, const TargetInfo& info, const CompileOptions& opt) = 0;
  /// Open device `index` of probe().devices.
  virtual std::unique_ptr<DeviceContext> open(int index) = 0;
  /// A context on the application's Vulkan device (Target::adopt_vulkan), and in `info` what the
  /// passes and codegen() see of it: what the device was created with, not all it could do. A
  /// device tilegen cannot run on is a tg::Error naming what it lacks:
  ///   {device, create_info without vulkanMemoryModel}  →  "... was created without vulkanMemoryModel ..."
  /// Default: a tg::Error (only vulkan runs on an application's Vulkan device).
  virtual std::unique_ptr<DeviceContext> adopt_vulkan(const VulkanDevice& device, TargetInfo& info);
  /// The CompileOptions::params keys this target reads besides common_param_keys(), with their
  /// values, defaults and environment variables. Default: none.
  virtual std::vector<ParamKey> param_keys() const { return {}; }
  /// The TargetInfo for an architecture given by name, for codegen without a device
  /// (`tilegen source --target cuda --arch sm_80`). Default: throws tg::Error.
  virtual TargetInfo info_for_arch(const std::string& arch);
};

/// The keys `plugin` takes: common_param_keys(), then its param_keys().
std::vector<ParamKey> known_param_keys(const TargetPlugin& plugin);
/// A tg::Error at `where` unless every key of opt.params is one `plugin` takes (the error lists
/// them) with a value that key takes (the error names the key and what it takes).
void check_compile_options(const TargetPlugin& plugin, const CompileOptions& opt,
                           const SourceLoc& where = {});
/// opt as the runtime compiles it: checked as check_compile_options does, every value canonical,
/// and every key `plugin` takes given a value: opt's, else its environment variable's where that
/// is set (a value the key does not take is a tg::Error naming the variable and the key), else its
/// default. The one place the environment reaches a compile: Target::compile and codegen_for call
/// it before anything else, so a value gives the same kernel-cache key and binary whether it came
/// from params, from the environment or from the default.
///   cuda, {} with TILEGEN_CUDA_LDMATRIX=off  →  {"check_bounds": "none", "cp_async": "1", "ldmatrix": "0"}
CompileOptions resolve_compile_options(const TargetPlugin& plugin, CompileOptions opt,
                                       const SourceLoc& where = {});
/// For plugins: key's value in opt.params, else its default, canonical (a value it does not take
/// is a tg::Error naming the key).
std::string param_text(const CompileOptions& opt, const ParamKey& key);
/// param_text of a Switch, as a bool.
bool param_on(const CompileOptions& opt, const ParamKey& key);
/// param_text of a Count, as a number.
int64_t param_count(const CompileOptions& opt, const ParamKey& key);
/// Whether opt asks for checked element accesses (params["check_bounds"] == "all"); a
/// pipeline() that says yes runs check_element_accesses where its IR still knows its threads.
bool checks_accesses(const CompileOptions& opt);

}  // namespace tg

/// Put before a plugin's entry function: exported, C linkage, visible under -fvisibility=hidden.
///   TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() { ... }
#define TILEGEN_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
struct TgPluginEntry {
  uint32_t abi_version;
  const char* name;
  tg::TargetPlugin* (*create)();
};
}
