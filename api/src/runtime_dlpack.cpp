// DLPack exchange (tg::from_dlpack, tg::to_dlpack): a DeviceBuffer over another library's tensor,
// and a DLManagedTensor over a DeviceBuffer, neither copying. Built where <dlpack/dlpack.h> is
// found (TILEGEN_DLPACK); DLPack 0.6's layout, which later versions keep for DLManagedTensor.
#if TILEGEN_DLPACK
#include <optional>

#include "runtime_internal.h"

namespace tg {
namespace {

/// The DLPack code of each dtype both sides have; DLPack 0.6 has none for fp8, 4-bit types or bool.
struct DLPackType {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};
constexpr DLPackType kTypes[] = {
    {i8, kDLInt, 8},    {i16, kDLInt, 16},   {i32, kDLInt, 32},   {i64, kDLInt, 64},   {u8, kDLUInt, 8},
    {u32, kDLUInt, 32}, {f16, kDLFloat, 16}, {f32, kDLFloat, 32}, {f64, kDLFloat, 64}, {bf16, kDLBfloat, 16},
};

std::string dl_type_str(DLDataType t) {
  static const char* names[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex"};
  std::string code = t.code < 6 ? names[t.code] : "code " + std::to_string(t.code);
  return code + std::to_string(t.bits) + (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

std::optional<DType> to_dtype(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  for (const DLPackType& k : kTypes)
    if (k.code == t.code && k.bits == t.bits) return k.dtype;
  return std::nullopt;
}

std::string list_of(const int64_t* v, int n) { return shape_str(std::vector<int64_t>(v, v + n)); }

/// Where a tensor's strides (in elements) leave compact row-major order: the first such
/// dimension and the stride it would need; nullopt when they do not. Dimensions of extent 1 may
/// have any stride (producers such as PyTorch leave them arbitrary), and a tensor without elements
/// has no layout to speak of.
struct StrideMismatch {
  int dim;
  int64_t compact;
};
std::optional<StrideMismatch> non_compact(const DLTensor& t) {
  if (!t.strides) return std::nullopt;  // null strides: compact row-major, by DLPack's rule
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] == 0) return std::nullopt;
  int64_t expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return StrideMismatch{d, expect};
    expect *= t.shape[d];
  }
  return std::nullopt;
}

const char* device_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
  }
  return "an unknown device type";
}

/// The DLPack device type of a memory space; nullopt where DLPack has none (handles).
std::optional<DLDeviceType> dl_device_of(MemorySpace m) {
  switch (m) {
    case MemorySpace::Host: return kDLCPU;
    case MemorySpace::Cuda: return kDLCUDA;
    case MemorySpace::Rocm: return kDLROCM;
    case MemorySpace::Handles: break;
  }
  return std::nullopt;
}

/// What to_dlpack hands out: the DLManagedTensor, the arrays it points at, and the buffer it
/// keeps alive, in one allocation that its deleter frees.
struct Exported {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
  DeviceBuffer buffer;
};

}  // namespace

