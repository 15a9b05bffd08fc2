// See hip_runtime.h. The HIP API is declared here (the few functions used, C ABI), so the plugin
// builds without ROCm. Every failing call becomes a tg::Error naming the call and HIP's message.
#include "hip_runtime.h"

#include <dlfcn.h>

#include <fstream>
#include <optional>
#include <string>

#include "tilegen/kernel_params.h"
#include "hip_target_info.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/common/vendor_library.h"
#include "tilegen/timed_launches.h"

namespace tg::hip {

namespace {

using hipError_t = int;
using hipModule_t = void*;
using hipFunction_t = void*;
using hipStream_t = void*;
using hipEvent_t = void*;
constexpr int kHtoD = 1, kDtoH = 2;  // hipMemcpyKind
// hipPointer_attribute (the CUDA driver's numbering, stable across ROCm releases; hipMemoryType's
// values are not, so the memory type is never asked).
constexpr int kAttrDeviceOrdinal = 9, kAttrRangeStart = 11, kAttrRangeSize = 12;

#define TG_HIP_SYMBOLS(X)                                                                              \
  X(hipInit, hipError_t, (unsigned))                                                                   \
  X(hipGetDeviceCount, hipError_t, (int*))                                                             \
  X(hipSetDevice, hipError_t, (int))                                                                   \
  X(hipDeviceGetName, hipError_t, (char*, int, int))                                                   \
  X(hipGetErrorString, const char*, (hipError_t))                                                      \
  X(hipMalloc, hipError_t, (void**, std::size_t))                                                      \
  X(hipFree, hipError_t, (void*))                                                                      \
  X(hipMemcpy, hipError_t, (void*, const void*, std::size_t, int))                                     \
  X(hipMemcpyAsync, hipError_t, (void*, const void*, std::size_t, int, hipStream_t))                   \
  X(hipPointerGetAttribute, hipError_t, (void*, int, void*))                                           \
  X(hipStreamGetDevice, hipError_t, (hipStream_t, int*))                                               \
  X(hipMemsetAsync, hipError_t, (void*, int, std::size_t, hipStream_t))                                \
  X(hipStreamCreate, hipError_t, (hipStream_t*))                                                       \
  X(hipStreamDestroy, hipError_t, (hipStream_t))                                                       \
  X(hipStreamSynchronize, hipError_t, (hipStream_t))                                                   \
  X(hipModuleLoadData, hipError_t, (hipModule_t*, const void*))                                        \
  X(hipModuleUnload, hipError_t, (hipModule_t))                                                        \
  X(hipModuleGetFunction, hipError_t, (hipFunction_t*, hipModule_t, const char*))                      \
  X(hipModuleLaunchKernel, hipError_t,                                                                 \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, \
     void**, void**))                                                                                  \
  X(hipEventCreate, hipError_t, (hipEvent_t*))                                                         \
  X(hipEventDestroy, hipError_t, (hipEvent_t))                                                         \
  X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                                             \
  X(hipEventSynchronize, hipError_t, (hipEvent_t))                                                     \
  X(hipEventElapsedTime, hipError_t, (float*, hipEvent_t, hipEvent_t))

struct Runtime {
  VendorLibrary lib{{"libamdhip64.so", "libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so"},
                    "no ROCm runtime on this machine; an AMD GPU and ROCm are needed to run"};
  std::string error;
#define TG_DECLARE(name, ret, args) ret(*name) args = nullptr;
  TG_HIP_SYMBOLS(TG_DECLARE)
#undef TG_DECLARE

