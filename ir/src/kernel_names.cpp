// A function's kernels and their names (kernel_names.h).
#include "tilegen/ir/kernel_names.h"

#include <cctype>

#include "tilegen/ir/error.h"

namespace tg::ir {

namespace {

void collect_kernels(const Function& f, const Stmt& s, std::vector<const Kernel*>& out) {
  if (!s) return;  // no body: no kernels (each target's codegen says so)
  if (const auto* k = s.as<Kernel>()) {
    out.push_back(k);
  } else if (const auto* seq = s.as<Seq>()) {
    for (const Stmt& st : seq->stmts) collect_kernels(f, st, out);
  } else {
    throw Error("function " + f.name +
                    " has a statement outside its kernels; a function's body is a sequence of kernels",
                s->loc);
  }
}

}  // namespace

std::vector<const Kernel*> kernels_of(const Function& f) {
  std::vector<const Kernel*> out;
  collect_kernels(f, f.body, out);
  return out;
}

std::string kernel_stem(const Function& f) {
  std::string out;
  for (char c : f.name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out.empty() ? "kernel" : out;
}

std::vector<std::string> kernel_entry_names(const Function& f, LoneKernel lone) {
  const std::size_t n = kernels_of(f).size();
  const std::string stem = kernel_stem(f);
  if (n == 1 && lone == LoneKernel::FunctionName) return {stem};
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(stem + "_k" + std::to_string(i));
  return names;
}

}  // namespace tg::ir
