// Kernel planning and storage layout for the GPU source targets (see gpu_source.h).
#include "tilegen/ir/kernel_names.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/passes/shared_memory_plan.h"

namespace tg::gpu {


std::string value_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return "bool";
    case TypeCode::U32: return "tg_u32";
    case TypeCode::I64: return "long long";
    case TypeCode::F64: return "double";
    default: return t.is_float() ? "float" : "int";
  }
}

std::string storage_type(DType t) {
  switch (t.code) {
    case TypeCode::Bool: return "bool";
    case TypeCode::I8: return "signed char";
    case TypeCode::I16: return "short";
    case TypeCode::I32: return "int";
    case TypeCode::U32: return "tg_u32";
    case TypeCode::I64: return "long long";
    case TypeCode::F16:
    case TypeCode::BF16: return "tg_u16";
    case TypeCode::F32: return "float";
    case TypeCode::F64: return "double";
    default: return "tg_u8";  // u8, fp8, and the packed 4-bit types (two a byte)
  }
}



std::vector<KernelPlan> plan_kernels(const Function& f, const TargetInfo& info) {
  const std::vector<const ir::Kernel*> kernels = ir::kernels_of(f);
  const std::vector<std::string> names = ir::kernel_entry_names(f, ir::LoneKernel::FunctionName);
  std::vector<KernelPlan> out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    KernelPlan p;
    p.kernel = kernels[i];
    p.name = names[i];
    SharedMemoryPlan plan = plan_shared_memory(
        *kernels[i],
        [](const Buffer& b) { return int64_t(storage_bytes(b->dtype, stored_elements(*b.get()))); },
        info.shared_mem_bytes, info.device_name);
    p.shared.offsets = std::move(plan.offsets);
    p.shared.bytes = plan.bytes;
    out.push_back(std::move(p));
  }
  if (out.empty()) throw Error("function " + f.name + " has no kernel to emit", f.loc);
  return out;
}

}  // namespace tg::gpu
