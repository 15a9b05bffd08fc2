// Kernels on the application's memory: host tensors in place on host-memory targets,
// Target::wrap, the DLPack exchange, and launches on an application's stream (refused where a
// target has none; the cuda case runs on a GPU machine, skipped elsewhere).
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <vector>

#include "runtime_test_util.h"
#include "tilegen/runtime.h"

using namespace tg;
using namespace tg::testing;

namespace {

/// first(X: f32[n], Y: f32[n]):  Y[0] = X[0] + 1; no other element is touched.
Kernel first_element_kernel(int64_t n) {
  KernelBuilder k("first");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(1).threads(1).body([&](Expr) {
    Expr i = k.thread_index();  // 0: one thread
    Y(i) = X(i) + 1.0f;
  });
  return k.build();
}

/// The host-memory targets here: interp, and cpu where its plugin loads.
std::vector<Target> host_memory_targets() {
  std::vector<Target> out{Target::get("interp")};
  std::string reason;
  if (find_plugin("cpu", &reason))
    out.push_back(Target::get("cpu"));
  else
    MESSAGE("skipped on cpu: ", reason);
  return out;
}

/// `pages` pages of which only the first may be touched: the others are PROT_NONE, so a copy of
/// the whole range (staging) faults where the kernel's own accesses do not.
struct GuardedPages {
  explicit GuardedPages(std::size_t pages) : bytes(pages * std::size_t(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base = static_cast<float*>(p);
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    REQUIRE(mprotect(static_cast<char*>(p) + page, bytes - page, PROT_NONE) == 0);
  }
  ~GuardedPages() { munmap(base, bytes); }
  std::size_t bytes;
  float* base = nullptr;
};

}  // namespace

TEST_CASE("host tensors run in place on host-memory targets: no copy of what the kernel leaves alone") {
  const std::size_t pages = 64;
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    GuardedPages x(pages), y(pages);
    const int64_t n = int64_t(x.bytes / sizeof(float));
    x.base[0] = 41.f;
    CompiledKernel k = t.compile(first_element_kernel(n));
    // Staged, either tensor would be copied whole (and y back whole): a fault on its second page.
    k(HostTensor{x.base, {n}, f32}, HostTensor{y.base, {n}, f32});
    CHECK(y.base[0] == 42.f);
  }
}

TEST_CASE("host tensors not aligned to their element are staged on host targets, with the same results") {
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    CompiledKernel k = t.compile(axpy_kernel(64));
    std::vector<char> xs(64 * sizeof(float) + 1), ys(64 * sizeof(float) + 1);
    std::vector<float> x(64), y(64);
    for (int i = 0; i < 64; ++i) x[std::size_t(i)] = float(i), y[std::size_t(i)] = 1.f;
    std::memcpy(xs.data() + 1, x.data(), 64 * sizeof(float));  // one byte off: never 4-byte aligned
    std::memcpy(ys.data() + 1, y.data(), 64 * sizeof(float));
    k(HostTensor{xs.data() + 1, {64}, f32}, HostTensor{ys.data() + 1, {64}, f32}, 2.0);
    std::memcpy(y.data(), ys.data() + 1, 64 * sizeof(float));
    for (int i = 0; i < 64; ++i) CHECK(y[std::size_t(i)] == 2.f * float(i) + 1.f);
  }
}

