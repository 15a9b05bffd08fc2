// Software pipelining of tile copies on the cpu: while a pipelined loop's gemm computes
// iteration ko, its micro-kernel prefetches the Global lines that iteration ko + 1 copies into
// Shared tiles, a few lines per micro-tile, so that the next copies find them in the caches.
// A GPU overlaps the same copies with cp.async and stages; the cpu copies synchronously, and a
// tile's rows (192 rows of 256 bytes at an 8 KiB stride) defeat the hardware prefetchers: every
// row is a new stream and a new page. Prefetches never fault and change no value.
//
//   for ko in pipelined(0 +: 32, stages=3) {
//     for c0 in parallel(0 +: 192) { for c1 in parallel(0 +: 64) {
//       A_shared[c0, c1] = select(by*192 + c0 < 2048, A[by*192 + c0, ko*64 + c1], 0.0) } }
//     gemm(A_shared, B_shared -> C_local)
//   }
// The gemm's micro-tile t of T prefetches, for each such copy, its lines t·q .. t·q + q - 1 of
// ko + 1 (q = ceil(lines / T); a line is 64 bytes of a row: c1 stepping by 64 / element bytes)
//   line l → row c0 = l / lines_per_row, c1 = (l % lines_per_row) · per_line
//   prefetch &A[by*192 + c0, (ko + 1)*64 + c1]
#include <llvm/IR/Intrinsics.h>

#include "emitter.h"
#include "tilegen/ir/visitor.h"

namespace tg::cpu {

using namespace ir;
using llvm::Value;

namespace {

constexpr int64_t kLineBytes = 64;

/// The first load of a Global buffer in a copy's value (under its bounds select).
const Load* global_load(const Expr& e) {
  struct Find : IRVisitor {
    const Load* found = nullptr;
    void visit(const Load* op) override {
      if (!found && op->buffer->scope == Scope::Global) found = op;
      if (!found) IRVisitor::visit(op);
    }
  } f;
  f.visit_expr(e);
  return f.found;
}

/// for c0 in parallel { for c1 in parallel { Shared[...] = ... Global[...] ... } } with constant
/// extents: a lowered copy of a Global tile into a Shared one.
bool tile_copy(const Stmt& s, NextTileCopy& out) {
  auto* rows = s.as<For>();
  if (!rows || rows->for_kind != ForKind::Parallel) return false;
  auto* cols = rows->body.as<For>();
  if (!cols || cols->for_kind != ForKind::Parallel) return false;
  auto* st = cols->body.as<Store>();
  if (!st || st->buffer->scope != Scope::Shared) return false;
  auto r = rows->extent.as_int(), c = cols->extent.as_int();
  const Load* src = global_load(st->value);
  if (!r || !c || !src || src->buffer->dtype.is_packed()) return false;
  out = NextTileCopy{rows->var, cols->var, *r, *c, src};
  return true;
}

}  // namespace

std::vector<NextTileCopy> next_tile_copies(const For& loop) {
  std::vector<NextTileCopy> out;
  if (loop.for_kind != ForKind::Pipelined) return out;
  auto* seq = loop.body.as<Seq>();
  if (!seq) return out;
  bool gemm = false;
  for (const Stmt& s : seq->stmts) {
    NextTileCopy c;
    if (tile_copy(s, c)) out.push_back(c);
    gemm = gemm || s->kind == StmtKind::Gemm;
  }
  if (!gemm) out.clear();
  return out;
}

void Emitter::prefetch_next_tiles(Value* tile, int64_t tiles) {
  if (next_copies_.empty() || tiles <= 0) return;
  auto it = vars_.find(next_loop_var_.node());
  if (it == vars_.end()) return;
  Value* now = it->second;
  llvm::Type* i64 = B.getInt64Ty();
  tile = B.CreateIntCast(tile, i64, false);
  for (const NextTileCopy& c : next_copies_) {
    const Buffer src(c.src->buffer);
    const int64_t per_line = std::max<int64_t>(1, kLineBytes * 8 / src->dtype.bits());
    const int64_t line_per_row = (c.cols + per_line - 1) / per_line;
    const int64_t lines = c.rows * line_per_row, q = (lines + tiles - 1) / tiles;
    for (int64_t u = 0; u < q; ++u) {
      Value* l = B.CreateAdd(B.CreateMul(tile, B.getInt64(uint64_t(q))), B.getInt64(uint64_t(u)));
      Value* row = B.CreateUDiv(l, B.getInt64(uint64_t(line_per_row)));
      Value* col =
          B.CreateMul(B.CreateURem(l, B.getInt64(uint64_t(line_per_row))), B.getInt64(uint64_t(per_line)));
      vars_[next_loop_var_.node()] = B.CreateAdd(now, llvm::ConstantInt::get(now->getType(), 1));
      vars_[c.row_var.node()] = B.CreateIntCast(row, reg_type(c.row_var.dtype()), false);
      vars_[c.col_var.node()] = B.CreateIntCast(col, reg_type(c.col_var.dtype()), false);
      Value* flat = flat_index(src, c.src->indices);
      Value* p = B.CreateGEP(mem_type(src->dtype), base(src), flat);
      B.CreateIntrinsic(llvm::Intrinsic::prefetch, {B.getPtrTy()},
                        {p, B.getInt32(0), B.getInt32(3), B.getInt32(1)});
    }
  }
  vars_[next_loop_var_.node()] = now;
}

}  // namespace tg::cpu
