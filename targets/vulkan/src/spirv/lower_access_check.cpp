// AccessCheck in SPIR-V (see kernel_lowering.h): the check's condition, and where it fails, the
// first invocation of the launch to claim the access record (OpAtomicCompareExchange of word 0
// from 0 to site + 1) writes its block, thread and indices (access_check.h).
//
//   access_check(tx < 64, store "Y"[tx] of [64], (bx; tx), 0, "user.cpp:12")
//   →  %ok = OpSLessThan %bool %tx %int_64 ; %failed = OpLogicalNot %bool %ok
//      OpSelectionMerge ... ; OpBranchConditional %failed ...
//        %got = OpAtomicCompareExchange %int %record0 %QueueFamily %0 %0 %int_1 %int_0
//        if %got == 0: OpStore record[1..] block, thread, index words
//      (the value is %ok)
#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/access_check.h"

namespace tg::vulkan {

uint32_t KernelLowering::access_check(const ir::AccessCheck& op) {
  const Param* record = find_access_record(M.f);
  if (!record) throw Error("vulkan: access_check without the function's access record", op.loc);
  uint32_t ok = convert(expr(op.cond), op.cond.dtype(), boolean, op.loc);
  const BufferStorage& rec = storage_of(record->buffer.get(), op.loc);
  auto store_word = [&](int w, const Expr& value) {
    store_element(rec, {make_int(w)}, expr(make_cast(u32, value)), op.loc);
  };
  uint32_t failed = m.op(spv::OpLogicalNot, M.t_bool, {ok});
  if_else(
      failed,
      [&] {
        uint32_t first = element_pointer(rec, c_i32(kAccessRecordSite));
        uint32_t got =
            m.op(spv::OpAtomicCompareExchange, M.t_i32,
                 {first, m.u32(spv::ScopeQueueFamily), m.u32(0), m.u32(0), c_i32(op.site + 1), c_i32(0)});
        uint32_t won = m.op(spv::OpIEqual, M.t_bool, {got, c_i32(0)});
        if_else(
            won,
            [&] {
              for (std::size_t d = 0; d < op.block.size() && d < 3; ++d)
                store_word(kAccessRecordBlock + int(d), op.block[d]);
              store_word(kAccessRecordThread, op.thread);
              for (std::size_t d = 0; d < op.indices.size() && d < std::size_t(kAccessRecordMaxIndices);
                   ++d) {
                // Low and high words of the index as a 64-bit value (an i32 index sign-extends).
                const Expr& i = op.indices[d];
                Expr wide = i.dtype() == i64 ? i : make_cast(i32, i);
                Expr high =
                    make_binary(ir::BinOp::Shr, wide, make_int(wide.dtype() == i64 ? 32 : 31, wide.dtype()));
                store_word(kAccessRecordIndex + 2 * int(d), wide);
                store_word(kAccessRecordIndex + 2 * int(d) + 1, high);
              }
            },
            [] {}, false);
      },
      [] {}, false);
  return ok;
}

}  // namespace tg::vulkan
