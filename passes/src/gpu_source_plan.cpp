// Kernel planning and storage layout for the GPU source targets (see gpu_source.h).
#include "tilegen/ir/kernel_names.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_source.h"
#include "tilegen/passes/shared_memory_plan.h"

namespace tg::gpu {

namespace {

// Shared tiles whose rows are a multiple of 32 bytes get 16 bytes of padding a row, so the
// threads of a warp reading a column-slice (the matrix-unit operand loads) hit distinct banks.
int64_t pitch_of(const ir::BufferNode& b) {
  auto cols = b.shape.back().as_int();
  if (!cols || b.scope != Scope::Shared || b.shape.size() < 2 || b.dtype.is_packed()) return cols.value_or(0);
  return (*cols * b.dtype.bits() / 8) % 32 == 0 ? *cols + 128 / b.dtype.bits() : *cols;
}

}  // namespace

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

std::vector<int64_t> strides_of(const ir::BufferNode& b) {
  std::vector<int64_t> st(b.shape.size(), 1);
  for (std::size_t d = b.shape.size() - 1; d-- > 0;) {
    auto next = b.shape[d + 1].as_int();
    if (!next) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
    st[d] = st[d + 1] * (d + 1 == b.shape.size() - 1 ? pitch_of(b) : *next);
  }
  return st;
}

int64_t stored_elements(const ir::BufferNode& b) {
  auto first = b.shape.front().as_int();
  if (!first) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
  return b.shape.size() == 1 ? *first : strides_of(b)[0] * *first;
}

bool fills_shared_from_global(const Stmt& s) {
  struct Find : IRVisitor {
    bool found = false, into_shared = false;
    void visit(const ir::Store* op) override {
      into_shared = op->buffer->scope == Scope::Shared;
      IRVisitor::visit(op);
      into_shared = false;
    }
    void visit(const ir::Load* op) override {
      if (into_shared && op->buffer->scope == Scope::Global) found = true;
      IRVisitor::visit(op);
    }
  } f;
  f.visit_stmt(s);
  return f.found;
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
