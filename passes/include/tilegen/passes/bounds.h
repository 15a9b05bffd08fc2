// insert_bounds_checks: predication for ragged edges, and proof that the rest needs none.
//
// Before (sizes bound: M = 1000, K = 256; grid(8) -> bx):
//   copy A[bx * 128 : +128, 0 : +256] -> As          (check_bounds)
//   copy B[0 : +256, 0 : +64] -> Bs                   (check_bounds; B is f32[256, 64])
//   for i in [0, 128) parallel { C[bx * 128 + i] = A[bx * 128 + i, 0] * 2 }
// After:
//   copy A[bx * 128 : +128, 0 : +256] -> As          (check_bounds kept: rows 1000..1023 of the last block)
//   copy B[0 : +256, 0 : +64] -> Bs                   (check_bounds cleared: proven in range)
//   for i in [0, 128) parallel {
//     if (bx * 128 + i < 1000) { C[bx * 128 + i] = A[bx * 128 + i, 0] * 2 }
//   }
// (the load's guard is implied by the store's, so it is not repeated; elsewhere an unproven
//  load becomes select(in_range, load, 0)).
//
// Why: a tile of a kernel whose sizes are not multiples of the tile shape sticks out of its
// tensor in the last blocks. Those ragged tiles must read nothing out of range (an unguarded read
// may fault on a GPU) and write nothing out of range (it would corrupt memory, or another
// tensor). Copy predicates itself (check_bounds); element code needs explicit guards. Reads that
// stick out give 0, as Copy's do. select is lazy in the interpreter and in every target (C's ?:,
// a branch or a masked load), so the out-of-range load is never performed.
//
// The proofs are interval analysis (range_analysis.h) over loop, block, thread and let
// variables, constant shapes, and the facts given by loop bounds and enclosing If conditions;
// sizes should be bound first (bind_sizes), or only symbolic identities (i < N inside a loop
// over [0, N)) can be proven. Element accesses outside any loop are per-thread code that an
// author indexes by hand: they are left as written, so an out-of-range index there is reported
// by the interpreter rather than masked.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function insert_bounds_checks(const Function& f, const TargetInfo& info);

}  // namespace tg
