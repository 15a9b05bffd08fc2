// Private to the interpreter (interp_*.cpp, interpreter.cpp). The IR is first compiled into flat
// arrays — expressions and statements as nodes indexed by int, variables resolved to value slots,
// buffers to buffer ids — so that the SIMT executor never looks anything up by name or pointer.
//
// Execution model (stmt.h is the definition): blocks run independently on host threads; inside a
// block all `threads` lanes run the body statement by statement, in lock-step, under an active
// mask (a list of lane ids). Collective statements run once per block. Lane `threads` is a virtual
// lane: the single lane that runs Parallel loop bodies, and the host context (grid and shapes).
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::interp {

enum class XKind : uint8_t { Const, Var, ThreadIdx, Binary, Unary, Select, Cast, Call, Load, AccessCheck };

/// A compiled expression node. Children are ids into Program::exprs.
struct XNode {
  XKind kind = XKind::Const;
  uint8_t op = 0;  // BinOp, UnOp or Intrinsic
  DType type;      // result type
  DType arg_type;  // Binary: operand type; Cast: source type
  int32_t a = -1, b = -1,
          c = -1;  // children; Var: a = slot; Load: a = buffer, b = first of c indices in lists;
                   // AccessCheck: a = cond, b = first of c entries in lists (indices, block, thread)
                   // and imm.i its index into Program::checks
  Scalar imm;      // Const
};

/// A buffer: static facts from the IR; shapes become numbers per kernel launch (BufShape).
struct BufInfo {
  const ir::BufferNode* node = nullptr;
  std::vector<int32_t> shape;  // expr ids (non-Global buffers; evaluated in the host context)
  int param = -1;              // Global: index into Function::params
  bool mbarrier = false;       // Shared i64 elements that MBarrier and BulkCopy use as mbarriers
};

/// A region of a collective statement, compiled.
struct XRegion {
  int32_t buf = -1;
  std::vector<int32_t> offsets, extents;
};

struct SNode {
  SNode(ir::StmtKind k, const ir::StmtNode* s) : kind(k), src(s) {}
  ir::StmtKind kind;
  const ir::StmtNode* src = nullptr;   // loc and the fields that need no compiling (flags, ops)
  int32_t slot = -1;                   // For, Let: the bound variable; Gemm: its step index
  int32_t buf = -1;                    // Store, Atomic, Prefetch; Hold: the held accumulator
  int32_t e0 = -1, e1 = -1;            // For: min, extent; Let: value; If: cond; Store/Atomic/Fill: value
  std::vector<int32_t> idx;            // Store, Atomic, Prefetch: indices
  int32_t body = -1, orelse = -1;      // For, Let, If (then/else), Kernel, Hold; Gemm: its hints, or -1
                                       // (MBarrier: buf, idx the barrier, e0 its value or -1;
                                       // BulkCopy: regions src, dst; buf, idx the barrier)
  std::vector<int32_t> stmts;          // Seq
  std::vector<XRegion> regions;        // Copy: src, dst; Fill: dst; Gemm: a, b, c; Reduce: src, dst;
                                       // Mma: a, b, c with the lane offset as offsets[0]
  std::vector<int32_t> operands;       // collective: every expr that must agree across threads
  std::vector<int32_t> uniform_slots;  // Parallel For: outer variables the body reads
  const MatrixUnit* unit = nullptr;    // Mma, Hold
  int kernel = -1;                     // Kernel: index into Program::kernels
};

struct KernelInfo {
  const ir::Kernel* node = nullptr;
  std::vector<int32_t> grid;  // expr ids, host context
  std::vector<int32_t> block_slots;
  int threads = 0;
  int32_t body = -1;
  std::vector<int32_t> local_bufs;  // Shared, Fragment and Local buffers the kernel uses
};

struct Program {
  std::vector<XNode> exprs;
  std::vector<int32_t> lists;  // Load indices, AccessCheck operands
  std::vector<const ir::AccessCheck*> checks;
  int32_t access_record = -1;  // buffer id of the access record parameter, if any
  std::vector<SNode> stmts;
  std::vector<BufInfo> bufs;
  std::vector<KernelInfo> kernels;
  std::vector<int32_t> param_slot;  // per Function param: its slot (Scalar, Size) or -1
  std::vector<int32_t> param_buf;   // per Function param: its buffer id (Tensor) or -1
  int nslots = 0;
  int32_t root = -1;
};

/// Compile f (throws tg::Error on malformed IR: unbound variables, unknown matrix units, ...).
Program compile(const Function& f);

/// A buffer's numbers for one kernel launch.
/// "[1, 2, 3]"
std::string index_text(const int64_t* v, int n);

/// One operand of an ir::Mma as exec_mma reads it.
struct MmaOperandView {
  int32_t buf;
  int regs;
  DType want;
  const std::vector<MatrixUnit::Slot>* layout;
  int cols;  // of the operand tile
  const char* name;
  bool trans = false;  // a shared tile stored transposed (ir::MmaOperand::trans)
};

struct BufShape {
  std::vector<int64_t> dims, strides;
  int64_t numel = 0;
  void* global = nullptr;  // Global buffers: the host pointer
};

/// What every block of a launch shares, read-only except the atomics' lock.
struct Launch {
  const Program* prog = nullptr;
  InterpretOptions opt;
  std::vector<BufShape> shapes;       // per buffer id
  std::vector<Scalar> host_env;       // nslots: parameters and top-level lets
  std::mutex* global_lock = nullptr;  // Global atomics and packed (sub-byte) stores
};

struct Mask {
  const int* ids = nullptr;
  int n = 0;
};

/// Per-element race bookkeeping of one Shared buffer: the last writer and reader in the current
/// barrier interval (epoch), and the statement that made each access.
/// Atomics are tracked apart: two threads' atomics on one element do not race, but an atomic and
/// another thread's plain read or write in the same interval do.
struct RaceCell {
  uint32_t w_epoch = 0, r_epoch = 0, a_epoch = 0;
  int32_t w_lane = -1, r_lane = -1, a_lane = -1;  // r_lane, a_lane == kManyReaders: two or more lanes
  int32_t w_site = -1, r_site = -1, a_site = -1;
  int32_t in_flight = 0;  // async stores into the element issued and not yet completed
  int32_t mma_reads = 0;  // async mmas that read the element and are not yet complete
  uint64_t w_clock = 0;   // BlockExec::write_clock_ at the last write (w_lane's), for proxy_fence
  int32_t bulk_bar = -1;  // written by a bulk copy on this mbarrier (BlockExec's numbering) ...
  int64_t bulk_phase = 0; // ... of this phase: readable by a thread that has waited for it
  uint32_t bulk_block = 0;  // ... in this block (BlockExec::blocks_run_)
  // The accessing lane's own clock at the last write and read (BlockExec::lane_vc_, kernels with
  // mbarriers only): a lane that has since acquired that clock through an mbarrier is ordered after
  // the access. Two or more readers: BlockExec::readers_.
  uint32_t w_own = 0, r_own = 0;
};

/// An async store issued and not yet landed: it is written when its group completes.
struct PendingWrite {
  int32_t buf;
  int64_t flat;
  Scalar value;
  int32_t site;
};
inline constexpr int32_t kManyReaders = -2;

/// An async mma (MatrixUnit::async) issued and not yet complete: the accumulator it writes, the
/// registers it reads A from (the RS form; -1 for a shared tile), and the Shared elements it reads
/// (recorded where races are tracked, kept by the group's first lane).
struct PendingMma {
  int32_t c_buf;
  std::vector<std::pair<int32_t, int64_t>> reads;
  int32_t site;
  int32_t a_buf = -1;
};

/// One block's state and the SIMT executor. A host worker owns one and reuses it across blocks.
class BlockExec {
 public:
  BlockExec(const Launch& launch, int kernel);  // kernel -1: the host context (no threads)
  void run_block(const std::vector<int64_t>& block_index);
  /// Host context: evaluate an expression of parameters.
  Scalar eval_host(int32_t expr) { return eval(expr, T_); }
  void set_host_slot(int32_t slot, Scalar v) { env_[std::size_t(T_) * nslots_ + slot] = v; }

  // ---- interp_expr.cpp
  Scalar eval(int32_t id, int lane);
  int64_t eval_int(int32_t id, int lane) { return eval(id, lane).i; }
  /// Flat element index of buffer[indices] for `lane`; a tg::Error when out of bounds.
  int64_t element_index(int32_t buf, const int32_t* idx, int n, int lane, const char* what);
  Scalar read(int32_t buf, int64_t flat, int lane);
  void write(int32_t buf, int64_t flat, int lane, Scalar v);  // v already in the buffer's dtype
  void note_read(int32_t buf, int64_t flat, int lane);
  void note_write(int32_t buf, int64_t flat, int lane);
  void note_atomic(int32_t buf, int64_t flat, int lane);
  void note_placed_write(int32_t buf, int64_t flat);
  void check_placed_read(int32_t buf, int64_t flat, int lane);
  [[noreturn]] void in_flight_access(int32_t buf, int64_t flat, int lane, const char* what) const;
  [[noreturn]] void fail(const std::string& message) const;

  // ---- interp_threads.cpp
  void exec(int32_t sid, Mask m, int depth);

  // ---- interp_tile_ops.cpp
  void exec_copy(const SNode& s);
  void exec_fill(const SNode& s);
  void exec_gemm(const SNode& s);
  void exec_reduce(const SNode& s);

  // ---- interp_mma.cpp
  void exec_mma(const SNode& s, Mask m);
  void gather_tile(const XRegion& region, const MmaOperandView& o, int g, int G, std::vector<double>& tile,
                   PendingMma* async = nullptr);
  void exec_mma_sync(const SNode& s, Mask m);
  /// A load or store of a Local buffer that async mmas accumulate into or read A from (ir::Mma).
  void check_mma_registers(int32_t buf, int lane, const char* what) {
    if (mma_pending_[std::size_t(buf)].empty()) return;
    if (mma_pending_[std::size_t(buf)][std::size_t(lane)] > 0) mma_in_flight_access(buf, lane, what);
    mma_touched_[std::size_t(buf)][std::size_t(lane)] = 1;
  }
  [[noreturn]] void mma_in_flight_access(int32_t buf, int lane, const char* what) const;
  void exec_ldmatrix(const SNode& s, Mask m);
  // ---- interp_mbarrier.cpp
  void exec_mbarrier(const SNode& s, Mask m);
  void exec_bulk_copy(const SNode& s, Mask m);
  /// Where a bulk copy wrote the element in this block: fails unless `lane` has waited for that
  /// copy's phase, and returns true (the wait orders the copy before the access, as a barrier
  /// would); false where the element's last write was not a bulk copy's.
  bool bulk_landed(int32_t buf, int64_t flat, int lane, const char* what) {
    const RaceCell& c = races_[std::size_t(buf)][std::size_t(flat)];
    if (c.bulk_bar < 0 || c.bulk_block != blocks_run_) return false;
    if (known_[std::size_t(lane) * std::size_t(nbars_) + std::size_t(c.bulk_bar)] <= c.bulk_phase)
      bulk_not_waited(buf, flat, lane, what);
    return true;
  }
  [[noreturn]] void bulk_not_waited(int32_t buf, int64_t flat, int lane, const char* what) const;
  [[noreturn]] void mbarrier_as_data(int32_t buf, const char* what) const;
  void reset_mbarriers();
  void check_mbarriers_at_end();
  // ---- interp_roles.cpp: warp roles (ir::If::concurrent)
  void exec_roles(const SNode& s, Mask first, Mask second, int depth);
  /// Inside warp roles, where this role's threads wait for a phase that has not completed: hands
  /// the block to the other role and returns once it is this one's turn again (true); false where
  /// that cannot help — the other role has finished, or waits too and no phase completed since —
  /// and the wait then fails: a deadlock.
  bool yield_role();
  bool in_roles() const { return roles_ != nullptr; }
  void exec_shuffle(const SNode& s, Mask m);
  void exec_hold(const SNode& s, Mask m, int depth);
  /// Fails where `lane` is inside a hold of buf: its registers are the unit's, not the lane's.
  void check_not_held(int32_t buf, int lane, const char* what) const {
    if (!held_[std::size_t(buf)].empty() && held_[std::size_t(buf)][std::size_t(lane)])
      held_access(buf, what);
  }
  [[noreturn]] void held_access(int32_t buf, const char* what) const;

 private:
  struct Frame {  // per nesting depth scratch, so control flow allocates nothing per step
    std::vector<int> a, b;
    std::vector<int64_t> v0, v1;
  };
  Frame& frame(int depth);
  struct Roles;  // interp_roles.cpp
  void run_role(int role, int32_t body, Mask m, int depth);
  Scalar eval_binary(const XNode& x, int lane);
  Scalar eval_call(const XNode& x, int lane);
  Scalar eval_load(const XNode& x, int lane);
  Scalar eval_access_check(const XNode& x, int lane);
  void exec_for(const SNode& s, Mask m, int depth);
  void exec_parallel(const SNode& s, Mask m, int depth);
  void exec_if(const SNode& s, Mask m, int depth);
  void exec_store(const SNode& s, Mask m, bool atomic);
  void exec_prefetch(const SNode& s, Mask m);
  void exec_gemm_hints(const SNode& s, Mask m, int depth);
  void exec_barrier(const SNode& s, Mask m);
  void issue_async(const SNode& s, int32_t buf, int64_t flat, int lane, Scalar v);
  void exec_async_wait(const SNode& s, Mask m);
  void complete_group(int lane);
  void begin_collective(const SNode& s, Mask m, const char* what);
  std::string site_lines(int32_t a, int32_t b) const;
  std::string element_name(int32_t buf, int64_t flat) const;
  std::string lane_name(int lane) const;

 public:
  const Launch& L;
  const Program& P;

 private:
  int kernel_ = -1;
  int T_ = 0;  // threads of the block; lane T_ is the virtual lane
  int nslots_ = 0;
  std::vector<Scalar> env_;                   // (T_ + 1) × nslots_
  std::vector<std::vector<Scalar>> storage_;  // per buffer id: Shared/Fragment numel, Local T_ × numel
  std::vector<std::vector<RaceCell>> races_;  // per buffer id, Shared buffers when detecting races
  // Shared buffers placed on overlapping bytes (place_shared_memory), per buffer id: the buffers
  // it overlaps, the clock of each element's last write, and the clock, buffer and statement of
  // the last write into bytes it shares. An element read whose last write is older than that
  // overwrite reads bytes another buffer took: the plan overlapped two living buffers.
  struct Overlap {
    std::vector<int32_t> with;
    std::vector<uint64_t> written;
    uint64_t overwritten = 0;
    int32_t by = -1, site = -1;
  };
  std::vector<Overlap> overlap_;
  uint64_t clock_ = 0;
  // Per buffer id: the lanes inside a hold of it (1 each), or empty where no lane is.
  std::vector<std::vector<uint8_t>> held_;
  std::vector<const SNode*> held_stmt_;  // per buffer id: the innermost hold of it running
  // Per lane: async stores since its last AsyncWait, and its committed groups, oldest first.
  std::vector<std::vector<PendingWrite>> async_open_;
  std::vector<std::deque<std::vector<PendingWrite>>> async_groups_;
  // Async mmas, per lane: issued since its last mma_wait, and its committed groups, oldest first;
  // per buffer id (the accumulators of async mmas, else empty): per lane, the mmas in flight into
  // it and whether the lane accessed it since its last mma_fence; per lane, write_clock_ at its
  // last proxy_fence; write_clock_ at the block's start.
  std::vector<std::vector<PendingMma>> mma_open_;
  std::vector<std::deque<std::vector<PendingMma>>> mma_groups_;
  std::vector<std::vector<uint16_t>> mma_pending_;
  std::vector<std::vector<uint8_t>> mma_touched_;
  std::vector<uint64_t> proxy_fenced_;
  uint64_t write_clock_ = 0, block_clock_ = 0;
  // mbarriers (ir::MBarrier): each element of each mbarrier buffer, numbered from mbar_base_[buf];
  // per lane and mbarrier, how many of its phases the lane has seen complete (by waiting).
  struct MBar {
    bool init = false;
    int32_t count = 0, pending = 0;     // arrivals a phase expects; still to come in this one
    int64_t tx = 0;                     // bytes still expected in this phase (< 0: copies ahead)
    int64_t phase = 0;                  // phases completed
    std::vector<PendingWrite> landing;  // the bulk copies of this phase, written as it completes
    int32_t buf = -1;
    int64_t flat = 0;
    int32_t init_site = -1;
    // What the arrivals of the current phase release (the join of the arriving lanes' clocks:
    // T_ lane clocks, then nbars_ phase counts), and what the last completed phase released: a
    // wait that returns for it acquires that.
    std::vector<uint32_t> rel_lanes, done_lanes;
    std::vector<int64_t> rel_bars, done_bars;
  };
  std::vector<MBar> mbars_;
  std::vector<int32_t> mbar_base_;  // per buffer id: its first mbarrier's number, or -1
  int nbars_ = 0;
  // Per lane, the phases of each mbarrier it waited for (a wait for one of them again is a phase
  // error), and those it knows complete — waited for, or learnt through another lane's arrival it
  // acquired (a producer that never waits for `full` knows the copies there landed from the
  // consumers' arrivals on `empty`): T_ × nbars_ each.
  std::vector<int64_t> observed_, known_;
  // Kernels with mbarriers: per lane, the clock of each lane it is ordered after (T_ × T_; the
  // diagonal is its own clock, which each arrival advances). Accesses ordered through an
  // mbarrier's arrive and wait (a consumer's reads, its arrival on `empty`, the producer's wait
  // for it, the producer's bulk copy into the slot) are no race without a barrier between them.
  std::vector<uint32_t> lane_vc_;
  struct Readers {
    uint32_t epoch = 0;
    std::vector<std::pair<int32_t, uint32_t>> lanes;  // each reading lane's own clock at its last read
  };
  std::unordered_map<uint64_t, Readers> readers_;  // cells read by two or more lanes, with lane_vc_
  uint32_t own_clock(int lane) const {
    return lane_vc_.empty() ? 0 : lane_vc_[std::size_t(lane) * std::size_t(T_) + std::size_t(lane)];
  }
  /// Whether lane's next access is ordered after `other`'s access made at `other`'s clock.
  bool ordered_after(int lane, int32_t other, uint32_t clock) const {
    return !lane_vc_.empty() && other >= 0 &&
           clock <= lane_vc_[std::size_t(lane) * std::size_t(T_) + std::size_t(other)];
  }
  bool readers_ordered(int32_t buf, int64_t flat, const RaceCell& c, int lane) const;
  void note_reader(int32_t buf, int64_t flat, RaceCell& c, int lane, int32_t site);
  void release_to(MBar& b, int lane);
  void acquire_from(const MBar& b, int lane);
  uint32_t blocks_run_ = 0;         // blocks this executor has started
  MBar& mbarrier_of(const SNode& s, int lane, int32_t* id);
  void complete_phases(MBar& b);
  std::deque<Frame> frames_;    // a deque: a deeper frame must not move a shallower one
  // Warp roles running (ir::If::concurrent): their shared state, the role whose turn it is, and
  // its own frames (roles run on host threads of their own, one at a time: exec_roles).
  Roles* roles_ = nullptr;
  int role_ = -1;
  std::deque<Frame>* role_frames_ = nullptr;
  uint64_t phases_done_ = 0;  // mbarrier phases completed in this block (progress, for deadlocks)
  std::vector<int> all_lanes_;  // 0 .. T_-1, then the virtual lane
  uint32_t epoch_ = 1;
  bool single_lane_ = false;    // inside a Parallel loop body
  const SNode* cur_ = nullptr;  // the statement being executed, for messages
  std::string block_name_;
};

}  // namespace tg::interp
