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
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/pass_manager.h"

namespace tg {

// 2: TargetInfo gained max_grid (its layout changed). 3: TargetPlugin::param_keys.
// 4: TargetInfo gained portable (select() ranks devices by their TargetInfo, not plugin names).
// 5: CompileOptions::sizes, and pipeline() begins with bind_sizes_pass(opt.sizes).
inline constexpr uint32_t kPluginAbiVersion = 5;

/// Options of one compilation. `params` are target knobs ("fast_math", ...): the keys of
/// kCommonParamKeys and of the target's param_keys(); any other key is a tg::Error.
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

/// Keys every target takes. check_bounds: "all" checks every element access at run time and
/// reports the first out-of-range one (the pass check_element_accesses); "none", the default, does not.
inline const std::vector<std::string> kCommonParamKeys = {"check_bounds"};

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
  /// The CompileOptions::params keys this target reads besides kCommonParamKeys. Default: none.
  virtual std::vector<std::string> param_keys() const { return {}; }
  /// The TargetInfo for an architecture given by name, for codegen without a device
  /// (`tilegen source --target cuda --arch sm_80`). Default: throws tg::Error.
  virtual TargetInfo info_for_arch(const std::string& arch);
};

/// A tg::Error at `where` unless every key of opt.params is one `plugin` takes (listing them), and
/// check_bounds has a value it can take. Called by the runtime before any pass runs.
void check_compile_options(const TargetPlugin& plugin, const CompileOptions& opt,
                           const SourceLoc& where = {});
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
