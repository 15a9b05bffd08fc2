// async_copies: the copy phase of each multi-buffered loop becomes asynchronous global→shared
// copies (ir::Store::async) with the waits that make them visible (ir::AsyncWait), for targets
// with TargetInfo::async_copy (cuda: cp.async). It runs last, on per-thread code.
//
// pipeline_shared makes two Pipelined(S) loops (see its header): a prologue whose iterations fill
// the slots of tiles 0 .. S-2, and the main loop, whose fill of tile k+S-1 comes first. Each
// vector move of 4, 8 or 16 bytes in a fill (vector_move.h) becomes async; each iteration commits
// its fill as one group and waits (ir::AsyncWait N: at most N groups left in flight) before the
// first barrier after the fill. Barrier thinning (partition_threads) leaves that barrier in one
// of two places, and N follows from where:
//
//   before the reads (3 barriers)           after the reads (1 barrier: two-slot tiles)
//   for k in pipelined(0 +: n, stages=S) {   for k in pipelined(0 +: n, stages=S) {
//     barrier                                  if k + S-1 < n { async As[(k + S-1) % S, ..] = A[..] }
//     if k + S-1 < n { async As[..] = A[..] }  <reads of slot k % S>
//     async_wait S-1                           async_wait S-2
//     barrier                                  barrier
//     <reads of slot k % S>                  }
//     barrier
//   }
//
// Group i is tile i (the prologue commits S - 1 groups, main-loop iteration j the one of tile
// j + S - 1, empty once the guard is false). Left: at iteration j, S + j groups are committed and
// the wait completes groups 0 .. j, so tile j is in, and the barrier after it makes every thread's
// part visible to the reads after it. Right: the reads after the barrier are iteration j + 1's,
// of tile j + 1: the wait completes groups 0 .. j + 1 (S - 2 newer ones stay in flight). The
// prologue, a loop that only fills, waits with S - 2 as well, so that tile 0 is in when the main
// loop's first reads come before any wait of its own. Either way a slot is refilled only after a
// barrier that follows its reads, so a copy may land at any time between its issue and its wait.
// A main loop left with no fill (every later tile's guard folded to false: trip count <= S - 1)
// commits an empty group and waits at the start of each iteration, to complete the prologue's
// groups one by one, followed by a barrier of its own where its body does not begin with one. A
// barrier nested inside a fill (none today) gets an `async_wait 0` before it; a fill with no
// barrier after it, an `async_wait 0` at the end of the body. The interpreter runs async stores
// as late as the IR allows (at the wait) and reports any access to an element in flight, and
// copies never waited for by the end of the kernel.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function async_copies(const Function& f, const TargetInfo& info);

}  // namespace tg
