// Private to the runtime: what plugin_loader.cpp, interp_target.cpp and runtime*.cpp share.
// Not installed; plugins see only plugin.h and runtime.h.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/runtime.h"

namespace tg {

/// The built-in reference-interpreter target (interp_target.cpp), registered without dlopen.
std::unique_ptr<TargetPlugin> make_interp_plugin();

/// One plugin as the loader found it, in discovery order. `plugin` is null when loading failed,
/// and `status.reason` says why.
struct PluginRecord {
  TargetStatus status;
  TargetPlugin* plugin = nullptr;
  /// Library path, size and modification time ("(built in)" and the tilegen version for interp):
  /// part of the kernel-cache key, so a rebuilt plugin never reads its predecessor's binaries.
  std::string identity;
};

/// Scan the plugin directories, load what is new (each library once per process) and probe it.
std::vector<PluginRecord> discover_plugins();
/// The one plugin of that name, loaded and probed alone (interp included); nullopt when no
/// library of that name is found.
std::optional<PluginRecord> discover_plugin(const std::string& name);

/// The directories searched, in order: TILEGEN_PLUGIN_PATH, the install's plugin directory
/// (tilegen/ in the directory of libtilegen.so), the directory of libtilegen.so.
std::vector<std::string> plugin_search_dirs();

/// An open device of one target: the plugin's DeviceContext, shared by every Target, buffer and
/// compiled kernel that uses it, and closed when the last of them goes.
struct DeviceState {
  TargetPlugin* plugin = nullptr;
  std::string target;  // plugin name
  int index = 0;       // device index in probe().devices
  TargetInfo info;
  std::string identity;  // PluginRecord::identity
  std::unique_ptr<DeviceContext> ctx;
  std::mutex mu;  // a DeviceContext serves one host thread at a time
};

struct Target::Impl {
  std::shared_ptr<DeviceState> dev;
};

/// "[64, 32]"
std::string shape_str(const std::vector<int64_t>& shape);

/// "device 0", or for the application's device (Target::adopt_vulkan, index -1)
/// "the application's device llvmpipe (LLVM 19.1.7, 256 bits)".
std::string device_text(const DeviceState& dev);

/// The alignment a tensor's first element needs on `dev`: its element's size (natural alignment,
/// which every target's loads assume) and the device's pointer_alignment(), whichever is more.
std::size_t tensor_alignment(const DeviceState& dev, DType t);

/// A tg::Error at `loc`, its message beginning with `what` ("wrap"), unless `ptr` may be the
/// memory of a t[shape] tensor on `dev`: not null, a byte size that fits, aligned
/// (tensor_alignment), and memory of that device as far as its context can tell (check_pointer).
void check_application_memory(DeviceState& dev, const void* ptr, const std::vector<int64_t>& shape, DType t,
                              const std::string& what, const SourceLoc& loc);

/// What DeviceBuffer and Target keep private, for the runtime's own files (the DLPack exchange).
struct RuntimeAccess {
  /// A buffer over `memory` on `dev`: owned (freed by memory's deleter through the context) or the
  /// application's (memory's deleter frees nothing of tilegen's).
  static DeviceBuffer make(std::shared_ptr<DeviceState> dev, std::shared_ptr<void> memory,
                           std::vector<int64_t> shape, DType t, bool owns);
  static const std::shared_ptr<DeviceState>& device(const DeviceBuffer& b) { return b.dev_; }
  static const std::shared_ptr<DeviceState>& device(const Target& t) { return t.impl_->dev; }
};

/// A scalar launch argument (a double or an int64_t) converted to its parameter's dtype t. A
/// value that t cannot hold is a tg::Error naming `label` at `loc`: 3.7 or NaN for an integer,
/// 100000 for i8, 7 for bool, 1e6 for f16 (it would become infinity). Floats round to nearest.
Scalar scalar_argument(const KernelArg& a, DType t, const std::string& label, const SourceLoc& loc);

}  // namespace tg
