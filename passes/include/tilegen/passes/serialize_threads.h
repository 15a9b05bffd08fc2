// serialize_threads: a block's SIMT code becomes loops over the thread index between barriers
// (loop fission at barriers, as POCL does), so a block runs as one "thread" of a host CPU.
//
// Before (threads(128) -> tx; acc a Local f32[1], sums a Shared f32[128]):
//   acc[0] = X[bx * 128 + tx]
//   sums[tx] = acc[0]
//   barrier
//   for s in [0, 7) {
//     if (tx < 64 >> s) { sums[tx] = sums[tx] + sums[tx + (64 >> s)] }
//     barrier
//   }
//   copy sums[0 : +1] -> out[bx : +1]
// After (threads(1); acc becomes f32[128, 1], one row per former thread):
//   for t0 in [0, 128) { acc[t0, 0] = X[bx * 128 + t0]; sums[t0] = acc[t0, 0] }
//   for s in [0, 7) {
//     for t1 in [0, 128) { if (t1 < 64 >> s) { sums[t1] = sums[t1] + sums[t1 + (64 >> s)] } }
//   }
//   copy sums[0 : +1] -> out[bx : +1]
//
// Statements that contain a barrier or a collective statement (copy, fill, gemm, reduce, parallel
// loop) stay at block level — the verifier already requires their control flow to be uniform —
// and everything between them becomes a thread loop. A let whose body crosses a barrier keeps its
// value per thread: a uniform value stays a let; a per-thread one becomes a Local array indexed by
// the thread loop's variable. Local buffers gain a leading dimension of the thread count. Race-free
// SIMT code gives the same results run thread after thread between barriers, which is what the
// interpreter's race detection guarantees. Mma (per-warp code) is not supported: a tg::Error.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function serialize_threads(const Function& f, const TargetInfo& info);

}  // namespace tg
