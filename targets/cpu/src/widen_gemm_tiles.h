// widen_gemm_tiles: a Shared tile of a narrow float (f16, e4m3, e5m2) that is filled only by tile
// copies from a Global tensor of its own dtype and read only as a micro-kernel gemm's A or B (the
// gemm's other operand such a tile too: the two keep one dtype) becomes an f32 tile, so the copy converts
// each element once where the micro-kernel would otherwise widen the tile again at every gemm
// (emit_gemm.cpp), and reads it in place. The values are the same (every narrow float is an f32, and a copy's
// zero fill is 0 in both), so the interpreter runs the result to the same answer. It runs on tile statements,
// before pack_gemm_operands (whose panel then is f32 too):
//
//   shared A_shared: e4m3[96, 128]
//   copy A[by*96 +: 96, ko*128 +: 128] -> A_shared
//   gemm(A_shared, B_shared -> C_local, trans_b)
// →
//   shared A_shared: f32[96, 128]
//   (the same statements)
//
// bf16 tiles stay: the micro-kernel reads them as bf16 pairs where it uses vdpbf16ps or AMX.
#pragma once
#include "tilegen/ir/function.h"

namespace tg::cpu {

Function widen_gemm_tiles(const Function& f);

}  // namespace tg::cpu
