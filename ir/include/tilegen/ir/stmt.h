// Statements of the tile IR. Semantics (the interpreter is the definition):
// a Kernel runs grid blocks independently; inside a block, the body is executed by every thread
// (SIMT), except the collective statements — Copy, Fill, Gemm, Reduce and For(Parallel) — which the
// block's threads perform together, once. Collective statements must not sit under control flow
// that depends on the thread index. Explicit thread-level code reads the Kernel's thread_var, uses
// Local buffers and synchronises with Barrier; Mma is collective over one warp/wave/subgroup.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tilegen/ir/buffer.h"
#include "tilegen/ir/expr.h"

namespace tg {

namespace ir {
struct StmtNode;
}

class Stmt {
 public:
  Stmt() = default;
  Stmt(std::shared_ptr<const ir::StmtNode> n) : node_(std::move(n)) {}
  const ir::StmtNode* get() const { return node_.get(); }
  const ir::StmtNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ir::StmtNode>& ptr() const { return node_; }
  explicit operator bool() const { return bool(node_); }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }
  template <typename T>
  const T* as() const;

 private:
  std::shared_ptr<const ir::StmtNode> node_;
};

enum class ForKind : uint8_t { Serial, Parallel, Pipelined, Unrolled, Vectorized };
enum class ReduceOp : uint8_t { Sum, Max, Min, AbsMax };
enum class AtomicOp : uint8_t { Add, Max, Min };
const char* name_of(ForKind k);
const char* name_of(ReduceOp k);
const char* name_of(AtomicOp k);

