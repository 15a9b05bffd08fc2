// ir::Prefetch as llvm.prefetch, and a gemm's interleaved hints at its steps. What to prefetch,
// and where, is decided by the pass insert_prefetches (insert_prefetches.h); this only spells it:
//
//   gemm(As, Bs -> Cf) interleave t in steps(42) { prefetch read A[by*128 + t*4 + 1, (ko + 1)*32] locality=3
//   } → before whole micro-tile t of the micro-kernel (emit_gemm.cpp's rows_of):
//     call void @llvm.prefetch.p0(ptr getelementptr (half, ptr %A, i64 flat), i32 0, i32 3, i32 1)
#include <llvm/IR/Intrinsics.h>

#include "emitter.h"

namespace tg::cpu {

using namespace ir;
using llvm::Value;

void Emitter::gemm_hints(const Gemm& g, Value* step) {
  vars_[g.step.node()] = B.CreateIntCast(step, reg_type(g.step.dtype()), false);
  stmt(g.each_step);
}

// A plain GEP, not inbounds: the address may lie outside the buffer, which a prefetch allows.
void Emitter::prefetch(const Prefetch& p) {
  const Buffer b = p.buffer;
  Value* flat = flat_index(b, p.indices);
  if (b->dtype.is_packed()) flat = B.CreateAShr(flat, 1);  // two elements a byte
  Value* at = B.CreateGEP(mem_type(b->dtype), base(b), flat);
  B.CreateIntrinsic(llvm::Intrinsic::prefetch, {B.getPtrTy()},
                    {at, B.getInt32(p.write ? 1 : 0), B.getInt32(uint32_t(p.locality)), B.getInt32(1)});
}

}  // namespace tg::cpu
