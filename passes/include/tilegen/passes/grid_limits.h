// check_grid_limits: whether a device can launch every kernel's grid, before anything is lowered.
//
//   kernel grid(2147483650) threads(1) -> (bx; tx) { ... }          (bx: i32)
// is a tg::Error at the kernel's builder line: "grid dimension 0 has 2147483650 blocks; the
// block index bx is i32, which counts at most 2147483647 ...", and on cuda
//   kernel grid(8, 70000) ...
// "grid dimension 1 has 70000 blocks; cuda allows at most 65535 (TargetInfo::max_grid) ...".
// The limits are the block variable's dtype (every target: a block index that wraps is a silent
// wrong answer), the target's TargetInfo::max_grid per dimension (its size: the most dimensions
// a grid may have), and 2^63 - 1 blocks in all. Grids that are not constant yet (unbound sizes)
// are checked when they are: the runtime calls this on every specialisation it compiles.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// Throws tg::Error, at the kernel's builder call site, for the first grid dimension of f that
/// `info`'s device cannot launch or whose block variable cannot hold every block index.
void check_grid_limits(const Function& f, const TargetInfo& info);

}  // namespace tg
