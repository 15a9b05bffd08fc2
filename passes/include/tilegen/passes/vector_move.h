// Recognising a vector move in lowered IR: a vectorized loop that copies V consecutive elements
// of one buffer into V consecutive elements of another, both starting at a multiple of V,
//
//   for v in vectorized(0 +: 8) { let c = ... { As[r, c*8 + v] = A[by*64 + r, k*32 + c*8 + v] } }
//
// which a target may perform as one 2-, 4-, 8- or 16-byte access (CUDA and HIP vector types,
// cp.async). The proof is on the storage layout (gpu::strides_of: shared rows padded), so the
// code generators that emit the move and the passes that rewrite it agree on what matches.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg {

struct VectorMove {
  const ir::Store* store = nullptr;  // the loop body's store (after its lets)
  const ir::Load* load = nullptr;    // its value
  std::vector<Expr> dst_index, src_index;  // element indices at v = 0, the lets substituted
  int64_t bytes = 0;                       // 2, 4, 8 or 16
};

/// The move `op` performs, or nothing when it is not one (not vectorized from 0 with a constant
/// width, a conversion between dtypes, an index that does not advance by one element per v, a
/// start that is not a multiple of the width, or a width of another byte size).
std::optional<VectorMove> match_vector_move(const ir::For& op);

}  // namespace tg
