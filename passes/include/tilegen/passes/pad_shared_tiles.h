// pad_shared_tiles: the GPU source targets' (cuda, hip) shared-tile padding, written into the IR.
// A shared tile of rank ≥ 2 whose rows are a multiple of 32 bytes gets 16 bytes of padding a row
// (`layout=padded(P)`, P = 16 bytes in elements), so the lanes of a warp reading a column slice —
// the matrix-unit operand loads, ldmatrix's eight rows — hit distinct banks:
//
//   shared A_s: f16[128, 32]        →   shared A_s: f16[128, 32] layout=padded(8)   (row pitch 40)
//   shared S: f32[64, 30]           →   unchanged (120-byte rows)
//
// A tile the user padded keeps its padding; one the user swizzled is padded instead (the swizzle
// wgmma's descriptors read is swizzle_shared_tiles', async_mma.h, which runs next and replaces
// this padding on the tiles async mmas read); tiles a bulk copy fills (bulk_copies.h: the copy
// engine writes a box's rows back to back) stay dense; packed 4-bit tiles and tiles with a symbolic row length stay as
// they are. gpu_layout.h's strides_of() reads the layout, so every pass that proves addresses (vector_move,
// use_ldmatrix), the shared-memory plan and the emitter see the same pitch; the interpreter indexes
// logically, so padding changes no value. Runs right after gpu_pipeline().
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function pad_shared_tiles(const Function& f, const TargetInfo& info);

}  // namespace tg