TEST_CASE("Target::wrap: a kernel on the application's host memory writes it in place, and never frees it") {
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    std::vector<float> x(64), y(64, 1.f);
    for (int i = 0; i < 64; ++i) x[std::size_t(i)] = float(i);
    CompiledKernel k = t.compile(axpy_kernel(64));
    {
      DeviceBuffer bx = t.wrap(x.data(), {64}, f32), by = t.wrap(y.data(), {64}, f32);
      CHECK_FALSE(bx.owns_memory());
      CHECK(t.alloc({4}, f32).owns_memory());
      CHECK(bx.device_ptr() == x.data());
      CHECK(by.target() == t.name());
      k(bx, by, 3.0);
      // A wrapped buffer and a host tensor over one memory share it: the kernel writes Y.
      std::string err = error_of([&] { k(HostTensor{y.data(), {64}, f32}, by, 1.0); });
      CHECK(err.find("share memory") != std::string::npos);
    }  // the buffers go; the vectors stay theirs (a free here would be a double free)
    for (int i = 0; i < 64; ++i) CHECK(y[std::size_t(i)] == 3.f * float(i) + 1.f);
    // Two wraps over overlapping halves of one allocation overlap too.
    std::vector<float> z(96, 0.f);
    DeviceBuffer lo = t.wrap(z.data(), {64}, f32), hi = t.wrap(z.data() + 32, {64}, f32);
    std::string err = error_of([&] { k(lo, hi, 1.0); });
    CHECK(err.find("share memory") != std::string::npos);
  }
}

TEST_CASE("Target::wrap misuse is a tg::Error at the call naming what to change") {
  Target t = Target::get("interp");
  std::vector<double> d(8);
  const std::string here = at_line(__FILE__, __LINE__ + 1);
  std::string err = error_of([&] { t.wrap(nullptr, {8}, f32); });
  CHECK(err.rfind(here, 0) == 0);
  CHECK(err.find("wrap: the pointer for f32[8] is null") != std::string::npos);
  err = error_of([&] { t.wrap(reinterpret_cast<char*>(d.data()) + 4, {4}, f64); });
  CHECK(err.find("is not a multiple of 8 bytes") != std::string::npos);
  CHECK(err.find("of f64") != std::string::npos);
  err = error_of([&] { t.wrap(d.data(), {-1}, f32); });
  CHECK(err.find("negative dimension") != std::string::npos);
  err = error_of([&] { t.wrap(d.data(), {int64_t(1) << 40, int64_t(1) << 40}, f32); });
  CHECK(err.find("does not fit in 64 bits") != std::string::npos);
  // An f16 tensor needs 2-byte alignment only, an int8 one none.
  CHECK_NOTHROW(t.wrap(reinterpret_cast<char*>(d.data()) + 2, {2}, f16));
  CHECK_NOTHROW(t.wrap(reinterpret_cast<char*>(d.data()) + 1, {2}, i8));
}

TEST_CASE("a launch on an application's stream is a tg::Error on targets without streams") {
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    CompiledKernel k = t.compile(axpy_kernel(64));
    std::vector<float> x(64, 1.f), y(64, 1.f);
    const std::string here = at_line(__FILE__, __LINE__ + 2);  // the launch, inside the lambda
    std::string err = error_of([&] {
      k.launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 1.0}, Stream{});
    });
    CHECK(err.rfind(here, 0) == 0);
    CHECK(err.find("target '" + t.name() + "' cannot launch on the stream given") != std::string::npos);
    CHECK(y == std::vector<float>(64, 1.f));  // nothing ran
    ProfileOptions opt;
    opt.stream = Stream{};
    err = error_of([&] {
      k.profile({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 1.0}, opt);
    });
    CHECK(err.find("cannot launch on the stream given") != std::string::npos);
    k.launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 1.0});  // without: as ever
    CHECK(y == std::vector<float>(64, 2.f));
  }
}

