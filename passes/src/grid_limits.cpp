// check_grid_limits (see grid_limits.h).
#include "tilegen/passes/grid_limits.h"

#include <limits>
#include <string>

#include "tilegen/ir/visitor.h"

namespace tg {

namespace {

// The largest block index a block variable of dtype t holds (bx takes 0 .. extent - 1).
int64_t largest_index(DType t) {
  if (t == i64) return std::numeric_limits<int64_t>::max();
  return saturation_bounds(t).second < 0 ? 0 : int64_t(saturation_bounds(t).second);
}

void check_kernel(const ir::Kernel& k, const TargetInfo& info) {
  const std::string where =
      "kernel grid of " + std::to_string(k.grid.size()) + " dimension" + (k.grid.size() == 1 ? "" : "s");
  if (!info.max_grid.empty() && k.grid.size() > info.max_grid.size())
    throw Error(where + ": the " + info.target + " target launches grids of at most " +
                    std::to_string(info.max_grid.size()) + " dimensions; fold dimensions together",
                k.loc);
  int64_t blocks = 1;
  for (std::size_t d = 0; d < k.grid.size(); ++d) {
    auto n = k.grid[d].as_int();
    if (!n) continue;  // a size not bound yet: checked when the runtime binds it
    const std::string dim = "grid dimension " + std::to_string(d) + " has " + std::to_string(*n) + " blocks";
    if (d < k.block_vars.size() && k.block_vars[d].defined()) {
      const Var& v = k.block_vars[d];
      if (*n - 1 > largest_index(v.dtype()))
        throw Error(dim + "; the block index " + v.name() + " is " + std::string(v.dtype().name()) +
                        ", which counts at most " + std::to_string(largest_index(v.dtype()) + 1) +
                        " blocks: use larger blocks (fewer of them), or declare " + v.name() + ": i64",
                    k.loc);
    }
    if (d < info.max_grid.size() && *n > info.max_grid[d])
      throw Error(dim + "; the " + info.target + " target (" + info.device_name + ") allows at most " +
                      std::to_string(info.max_grid[d]) +
                      " in that dimension: use larger blocks (fewer of them)",
                  k.loc);
    if (*n > 0 && blocks > std::numeric_limits<int64_t>::max() / *n)
      throw Error(where + " has more than 2^63 - 1 blocks in all: use larger blocks (fewer of them)", k.loc);
    blocks *= std::max<int64_t>(*n, 0);
  }
}

}  // namespace

void check_grid_limits(const Function& f, const TargetInfo& info) {
  struct Kernels : IRVisitor {
    const TargetInfo& info;
    explicit Kernels(const TargetInfo& i) : info(i) {}
    void visit(const ir::Kernel* k) override {
      check_kernel(*k, info);
      IRVisitor::visit(k);
    }
  } kernels(info);
  if (f.body) kernels.visit_stmt(f.body);
}

}  // namespace tg
