// Kernel planning and storage layout for the GPU source targets (see gpu_source.h).
#include <algorithm>

#include "tilegen/common/gpu_source.h"
#include "tilegen/ir/kernel_names.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/async_mma.h"
#include "tilegen/passes/contract_fma.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/issue_ahead.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/place_shared_memory.h"
#include "tilegen/passes/warp_roles.h"

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
    // Where each shared buffer lives is the pass place_shared_memory's decision, read from the IR.
    for (const Buffer& b : kernels[i]->buffers) {
      if (b->scope != Scope::Shared) continue;
      if (!b->placed())
        throw Error("shared buffer " + b->name + " of " + p.name +
                        " has no place in shared memory: the pass place_shared_memory (the last of the " +
                        info.target + " pipeline) places every shared buffer",
                    b->loc);
      p.shared.offsets.emplace_back(b, b->placed_offset);
      p.shared.bytes = std::max(p.shared.bytes, (b->placed_offset + b->placed_bytes + 15) / 16 * 16);
    }
    if (p.shared.bytes > info.shared_mem_bytes)
      throw Error(p.name + " places " + std::to_string(p.shared.bytes) + " bytes of shared memory; " +
                      info.device_name + " has " + std::to_string(info.shared_mem_bytes),
                  kernels[i]->loc);
    out.push_back(std::move(p));
  }
  if (out.empty()) throw Error("function " + f.name + " has no kernel to emit", f.loc);
  return out;
}

std::vector<PassEntry> source_pipeline(const CompileOptions& opt, std::vector<PassEntry> target_passes) {
  std::vector<PassEntry> passes = gpu_pipeline(checks_accesses(opt), opt.sizes);
  passes.push_back({"contract_fma", contract_fma});
  passes.push_back({"pad_shared_tiles", pad_shared_tiles});
  passes.push_back({"swizzle_shared_tiles", swizzle_shared_tiles});
  for (PassEntry& p : target_passes) passes.push_back(std::move(p));
  passes.push_back({"overlap_async_mma", overlap_async_mma});
  passes.push_back({"fence_async_proxy", fence_async_proxy});
  // After the barriers are final: the roles replace those that order a slot's refill.
  passes.push_back({"warp_roles", warp_roles});
  // In the consumers' loop the roles leave: the next iteration's head gemm issued early.
  passes.push_back({"issue_ahead", issue_ahead});
  passes.push_back({"place_shared_memory", place_shared_memory});
  return passes;
}

TargetInfo codegen_target(TargetPlugin& plugin, const TargetInfo& device, const CompileOptions& opt) {
  return opt.arch.empty() ? device : plugin.info_for_arch(opt.arch);
}

std::string entry_list(const Function& f, const TargetInfo& info) {
  std::string entry;
  for (const KernelPlan& p : plan_kernels(f, info)) entry += (entry.empty() ? "" : ",") + p.name;
  return entry;
}

void check_matrix_unit(const ir::Mma& op, const TargetInfo& info) {
  for (const ir::MmaOperand* o : {&op.a, &op.b})
    if (o->is_tile())
      throw Error("the " + info.target +
                      " target reads mma operands from registers only, not from the shared tile " +
                      o->buffer->name + "; load the tile into a local buffer first",
                  op.loc);
  const auto& units = info.matrix_units;
  if (std::find(units.begin(), units.end(), op.unit) != units.end()) return;
  std::string names;
  for (const std::string& u : units) names += (names.empty() ? "" : ", ") + u;
  throw Error(
      "the " + info.target + " target has no instruction for matrix unit " + op.unit + " on " + info.arch +
          (names.empty() ? "; it has no matrix unit there" : "; use one of its units (" + names + ")"),
      op.loc);
}

}  // namespace tg::gpu
