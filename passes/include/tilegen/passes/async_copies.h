// async_copies: the copy phase of each multi-buffered loop becomes asynchronous global→shared
// copies (ir::Store::async) with the waits that make them visible (ir::AsyncWait), for targets
// with TargetInfo::async_copy (cuda: cp.async). It runs last, on per-thread code.
//
// pipeline_shared makes two Pipelined(S) loops (see its header): a prologue whose iterations fill
// the slots of tiles 0 .. S-2, and the main loop,  [barrier] fill-of-tile-(k+S-1) barrier reads.
// Each vector move of 4, 8 or 16 bytes in a fill (vector_move.h) becomes async; each iteration
// of either loop commits its fill as one group and waits, before the barrier that precedes the
// reads (the prologue: before its own trailing barrier), until at most S - 1 groups are in flight:
//
//   for k in pipelined(0 +: n, stages=3) {            for k in pipelined(0 +: n, stages=3) {
//     barrier                                            barrier
//     if k + 2 < n {                                     if k + 2 < n {
//       for v in vectorized(0 +: 8) {                      for v in vectorized(0 +: 8) {
//         As[s, r, c + v] = A[...]              →             async As[s, r, c + v] = A[...]
//     } }                                                } }
//     barrier                                            async_wait 2
//     <reads of slot k % 3>                              barrier
//   }                                                    <reads of slot k % 3>
//
// Correct because group i is tile i (the prologue commits S - 1 groups, main-loop iteration j the
// one of tile j + S - 1, empty once the guard is false), so at main-loop iteration j, S - 1 + j + 1
// groups are committed and the wait completes groups 0 .. j: tile j is in; the barrier after it
// makes every thread's part visible. A slot is refilled only after the leading barrier of the
// iteration after its reads, so a copy may land at any time between its issue and its wait. A main
// loop left with no fill (every later tile's guard folded to false: trip count <= S - 1) still
// commits an empty group and waits at the start of each iteration, to complete the prologue's
// groups one by one. A barrier nested inside a fill (none today) gets an `async_wait 0` before it;
// a fill with no barrier after it, an `async_wait 0` at the end of the body. The interpreter runs
// async stores as late as the IR allows (at the wait) and reports any access to an element in
// flight, and copies never waited for by the end of the kernel.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function async_copies(const Function& f, const TargetInfo& info);

}  // namespace tg
