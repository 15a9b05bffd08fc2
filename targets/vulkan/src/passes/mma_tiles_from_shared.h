// mma_tiles_from_shared: cooperative-matrix A and B operands read straight from their Shared
// tiles instead of through registers. infer_fragment_layouts fills each operand's registers by
// a loop nest just before the Mma nest, in the same Seq:
//
//   for mi, p, h { a_regs[mi*8 + p*2 + h] = A_shared[warp/2*64 + mi*16 + lane/2, kk*16 + lane%2*8 + p*2 + h] }
//   for mi, ni   { mma "coopmat_16x16x16_f16_f32" a=a_regs[mi*8], b=.., c=.. }
//     →
//   for mi, ni   { mma "coopmat_16x16x16_f16_f32" a=tile A_shared[warp/2*64 + mi*16, kk*16], b=.., c=.. }
//
// where the fill is proven to put in lane L's register r the element ((L·regs + r) / cols,
// (L·regs + r) % cols) of the unit tile (the layout of the registry's coopmat units; exact
// symbolic differences in which everything but the lane cancels), its store index a mixed radix
// over the nest (every register written once), the registers written nowhere else, the tile
// unchanged and no barrier between fill and Mma. A fill whose registers nothing reads any more
// is dropped, its buffer with it. The interpreter reads a tile operand by the same layout, so the
// lowered-IR checks prove the rewrite; the emitter loads such an operand with one
// OpCooperativeMatrixLoadKHR where the tile's storage allows (its component type, 16-byte aligned
// rows and start), else through the subgroup's staging area.
//
// Runs when the device has cooperative-matrix units at subgroup size 32, after the copy passes.
#pragma once
#include "spirv_codegen.h"
#include "tilegen/ir/function.h"

namespace tg::vulkan {

Function mma_tiles_from_shared(const Function& f, const Features& device);

}  // namespace tg::vulkan
