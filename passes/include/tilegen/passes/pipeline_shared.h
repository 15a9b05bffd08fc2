// pipeline_shared: Pipelined(stages) loops multi-buffer the shared tiles their leading copies
// fill, so the copy for iteration ko + stages - 1 is issued while iteration ko computes.
//
// Before (K loop of n iterations, stages = 3):
//   for ko in pipelined(0 +: n, stages=3) {
//     copy A[by*128 +: 128, ko*32 +: 32] -> As
//     copy B[ko*32 +: 32, bx*128 +: 128] -> Bs
//     gemm(As, Bs -> C)
//   }
// After (As: f16[3, 128, 32], Bs: f16[3, 32, 128]):
//   for p in pipelined(0 +: 2, stages=3) {                                  prologue
//     if p < n { copy A[by*128 +: 128, p*32 +: 32] -> As[p +: 1, 0 +: 128, 0 +: 32] }
//     if p < n { copy B[p*32 +: 32, ...] -> Bs[p +: 1, ...] }
//   }
//   for ko in pipelined(0 +: n, stages=3) {
//     if ko + 2 < n { copy A[by*128 +: 128, (ko + 2)*32 +: 32] -> As[(ko + 2) % 3 +: 1, ...] }
//     if ko + 2 < n { copy B[...] -> Bs[(ko + 2) % 3 +: 1, ...] }
//     gemm(As[ko % 3 +: 1, ...], Bs[ko % 3 +: 1, ...] -> C)
//   }
// The copies stay ordinary (synchronous) copies, so the interpreter's results are unchanged.
// The contract with code generators: in a Pipelined loop that leaves this pass, the copies into
// shared memory before the body's first read of it fill a slot first read `stages - 1`
// iterations later (the prologue fills slots 0 .. stages-2); a target may issue them as
// asynchronous copies (cp.async), committing one group an iteration and waiting, before the
// barrier that separates the fills from the reads that need them, until the tile those reads use
// is in (async_copies.h: `stages - 1` or `stages - 2` groups left in flight). Pipelined loops
// the pass cannot transform (no leading global-to-shared copy, a tile read after the loop or
// reduced, too little shared memory) become Serial loops. The stages fit the device's shared memory
// with a quarter of each tile to spare for the row padding pad_shared_tiles adds, but for the tiles
// async mmas read, which swizzle_shared_tiles swizzles instead (their bytes, and 1024 for their
// alignment): 128×256×64 f16 tiles get 4 stages in sm_90a's 227 KiB (194 KiB). The GPU pipelines
// run it after infer_fragment_layouts: the shared memory its stages must fit in is that of the
// shared tiles and of the fragments left tiles (partition_threads places them in shared memory);
// fragments in registers do not count.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function pipeline_shared(const Function& f, const TargetInfo& info);

}  // namespace tg