  Runtime() {
#define TG_LOAD(name, ret, args) lib.bind(name, #name, "update ROCm");
    TG_HIP_SYMBOLS(TG_LOAD)
#undef TG_LOAD
    if (lib.ok())
      if (hipError_t r = hipInit(0); r != 0) lib.fail("hipInit failed: " + message(r));
    error = lib.error();
  }
  std::string message(hipError_t r) const {
    const char* s = hipGetErrorString ? hipGetErrorString(r) : nullptr;
    return s ? s : "HIP error " + std::to_string(r);
  }
  void check(hipError_t r, const char* call) const {
    if (r != 0) throw Error(std::string("hip: ") + call + " failed: " + message(r));
  }
};

Runtime& runtime() {
  static Runtime r;
  return r;
}

// The gfx architecture of the index-th GPU node of the kernel driver's topology
// ("gfx_target_version 90402" → gfx942), read there because hipDeviceProp_t's layout changes
// between ROCm releases. HIP numbers the GPU nodes in this order (absent *_VISIBLE_DEVICES).
std::string gfx_of(int index) {
  int gpu = 0;
  for (int node = 0; node < 64; ++node) {
    std::ifstream in("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties");
    if (!in) break;
    std::string key;
    long long value = 0;
    while (in >> key >> value) {
      if (key != "gfx_target_version" || value == 0) continue;
      if (gpu++ != index) break;
      const int major = int(value / 10000), minor = int(value / 100 % 100), step = int(value % 100);
      static const char* hex = "0123456789abcdef";
      return "gfx" + std::to_string(major) + hex[minor % 16] + hex[step % 16];
    }
  }
  throw Error("hip: cannot find the architecture of device " + std::to_string(index) +
              " in /sys/class/kfd/kfd/topology; is the amdgpu driver loaded?");
}

TargetInfo device_info(int index) {
  TargetInfo info = amd_target_info(gfx_of(index));
  char name[256] = {};
  runtime().check(runtime().hipDeviceGetName(name, sizeof name, index), "hipDeviceGetName");
  info.device_name = name;
  return info;
}

struct Loaded {
  hipModule_t module = nullptr;
  struct Entry {
    hipFunction_t fn;
    unsigned grid[3];
    unsigned threads;
  };
  std::vector<Entry> entries;
  ~Loaded() {
    if (module) runtime().hipModuleUnload(module);
  }
};

class HipContext final : public DeviceContext {
 public:
  explicit HipContext(int index) : index_(index) {
    bind();
    runtime().check(runtime().hipStreamCreate(&stream_), "hipStreamCreate");
    info_ = device_info(index);
  }
  ~HipContext() override {
    if (flush_) runtime().hipFree(flush_);
    runtime().hipStreamDestroy(stream_);
  }
  void* allocate(std::size_t bytes) override {
    bind();
    void* p = nullptr;
    runtime().check(runtime().hipMalloc(&p, bytes ? bytes : 1), "hipMalloc");
    return p;
  }
  void release(void* ptr) override {
    bind();
    runtime().hipFree(ptr);
  }
  // On the application's stream a copy goes there, after the work queued on it, and is waited for.
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes, kHtoD); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes, kDtoH); }

  MemorySpace memory_space() const override { return MemorySpace::Rocm; }

  // The pointer must be memory HIP allocated (or registered) on this device, the tensor within it.
  void check_pointer(const void* ptr, std::size_t bytes) override {
    bind();
    Runtime& r = runtime();
    void* p = const_cast<void*>(ptr);
    int ordinal = -1;
    if (hipError_t e = r.hipPointerGetAttribute(&ordinal, kAttrDeviceOrdinal, p); e != 0)
      throw Error("HIP does not know it (" + r.message(e) +
                  "): it is not HIP memory; pass memory from hipMalloc, or copy host memory in with Target::upload");
    if (ordinal != index_)
      throw Error("it is memory of HIP device " + std::to_string(ordinal) + ", not of device " +
                  std::to_string(index_) + "; use Target::get(\"hip\", " + std::to_string(ordinal) + ")");
    void* start = nullptr;
    std::size_t size = 0;
    r.check(r.hipPointerGetAttribute(&start, kAttrRangeStart, p), "hipPointerGetAttribute(RANGE_START_ADDR)");
    r.check(r.hipPointerGetAttribute(&size, kAttrRangeSize, p), "hipPointerGetAttribute(RANGE_SIZE)");
    const std::size_t from = std::size_t(static_cast<const char*>(ptr) - static_cast<const char*>(start));
    if (from + bytes > size)
      throw Error("the tensor's " + std::to_string(bytes) + " bytes run past the end of its allocation (" +
                  std::to_string(size - from) + " bytes from the pointer on)");
  }

  // The stream must be one of this device (0, the null stream, is the current device's).
  void use_stream(const std::optional<Stream>& stream) override {
    if (!stream) {
      app_.reset();
      return;
    }
    if (stream->kind != Stream::Kind::Queue)
      throw Error(
          "it is a command buffer (Stream::command_buffer), which only vulkan records into; pass the "
          "stream itself, Stream{handle}");
    bind();
    int device = -1;
    if (hipError_t e = runtime().hipStreamGetDevice(stream->handle, &device); e != 0)
      throw Error("hipStreamGetDevice failed on it: " + runtime().message(e) + "; pass a live hipStream_t");
    if (device != index_)
      throw Error("it is a stream of HIP device " + std::to_string(device) + ", not of device " +
                  std::to_string(index_) + "; pass a stream of the kernel's device");
    app_ = stream->handle;
  }

  // Code object → module; each kernel's function and launch shape (LDS is static in the code).
  std::shared_ptr<void> load(const Artifact& a, const Function& lowered) override {
    bind();
    auto l = std::make_shared<Loaded>();
    runtime().check(runtime().hipModuleLoadData(&l->module, a.binary.data()), "hipModuleLoadData");
    for (const gpu::KernelPlan& p : gpu::plan_kernels(lowered, info_)) {
      Loaded::Entry e{};
      runtime().check(runtime().hipModuleGetFunction(&e.fn, l->module, p.name.c_str()),
                      "hipModuleGetFunction");
      for (int i = 0; i < 3; ++i) e.grid[i] = 1;
      for (std::size_t i = 0; i < p.kernel->grid.size(); ++i)
        e.grid[i] = unsigned(p.kernel->grid[i].as_int().value_or(1));
      e.threads = unsigned(p.kernel->threads);
      l->entries.push_back(e);
    }
    return l;
  }

  void launch(const std::shared_ptr<void>& loaded, const Function&,
              const std::vector<LaunchArg>& args) override {
    bind();
    KernelParams params(args);
    for (const Loaded::Entry& e : static_cast<Loaded*>(loaded.get())->entries)
      runtime().check(runtime().hipModuleLaunchKernel(e.fn, e.grid[0], e.grid[1], e.grid[2], e.threads, 1, 1,
                                                      0, current(), params.data(), nullptr),
                      "hipModuleLaunchKernel");
  }

  void synchronize() override {
    bind();
    runtime().check(runtime().hipStreamSynchronize(current()), "hipStreamSynchronize");
  }

  std::vector<double> time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                    const std::vector<LaunchArg>& args, int runs) override {
    bind();
    Runtime& r = runtime();
    EventCalls<hipEvent_t, hipStream_t, hipError_t> calls{
        r.hipEventCreate, r.hipEventRecord, r.hipEventSynchronize, r.hipEventElapsedTime, r.hipEventDestroy};
    auto check = [&](hipError_t e, const char* call) { r.check(e, ("hip" + std::string(call)).c_str()); };
    return time_with_events(
        calls, current(), check, [&] { launch(loaded, lowered, args); }, runs);
  }

  // Writing more than the last-level cache (MI300X: 256 MB Infinity Cache) evicts the last run's data.
  void flush_l2() override {
    bind();
    const std::size_t bytes = 512u << 20;
    if (!flush_) runtime().check(runtime().hipMalloc(&flush_, bytes), "hipMalloc");
    runtime().check(runtime().hipMemsetAsync(flush_, 0, bytes, current()), "hipMemsetAsync");
  }

 private:
  void bind() { runtime().check(runtime().hipSetDevice(index_), "hipSetDevice"); }
  // Where launches, copies and timings go: the application's stream while one is given.
  hipStream_t current() const { return app_ ? *app_ : stream_; }
  void copy(void* dst, const void* src, std::size_t bytes, int kind) {
    bind();
    synchronize();
    if (!bytes) return;
    const char* what = kind == kHtoD ? "hipMemcpy(HtoD)" : "hipMemcpy(DtoH)";
    if (!app_) return runtime().check(runtime().hipMemcpy(dst, src, bytes, kind), what);
    runtime().check(runtime().hipMemcpyAsync(dst, src, bytes, kind, *app_), what);
    synchronize();
  }
  int index_;
  std::optional<hipStream_t> app_;
  hipStream_t stream_ = nullptr;
  void* flush_ = nullptr;
  TargetInfo info_;
};

}  // namespace

ProbeResult probe_runtime() {
  ProbeResult r;
  Runtime& rt = runtime();
  if (!rt.error.empty()) {
    r.reason = rt.error;
    return r;
  }
  int count = 0;
  if (hipError_t e = rt.hipGetDeviceCount(&count); e != 0 || count == 0) {
    r.reason = e != 0 ? "hipGetDeviceCount failed: " + rt.message(e) : "no AMD GPU";
    return r;
  }
  try {
    for (int i = 0; i < count; ++i) r.devices.push_back(device_info(i));
  } catch (const Error& e) {
    r.devices.clear();
    r.reason = e.what();
    return r;
  }
  r.available = true;
  return r;
}

std::unique_ptr<DeviceContext> open_device(int index) {
  if (!runtime().error.empty()) throw Error("hip: " + runtime().error);
  return std::make_unique<HipContext>(index);
}

}  // namespace tg::hip
