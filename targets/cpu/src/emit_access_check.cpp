// AccessCheck for the cpu emitter (see emitter.h): the check's condition, and where it fails, the
// first failure of the launch claims the access record with a compare-and-swap (blocks run on
// several oneTBB threads) and writes its block, thread and indices (access_check.h).
//
//   access_check(tx < 64, store "Y"[tx] of [64], (bx; tx), 0, "user.cpp:12")
//   →  %ok = icmp slt i32 %tx, 64 ; br %ok, %check.done, %check.fail
//      check.fail:   %c = cmpxchg ptr %record, i32 0, i32 1 monotonic ; br %c.1, %check.record, %check.done
//      check.record: store block, thread, indices ; br %check.done
//      check.done:   (the value is %ok)
#include <llvm/IR/MDBuilder.h>

#include "emitter.h"
#include "tilegen/ir/access_check.h"

namespace tg::cpu {

using llvm::Value;

Value* Emitter::access_check(const ir::AccessCheck* op) {
  if (!access_record_) throw Error("cpu: access_check without the function's access record", op->loc);
  Value* ok = expr(op->cond);
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  auto* fail = llvm::BasicBlock::Create(ctx, "check.fail", fn);
  auto* record = llvm::BasicBlock::Create(ctx, "check.record", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "check.done", fn);
  llvm::MDBuilder md(ctx);
  B.CreateCondBr(ok, done, fail, md.createBranchWeights(1 << 20, 1));
  B.SetInsertPoint(fail);
  Value* base = this->base(access_record_);
  auto* i32 = B.getInt32Ty();
  auto* claim =
      B.CreateAtomicCmpXchg(base, B.getInt32(0), B.getInt32(uint32_t(op->site + 1)), llvm::MaybeAlign(4),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  B.CreateCondBr(B.CreateExtractValue(claim, 1), record, done);
  B.SetInsertPoint(record);
  auto word = [&](int w) { return B.CreateConstInBoundsGEP1_64(i32, base, uint64_t(w)); };
  auto as = [&](const Expr& e, llvm::Type* t) { return B.CreateSExtOrTrunc(expr(e), t); };
  for (std::size_t d = 0; d < op->block.size() && d < 3; ++d)
    B.CreateAlignedStore(as(op->block[d], i32), word(kAccessRecordBlock + int(d)), llvm::MaybeAlign(4));
  B.CreateAlignedStore(as(op->thread, i32), word(kAccessRecordThread), llvm::MaybeAlign(4));
  // Little-endian: an i64 store writes the low word first, as the record wants.
  for (std::size_t d = 0; d < op->indices.size() && d < std::size_t(kAccessRecordMaxIndices); ++d)
    B.CreateAlignedStore(as(op->indices[d], B.getInt64Ty()), word(kAccessRecordIndex + 2 * int(d)),
                         llvm::MaybeAlign(4));
  B.CreateBr(done);
  B.SetInsertPoint(done);
  return ok;
}

}  // namespace tg::cpu