DeviceBuffer from_dlpack(DLManagedTensor* tensor, const Target& target, Loc loc) {
  const SourceLoc where = SourceLoc::from(loc);
  if (!tensor) throw Error("from_dlpack: the DLManagedTensor pointer is null", where);
  const DLTensor& t = tensor->dl_tensor;
  const std::shared_ptr<DeviceState>& dev = RuntimeAccess::device(target);
  const std::string on = "target '" + dev->target + "' device " + std::to_string(dev->index);
  const std::optional<DLDeviceType> want = dl_device_of(dev->ctx->memory_space());
  if (!want)
    throw Error("from_dlpack: " + on + " keeps its buffers as handles, not addresses: it cannot take a " +
                    device_name(t.device.device_type) + " tensor; use a target of that device",
                where);
  if (t.device.device_type != *want || (*want != kDLCPU && t.device.device_id != dev->index))
    throw Error("from_dlpack: the tensor is on " + std::string(device_name(t.device.device_type)) +
                    " device " + std::to_string(t.device.device_id) + ", not on " + on + " (" +
                    device_name(*want) + (*want == kDLCPU ? "" : " device " + std::to_string(dev->index)) +
                    "); import it with the target of its device",
                where);
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    throw Error("from_dlpack: the tensor's ndim is " + std::to_string(t.ndim) +
                    (t.ndim > 0 ? " but its shape is null" : "; it must be at least 0"),
                where);
  std::optional<DType> dtype = to_dtype(t.dtype);
  if (!dtype)
    throw Error("from_dlpack: dtype " + dl_type_str(t.dtype) +
                    " has no tilegen equivalent; tilegen takes int8/16/32/64, uint8/32, float16/32/64 and "
                    "bfloat16, one lane each",
                where);
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  if (std::optional<StrideMismatch> m = non_compact(t))
    throw Error(
        "from_dlpack: the tensor of shape " + shape_str(shape) + " has strides " +
            list_of(t.strides, t.ndim) + " (in elements), not compact row-major: dimension " +
            std::to_string(m->dim) + " would need stride " + std::to_string(m->compact) +
            "; tilegen kernels take dense tensors: make it contiguous first (.contiguous() in PyTorch)",
        where);
  void* data = t.data ? static_cast<char*>(t.data) + t.byte_offset : nullptr;
  check_application_memory(*dev, data, shape, *dtype, "from_dlpack", where);
  // From here the tensor is ours: its deleter runs once, when the last copy of the buffer goes.
  // The deleter holds the device open, as alloc's does, so the producer frees its memory first.
  std::shared_ptr<DeviceState> keep = dev;
  std::shared_ptr<void> memory(data, [tensor, keep](void*) {
    if (tensor->deleter) tensor->deleter(tensor);
  });
  return RuntimeAccess::make(dev, std::move(memory), std::move(shape), *dtype, false);
}

DeviceBuffer from_dlpack(DLManagedTensor* tensor, Loc loc) {
  const SourceLoc where = SourceLoc::from(loc);
  if (!tensor) throw Error("from_dlpack: the DLManagedTensor pointer is null", where);
  const DLDevice d = tensor->dl_tensor.device;
  const char* name = d.device_type == kDLCPU    ? "cpu"
                     : d.device_type == kDLCUDA ? "cuda"
                     : d.device_type == kDLROCM ? "hip"
                                                : nullptr;
  if (!name)
    throw Error("from_dlpack: the tensor is on " + std::string(device_name(d.device_type)) +
                    " (device type " + std::to_string(int(d.device_type)) +
                    "); tilegen takes kDLCPU, kDLCUDA and kDLROCM tensors",
                where);
  const int index = d.device_type == kDLCPU ? 0 : int(d.device_id);
  Target target = [&] {
    try {
      return Target::get(name, index, loc);
    } catch (const Error& e) {
      throw Error("from_dlpack: a " + std::string(device_name(d.device_type)) + " tensor needs target '" +
                      name + "': " + e.message(),
                  where);
    }
  }();
  return from_dlpack(tensor, target, loc);
}

DLManagedTensor* to_dlpack(const DeviceBuffer& buffer, Loc loc) {
  const SourceLoc where = SourceLoc::from(loc);
  const std::shared_ptr<DeviceState>& dev = RuntimeAccess::device(buffer);
  if (!dev) throw Error("to_dlpack: the DeviceBuffer is empty: make it with Target::alloc", where);
  const std::optional<DLDeviceType> type = dl_device_of(dev->ctx->memory_space());
  if (!type)
    throw Error("to_dlpack: target '" + dev->target +
                    "' keeps its buffers as handles, not addresses another library could use; download "
                    "the buffer, or run on a target whose memory DLPack can name (cpu, interp, cuda, hip)",
                where);
  const DLPackType* code = nullptr;
  for (const DLPackType& k : kTypes)
    if (k.dtype == buffer.dtype()) code = &k;
  if (!code)
    throw Error("to_dlpack: dtype " + std::string(buffer.dtype().name()) +
                    " has no DLPack 0.6 type code (DLPack has none for fp8, 4-bit types or bool)",
                where);
  auto* e = new Exported;
  e->buffer = buffer;
  e->shape = buffer.shape();
  e->strides.assign(e->shape.size(), 1);
  for (std::size_t d = e->shape.size(); d-- > 1;) e->strides[d - 1] = e->strides[d] * e->shape[d];
  DLTensor& t = e->managed.dl_tensor;
  t.data = buffer.device_ptr();
  t.device = {*type, *type == kDLCPU ? 0 : dev->index};
  t.ndim = int(e->shape.size());
  t.dtype = {code->code, code->bits, 1};
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  return &e->managed;
}

}  // namespace tg
#endif
