// Recognising mma operand loads that one ldmatrix instruction performs. infer_fragment_layouts
// writes operand loads as plain per-lane loops (exact in the interpreter); here the cuda target
// proves, lane by lane, that such a loop moves exactly what ldmatrix moves, and only then uses it.
//
//   for p in unrolled(0 +: 4) { for h in vectorized(0 +: 2) {
//     a_regs[mi*8 + p*2 + h] = A_shared[warp/2*64 + mi*16 + lane/4 + p%2*8, kk*16 + lane%4*2 + p/2*8 + h] } }
//   → tg_ldmatrix_x4((tg_u32*)&a_regs[mi*8], &A_shared[<row lane%16, col lane/16*8>])
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "tilegen/ir/stmt.h"

namespace tg::cuda {

struct LdmatrixMatch {
  int matrices = 0;  // 8×8 b16 matrices: 1, 2 or 4
  bool trans = false;
  Buffer regs;
  Expr reg_base;  // element index of the first register written
  Buffer src;
  Expr src_index;  // flat element index of the row this lane supplies (in terms of the lane)
};

using StridesFn = std::function<std::vector<int64_t>(const ir::BufferNode&)>;

/// The ldmatrix equivalent of `loop`, or nullopt. `lane` is the variable holding the lane index
/// (thread index mod 32) in the loop's indices.
std::optional<LdmatrixMatch> match_ldmatrix(const ir::For& loop, const Var& lane, const StridesFn& strides);

}  // namespace tg::cuda
