// infer_fragment_layouts: fragments fed by gemm get per-thread registers laid out by the target's
// matrix unit, and gemm becomes per-warp matrix-unit operations.
//
// Before (threads(128), warp_size 32, matrix unit mma_m16n8k16_f16_f32):
//   fragment C_local: f32[32, 32]
//   fill C_local = 0.0
//   for ko in pipelined(0 +: 4, stages=3) { copy ... -> A_shared; copy ... -> B_shared
//                                           gemm(A_shared, B_shared -> C_local) }
//   for i in parallel(0 +: 32) { for j in parallel(0 +: 32) { C_local[i, j] = max(C_local[i, j], 0.0) } }
//   copy C_local -> C[by*32 +: 32, bx*32 +: 32]
// After (a 2×2 warp grid; each warp owns a 16×16 sub-tile = 1×2 mma tiles, 8 registers a thread):
//   local C_local: f32[8]
//   local a_regs_0: f16[8]
//   local b_regs_0: f16[8]
//   for e in unrolled(0 +: 8) { C_local[e] = 0.0 }
//   for ko in pipelined(...) { copy ...; copy ...
//     barrier
//     let warp = tx / 32 { let lane = tx % 32 {
//       for kk in serial(0 +: 1) {
//         for mi in unrolled(0 +: 1) { for r in unrolled(0 +: 8) { a_regs_0[mi*8 + r] = A_shared[<row>, kk*16
//         + <col>] } } for ni in unrolled(0 +: 2) { for r in unrolled(0 +: 4) { b_regs_0[ni*4 + r] =
//         B_shared[...] } } for mi ... { for ni ... { mma "mma_m16n8k16_f16_f32" a: a_regs_0[mi*8], b:
//         b_regs_0[ni*4], c: C_local[(mi*2 + ni)*4] } }
//     } } }
//     barrier }
//   (the epilogue loop and the copy out become loops over the thread's 8 elements, with
//    i = warp / 2 * 16 + mi*16 + lane / 4 + r / 2 * 8 and j = warp % 2 * 16 + ni*8 + lane % 4 * 2 + r % 2)
//
// A fragment is laid out when every use is one the layout can serve: gemm accumulator (with a
// unit of TargetInfo::matrix_units matching the input and accumulator types, group size =
// warp_size, and tile sizes divisible by the unit's), fill, a copy of the whole fragment from or
// to any buffer, and perfect 2-deep parallel nests over its shape that access it only at the loop
// variables. Any other use (gemm operand B, other indexing) keeps it a block-wide tile,
// which partition_threads places in shared memory: correct, slower.
//
// Tiles no gemm accumulates into take a layout from another tile: a whole-fragment copy between
// two fragments (a dtype cast: f32 scores → f16 P) gives the destination the source's tiling and
// becomes a register-by-register move; with lane shuffles, a tile in a 2-deep nest beside a
// laid-out one takes that one's tiling, and a tile copied in from memory with no other source
// (softmax's rows) gets the SIMT layout below (grids whose rows shuffles reduce, where its rows
// are reduced). A laid-out fragment is a gemm's A operand straight from registers where the
// unit's A layout is its accumulator layout regrouped (the map is derived from the two tables,
// per lane, and must not depend on the lane): same warps on the same rows, whole rows a warp,
// A not transposed. mma.sync m16n8k16: A registers 0-3 of K step kk are the C registers of
// n-tile 2kk, 4-7 those of 2kk + 1, and the K loop is unrolled so the indices stay constants:
//   copy scores -> P; gemm(P, V_shared -> O_local)
//   → for mi, ni, r { P[idx] = cast<f16>(scores[idx]) }
//     for kk in unrolled(0 +: 4) { a_regs[mi*8 + 0] = P[(mi*8 + kk*2)*4 + 0] ... ; B loads; mma }
// MFMA's A holds a row of K per lane and its accumulator a column: no map, so P stays a tile
// (shared memory) and the copy into it is the conversion step.
//
// Row vectors (TargetInfo::lane_shuffle: cuda, hip). A [bm] fragment gets the rows of a laid-out
// bm×bn tile — each thread holds the rows its elements are in, replicated across the lanes (and
// warps along N) that share them — when it is reduced from the tile along its columns, read as
// r[i] in the tile's 2-deep nests, copied to or from another such vector, or computed in a 1-deep
// parallel loop `for i { r[i] = ... }` whose every access is a row vector at [i] (each holder
// computes its rows; a store to anything else keeps the loop block-wide). Accumulators whose rows
// are reduced or read beside row vectors take the tiling with whole rows in a warp (the most warps,
// then the fewest along N). Every layout is settled to a fixpoint: a use the registers cannot
// serve keeps the vectors (and the tile of their reductions) tiles.
//   reduce max(scores -> row_max, axis=1)     scores over mma.sync m16n8k16, a 4×1 warp grid
//   → per thread: row_part[k] = -inf; row_part[mi*2 + r/2] = max(row_part[...], scores[idx]);
//     shuffle_xor(1 of 32) row_swap[k] = row_part[k]; row_part[k] = max(row_part[k], row_swap[k]);
//     shuffle_xor(2 of 32) ...; row_max[k] = max(row_max[k], row_part[k])
// (row r of a unit tile lives in lanes 4(r%8)..4(r%8)+3: masks 1 and 2; MFMA 16x16: 1, 2, 4, 8).
// A reduction whose rows span several warps (wn > 1) is not done in registers yet. A gemm whose accumulator is
// not laid out still runs on the matrix unit, through registers loaded from and stored back to
// the tile. Lowered collective statements are fenced by barriers.
//
// Without a matching unit (f32 on mma.sync, any gemm on a device without matrix units), an f32 or
// f64 accumulator gets the SIMT layout of the classic SGEMM: the block's threads form a gm×gn grid
// and thread t owns the mt×nt elements (t / gn + gm·mi, t % gn + gn·ni), at most 128 a thread;
// gemm becomes, per thread, for k { load mt values of A and nt of B; mt×nt FMAs }:
//   32×32 over 128 threads → local Cf: f32[8]  (8×16 threads, 4×2 elements each)
// The uses a unit layout serves, the SIMT layout serves too.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function infer_fragment_layouts(const Function& f, const TargetInfo& info);

}  // namespace tg