TEST_CASE("vulkan, whose buffers are handles, takes no application memory and no stream") {
  std::string reason;
  if (!find_plugin("vulkan", &reason)) {
    MESSAGE("skipped: no vulkan plugin: ", reason);
    return;
  }
  std::optional<Target> vk;
  try {
    vk = Target::get("vulkan");
  } catch (const Error& e) {
    MESSAGE("skipped: ", std::string(e.what()));
    return;
  }
  std::vector<float> x(64, 1.f), y(64, 1.f);
  std::string err = error_of([&] { vk->wrap(x.data(), {64}, f32); });
  CHECK(err.find("wrap: target 'vulkan' device 0 cannot use the memory for f32[64]: this vulkan device is "
                 "tilegen's own, so no VkBuffer of the application's belongs to it") != std::string::npos);
  CompiledKernel k = vk->compile(axpy_kernel(64));
  err = error_of([&] {
    k.launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 1.0}, Stream{});
  });
  CHECK(err.find("target 'vulkan' cannot launch on the stream given: this vulkan device is tilegen's own") !=
        std::string::npos);
  k.launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 1.0});  // staged, as ever
  CHECK(y == std::vector<float>(64, 2.f));
#if TILEGEN_DLPACK
  err = error_of([&] { to_dlpack(vk->alloc({4}, f32)); });
  CHECK(err.find("to_dlpack: target 'vulkan' keeps its buffers as handles") != std::string::npos);
#endif
}

#if TILEGEN_DLPACK
namespace {

/// A producer's tensor: its own memory, shape and strides, and a deleter that counts its calls.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  int deleted = 0;

