// libtg_torch.so: what torch_dlpack.py calls through ctypes to run tilegen kernels on PyTorch's
// CUDA tensors (DLPack, no copy) and on PyTorch's current stream. Each function returns 0, or 1
// with the tg::Error's message in `err`.
//
// Ownership: a DLManagedTensor* given here is always consumed (the Python side marks its capsule
// "used_dltensor" before the call): from_dlpack takes it, or, when it refuses, the tensor's
// deleter is called here, so PyTorch's reference is dropped exactly once either way.
#include <cstring>
#include <string>

#include "tilegen/runtime.h"
#include "tilegen/samples.h"

namespace {

int fail(const std::exception& e, char* err, std::size_t n) {
  if (n) {
    std::strncpy(err, e.what(), n - 1);
    err[n - 1] = '\0';
  }
  return 1;
}

/// from_dlpack, or the tensor's deleter called and the error passed on.
tg::DeviceBuffer take(DLManagedTensor* t, const tg::Target& target) {
  try {
    return tg::from_dlpack(t, target);
  } catch (...) {
    if (t && t->deleter) t->deleter(t);
    throw;
  }
}

}  // namespace

extern "C" {

/// C = relu(A @ B), every tensor f16 [M, K], [K, N], [M, N] on one CUDA device, on `stream` (a
/// CUstream; 0 is the legacy default stream) when use_stream, else on tilegen's own stream.
/// Returns once the kernel is queued on an application's stream.
__attribute__((visibility("default"))) int tg_gemm_relu(DLManagedTensor* a, DLManagedTensor* b,
                                                        DLManagedTensor* c, void* stream, int use_stream,
                                                        char* err, std::size_t n) {
  DLManagedTensor* given[3] = {a, b, c};
  int taken = 0;
  try {
    tg::Target gpu = tg::Target::get("cuda", a ? a->dl_tensor.device.device_id : 0);
    tg::DeviceBuffer A = take(given[taken++], gpu);
    tg::DeviceBuffer B = take(given[taken++], gpu);
    tg::DeviceBuffer C = take(given[taken++], gpu);
    const tg::samples::Sample* s = tg::samples::find("gemm_relu");
    tg::samples::Params p = tg::samples::resolve_for(
        *s, {{"M", A.shape()[0]}, {"N", B.shape()[1]}, {"K", A.shape()[1]}}, gpu.info(), tg::f16);
    // Compiled once per shape in this process (and kept in the kernel cache across processes).
    tg::CompiledKernel k = gpu.compile(s->build(p, tg::f16));
    if (use_stream)
      k.launch({&A, &B, &C}, tg::Stream{stream});
    else
      k.launch({&A, &B, &C});
    return 0;
  } catch (const std::exception& e) {
    for (int i = taken; i < 3; ++i)  // the ones not reached yet are ours to release too
      if (given[i] && given[i]->deleter) given[i]->deleter(given[i]);
    return fail(e, err, n);
  }
}

/// Target::wrap on the cuda device: 0 when ptr (n f32 elements) is accepted, else 1 and why.
__attribute__((visibility("default"))) int tg_wrap_check(void* ptr, int64_t count, int device, char* err,
                                                         std::size_t n) {
  try {
    tg::Target::get("cuda", device).wrap(ptr, {count}, tg::f32);
    return 0;
  } catch (const std::exception& e) {
    return fail(e, err, n);
  }
}

/// A tilegen buffer of `count` f32 on the cuda device, filled with 0, 1, 2, ..., exported with
/// to_dlpack (the consumer's deleter frees it); null with `err` set on failure.
__attribute__((visibility("default"))) DLManagedTensor* tg_export_iota(int64_t count, int device, char* err,
                                                                       std::size_t n) {
  try {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (int64_t i = 0; i < count; ++i) v[std::size_t(i)] = float(i);
    tg::DeviceBuffer b = tg::Target::get("cuda", device).upload(tg::HostTensor{v.data(), {count}, tg::f32});
    return tg::to_dlpack(b);
  } catch (const std::exception& e) {
    fail(e, err, n);
    return nullptr;
  }
}

}  // extern "C"
