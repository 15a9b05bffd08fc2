// CUDA driver API through dlopen. Every failing call becomes a tg::Error naming the call and
// the driver's message.
#include "cuda_driver.h"

#include <cuda.h>

#include <optional>

#include "cuda_codegen.h"
#include "tilegen/common/vendor_library.h"
#include "tilegen/kernel_params.h"
#include "cuda_target_info.h"
#include "tilegen/timed_launches.h"

namespace tg::cuda {

namespace {

struct Driver {
  VendorLibrary lib{{"libcuda.so.1"}, "no NVIDIA driver on this machine"};
  std::string error;
#define TG_CU(name, sym) decltype(&::name) name = nullptr;
#include "cuda_driver_symbols.inc"
#undef TG_CU

  Driver() {
#define TG_CU(name, sym) lib.bind(name, sym, "update the NVIDIA driver");
#include "cuda_driver_symbols.inc"
#undef TG_CU
    if (lib.ok())
      if (CUresult r = cuInit(0); r != CUDA_SUCCESS) lib.fail("cuInit failed: " + message(r));
    error = lib.error();
  }
  std::string message(CUresult r) const {
    const char* s = nullptr;
    if (cuGetErrorString && cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
    return "CUDA error " + std::to_string(int(r));
  }
  void check(CUresult r, const char* call) const {
    if (r != CUDA_SUCCESS) throw Error(std::string("cuda: ") + call + " failed: " + message(r));
  }
};

Driver& driver() {
  static Driver d;
  return d;
}

int attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  driver().check(driver().cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
  return v;
}

TargetInfo device_info(CUdevice dev) {
  int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  int minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  TargetInfo info = nvidia_target_info(major * 10 + minor);
  char name[256] = {};
  driver().check(driver().cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  info.device_name = name;
  info.shared_mem_bytes = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.max_threads = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  return info;
}

// A loaded module and its kernels with their launch shapes.
struct Loaded {
  CUmodule module = nullptr;
  struct Entry {
    CUfunction fn;
    unsigned grid[3];
    unsigned threads;
    unsigned shared;
    std::vector<TensorMapSpec> maps;  // its bulk copies' tensor maps, after the function's params
  };
  std::vector<Entry> entries;
  ~Loaded() {
    if (module) driver().cuModuleUnload(module);
  }
};

class CudaContext final : public DeviceContext {
 public:
  explicit CudaContext(int index) : index_(index) {
    Driver& d = driver();
    d.check(d.cuDeviceGet(&dev_, index), "cuDeviceGet");
    d.check(d.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    d.check(d.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
    // A blocking stream: it orders after the synchronous cuMemcpy calls, which use the legacy stream.
    d.check(d.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
    info_ = device_info(dev_);
  }
  ~CudaContext() override {
    Driver& d = driver();
    if (flush_) d.cuMemFree_v2(flush_);
    d.cuStreamDestroy_v2(stream_);
    d.cuDevicePrimaryCtxRelease_v2(dev_);
  }

  void* allocate(std::size_t bytes) override {
    bind();
    CUdeviceptr p = 0;
    driver().check(driver().cuMemAlloc_v2(&p, bytes ? bytes : 1), "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void release(void* ptr) override {
    bind();
    driver().cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr));
  }
  // On the application's stream a copy goes there, after the work queued on it, and is waited
  // for: a synchronous cuMemcpy would run on the legacy stream, unordered with a non-blocking one.
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    bind();
    Driver& d = driver();
    if (!bytes) return;
    if (!app_) {
      d.check(d.cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
      return;
    }
    d.check(d.cuMemcpyHtoDAsync_v2(reinterpret_cast<CUdeviceptr>(dst), src, bytes, *app_), "cuMemcpyHtoDAsync");
    synchronize();
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    bind();
    Driver& d = driver();
    synchronize();
    if (!bytes) return;
    if (!app_) {
      d.check(d.cuMemcpyDtoH_v2(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
      return;
    }
    d.check(d.cuMemcpyDtoHAsync_v2(dst, reinterpret_cast<CUdeviceptr>(src), bytes, *app_), "cuMemcpyDtoHAsync");
    synchronize();
  }

  MemorySpace memory_space() const override { return MemorySpace::Cuda; }

  // The driver knows every allocation of the process's contexts (unified addressing): the
  // pointer must be device (or managed) memory of this device, and the tensor within it.
  void check_pointer(const void* ptr, std::size_t bytes) override {
    bind();
    Driver& d = driver();
    const auto p = reinterpret_cast<CUdeviceptr>(ptr);
    unsigned type = 0;
    if (CUresult r = d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p); r != CUDA_SUCCESS)
      throw Error("the CUDA driver does not know it (" + d.message(r) +
                  "): it is not CUDA memory; pass memory from cuMemAlloc/cudaMalloc, or copy host memory in "
                  "with Target::upload");
    int managed = 0, ordinal = -1;
    d.check(d.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p),
            "cuPointerGetAttribute(IS_MANAGED)");
    if (type == CU_MEMORYTYPE_HOST && !managed)
      throw Error("it is host memory (pinned or registered with CUDA), not memory of a device; copy it in "
                  "with Target::upload");
    d.check(d.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p),
            "cuPointerGetAttribute(DEVICE_ORDINAL)");
    if (!managed && ordinal != index_)
      throw Error("it is memory of CUDA device " + std::to_string(ordinal) + ", not of device " +
                  std::to_string(index_) + "; use Target::get(\"cuda\", " + std::to_string(ordinal) + ")");
    CUdeviceptr start = 0;
    std::size_t size = 0;
    d.check(d.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p),
            "cuPointerGetAttribute(RANGE_START_ADDR)");
    d.check(d.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p), "cuPointerGetAttribute(RANGE_SIZE)");
    if (p - start + bytes > size)
      throw Error("the tensor's " + std::to_string(bytes) + " bytes run past the end of its allocation (" +
                  std::to_string(size - (p - start)) + " bytes from the pointer on)");
  }

  // The stream must belong to this device's primary context (the one the CUDA runtime, and so
  // PyTorch, uses); 0 is the legacy default stream, as in CUDA.
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
    auto s = static_cast<CUstream>(stream->handle);
    CUcontext owner = nullptr;
    if (CUresult r = driver().cuStreamGetCtx(s, &owner); r != CUDA_SUCCESS)
      throw Error("cuStreamGetCtx failed on it: " + driver().message(r) + "; pass a live CUstream");
    if (owner != ctx_)
      throw Error("the stream belongs to another CUDA context than device " + std::to_string(index_) +
                  "'s primary context; pass a stream of that device (cudaStreamCreate after cudaSetDevice(" +
                  std::to_string(index_) + "))");
    app_ = s;
  }

