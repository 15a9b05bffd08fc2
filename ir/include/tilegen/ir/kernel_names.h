// A function's kernels and the names targets give them, defined once: the cpu's LLVM symbols,
// vulkan's SPIR-V entry points and cuda/hip's __global__ functions are all these names.
//
//   func gemm(...) { kernel ... }                 → gemm_k0             (cuda, hip: gemm)
//   func attn(...) { kernel ...; kernel ... }     → attn_k0, attn_k1    (every target)
//   func "my-op"(...) { kernel ... }              → my_op_k0            (cuda, hip: my_op)
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg::ir {

/// f's kernels in the order they run: the body when it is one kernel, else the kernels of its
/// sequence, nested sequences flattened. A statement outside a kernel (which the verifier
/// refuses) is a tg::Error at it.
std::vector<const Kernel*> kernels_of(const Function& f);

/// f.name as an identifier, the stem of every kernel name: each character other than a letter,
/// a digit or _ becomes _ ("my-op" → "my_op"); "kernel" for an empty name.
std::string kernel_stem(const Function& f);

/// What a function of one kernel calls it: numbered as when there are several (cpu, vulkan), or
/// after the function (cuda and hip, whose `extern "C" __global__ void gemm(...)` users launch).
enum class LoneKernel { Numbered, FunctionName };

/// The name of each of f's kernels, in kernels_of order: kernel_stem + "_k" + its index.
std::vector<std::string> kernel_entry_names(const Function& f, LoneKernel lone = LoneKernel::Numbered);

}  // namespace tg::ir
