// fuse_parallel_loops: neighbouring parallel loop nests over the same iteration space become one
// nest when each element's work depends only on that element's earlier work — what
// lower_tile_ops makes of a tile program's copy, element-wise update and copy back. A cpu then
// makes one pass over the tile instead of three, and LLVM forwards the stores between them.
//
// Before (Xf fragment f32[4, 256]; Y global; row_sum fragment f32[4]):
//   for c0 in parallel(0 +: 4) { for c1 in parallel(0 +: 256) {
//     Xf[c0, c1] = select(ok, Y[bx*4 + c0, jo*256 + c1], 0.0) } }
//   for i in parallel(0 +: 4) { for j in parallel(0 +: 256) { Xf[i, j] = Xf[i, j] * row_sum[i] } }
//   for c0 in parallel(0 +: 4) { for c1 in parallel(0 +: 256) {
//     if ok { Y[bx*4 + c0, jo*256 + c1] = Xf[c0, c1] } } }
// After:
//   for c0 in parallel(0 +: 4) { for c1 in parallel(0 +: 256) {
//     Xf[c0, c1] = select(ok, Y[bx*4 + c0, jo*256 + c1], 0.0)
//     Xf[c0, c1] = Xf[c0, c1] * row_sum[c0]
//     if ok { Y[bx*4 + c0, jo*256 + c1] = Xf[c0, c1] } } }
//
// Legal when the nests have the same depth, mins and extents, neither holds a collective, a
// barrier or an atomic, and every buffer one of them writes and the other touches is accessed
// in both at one same index that takes each loop variable once, plainly (v or v + invariant),
// so that element e of iteration (i, j) is only ever touched by iteration (i, j). Buffers only
// read by both are free.
//
// Then a kernel buffer whose every element lives one iteration — in each nest body that touches
// it, stored first at one index, read back at that index, touched nowhere else — becomes lets and
// leaves the kernel (above: `let Xf_0 = select(...)`, `let Xf_1 = Xf_0 * row_sum[c0]`,
// `if ok { Y[...] = Xf_1 }`: no store to Xf is left for a later loop to overwrite).
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// The pass.
Function fuse_parallel_loops(const Function& f, const TargetInfo& info);

}  // namespace tg
