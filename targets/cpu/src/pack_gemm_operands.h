// pack_gemm_operands: B of a tiled gemm packed once per K×N panel and shared by the blocks that
// read it, which the pass makes run one after another on one thread. A gemm-shaped kernel copies
// a B tile per block and K step, so every block of a block column copies the same panel again
// (11 times at 2048³ with 192-row blocks). The pass gives each block `rows` row blocks of the old
// grid, in order, and copies their common B panel (the whole K) once, before them, into a Shared
// buffer the micro-kernel reads in place (its rows spread over the L1 sets, emit_kernel.cpp);
// the K loop's gemm reads its K step of the panel. It runs on tile statements (after bounds):
//
//   kernel grid(8, 11) -> (bx, by) {
//     shared A_shared: f32[192, 64]; shared B_shared: f32[64, 256]; fragment C_local: f32[192, 256]
//     fill C_local = 0.0
//     for ko in pipelined(0 +: 32, stages=3) {
//       copy A[by*192 +: 192, ko*64 +: 64] -> A_shared
//       copy B[ko*64 +: 64, bx*256 +: 256] -> B_shared
//       gemm(A_shared, B_shared -> C_local)
//     }
//     copy C_local -> C[by*192 +: 192, bx*256 +: 256]
//   }
// → (rows 4: 11 row blocks in 3 blocks of 4, 4, 3)
//   kernel grid(8, 3) -> (bx, by) {
//     shared A_shared: f32[192, 64]; shared B_panel: f32[2048, 256]; fragment C_local: f32[192, 256]
//     copy B[0 +: 2048, bx*256 +: 256] -> B_panel
//     for by_row in serial(0 +: 4) {
//       if by*4 + by_row < 11 {
//         fill C_local = 0.0
//         for ko in pipelined(0 +: 32, stages=3) {
//           copy A[(by*4 + by_row)*192 +: 192, ko*64 +: 64] -> A_shared
//           gemm(A_shared, B_panel[ko*64 +: 64, 0 +: 256] -> C_local)
//         }
//         copy C_local -> C[(by*4 + by_row)*192 +: 192, bx*256 +: 256]
//       }
//     }
//   }
// The panel copy keeps the tile copy's bounds checks (zeros past K and N), so ragged shapes are
// guarded where they were, at the edges. Applied to a 2-D grid whose block body is a sequence
// holding one K loop (from 0, constant trip count) that copies a Global tile into a Shared one
// read only by the loop's gemm after it, the tile's source depending on the loop variable in one
// dimension (offset ko·extent there) and otherwise only on bx; B not written by the kernel; every
// other scratch buffer of the block fully written (fill, copy, clearing gemm) before it is read,
// as it is no longer zeroed between the row blocks; the panel no larger than `max_panel_bytes`.
// Anything else is left alone. The interpreter runs the result as it is.
#pragma once
#include <cstdint>

#include "tilegen/ir/function.h"

namespace tg::cpu {

struct PackGemmOptions {
  int rows = 4;                        // row blocks of the old grid per block (< 2: off)
  int64_t max_panel_bytes = 16 << 20;  // a larger panel is not packed (the pipeline: half the L2)
};

Function pack_gemm_operands(const Function& f, const PackGemmOptions& opt);

}  // namespace tg::cpu
