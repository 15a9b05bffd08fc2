// bulk_copies: on a target with bulk tensor copies (TargetInfo::bulk_copy: Hopper's tensor memory
// accelerator), the tile fills of a loop that pipeline_shared multi-buffered become one thread's
// bulk copies, completing on an mbarrier per slot that every thread waits on before it reads the
// slot; the copies are no longer split over the block's threads (partition_threads leaves them).
//
//   for k_pre in pipelined(0 +: 2) {
//     if k_pre < n { copy A[..] -> A_s[k_pre +: 1, ..] }
//   }
//   for k in pipelined(0 +: n, stages=3) {
//     if k + 2 < n { copy A[..] -> A_s[(k + 2) % 3 +: 1, ..] }
//     gemm(A_s[k % 3], ..)
//   }
// becomes
//   if tx == 0 { for s in serial(0 +: 3) { mbarrier_init full[s], 1 } }
//   barrier
//   for k_pre in pipelined(0 +: 2) {
//     if k_pre < n { if tx == 0 { mbarrier_expect_tx full[k_pre], 8192
//                                 bulk_copy A[..] -> A_s[k_pre +: 1, ..] on full[k_pre] } }
//   }
//   for k in pipelined(0 +: n, stages=3) {
//     if k + 2 < n { if tx == 0 { ... on full[(k + 2) % 3] } }
//     mbarrier_wait full[k % 3], k / 3 % 2
//     gemm(A_s[k % 3], ..)
//   }
//
// Slot s is filled for tiles s, s + S, s + 2S, ...: tile t completes phase t / S of full[t % S],
// which the iteration reading it waits for with parity (t / S) % 2. A tile that an async mma
// reads (wgmma: swizzle_shared_tiles will give it strips of 32, 64 or 128 bytes) is copied strip
// by strip, each box as wide as a strip, so that the copy engine writes the swizzle itself.
// A box may have more dimensions than the slot, the leading ones single elements (attention's
// K[b, h, s0 +: 64, 0 +: 128] into K_s[slot, 0 +: 64, 0 +: 128]: the tensor map keeps the
// tensor's rank, the box lands as the slot's rows).
// Loops are converted whole or not at all: every fill a box of a global tensor of constant shape
// whose rows are a multiple of 16 bytes, at most 256 elements along each side, its inner side a
// multiple of 16 bytes and its bytes a multiple of 128 (each box lands 128-byte aligned:
// shared_memory_plan aligns a bulk copy's destination to 128 bytes, 1024 where it is swizzled).
// The reuse of a slot is still ordered by the block's barrier, as before; the pass warp_roles,
// later, may give the copies a producer warp of their own (warp_roles.h).
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function bulk_copies(const Function& f, const TargetInfo& info);

}  // namespace tg
