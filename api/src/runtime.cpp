// The runtime facade, part one: choosing a target, opening its device, device buffers.
// Compiling and launching are in runtime_kernel.cpp; finding plugins in plugin_loader.cpp.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "runtime_internal.h"

namespace tg {
namespace {

/// Open devices by (plugin, index), weakly: a device closes when its last user goes, and two
/// Targets for one device share one context, so their buffers and kernels mix freely.
std::shared_ptr<DeviceState> open_device(const PluginRecord& rec, int index, const SourceLoc& loc) {
  static std::mutex mu;
  static auto* open = new std::map<std::pair<TargetPlugin*, int>, std::weak_ptr<DeviceState>>;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*open)[{rec.plugin, index}];
  if (auto dev = slot.lock()) return dev;
  auto dev = std::make_shared<DeviceState>();
  dev->plugin = rec.plugin;
  dev->target = rec.status.name;
  dev->index = index;
  dev->info = rec.status.devices[std::size_t(index)];
  dev->identity = rec.identity;
  std::string what = "target '" + dev->target + "' device " + std::to_string(index) + " (" +
                     dev->info.device_name + ") could not be opened: ";
  try {
    dev->ctx = rec.plugin->open(index);
  } catch (const std::exception& e) {
    throw Error(what + e.what(), loc);
  }
  if (!dev->ctx) throw Error(what + "the plugin returned no device context", loc);
  slot = dev;
  return dev;
}

Target select_from_env(const std::string& spec, const SourceLoc& loc) {
  std::string name = spec;
  int device = 0;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    char* end = nullptr;
    long v = std::strtol(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || v < 0 || v > 1 << 20)
      throw Error("TILEGEN_TARGET=" + spec + ": the device after ':' must be a number, as in cuda:1", loc);
    device = int(v);
  }
  try {
    return Target::get(name, device, std::source_location::current());
  } catch (const Error& e) {
    throw Error("TILEGEN_TARGET=" + spec + ": " + e.message(), loc);
  }
}

}  // namespace

