// issue_ahead: in a loop whose body starts with an async gemm whose result the rest of the body
// then consumes (attention: Q·Kᵀ into the scores, then the softmax and P·V), the next
// iteration's gemm is issued before this iteration's rest, into a second set of accumulator
// registers, so that the matrix unit computes it while the rest runs (FlashAttention-3's
// intra-warpgroup overlap); the registers move over at the end of the iteration.
//
//   for ko in serial(0 +: n) {
//     mbarrier_wait full[ko % 2], ko / 2 % 2
//     for r in unrolled(0 +: 32) { S[r] = 0.0 }
//     mma_fence
//     for kk in unrolled(0 +: 8) { mma "wgmma_m64n64k16_f16_f32" a=tile Q_s[0, kk*16], b=tile trans K_s[ko %
//     2, 0, kk*16], c=S[0] } mma_wait 0 REST(ko)            (reads and writes S; issues P·V and waits for it)
//   }
// becomes
//   if 0 < n { mbarrier_wait full[0], 0; S = 0; mma_fence; mmas(0) into S; mma_wait 0 }
//   for ko in serial(0 +: n) {
//     if ko + 1 < n {
//       mbarrier_wait full[(ko + 1) % 2], (ko + 1) / 2 % 2
//       for r { S_next[r] = 0.0 }
//       mma_fence
//       mmas(ko + 1) into S_next      (in flight through REST)
//     }
//     REST(ko)
//     if ko + 1 < n { mma_wait 0; for r { S[r] = S_next[r] } }
//   }
//
// The head is the loop body's leading mbarrier waits, then the clearing of a local accumulator
// (every register), an mma_fence, async mmas into it alone from shared tiles, and `mma_wait 0`.
// Left alone: any other head, a rest that writes a shared buffer the head's mmas read, or that
// reads or writes the head's barriers, and a rest that is empty. The interpreter checks what the
// overlap relies on: the in-flight accumulator is untouched until its wait, the tiles it reads
// unwritten (tests/unit/test_pass_issue_ahead.cpp). A no-op on targets without async mmas.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function issue_ahead(const Function& f, const TargetInfo& info);

}  // namespace tg
