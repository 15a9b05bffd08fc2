// hold_accumulators: a Local accumulator that a statement S uses only as the C operand of
// cooperative-matrix Mmas stays in the unit's registers while S runs (ir::Hold), instead of
// going through the staging tiles around every Mma (coopmat_lowering.cpp). S is the outermost
// statement with that property (through Seq, Let and For bodies): the K loop of a gemm.
// A buffer qualifies when it is 1-D and whole unit tiles, every Mma on it uses one unit the
// device reports at subgroup size 32, of its dtype as C type, at offsets that are multiples of
// the unit's C registers, and no atomic updates it. Where every Mma's C offset depends only on
// the constant loops directly around it (at most 64 iterations in all), those loop nests are
// unrolled, so the emitter names one matrix variable per unit tile and never indexes matrices
// dynamically (which would put them in local memory on NVIDIA).
//
//   for ko in serial(0 +: 32) {                         hold C_local as "coopmat_16x16x16_f16_f32" {
//     ...                                                 for ko in serial(0 +: 32) {
//     for mi in unrolled(0 +: 4) {                          ...
//       for ni in unrolled(0 +: 4) {              →         mma "coopmat_..." a=a_regs[0], b=b_regs[0],
//       c=C_local[0]
//         mma "coopmat_..." a=a_regs[mi*8],                 mma "coopmat_..." a=a_regs[0], b=b_regs[8],
//         c=C_local[8]
//             b=b_regs[ni*8], c=C_local[mi*32 + ni*8]       ... (16 mmas)
//   } } }                                               } }
#pragma once
#include "spirv_codegen.h"
#include "tilegen/ir/function.h"

namespace tg::vulkan {

Function hold_accumulators(const Function& f, const Features& device);

}  // namespace tg::vulkan
