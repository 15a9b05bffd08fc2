// rasterize_blocks: visit a 2-D grid's blocks in panels of `group` block rows, so blocks that run
// at the same time share rows of A and columns of B in L2 (TileLang's use_swizzle).
//
// Before (grid(32, 32) -> (bx, by)):
//   kernel grid(32, 32) threads(128) -> (bx, by; tx) { ... A[by*128 ...] ... B[... bx*128] ... }
// After (group 8):
//   kernel grid(32, 32) threads(128) -> (bx, by; tx) {
//     let block = by*32 + bx {
//       let rows = min(32 - block / 256 * 8, 8) {                  (block rows in this panel)
//         let by_r = min(block / 256 * 8 + block % 256 % rows, 31) {
//           let bx_r = min(block % 256 / rows, 31) { ... A[by_r*128 ...] ... B[... bx_r*128] ... } } } }
//   }
// (The mins never bind: they give range analysis the grid bounds the division hides, so a guard
// such as bx_r*128 + c < 4096 folds where the grid covers the extent exactly.)
// The map is a permutation of the blocks (the last panel may be shorter), so results are
// unchanged. Applied to kernels that contain a gemm or mma and have at least `group` block rows
// and two block columns; others are left alone.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function rasterize_blocks(const Function& f, const TargetInfo& info, int group = 8);

}  // namespace tg
