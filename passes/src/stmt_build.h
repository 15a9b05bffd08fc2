// Small statement constructors and queries shared by the GPU lowering passes
// (infer_fragment_layouts, partition_threads). Internal to passes/.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/ir/visitor.h"

namespace tg::lower {

/// 0 of type t (false for bool): what an unperformed load reads.
inline Expr zero_of(DType t) {
  if (t.is_float()) return make_float(0.0, t);
  if (t.is_bool()) return make_bool(false);
  return make_int(0, t);
}

inline Stmt make_for(const Var& v, Expr min, Expr extent, Stmt body, ForKind kind, const SourceLoc& loc) {
  auto n = std::make_shared<ir::For>(loc);
  n->var = v;
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->body = std::move(body);
  return Stmt(std::move(n));
}

inline Stmt make_store(const Buffer& b, std::vector<Expr> idx, Expr value, const SourceLoc& loc) {
  auto n = std::make_shared<ir::Store>(loc);
  n->buffer = b;
  n->indices = std::move(idx);
  n->value = std::move(value);
  return Stmt(std::move(n));
}

/// An If, or `then_body` alone when cond is a constant true.
inline Stmt make_if(Expr cond, Stmt then_body, const SourceLoc& loc) {
  if (auto c = cond.as_int(); c && *c != 0) return then_body;
  auto n = std::make_shared<ir::If>(loc);
  n->cond = std::move(cond);
  n->then_body = std::move(then_body);
  return Stmt(std::move(n));
}

inline Stmt make_let(const Var& v, Expr value, Stmt body, const SourceLoc& loc) {
  auto n = std::make_shared<ir::Let>(loc);
  n->var = v;
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

/// Whether s stores a global load into a shared buffer: the fill of a later iteration's slot that
/// pipeline_shared puts first in a pipelined body (its moves made async or not).
bool fills_shared_from_global(const Stmt& s);
/// Whether s holds a bulk copy (the pass bulk_copies' fills).
bool has_bulk_copies(const Stmt& s);

/// Kernel k with `body` and `added` buffers after its own (a pass's new registers or barriers).
inline Stmt kernel_with(const ir::Kernel& k, Stmt body, const std::vector<Buffer>& added) {
  auto n = std::make_shared<ir::Kernel>(k);
  n->body = std::move(body);
  n->buffers.insert(n->buffers.end(), added.begin(), added.end());
  return Stmt(std::move(n));
}

/// A Seq's statements, or s alone.
inline std::vector<Stmt> stmts_of(const Stmt& s) {
  const auto* seq = s.as<ir::Seq>();
  return seq ? seq->stmts : std::vector<Stmt>{s};
}

inline Stmt make_barrier(const SourceLoc& loc) { return Stmt(std::make_shared<ir::Barrier>(loc)); }

/// `mbarrier_<op> b[index], value` (value: Init's arrivals, ExpectTx's bytes, Wait's parity).
inline Stmt make_mbarrier(ir::MBarrier::Op op, const Buffer& b, Expr index, Expr value, const SourceLoc& loc) {
  auto n = std::make_shared<ir::MBarrier>(loc);
  n->op = op;
  n->buffer = b;
  n->indices = {std::move(index)};
  n->value = std::move(value);
  return Stmt(std::move(n));
}

inline Stmt make_mma(const std::string& unit, ir::MmaOperand a, ir::MmaOperand b, ir::MmaOperand c,
                     const SourceLoc& loc) {
  auto n = std::make_shared<ir::Mma>(loc);
  n->unit = unit;
  n->a = std::move(a);
  n->b = std::move(b);
  n->c = std::move(c);
  return Stmt(std::move(n));
}

inline Stmt make_mma_sync(ir::MmaSync::Op op, int in_flight, const SourceLoc& loc) {
  auto n = std::make_shared<ir::MmaSync>(loc);
  n->op = op;
  n->in_flight = in_flight;
  return Stmt(std::move(n));
}

/// Moves each barrier down to the first statement that conflicts with what precedes it (a write
/// and another access of one non-local buffer) and drops those that separate nothing (the ones
/// at the start or end of the kernel, and all but the last of a run):
///   barrier; copy -> As; barrier; copy -> Bs; barrier; fill Cr; gemm(As, Bs, Cr)
///     →  copy -> As; copy -> Bs; fill Cr; barrier; gemm(As, Bs, Cr)
/// Loop bodies count the previous iteration as coming before their start. Two statements that
/// touch one buffer conflict only where some element of it is touched by two different threads
/// (thread_footprint.h works that out from the threads' index arithmetic, over `threads` values
/// of `thread_var`); a copy and the element-wise loop after it that give each element to the
/// same thread need no barrier; nor do accesses in different slots of a multi-buffered tile (a
/// leading index (ko + c) % s of an enclosing loop's variable, the previous iteration's seen with
/// c − 1): in a two-slot pipelined loop the fill of slot (ko + 1) % 2 and the reads of slot ko % 2
/// share one barrier an iteration, at the end of the body. Invariant (proved in stmt_build.cpp):
/// two conflicting accesses that a barrier separated still are — but for asynchronous writes (a
/// bulk copy's, an mbarrier_arrive's or _expect_tx's), which no barrier orders before later
/// accesses (an mbarrier wait does, and the interpreter checks that one comes first): they are
/// kept after the accesses before them only, so that
///   mbarrier_wait full[ko % 3]; barrier; mmas(ko % 3); mma_wait 1; barrier; copies → (ko + 2) % 3
/// loses its first barrier.
Stmt drop_redundant_barriers(const Stmt& kernel_body, const Var& thread_var, int threads);

/// `s` (a lowered collective statement) wrapped in barriers, also when it touches no block memory:
/// a collective separates the per-thread code before it from the code after it as a barrier does
/// (the interpreter runs it so), so dropping its barriers would let those race:
///   S[tx] = 1; copy Cr -> Y (registers to global); W[tx] = S[(tx + 1) % T]   // needs a barrier
/// drop_redundant_barriers then removes those that separate nothing.
Stmt fenced(Stmt s, const SourceLoc& loc);

/// The shared tiles that async mmas (MatrixUnit::async: wgmma) in s read as operands, each with
/// the first such mma.
std::map<const ir::BufferNode*, const ir::Mma*> async_mma_tiles(const Stmt& s);

/// True when e is an integer constant equal to v.
inline bool is_const(const Expr& e, int64_t v) {
  auto c = e.as_int();
  return c && *c == v;
}

}  // namespace tg::lower

namespace tg::lower {

/// The full index of a region's element from indices over its non-unit dimensions, in order
/// (how Copy matches regions): region [0 +: 1, by +: 1, 0 +: 16, 0 +: 64], {i, j} → [0, by, i, j].
std::vector<Expr> region_index(const Region& r, const std::vector<Expr>& squeezed);
/// The index of element (row, col) of a gemm operand region (its last two dimensions).
std::vector<Expr> matrix_index(const Region& r, const Expr& row, const Expr& col);
/// 0 ≤ idx[d] < shape[d] for every d, simplified on construction.
Expr in_bounds(const Buffer& b, const std::vector<Expr>& idx);
/// The constant extents of r's non-unit dimensions, or nullopt when one is not constant.
std::optional<std::vector<int64_t>> const_squeezed_extents(const Region& r);

}  // namespace tg::lower
