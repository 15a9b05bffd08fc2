// partition_threads: the block's collective statements become per-thread code.
//
// Before (threads(128) -> tx; vector_bytes 16, f32 elements → groups of 4):
//   for i in parallel(0 +: 4) { for j in parallel(0 +: 64) { Y[bx*4 + i, j] = x[i, j] * w[j] } }
// After:
//   barrier
//   let flat = tx {                    (4·64/4 = 64 groups over 128 threads: one round)
//     if flat < 64 {
//       let i = flat / 16 {
//         for v in vectorized(0 +: 4) { let j = flat % 16 * 4 + v { Y[bx*4 + i, j] = x[i, j] * w[j] } }
//   } } }
//   barrier
//
// Every collective becomes such a loop nest first: copy → dst[...] = src[...] per element (with
// the out-of-range predication of check_bounds), fill → dst[...] = value, reduce → one element
// of dst per iteration with a serial loop over the reduced axis, gemm (where no matrix unit took
// it) → one C element per iteration with a serial K loop. A flat index over the nest is strided
// by the thread count; the innermost loop is grouped by the vector width where its extent allows
// (packed 4-bit stores always at least in pairs, so no two threads write one byte). Collective
// statements are fenced by barriers, redundant barriers removed, and the remaining
// fragments become shared buffers. The result holds only per-thread code.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function partition_threads(const Function& f, const TargetInfo& info);

}  // namespace tg
