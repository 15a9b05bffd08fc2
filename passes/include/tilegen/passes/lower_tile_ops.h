// lower_tile_ops: the collective tile statements become parallel loop nests of element code,
// the form every "plain" code generator (cpu, the Vulkan plain path) starts from.
//
// Before (A is f32[1000, 256], sizes bound; Xs shared f32[128, 32]):
//   copy A[bx * 128 : +128, k * 32 : +32] -> Xs        (check_bounds)
//   fill Cf <- 0
//   reduce max Xf axis 1 -> m                           (clear)
//   gemm As, Bs -> Cf
// After:
//   for i0 in [0, 128) parallel { for i1 in [0, 32) parallel {
//     Xs[i0, i1] = select(bx*128 + i0 >= 0 && bx*128 + i0 < 1000 && ..., A[bx*128 + i0, k*32 + i1], 0)
//   } }
//   for i0 in [0, 128) parallel { for i1 in [0, 128) parallel { Cf[i0, i1] = 0 } }
//   for i0 in [0, 64) parallel { m[i0] = -inf; for r in [0, 128) { m[i0] = max(m[i0], Xf[i0, r]) } }
//   (with reduce_lanes W: W partial maxima m_lanes[i0, l] over a parallel inner loop, then combined)
//   for i in [0, 128) parallel { for k in [0, 32) { for j in [0, 128) parallel {
//     Cf[i, j] = Cf[i, j] + As[i, k] * Bs[k, j] } } }        (only with lower_gemm)
//
// Reads outside a Global buffer of a bounds-checked copy become select(in_range, load, 0) (lazy:
// the load is not performed out of range); writes outside become If(in_range) { store }; a fill
// of a Global region skips what lies outside, as the interpreter does. Accumulations whose
// destination is narrower than f32 (f16, bf16, fp8) go through an f32 fragment, so the sum is not
// rounded at every step. A statement with no loop at all (a one-element copy) stays collective
// inside a parallel loop of extent 1. Run simplify afterwards: it removes the guards it can prove.
#pragma once
#include <functional>

#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

struct LowerTileOpsOptions {
  bool lower_gemm = true;  // false: Gemm stays a tile statement, for a target with its own kernel
  /// When set, a gemm for which it returns true stays a tile statement (the target's own kernel
  /// handles those shapes and dtypes); the others are lowered.
  std::function<bool(const ir::Gemm&)> keep_gemm;
  /// > 1: a reduction along a buffer's last axis keeps this many partial results, lane l
  /// combining elements l, l + W, l + 2W, ... in a parallel (vectorisable) inner loop, then the
  /// lanes in order. Changes the order of a float sum (not its tolerance); 0 keeps the order.
  int reduce_lanes = 0;
};

/// The pass, lowering Copy, Fill, Reduce and Gemm.
Function lower_tile_ops(const Function& f, const TargetInfo& info);
Function lower_tile_ops(const Function& f, const TargetInfo& info, const LowerTileOpsOptions& opt);

}  // namespace tg