  // cubin → module; each kernel's function, grid, threads and dynamic shared memory (above
  // 48 KB it needs the opt-in attribute).
  std::shared_ptr<void> load(const Artifact& a, const Function& lowered) override {
    bind();
    Driver& d = driver();
    auto l = std::make_shared<Loaded>();
    d.check(d.cuModuleLoadData(&l->module, a.binary.data()), "cuModuleLoadData");
    for (const KernelPlan& p : plan_kernels(lowered, info_)) {
      Loaded::Entry e{};
      d.check(d.cuModuleGetFunction(&e.fn, l->module, p.name.c_str()), "cuModuleGetFunction");
      for (int i = 0; i < 3; ++i) e.grid[i] = 1;
      for (std::size_t i = 0; i < p.kernel->grid.size(); ++i)
        e.grid[i] = unsigned(p.kernel->grid[i].as_int().value_or(1));
      e.threads = unsigned(p.kernel->threads);
      e.shared = unsigned(p.shared.bytes);
      e.maps = tensor_maps(lowered, *p.kernel);
      if (e.shared > 48 * 1024)
        d.check(d.cuFuncSetAttribute(e.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(e.shared)),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
      l->entries.push_back(e);
    }
    return l;
  }

  void launch(const std::shared_ptr<void>& loaded, const Function& lowered,
              const std::vector<LaunchArg>& args) override {
    bind();
    KernelParams params(args);
    for (const Loaded::Entry& e : static_cast<Loaded*>(loaded.get())->entries) {
      void** data = params.data();
      std::vector<CUtensorMap> maps(e.maps.size());
      std::vector<void*> with_maps;
      if (!e.maps.empty()) {  // the function's arguments, then its tensor maps
        with_maps.assign(data, data + args.size());
        for (std::size_t i = 0; i < e.maps.size(); ++i) {
          encode(maps[i], e.maps[i], lowered, args);
          with_maps.push_back(&maps[i]);
        }
        data = with_maps.data();
      }
      driver().check(driver().cuLaunchKernel(e.fn, e.grid[0], e.grid[1], e.grid[2], e.threads, 1, 1, e.shared,
                                             current(), data, nullptr),
                     "cuLaunchKernel");
    }
  }

  // The tensor map of spec over the argument's device memory (row-major, its shape).
  static void encode(CUtensorMap& map, const TensorMapSpec& spec, const Function& f,
                     const std::vector<LaunchArg>& args) {
    const LaunchArg& a = args[std::size_t(spec.param)];
    const std::string name = f.params[std::size_t(spec.param)].buffer->name;
    const std::size_t rank = spec.box.size();
    if (a.shape.size() != rank) throw Error("cuda: tensor " + name + " has the wrong rank for its tensor map");
    const int64_t elt = spec.dtype.bits() / 8;
    if (reinterpret_cast<uintptr_t>(a.device_ptr) % 16 != 0)
      throw Error("cuda: tensor " + name +
                  " starts at an address that is not a multiple of 16 bytes, which the bulk tensor copies "
                  "reading it need; pass an aligned tensor, or compile with --param tma=0");
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], step[5];
    int64_t stride = elt;
    for (std::size_t d = 0; d < rank; ++d) {  // innermost first
      dims[d] = cuuint64_t(a.shape[rank - 1 - d]);
      box[d] = cuuint32_t(spec.box[rank - 1 - d]);
      step[d] = 1;
      if (d + 1 < rank) strides[d] = cuuint64_t(stride *= a.shape[rank - 1 - d]);
    }
    CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    switch (spec.dtype.code) {
      case TypeCode::F16: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
      case TypeCode::BF16: type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
      case TypeCode::F32: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
      case TypeCode::F64: type = CU_TENSOR_MAP_DATA_TYPE_FLOAT64; break;
      case TypeCode::I32: type = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
      case TypeCode::U32: type = CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
      case TypeCode::I64: type = CU_TENSOR_MAP_DATA_TYPE_INT64; break;
      case TypeCode::I16: type = CU_TENSOR_MAP_DATA_TYPE_UINT16; break;
      default: break;  // 8-bit types move as bytes
    }
    const CUtensorMapSwizzle swizzle = spec.swizzle == 3   ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : spec.swizzle == 2 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : spec.swizzle == 1 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                           : CU_TENSOR_MAP_SWIZZLE_NONE;
    driver().check(driver().cuTensorMapEncodeTiled(&map, type, cuuint32_t(rank), a.device_ptr, dims, strides, box,
                                                   step, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                   CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                   ("cuTensorMapEncodeTiled (tensor " + name + ")").c_str());
  }

  void synchronize() override {
    bind();
    driver().check(driver().cuStreamSynchronize(current()), "cuStreamSynchronize");
  }

  std::vector<double> time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                    const std::vector<LaunchArg>& args, int runs) override {
    bind();
    Driver& d = driver();
    EventCalls<CUevent, CUstream, CUresult> calls{
        [&](CUevent* e) { return d.cuEventCreate(e, CU_EVENT_DEFAULT); }, d.cuEventRecord,
        d.cuEventSynchronize, d.cuEventElapsedTime_v2, d.cuEventDestroy_v2};
    auto check = [&](CUresult e, const char* call) { d.check(e, ("cu" + std::string(call)).c_str()); };
    return time_with_events(
        calls, current(), check, [&] { launch(loaded, lowered, args); }, runs);
  }

