// warp_roles: on a target with bulk tensor copies (TargetInfo::bulk_copy), a kernel whose tiles
// bulk_copies feeds is split into warp roles (ir::If::concurrent): a producer warp, added after
// the block's threads, issues every bulk copy, waiting on an `empty` mbarrier per slot until the
// consumers have freed it; the block's own threads, the consumers, wait on `full` as before and
// arrive on `empty` where the block's barrier used to order the slot's reads before its refill.
// Neither role waits for the other at a barrier again, so the copies of later tiles are issued
// while the consumers still compute on earlier ones, and no consumer waits for the issuing thread.
//
//   if tx == 0 { for s in serial(0 +: 3) { mbarrier_init full[s], 1 } }
//   proxy_fence
//   barrier
//   for ko_pre in pipelined(0 +: 2, stages=3) { if tx == 0 { <issue tile ko_pre> } }
//   for ko in pipelined(0 +: 62, stages=3) {
//     mbarrier_wait full[ko % 3], ko / 3 % 2
//     <mmas on slot ko % 3>
//     mma_wait 1
//     barrier
//     if tx == 0 { mbarrier_expect_tx full[(ko + 2) % 3], n; bulk_copy ... on full[(ko + 2) % 3] }
//   }
//   <the last iterations, the epilogue>
// becomes, in threads(T + 32),
//   if tx == 0 { for s in serial(0 +: 3) { mbarrier_init full[s], 1
//                                          mbarrier_init empty[s], T } }
//   proxy_fence
//   barrier
//   if tx < T, concurrently {
//     for ko in pipelined(0 +: 62, stages=3) {
//       mbarrier_wait full[ko % 3], ko / 3 % 2
//       <mmas>
//       mma_wait 1
//       if ko + 2 >= 3 { mbarrier_arrive empty[(ko + 2) % 3] }
//     }
//     <the last iterations, the epilogue>
//   } else {
//     if tx == T {
//       for ko_pre in serial(0 +: 2) { <issue tile ko_pre> }
//       for ko in serial(0 +: 62) {
//         if ko + 2 >= 3 { mbarrier_wait empty[(ko + 2) % 3], ((ko + 2) / 3 + 1) % 2 }
//         mbarrier_expect_tx full[(ko + 2) % 3], n
//         bulk_copy ... on full[(ko + 2) % 3]
//       }
//     }
//   }
//
// Where warpgroups can hand registers over (TargetInfo::reallocate_registers: sm_90a) and T is a
// whole number of warpgroups, the producer is a warpgroup (128 threads, one issuing) that starts
// with `set_max_registers 40`, the consumers with what that frees of the block's share of the
// register file (`set_max_registers 216` for T = 128 at two blocks a multiprocessor, 232 for
// T = 256 at one), the code generator sizing the kernel's entry count to the average (128, 168).
//
// Tile t of a ring of S slots lives in slot t % S (bulk_copies.h); its fill, for t ≥ S, must
// follow the consumers' reads of tile t − S, which the barrier before it ordered. Each consumer
// thread arrives on empty[t % S] there instead (T arrivals complete a phase), and the producer
// waits for that phase, the (t / S − 1)-th of the slot: parity (t / S + 1) % 2. The statements
// before the pipelined loops (clearing the accumulators) run on the consumers only.
//
// The kernel is left as it is unless all of this holds: one ring (bulk_copies' init, fence and
// barrier in the kernel's top-level sequence, the loops after them), every other barrier after
// it directly before a fill, the consumers writing no shared memory after the barrier (only the
// copy engine and the mbarriers order it), the fills' guards and loop bounds free of loads and
// of the thread index, room for a warp more in the block (TargetInfo::max_threads), and, where
// TargetInfo::roles_async_reads_only (NVIDIA GPUs), the ring's slots read only by asynchronous mmas (wgmma,
// reading shared memory through the async proxy as the bulk copies write it): a slot read by ldmatrix, a load
// or a synchronous mma keeps the kernel as it is. On an H100 (2026-12-07, docs/PERF.md) the roles gave wrong
// answers where mma.sync's ldmatrix read the slots (gemm_softmax 96×128×512, trans_B gemm 4096³) and right
// ones where wgmma did, while the interpreter ran both kernels' lowered IR right: the consumers'
// generic-proxy reads, ordered before the copy engine's refill by an mbarrier arrive alone, are
// what the hardware run did not bear out.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function warp_roles(const Function& f, const TargetInfo& info);

}  // namespace tg