namespace ir {

// clang-format off
enum class StmtKind : uint8_t {
  Kernel, For, Copy, Fill, Gemm, Reduce, Store, Atomic, If, Let, Barrier, Seq, Mma, AsyncWait, LdMatrix,
  Prefetch, Hold, MmaSync, MBarrier, BulkCopy
};
// clang-format on

struct StmtNode {
  StmtKind kind;
  SourceLoc loc;  // the builder call (or text line) that made it
  StmtNode(StmtKind k, SourceLoc l) : kind(k), loc(std::move(l)) {}
  virtual ~StmtNode() = default;
};

/// kernel grid(g0, g1, g2) threads(T): block_vars[d] ranges over [0, grid[d]), thread_var over
/// [0, threads). `buffers` are the Shared, Fragment and Local buffers the body uses.
struct Kernel : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Kernel;
  std::vector<Expr> grid;
  std::vector<Var> block_vars;
  int threads = 128;
  Var thread_var;
  std::vector<Buffer> buffers;
  Stmt body;
  Kernel(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// for var in [min, min + extent). Pipelined carries `stages` (≥ 1); Unrolled and Vectorized
/// need a constant extent after specialisation. `rolled` (text: `serial(0 +: n, rolled)`) is a
/// code generation hint on a serial loop: keep it a loop, ask the device compiler not to unroll
/// it (the vulkan pass unroll_hints sets it); it changes nothing the loop computes.
struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min, extent;
  ForKind for_kind = ForKind::Serial;
  int stages = 0;
  bool rolled = false;
  Stmt body;
  For(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// dst ← src, element-wise with conversion to dst's dtype. With check_bounds, elements outside
/// a Global buffer are read as zero and not written; the bounds pass clears the flag where it
/// proves every access in range.
struct Copy : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Copy;
  Region src, dst;
  bool check_bounds = true;
  Copy(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

struct Fill : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Fill;
  Region dst;
  Expr value;
  Fill(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// C (M×N) = (clear_c ? 0 : C) + op(A) · op(B), op = transpose when trans_*; A is M×K (K×M when
/// trans_a), B is K×N (N×K when trans_b). The K-sum of one gemm is exact (double)
/// and rounded into C's dtype once per element; hardware may round more often (tolerances allow it).
///
/// Optional hints interleaved with the gemm's work (`gemm(...) interleave t in steps(42) { ... }`,
/// written by the cpu pass insert_prefetches): the target carries the gemm out in `steps` steps of
/// its own, in order (the cpu micro-kernel: its whole micro-tiles of whole column strips), and runs
/// `each_step` just before step `step` = 0, 1, ..., steps - 1. `each_step` holds only Prefetch
/// statements, under Seq, Let, If and non-parallel For, so the gemm computes what it computes
/// without them; the interpreter runs it once per step (evaluating its indices, nothing more).
/// A pass that turns the gemm into other statements may drop the hints.
struct Gemm : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Gemm;
  Region a, b, c;
  bool trans_a = false, trans_b = false, clear_c = false;
  Var step;        // each_step's step index (i32 unless written otherwise)
  int steps = 0;   // ≥ 1 when each_step is set, else 0
  Stmt each_step;  // null: no hints
  Gemm(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// dst = reduce(src over axis), dst having src's shape without that axis. Without clear, the
/// result is combined with dst's previous value.
struct Reduce : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Reduce;
  ReduceOp op = ReduceOp::Sum;
  Buffer src, dst;
  int axis = 0;
  bool clear = true;
  Reduce(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// buffer[indices] = value. An `async` store (printed `async S[i] = G[j]`) is an asynchronous
/// copy of one element from a Global buffer into a Shared one (value is a Load of the same
/// dtype): it lands at some moment between the store and this thread's AsyncWait that completes
/// its group, and the element must not be read or written before then. Doing it at once is one
/// legal schedule, so a target without asynchronous copies translates it as a plain store.
///
/// A `shuffle` store (printed `shuffle_xor(2 of 32) R[i] = v`, shuffle_xor ≥ 1) exchanges values
/// between the lanes of each group of `shuffle_width` consecutive threads (a warp, wave or
/// subgroup): every lane of the group evaluates `value`, then lane t stores into its Local buffer
/// the value that lane t ^ shuffle_xor evaluated (CUDA __shfl_xor_sync over the full warp, AMD
/// ds_bpermute, SPIR-V OpGroupNonUniformShuffleXor). Collective over the group: all its lanes
/// execute it together, and only 32-bit values move (f32, i32, u32).
struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  bool async = false;
  int shuffle_xor = 0;    // ≥ 1: a shuffle store; 0: a plain (or async) store
  int shuffle_width = 0;  // the group's lanes, a power of two above shuffle_xor
  bool shuffle() const { return shuffle_xor > 0; }
  Store(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

struct Atomic : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Atomic;
  AtomicOp op = AtomicOp::Add;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  Atomic(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `if cond { ... } else { ... }`. The threads of a block run in lock-step (interpreter.h): the
/// threads for which cond holds run the then-branch, then the others the else-branch.
///
/// `if cond, concurrently { ... } else { ... }` (concurrent): warp roles. The two groups of
/// threads run their branches side by side, each its own thread of control, ordered only through
/// mbarriers (MBarrier): a producer warp issuing bulk copies into a ring of shared slots beside
/// consumer warpgroups running the mmas, each waiting on the other's barriers,
///
///   if tx < 128, concurrently {                        // producer
///     for k ... { mbarrier_wait empty[s], p; ... bulk_copy ... on full[s] }
///   } else {                                            // consumers
///     for k ... { mbarrier_wait full[s], q; mma ...; mbarrier_arrive empty[s] }
///   }
///
/// which in lock-step would deadlock at the producer's first wait on a slot the consumers have
/// not yet freed. The interpreter switches to the other role where one waits for a phase that has
/// not completed, and reports a deadlock where both wait. Neither branch holds a barrier or a tile
/// statement (they are the whole block's), and roles do not nest; an else-branch is required.
struct If : StmtNode {
  static constexpr StmtKind kKind = StmtKind::If;
  Expr cond;
  Stmt then_body, else_body;  // else_body may be null
  bool concurrent = false;    // warp roles (above)
  If(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

struct Let : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Let;
  Var var;
  Expr value;
  Stmt body;
  Let(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// All threads of the block wait here (__syncthreads, s_barrier, OpControlBarrier).
struct Barrier : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;
  Barrier(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `async_wait N`: this thread's async stores issued since its previous AsyncWait become one
/// group; then it waits until at most `in_flight` of its groups are still incomplete (the oldest
/// complete first). cp.async.commit_group + cp.async.wait_group N on CUDA; a no-op where async
/// stores are plain. Not a barrier: other threads see the data only after a barrier that follows.
struct AsyncWait : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AsyncWait;
  int in_flight = 0;
  AsyncWait(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

struct Seq : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  Seq(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// One operand of Mma: this lane's registers, a Local buffer from element `offset` on; or, for A
/// and B, the whole unit tile of a Shared buffer (`tile`: the indices of its first element, the
/// same for every lane of the group; the tile's rows run along the buffer's second-last
/// dimension, its columns along the last), each lane reading the elements the unit's layout
/// gives its registers. Text: `a=A_l[8]`, `a=tile A_s[0, 16, 32]`. A transposed tile
/// (`b=tile trans B_s[n, k]`, trans) runs its rows along the last dimension and its columns along
/// the second-last: B stored N×K, K contiguous (wgmma's K-major B).
struct MmaOperand {
  MmaOperand() = default;
  MmaOperand(Buffer b, Expr off, std::vector<Expr> tile_at = {})
      : buffer(std::move(b)), offset(std::move(off)), tile(std::move(tile_at)) {}
  Buffer buffer;
  Expr offset;
  std::vector<Expr> tile;
  bool trans = false;  // a tile stored transposed (above)
  bool is_tile() const { return !tile.empty(); }
};

/// The lanes of each group of the block (warp, wave, subgroup; the unit's group_size consecutive
/// threads) multiply-accumulate one M×N×K tile: C += A·B. Each lane holds the elements of A, B, C
/// that the matrix-unit description `unit` assigns to it. Collective over the group.
///
/// An Mma of an asynchronous unit (MatrixUnit::async: Hopper's wgmma) is only issued: it reads
/// its Shared tiles and accumulates into C at some moment before the `mma_wait` that completes
/// its group (MmaSync). Until then the lane must not read or write its C registers, and no
/// thread may write the elements of the tiles it reads. Its C registers must not have been read
/// or written by anything but async Mmas since the lane's last `mma_fence`, and its Shared tiles
/// must have been written only before a `proxy_fence` of their writer (MmaSync).
struct Mma : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Mma;
  std::string unit;
  MmaOperand a, b, c;
  Mma(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `ldmatrix x4 [trans] S[i, j] -> R[base]`: each warp (32 consecutive threads, collective) loads
/// `matrices` (1, 2 or 4) 8×8 matrices of 16-bit elements from the Shared buffer `src` into its
/// lanes' Local `regs` (CUDA's ldmatrix.sync.aligned.m8n8). Lane 8j + i supplies in `src_indices`
/// the first element of row i of matrix j, the row being the 8 elements from there along the last
/// dimension; lane t receives element (t/4, 2(t%4) + h) of matrix j, or with `trans` element
/// (2(t%4) + h, t/4), in regs[reg_base + 2j + h] (h = 0, 1), reg_base being the lane's own.
struct LdMatrix : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LdMatrix;
  int matrices = 4;
  bool trans = false;
  Buffer regs;
  Expr reg_base;
  Buffer src;
  std::vector<Expr> src_indices;
  LdMatrix(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `prefetch read G[i, j] locality=3`: a hint that the cache line holding element G[i, j] of the
/// global buffer G will soon be read (`write`: written); the target may move it towards the core
/// (llvm.prefetch on the cpu) or ignore the hint. `locality` is llvm.prefetch's: 0 (none, use it
/// once) to 3 (keep it in every cache level). It never faults, whatever the indices (outside the
/// buffer is legal: hardware prefetch of any address is harmless), and changes no memory; the
/// interpreter evaluates the indices, so an error in their expressions is still reported, and
/// does nothing else (no bounds check, no access for race detection).
struct Prefetch : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Prefetch;
  Buffer buffer;
  std::vector<Expr> indices;
  bool write = false;
  int locality = 3;
  Prefetch(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `hold C as "unit" { body }`: while body runs, each group of the unit's group_size
/// consecutive threads keeps the Local accumulator C in the unit's own registers, which the lanes
/// cannot address (SPIR-V cooperative matrices): unit tile t is elements [t·c_regs, (t+1)·c_regs)
/// of every lane of the group. The elements move in when the group enters and back when it
/// leaves, unchanged (C's dtype is the unit's C type). Inside body, C is only the C operand of
/// Mmas of `unit`, at offsets that are multiples of c_regs. Collective over each group: its
/// lanes enter and leave together.
struct Hold : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Hold;
  Buffer buffer;
  std::string unit;
  Stmt body;
  Hold(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// The protocol of asynchronous matrix units (MatrixUnit::async), per thread:
///   `mma_fence`   — this thread's earlier accesses to registers are ordered before the async
///                   Mmas that follow (wgmma.fence.sync.aligned; collective over the warpgroup);
///   `proxy_fence` — this thread's earlier writes to Shared buffers become visible to the reads
///                   of async Mmas issued after a following barrier (fence.proxy.async.shared::cta);
///   `mma_wait N`  — the async Mmas this thread issued since its previous mma_wait become one
///                   group; then it waits until at most `in_flight` of its groups are incomplete,
///                   oldest first (wgmma.commit_group + wgmma.wait_group N; collective).
/// Beside them, for the warp roles that feed such units (If::concurrent):
///   `set_max_registers N` — from here on each thread of the executing warpgroup (128 threads,
///                   collective) may hold N registers, N a multiple of 8 in [24, 256]
///                   (setmaxnreg): a producer role gives registers back, its consumers take
///                   them. Only first in a branch of warp roles; the code generator sizes the
///                   kernel's registers at entry to the roles' average, so it never waits.
/// Targets without asynchronous units run none of them (no-ops), nor a target without register
/// reallocation set_max_registers (a hint: no value changes).
struct MmaSync : StmtNode {
  static constexpr StmtKind kKind = StmtKind::MmaSync;
  enum class Op : uint8_t { Fence, ProxyFence, Wait, Registers } op = Op::Wait;
  int in_flight = 0;  // Wait only
  int registers = 0;  // Registers only
  MmaSync(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// Transaction barriers (Hopper's mbarrier): each element of a Shared i64 buffer used by these
/// statements (and by BulkCopy's `on`) is one barrier, which no other statement may access.
/// A barrier counts arrivals and transaction bytes of its current phase; when every expected
/// arrival has come and the bytes it expects are in, the phase completes and the next one
/// begins, expecting the same number of arrivals. Per executing thread:
///   `mbarrier_init bar[i], n`       — phase 0 begins, expecting n ≥ 1 arrivals, no bytes; one
///                                     thread, and a barrier before any other uses it;
///   `mbarrier_arrive bar[i]`        — one arrival on the current phase;
///   `mbarrier_expect_tx bar[i], b`  — the current phase also expects b more bytes (of bulk
///                                     copies on it), then one arrival (mbarrier.arrive.expect_tx);
///   `mbarrier_wait bar[i], p`       — waits until the phase of parity p (0 or 1) is complete:
///                                     it returns at once where the barrier's last completed phase
///                                     has parity p (a fresh barrier's "phase −1" has parity 1), so
///                                     a thread waits for phase k with parity k % 2, and must have
///                                     waited for phase k − 2 first (k ≥ 2) or it returns early.
/// After its wait, a thread may read what the bulk copies of that phase wrote.
struct MBarrier : StmtNode {
  static constexpr StmtKind kKind = StmtKind::MBarrier;
  enum class Op : uint8_t { Init, Arrive, ExpectTx, Wait } op = Op::Wait;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;  // Init: arrivals; ExpectTx: bytes; Wait: parity; Arrive: none
  MBarrier(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

/// `bulk_copy G[g0 +: r, g1 +: c] -> S[s, 0 +: r, 0 +: c] on bar[i]`: the executing thread
/// copies a box of a Global buffer into a Shared one of the same dtype (Hopper's tensor memory
/// accelerator, cp.async.bulk.tensor): the source region's extents are the box; elements of the
/// box outside the source buffer read as zero (the box may start before it or run past its end);
/// the destination region has the box's extents after dropping its extent-1 dimensions.
/// The copy is asynchronous: it lands, and adds its bytes (the box's elements × element size) to
/// the current phase of barrier `bar[i]`, at some moment before that phase completes; a thread may
/// read what it wrote only after waiting for that phase, and nothing may access the destination in
/// between. Done by one thread (the others skip it: `if tx == 0`), after an mbarrier_expect_tx of
/// those bytes on the barrier's phase.
struct BulkCopy : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BulkCopy;
  Region src, dst;
  Buffer barrier;
  std::vector<Expr> barrier_indices;
  BulkCopy(SourceLoc l) : StmtNode(kKind, std::move(l)) {}
};

}  // namespace ir

template <typename T>
const T* Stmt::as() const {
  return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
}

/// Wrap a list in a Seq (or return the single statement).
Stmt make_seq(std::vector<Stmt> stmts, SourceLoc loc = {});

}  // namespace tg