  // Writing a buffer larger than L2 (H200: 60 MB) evicts the previous run's data.
  void flush_l2() override {
    bind();
    const std::size_t bytes = 256u << 20;
    if (!flush_) driver().check(driver().cuMemAlloc_v2(&flush_, bytes), "cuMemAlloc");
    driver().check(driver().cuMemsetD8Async(flush_, 0, bytes, current()), "cuMemsetD8Async");
  }

 private:
  void bind() { driver().check(driver().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  // Where launches, copies and timings go: the application's stream while one is given.
  CUstream current() const { return app_ ? *app_ : stream_; }
  int index_;
  std::optional<CUstream> app_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr flush_ = 0;
  TargetInfo info_;
};

}  // namespace

ProbeResult probe_driver() {
  ProbeResult r;
  Driver& d = driver();
  if (!d.error.empty()) {
    r.reason = d.error;
    return r;
  }
  int count = 0;
  if (CUresult e = d.cuDeviceGetCount(&count); e != CUDA_SUCCESS || count == 0) {
    r.reason = e != CUDA_SUCCESS ? "cuDeviceGetCount failed: " + d.message(e) : "no CUDA device";
    return r;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    d.check(d.cuDeviceGet(&dev, i), "cuDeviceGet");
    r.devices.push_back(device_info(dev));
  }
  r.available = true;
  return r;
}

std::unique_ptr<DeviceContext> open_device(int index) {
  if (!driver().error.empty()) throw Error("cuda: " + driver().error);
  return std::make_unique<CudaContext>(index);
}

}  // namespace tg::cuda
