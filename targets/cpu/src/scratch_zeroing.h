// Which scratch buffers of a lowered kernel must be zeroed at the start of every block. A block's
// Shared, Fragment and Local storage starts zeroed (the interpreter's semantics); a buffer whose
// every element the block overwrites before anything reads it cannot tell, so the code generator
// skips its memset. At 2048³ with 192×256×64 tiles the memsets were 7% of a GEMM's time: 300 KiB a
// block, A and B tiles and the C fragment, each filled again right after.
//
//   for f0 in parallel(0 +: 192) { for f1 in parallel(0 +: 256) { C_local[f0, f1] = 0.0 } }
//   for ko in pipelined(0 +: 32, stages=3) {
//     for c0 in parallel(0 +: 192) { for c1 in parallel(0 +: 64) { A_shared[c0, c1] = A[...] } }
//     gemm(A_shared, B_shared -> C_local) ...
//   → none of C_local, A_shared needs zeroing (B_shared neither, when its copy precedes the gemm)
//
// The analysis follows the block's statements in order: a buffer is overwritten by a perfect
// loop nest from 0 over its whole shape around one store at exactly the loop variables (whose
// value does not read it), or by a clearing gemm of all of it. Anything else that reads or writes
// a buffer not yet overwritten — in any statement, under an If or in a loop that may run no
// iteration included — leaves it zeroed. A loop with at least one iteration is followed into its
// first iteration; what a possibly empty loop, or one branch of an If but not the other,
// overwrites does not count after it.
#pragma once
#include <unordered_set>

#include "tilegen/ir/stmt.h"

namespace tg::cpu {

/// The scratch buffers (of k.buffers) that the block reads or partially writes before
/// overwriting them entirely: those keep their zeroing.
std::unordered_set<const ir::BufferNode*> scratch_needing_zero(const ir::Kernel& k);

}  // namespace tg::cpu