  Producer(std::vector<int64_t> s, std::vector<float> values) : data(std::move(values)), shape(std::move(s)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = int(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

std::vector<float> iota_f(int n, float from = 0.f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[std::size_t(i)] = from + float(i);
  return v;
}

}  // namespace

TEST_CASE(
    "from_dlpack: a kernel on imported memory writes the producer's; the deleter runs once, at the end") {
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    Producer px({64}, iota_f(64)), py({64}, std::vector<float>(64, 1.f));
    CompiledKernel k = t.compile(axpy_kernel(64));
    {
      DeviceBuffer bx = from_dlpack(&px.managed, t);
      DeviceBuffer by = from_dlpack(&py.managed, t);
      CHECK_FALSE(by.owns_memory());
      CHECK(by.device_ptr() == py.data.data());
      CHECK(by.shape() == std::vector<int64_t>{64});
      CHECK(by.dtype() == f32);
      k(bx, by, 2.0);
      DeviceBuffer copy = by;
      by = DeviceBuffer();
      CHECK(py.deleted == 0);  // a copy still holds it
    }
    CHECK(px.deleted == 1);
    CHECK(py.deleted == 1);
    for (int i = 0; i < 64; ++i) CHECK(py.data[std::size_t(i)] == 2.f * float(i) + 1.f);
  }
}

TEST_CASE("from_dlpack: byte_offset, null strides, compact strides and strides of extent-1 dimensions") {
  Target t = Target::get("interp");
  Producer p({2, 1, 3}, iota_f(16));
  std::vector<int64_t> strides{3, 999, 1};  // the extent-1 dimension's stride is free
  p.managed.dl_tensor.strides = strides.data();
  p.managed.dl_tensor.byte_offset = 4 * sizeof(float);
  {
    DeviceBuffer b = from_dlpack(&p.managed, t);
    CHECK(b.device_ptr() == p.data.data() + 4);
    std::vector<float> out(6);
    b.download(out.data(), out.size() * sizeof(float));
    CHECK(out == iota_f(6, 4.f));
  }
  CHECK(p.deleted == 1);
  // The target-less form picks cpu for kDLCPU.
  std::string reason;
  if (find_plugin("cpu", &reason)) {
    Producer q({4}, iota_f(4));
    DeviceBuffer b = from_dlpack(&q.managed);
    CHECK(b.target() == "cpu");
  }
}

TEST_CASE("from_dlpack rejects what tilegen cannot run on, naming it, and leaves the tensor to its owner") {
  Target t = Target::get("interp");
  auto reject = [&](Producer& p, const std::string& want) {
    std::string err = error_of([&] { from_dlpack(&p.managed, t); });
    CHECK_MESSAGE(err.find(want) != std::string::npos, err);
    CHECK(p.deleted == 0);
  };
  {
    Producer p({4, 4}, iota_f(16));
    std::vector<int64_t> strides{1, 4};  // column-major
    p.managed.dl_tensor.strides = strides.data();
    reject(p, "has strides [1, 4] (in elements), not compact row-major: dimension 1 would need stride 1");
  }
  {
    Producer p({4}, iota_f(4));
    p.managed.dl_tensor.dtype = {kDLComplex, 64, 1};
    reject(p, "dtype complex64 has no tilegen equivalent");
    p.managed.dl_tensor.dtype = {kDLFloat, 32, 4};
    reject(p, "dtype float32x4 has no tilegen equivalent");
  }
  {
    Producer p({4}, iota_f(8));
    p.managed.dl_tensor.byte_offset = 2;
    reject(p, "is not a multiple of 4 bytes");
    p.managed.dl_tensor.byte_offset = 0;
    p.managed.dl_tensor.data = nullptr;
    reject(p, "the pointer for f32[4] is null");
  }
  {
    Producer p({4}, iota_f(4));
    p.managed.dl_tensor.device = {kDLCUDA, 0};
    reject(p, "the tensor is on kDLCUDA device 0, not on target 'interp' device 0 (kDLCPU)");
    p.managed.dl_tensor.device = {kDLVulkan, 0};
    std::string err = error_of([&] { from_dlpack(&p.managed); });
    CHECK(err.find("the tensor is on kDLVulkan (device type 7); tilegen takes kDLCPU, kDLCUDA and kDLROCM") !=
          std::string::npos);
    CHECK(p.deleted == 0);
  }
  const std::string here = at_line(__FILE__, __LINE__ + 1);
  std::string err = error_of([&] { from_dlpack(nullptr, t); });
  CHECK(err.rfind(here, 0) == 0);
  CHECK(err.find("the DLManagedTensor pointer is null") != std::string::npos);
}

TEST_CASE("to_dlpack: a compact tensor over the buffer that keeps it alive; round trip through from_dlpack") {
  for (Target& t : host_memory_targets()) {
    INFO("target " << t.name());
    std::vector<float> init = iota_f(12);
    DLManagedTensor* m = nullptr;
    void* ptr = nullptr;
    {
      DeviceBuffer b = t.upload(HostTensor{init.data(), {3, 4}, f32});
      ptr = b.device_ptr();
      m = to_dlpack(b);
    }  // the buffer's last copy is the exported tensor's now
    REQUIRE(m);
    const DLTensor& d = m->dl_tensor;
    CHECK(d.data == ptr);
    CHECK(d.device.device_type == kDLCPU);
    CHECK(d.ndim == 2);
    CHECK(d.shape[0] == 3);
    CHECK(d.shape[1] == 4);
    CHECK(d.strides[0] == 4);
    CHECK(d.strides[1] == 1);
    CHECK(d.dtype.code == kDLFloat);
    CHECK(d.dtype.bits == 32);
    CHECK(d.dtype.lanes == 1);
    CHECK(d.byte_offset == 0);
    CHECK(static_cast<const float*>(d.data)[11] == 11.f);  // alive: ASan would flag a freed buffer
    {
      DeviceBuffer back = from_dlpack(m, t);  // takes the tensor: its deleter runs when `back` goes
      CHECK(back.device_ptr() == ptr);
      CHECK(back.shape() == std::vector<int64_t>{3, 4});
      std::vector<float> out(12);
      back.download(out.data(), out.size() * sizeof(float));
      CHECK(out == init);
    }
    std::vector<uint8_t> bits(4);
    DeviceBuffer e = t.upload(HostTensor{bits.data(), {4}, fp8_e4m3});
    std::string err = error_of([&] { to_dlpack(e); });
    CHECK(err.find("to_dlpack: dtype e4m3 has no DLPack 0.6 type code") != std::string::npos);
    CHECK(error_of([] { to_dlpack(DeviceBuffer()); }).find("the DeviceBuffer is empty") != std::string::npos);
  }
}

TEST_CASE("DLPack dtypes: each tilegen dtype DLPack 0.6 names, both ways") {
  Target t = Target::get("interp");
  struct Case {
    DType dtype;
    uint8_t code, bits;
  };
  const Case cases[] = {{i8, kDLInt, 8},     {i16, kDLInt, 16},    {i32, kDLInt, 32},   {i64, kDLInt, 64},
                        {u8, kDLUInt, 8},    {u32, kDLUInt, 32},   {f16, kDLFloat, 16}, {f32, kDLFloat, 32},
                        {f64, kDLFloat, 64}, {bf16, kDLBfloat, 16}};
  for (const Case& c : cases) {
    INFO(c.dtype.name());
    DLManagedTensor* m = to_dlpack(t.alloc({2}, c.dtype));
    CHECK(m->dl_tensor.dtype.code == c.code);
    CHECK(m->dl_tensor.dtype.bits == c.bits);
    CHECK(from_dlpack(m, t).dtype() == c.dtype);  // and its deleter runs as the buffer goes
  }
  for (DType d : {boolean, int4, uint4, fp8_e5m2, fp4_e2m1})
    CHECK(error_of([&] { to_dlpack(t.alloc({2}, d)); }).find("has no DLPack 0.6 type code") !=
          std::string::npos);
}
#endif  // TILEGEN_DLPACK

// ---- On an NVIDIA GPU machine (tools/device_check.sh runs the "cuda*" cases); skipped elsewhere.
namespace {

/// The few CUDA driver calls the test makes itself, through dlopen (the tests have no cuda.h).
/// tilegen's cuda target leaves the device's primary context current on this thread.
struct TestDriver {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  template <typename F>
  F sym(const char* name) {
    return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
  }
  int (*stream_create)(void**, unsigned) = sym<int (*)(void**, unsigned)>("cuStreamCreate");
  int (*stream_destroy)(void*) = sym<int (*)(void*)>("cuStreamDestroy_v2");
  int (*stream_sync)(void*) = sym<int (*)(void*)>("cuStreamSynchronize");
  int (*mem_alloc)(unsigned long long*,
                   std::size_t) = sym<int (*)(unsigned long long*, std::size_t)>("cuMemAlloc_v2");
  int (*mem_free)(unsigned long long) = sym<int (*)(unsigned long long)>("cuMemFree_v2");
  int (*to_host)(void*, unsigned long long,
                 std::size_t) = sym<int (*)(void*, unsigned long long, std::size_t)>("cuMemcpyDtoH_v2");
  int (*to_device)(unsigned long long, const void*, std::size_t) =
      sym<int (*)(unsigned long long, const void*, std::size_t)>("cuMemcpyHtoD_v2");
};

std::optional<Target> cuda_target() {
  std::string reason;
  if (!find_plugin("cuda", &reason)) {
    MESSAGE("skipped: no cuda plugin: ", reason);
    return std::nullopt;
  }
  try {
    return Target::get("cuda");
  } catch (const Error& e) {
    MESSAGE("skipped: ", std::string(e.what()));
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("cuda device: launches on the application's stream, wrap of its memory, DLPack") {
  std::optional<Target> gpu = cuda_target();
  if (!gpu) return;
  TestDriver d;
  REQUIRE(bool(d.stream_create));
  CompiledKernel k = gpu->compile(axpy_kernel(64));
  std::vector<float> x(64), y(64, 1.f), out(64);
  for (int i = 0; i < 64; ++i) x[std::size_t(i)] = float(i);
  DeviceBuffer bx = gpu->upload(HostTensor{x.data(), {64}, f32});
  DeviceBuffer by = gpu->upload(HostTensor{y.data(), {64}, f32});
  void* stream = nullptr;
  REQUIRE(d.stream_create(&stream, 1 /* CU_STREAM_NON_BLOCKING */) == 0);

  // Device buffers: queued on the stream; the application synchronises it.
  k.launch({&bx, &by, 2.0}, Stream{stream});
  REQUIRE(d.stream_sync(stream) == 0);
  by.download(out.data(), out.size() * sizeof(float));
  for (int i = 0; i < 64; ++i) CHECK(out[std::size_t(i)] == 2.f * float(i) + 1.f);
  // Host tensors: the launch returns with them in place.
  std::vector<float> hy(64, 1.f);
  k.launch({HostTensor{x.data(), {64}, f32}, HostTensor{hy.data(), {64}, f32}, 3.0}, Stream{stream});
  for (int i = 0; i < 64; ++i) CHECK(hy[std::size_t(i)] == 3.f * float(i) + 1.f);
  // The legacy default stream is handle 0.
  k.launch({&bx, &by, 1.0}, Stream{nullptr});
  REQUIRE(d.stream_sync(nullptr) == 0);
  ProfileOptions opt;
  opt.stream = Stream{stream};
  opt.runs = 2;
  CHECK(k.profile({&bx, &by, 0.0}, opt).runs == 2);
  // A command buffer is vulkan's: cuda says what to pass instead, before anything runs.
  CHECK(error_of([&] { k.launch({&bx, &by, 1.0}, Stream::command_buffer(stream)); })
            .find("it is a command buffer (Stream::command_buffer), which only vulkan records into") !=
        std::string::npos);

  // wrap: the application's device memory, used in place and never freed by tilegen.
  unsigned long long mem = 0;
  REQUIRE(d.mem_alloc(&mem, 64 * sizeof(float)) == 0);
  REQUIRE(d.to_device(mem, y.data(), 64 * sizeof(float)) == 0);
  {
    DeviceBuffer wy = gpu->wrap(reinterpret_cast<void*>(mem), {64}, f32);
    CHECK_FALSE(wy.owns_memory());
    k.launch({&bx, &wy, 2.0}, Stream{stream});
    REQUIRE(d.stream_sync(stream) == 0);
  }
  REQUIRE(d.to_host(out.data(), mem, 64 * sizeof(float)) == 0);
  for (int i = 0; i < 64; ++i) CHECK(out[std::size_t(i)] == 2.f * float(i) + 1.f);
  void* inner = reinterpret_cast<void*>(mem + 4);
  CHECK(error_of([&] { gpu->wrap(inner, {4}, f32); }).find("is not a multiple of 16 bytes") !=
        std::string::npos);
  // 4 GiB: past the allocation, whatever granule the driver rounds it to.
  CHECK(error_of([&] {
          gpu->wrap(reinterpret_cast<void*>(mem), {int64_t(1) << 30}, f32);
        }).find("past the end") != std::string::npos);
  CHECK(error_of([&] { gpu->wrap(x.data(), {64}, f32); }).find("cannot use the memory") != std::string::npos);

#if TILEGEN_DLPACK
  // A kDLCUDA tensor over the same memory: imported, written, its deleter run once.
  int deleted = 0;
  std::vector<int64_t> shape{64};
  DLManagedTensor m{};
  m.dl_tensor = {reinterpret_cast<void*>(mem), {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  m.manager_ctx = &deleted;
  m.deleter = [](DLManagedTensor* self) { ++*static_cast<int*>(self->manager_ctx); };
  {
    DeviceBuffer b = from_dlpack(&m);
    CHECK(b.target() == "cuda");
    DLManagedTensor* back = to_dlpack(b);
    CHECK(back->dl_tensor.device.device_type == kDLCUDA);
    CHECK(back->dl_tensor.data == reinterpret_cast<void*>(mem));
    back->deleter(back);
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);
#endif
  CHECK(d.mem_free(mem) == 0);
  CHECK(d.stream_destroy(stream) == 0);
}