std::string device_text(const DeviceState& dev) {
  return dev.index >= 0 ? "device " + std::to_string(dev.index)
                        : "the application's device " + dev.info.device_name;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {
/// The element count of a shape, checked: an overflowing count (or byte size) is a tg::Error
/// naming the shape rather than a wrapped, too small buffer.
int64_t checked_shape_numel(const std::vector<int64_t>& shape, DType t, const char* what,
                            const SourceLoc& at = {}) {
  for (int64_t d : shape)
    if (d < 0) return 0;  // a negative dimension: its user reports it (alloc, the argument checks)
  auto n = checked_numel(shape.data(), shape.size(), t);
  if (!n)
    throw Error(std::string(what) + " " + std::string(t.name()) + shape_str(shape) +
                    ": its element count or byte size does not fit in 64 bits; use a smaller shape",
                at);
  return *n;
}
}  // namespace

int64_t HostTensor::numel() const { return checked_shape_numel(shape, dtype, "host tensor"); }

// ---- Target

Target Target::select(Loc loc) {
  SourceLoc where = SourceLoc::from(loc);
  if (const char* env = std::getenv("TILEGEN_TARGET"); env && *env) return select_from_env(env, where);
  std::vector<PluginRecord> all = discover_plugins();
  std::vector<TargetStatus> statuses;
  for (const PluginRecord& r : all) statuses.push_back(r.status);
  std::string failures;
  for (const DeviceChoice& c : selection_order(statuses)) {
    try {
      return Target(std::make_shared<Impl>(Impl{open_device(all[c.target], c.device, where)}));
    } catch (const Error& e) {
      failures += "; " + e.message();  // a device that will not open: try the next best
    }
  }
  throw Error("no target could be opened" + failures, where);
}

Target Target::get(const std::string& name, int device, Loc loc) {
  SourceLoc where = SourceLoc::from(loc);
  // Only this plugin is loaded and probed: a broken library beside it cannot touch this program.
  std::optional<PluginRecord> it = discover_plugin(name);
  if (!it) {
    std::string names;
    for (const std::string& n : target_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error("unknown target '" + name + "'; the targets found are " + names +
                    " (`tilegen targets` says which are available here)",
                where);
  }
  if (!it->status.available) throw Error("target '" + name + "' is unavailable: " + it->status.reason, where);
  int count = int(it->status.devices.size());
  if (device < 0 || device >= count)
    throw Error("target '" + name + "' has " + std::to_string(count) +
                    " device(s), numbered from 0; device " + std::to_string(device) + " does not exist",
                where);
  return Target(std::make_shared<Impl>(Impl{open_device(*it, device, where)}));
}

Target Target::adopt_vulkan(const VulkanDevice& device, Loc loc) {
  SourceLoc where = SourceLoc::from(loc);
  std::optional<PluginRecord> rec = discover_plugin("vulkan");
  if (!rec || !rec->plugin)
    throw Error("adopt_vulkan: the vulkan target is not here: " +
                    (rec ? rec->status.reason : std::string("no libtilegen_vulkan.so was found")) +
                    " (`tilegen targets` lists the targets found)",
                where);
  auto dev = std::make_shared<DeviceState>();
  dev->plugin = rec->plugin;
  dev->target = rec->status.name;
  dev->index = -1;  // not one of the probe's devices, and shared with no other Target
  dev->identity = rec->identity;
  try {
    dev->ctx = rec->plugin->adopt_vulkan(device, dev->info);
  } catch (const std::exception& e) {
    throw Error(std::string("adopt_vulkan: ") + e.what(), where);
  }
  if (!dev->ctx) throw Error("adopt_vulkan: the vulkan plugin returned no device context", where);
  return Target(std::make_shared<Impl>(Impl{std::move(dev)}));
}

const std::string& Target::name() const { return impl_->dev->target; }
const TargetInfo& Target::info() const { return impl_->dev->info; }
TargetPlugin& Target::plugin() const { return *impl_->dev->plugin; }

DeviceBuffer Target::alloc(std::vector<int64_t> shape, DType t, Loc loc) const {
  for (int64_t d : shape)
    if (d < 0)
      throw Error("alloc: shape " + shape_str(shape) + " has a negative dimension", SourceLoc::from(loc));
  checked_shape_numel(shape, t, "alloc:", SourceLoc::from(loc));
  DeviceBuffer b;
  b.dev_ = impl_->dev;
  b.shape_ = std::move(shape);
  b.dtype_ = t;
  std::shared_ptr<DeviceState> dev = impl_->dev;
  void* p = nullptr;
  try {
    std::lock_guard<std::mutex> lock(dev->mu);
    p = dev->ctx->allocate(b.bytes());
  } catch (const std::exception& e) {
    throw Error("alloc of " + std::to_string(b.bytes()) + " bytes on " + dev->target + " failed: " + e.what(),
                SourceLoc::from(loc));
  }
  b.ptr_ = std::shared_ptr<void>(p, [dev](void* q) {
    std::lock_guard<std::mutex> lock(dev->mu);
    try {
      dev->ctx->release(q);
    } catch (...) {  // a release failing in a destructor has nobody to tell
    }
  });
  return b;
}

std::size_t tensor_alignment(const DeviceState& dev, DType t) {
  return std::max<std::size_t>(storage_bytes(t, 1), dev.ctx->pointer_alignment());
}

void check_application_memory(DeviceState& dev, const void* ptr, const std::vector<int64_t>& shape, DType t,
                              const std::string& what, const SourceLoc& loc) {
  const std::string tensor = std::string(t.name()) + shape_str(shape);
  for (int64_t d : shape)
    if (d < 0) throw Error(what + ": shape " + shape_str(shape) + " has a negative dimension", loc);
  if (!ptr) throw Error(what + ": the pointer for " + tensor + " is null", loc);
  const std::size_t bytes = storage_bytes(t, checked_shape_numel(shape, t, (what + ":").c_str(), loc));
  // A handle (vulkan's VkBuffer) is no address: nothing to align.
  if (const std::size_t align = tensor_alignment(dev, t);
      dev.ctx->memory_space() != MemorySpace::Handles && reinterpret_cast<uintptr_t>(ptr) % align)
    throw Error(what + ": the pointer for " + tensor + " is not a multiple of " + std::to_string(align) +
                    " bytes, as target '" + dev.target + "' needs of a tensor of " + std::string(t.name()) +
                    "; pass aligned memory (or copy it in with Target::upload)",
                loc);
  try {
    std::lock_guard<std::mutex> lock(dev.mu);
    dev.ctx->check_pointer(ptr, bytes);
  } catch (const std::exception& e) {
    throw Error(what + ": target '" + dev.target + "' " + device_text(dev) + " cannot use the memory for " +
                    tensor + ": " + e.what(),
                loc);
  }
}

DeviceBuffer RuntimeAccess::make(std::shared_ptr<DeviceState> dev, std::shared_ptr<void> memory,
                                      std::vector<int64_t> shape, DType t, bool owns) {
  DeviceBuffer b;
  b.dev_ = std::move(dev);
  b.ptr_ = std::move(memory);
  b.shape_ = std::move(shape);
  b.dtype_ = t;
  b.owns_ = owns;
  return b;
}

DeviceBuffer Target::wrap(void* ptr, std::vector<int64_t> shape, DType t, Loc loc) const {
  const SourceLoc where = SourceLoc::from(loc);
  check_application_memory(*impl_->dev, ptr, shape, t, "wrap", where);
  std::shared_ptr<DeviceState> dev = impl_->dev;
  void* held = nullptr;
  try {
    std::lock_guard<std::mutex> lock(dev->mu);
    held = dev->ctx->wrap_memory(ptr, storage_bytes(t, checked_shape_numel(shape, t, "wrap:", where)));
  } catch (const std::exception& e) {
    throw Error(
        "wrap: target '" + dev->target + "' " + device_text(*dev) + " cannot take the memory: " + e.what(),
        where);
  }
  // The deleter frees none of the application's memory; it holds the device open while the buffer
  // lives, as alloc's does.
  return RuntimeAccess::make(dev,
                             std::shared_ptr<void>(held,
                                                   [dev](void* q) {
                                                     std::lock_guard<std::mutex> lock(dev->mu);
                                                     try {
                                                       dev->ctx->unwrap_memory(q);
                                                     } catch (...) {  // nobody to tell in a destructor
                                                     }
                                                   }),
                             std::move(shape), t, false);
}

DeviceBuffer Target::upload(const HostTensor& h, Loc loc) const {
  if (!h.data) throw Error("upload: the host tensor's data is null", SourceLoc::from(loc));
  DeviceBuffer b = alloc(h.shape, h.dtype, loc);
  b.upload(h.data, h.bytes(), loc);
  return b;
}

// ---- DeviceBuffer

int64_t DeviceBuffer::numel() const { return checked_shape_numel(shape_, dtype_, "buffer"); }

const std::string& DeviceBuffer::target() const {
  static const std::string none;
  return dev_ ? dev_->target : none;
}

int DeviceBuffer::device_index() const { return dev_ ? dev_->index : -1; }

void* DeviceBuffer::native_handle() const { return dev_ ? dev_->ctx->native_handle(ptr_.get()) : nullptr; }

void DeviceBuffer::upload(const void* host, std::size_t n, Loc loc) {
  std::string what = std::string(dtype_.name()) + shape_str(shape_);
  if (!dev_)
    throw Error("upload into an empty DeviceBuffer: make it with Target::alloc", SourceLoc::from(loc));
  if (!host) throw Error("upload into " + what + ": the host pointer is null", SourceLoc::from(loc));
  if (n != bytes())
    throw Error("upload of " + std::to_string(n) + " bytes into a buffer of " + std::to_string(bytes()) +
                    " bytes (" + what + "): pass exactly the buffer's size",
                SourceLoc::from(loc));
  std::lock_guard<std::mutex> lock(dev_->mu);
  dev_->ctx->copy_to_device(ptr_.get(), host, n);
}

void DeviceBuffer::download(void* host, std::size_t n, Loc loc) const {
  std::string what = std::string(dtype_.name()) + shape_str(shape_);
  if (!dev_)
    throw Error("download from an empty DeviceBuffer: make it with Target::alloc", SourceLoc::from(loc));
  if (!host) throw Error("download from " + what + ": the host pointer is null", SourceLoc::from(loc));
  if (n != bytes())
    throw Error("download of " + std::to_string(bytes()) + " bytes (" + what + ") into " + std::to_string(n) +
                    " bytes of host memory: pass exactly the buffer's size",
                SourceLoc::from(loc));
  std::lock_guard<std::mutex> lock(dev_->mu);
  dev_->ctx->copy_to_host(host, ptr_.get(), n);
}

}  // namespace tg
