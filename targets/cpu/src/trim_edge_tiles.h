// trim_edge_tiles: the gemm of an edge block computes only the rows, columns and K steps that
// exist. A tile that passes the end of M, N or K is zero-filled by its bounds-checked copy and the
// rows and columns past the end are dropped by the bounds-checked copy out, but the micro-kernel
// computes the whole tile: at 2048³ with 192-row blocks the last row block computes 64 rows for
// nothing (3% of the work); at 1000×777×333 in 96×128×128 tiles, 5% of the rows, 12% of the
// columns and 13% of the K steps. On tile statements (after pack_gemm_operands):
//
//   for ko in pipelined(0 +: 3, stages=3) {
//     copy A[by*96 +: 96, ko*128 +: 128] -> A_shared
//     copy B[ko*128 +: 128, bx*128 +: 128] -> B_shared
//     gemm(A_shared, B_shared -> C_local)
//   }
//   copy C_local -> C[by*96 +: 96, bx*128 +: 128]              (C: f32[1000, 777], K = 333)
// → the gemm becomes (rows 1000 % 96 = 40; columns 777 % 128 = 9, rounded up to a vector, 16;
//   K steps 333 - 2·128 = 77):
//     if by*96 + 96 > 1000 {
//       if bx*128 + 128 > 777 {
//         gemm(A_shared[0 +: 40, 0 +: 128], B_shared[0 +: 128, 0 +: 16] -> C_local[0 +: 40, 0 +: 16])
//       } else {
//         gemm(A_shared[0 +: 40, 0 +: 128], B_shared -> C_local[0 +: 40, 0 +: 128])
//       }
//     } else {
//       if bx*128 + 128 > 777 {
//         gemm(A_shared, B_shared[0 +: 128, 0 +: 16] -> C_local[0 +: 96, 0 +: 16])
//       } else {
//         if ko == 2 {
//           gemm(A_shared[0 +: 96, 0 +: 77], B_shared[0 +: 77, 0 +: 128] -> C_local)
//         } else {
//           gemm(A_shared, B_shared -> C_local)
//         }
//       }
//     }
// The last K step is trimmed only in blocks that trim nothing else: five micro-kernels, not eight
// (compile time: 1000×777×333 took 182 ms to compile with eight, 64 ms untrimmed).
// The rows and columns of the fragment left out are read by nothing but the copy out, which drops
// them (and by element-wise updates of the fragment between the loop and the copy, each element
// its own); the K steps left out multiply the zeros that the A tile's bounds-checked copy put
// there. Applied to a gemm directly in a loop's body whose C is a whole 2-D fragment copied out
// with bounds checks at offsets (X)·rows and (Y)·columns; K trimmed where that loop (from 0, a
// constant trip count) copies the A tile from a Global buffer at ko·K step with bounds checks.
// Anything else is left alone.
#pragma once
#include "tilegen/ir/function.h"

namespace tg::cpu {

/// `vector` elements: trimmed columns are rounded up to it (whole vectors, no scalar columns).
Function trim_edge_tiles(const Function& f, int vector);

}  // namespace tg::cpu
