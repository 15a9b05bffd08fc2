// guard_masks: in a loop over tiles (serial or pipelined, variable j), a statement that masks
// with `select(cond, masked, x)` where cond can only hold from some tile J0 on — for every value
// of the statement's own loop variables — runs on tiles j ≥ J0 only; before J0 it runs with the
// selects' unmasked values, and a store that then writes back what it read is dropped. The loop
// is split, for that statement, into the tiles no mask reaches and the tiles it does: causal
// attention masks only its diagonal tiles, a ragged S only the last.
//
//   for ko in pipelined(0 +: min(64, bx + 1)) {
//     ...
//     for i in parallel(0 +: 64) { for c in parallel(0 +: 64) {
//       S[i, c] = select(ko*64 + c > bx*64 + i || ko*64 + c >= 4096, -inf, S[i, c]) } }
//     ...
//   }
// becomes
//     if ko >= min(bx, 64) { for i, c { S[i, c] = select(..., -inf, S[i, c]) } }
// (ko*64 + c > bx*64 + i can hold for some i, c in [0, 64) only from ko = bx on: 64·ko + 63 > 64·bx.)
//
// cond is an || of integer comparisons, each linear in j with a positive coefficient and in
// terms that are either free of the statement's loop and let variables (block indices, sizes:
// kept as they are) or made of those alone with known bounds (their extreme taken). Any other
// condition is left alone.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function guard_masks(const Function& f, const TargetInfo& info);

}  // namespace tg
