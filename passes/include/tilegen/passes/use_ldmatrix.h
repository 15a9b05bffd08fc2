// use_ldmatrix: mma operand loads that one ldmatrix performs become ir::LdMatrix (cuda; it runs
// after partition_threads). infer_fragment_layouts writes operand loads as plain per-lane loops;
// this pass proves, lane by lane and register by register, that such a loop moves exactly what
// ldmatrix.m8n8.b16 moves from a shared tile laid out as the GPU source targets lay it out
// (gpu::strides_of), and only then replaces it:
//
//   let lane = tx % 32 { ...
//   for p in unrolled(0 +: 4) { for h in vectorized(0 +: 2) {
//     a_regs[mi*8 + p*2 + h] = A_shared[warp/2*64 + mi*16 + lane/4 + p%2*8, kk*16 + lane%4*2 + p/2*8 + h] } }
//   →  ldmatrix x4 A_shared[warp/2*64 + mi*16 + lane%16, kk*16 + lane/16*8] -> a_regs[mi*8]
//
// The interpreter executes LdMatrix as PTX defines it, so the lowered-IR checks test the proof.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function use_ldmatrix(const Function& f, const TargetInfo& info);

}  // namespace tg
