// The SIMT executor: a block's lanes run each statement in lock-step under an active mask.
//
//   if (tid < 40) { S[tid] = 1 } else { S[tid] = 2 }   // then: lanes 0..39, else: lanes 40..127
//   for i in 0..tid { ... }                               // iterates max(tid) times, lanes drop out
//   barrier                                               // must be reached by the full mask
//   copy A[...] -> As                                     // collective: once, full mask, same operands
#include <algorithm>

#include "interp_internal.h"

namespace tg::interp {

using ir::StmtKind;

BlockExec::BlockExec(const Launch& launch, int kernel) : L(launch), P(*launch.prog), kernel_(kernel) {
  T_ = kernel >= 0 ? P.kernels[kernel].threads : 0;
  nslots_ = P.nslots;
  env_.resize(std::size_t(T_ + 1) * nslots_);
  for (int lane = 0; lane <= T_; ++lane)
    std::copy(L.host_env.begin(), L.host_env.end(), env_.begin() + std::ptrdiff_t(lane) * nslots_);
  storage_.resize(P.bufs.size());
  races_.resize(P.bufs.size());
  held_.resize(P.bufs.size());
  held_stmt_.assign(P.bufs.size(), nullptr);
  if (kernel >= 0) {
    for (int32_t b : P.kernels[kernel].local_bufs) {
      const ir::BufferNode* node = P.bufs[b].node;
      int64_t n = L.shapes[b].numel;
      storage_[b].resize(std::size_t(node->scope == Scope::Local ? n * T_ : n));
      if (node->scope == Scope::Shared && L.opt.detect_races) races_[b].resize(std::size_t(n));
    }
  }
  overlap_.resize(P.bufs.size());
  if (kernel >= 0) {
    const auto& mine = P.kernels[kernel].local_bufs;
    for (int32_t a : mine) {
      const ir::BufferNode* x = P.bufs[a].node;
      if (x->scope != Scope::Shared || !x->placed()) continue;
      for (int32_t b : mine) {
        const ir::BufferNode* y = P.bufs[b].node;
        if (b == a || y->scope != Scope::Shared || !y->placed()) continue;
        if (x->placed_offset < y->placed_offset + y->placed_bytes && y->placed_offset < x->placed_offset + x->placed_bytes)
          overlap_[a].with.push_back(b);
      }
      if (!overlap_[a].with.empty()) overlap_[a].written.resize(std::size_t(L.shapes[a].numel));
    }
  }
  for (int lane = 0; lane <= T_; ++lane) all_lanes_.push_back(lane);
  async_open_.resize(std::size_t(T_));
  async_groups_.resize(std::size_t(T_));
  mma_open_.resize(std::size_t(T_));
  mma_groups_.resize(std::size_t(T_));
  proxy_fenced_.assign(std::size_t(T_) + 1, 0);
  mma_pending_.resize(P.bufs.size());
  mma_touched_.resize(P.bufs.size());
  for (const SNode& s : P.stmts)
    if (s.kind == StmtKind::Mma && s.unit && s.unit->async && s.regions.size() == 3)
      for (int oi : {0, 2})  // C, and A where it is registers
        if (oi == 2 || P.bufs[std::size_t(s.regions[0].buf)].node->scope == Scope::Local) {
          mma_pending_[std::size_t(s.regions[std::size_t(oi)].buf)].assign(std::size_t(T_) + 1, 0);
          mma_touched_[std::size_t(s.regions[std::size_t(oi)].buf)].assign(std::size_t(T_) + 1, 0);
        }
}

void BlockExec::run_block(const std::vector<int64_t>& block_index) {
  const KernelInfo& k = P.kernels[std::size_t(kernel_)];
  block_name_ = " (in block (";
  for (std::size_t d = 0; d < block_index.size(); ++d)
    block_name_ += (d ? ", " : "") + std::to_string(block_index[d]);
  block_name_ += "))";
  for (int lane = 0; lane <= T_; ++lane)
    for (std::size_t d = 0; d < block_index.size(); ++d)
      env_[std::size_t(lane) * nslots_ + k.block_slots[d]] = Scalar::of_int(block_index[d]);
  for (auto& s : storage_) std::fill(s.begin(), s.end(), Scalar{});
  for (auto& o : overlap_) std::fill(o.written.begin(), o.written.end(), 0), o.overwritten = 0, o.by = -1;
  ++epoch_;  // the race cells of the previous block are stale from here
  single_lane_ = false;
  cur_ = nullptr;
  for (auto& o : async_open_) o.clear();
  for (auto& g : async_groups_) g.clear();
  for (auto& o : mma_open_) o.clear();
  for (auto& g : mma_groups_) g.clear();
  for (auto& p : mma_pending_) std::fill(p.begin(), p.end(), 0);
  for (auto& t : mma_touched_) std::fill(t.begin(), t.end(), 0);
  block_clock_ = write_clock_;
  reset_mbarriers();
  exec(k.body, Mask{all_lanes_.data(), T_}, 0);
  check_mbarriers_at_end();
  // A copy still in flight when the kernel ends may land after it: the program forgot a wait.
  for (int lane = 0; lane < T_; ++lane) {
    // The oldest copy in flight: committed groups first (a group may be empty: a wait with no
    // copies since the last commits one), then the copies not yet committed.
    const PendingWrite* w = nullptr;
    for (const auto& g : async_groups_[std::size_t(lane)])
      if (!w && !g.empty()) w = &g.front();
    if (!w && !async_open_[std::size_t(lane)].empty()) w = &async_open_[std::size_t(lane)].front();
    if (!w) continue;
    cur_ = &P.stmts[std::size_t(w->site)];
    fail("the async copy into " + element_name(w->buf, w->flat) + " by thread " + std::to_string(lane) +
         " was never waited for before the kernel ended: add an async_wait 0 (and a barrier before other "
         "threads read it)");
  }
  for (int lane = 0; lane < T_; ++lane) {  // likewise an async mma
    const PendingMma* p = nullptr;
    for (const auto& g : mma_groups_[std::size_t(lane)])
      if (!p && !g.empty()) p = &g.front();
    if (!p && !mma_open_[std::size_t(lane)].empty()) p = &mma_open_[std::size_t(lane)].front();
    if (!p) continue;
    cur_ = &P.stmts[std::size_t(p->site)];
    fail("the async mma into " + P.bufs[std::size_t(p->c_buf)].node->name + " issued by thread " +
         std::to_string(lane) + " was never waited for before the kernel ended: add an mma_wait 0");
  }
}

BlockExec::Frame& BlockExec::frame(int depth) {
  std::deque<Frame>& frames = role_frames_ ? *role_frames_ : frames_;
  while (int(frames.size()) <= depth) {
    Frame f;
    f.a.resize(std::size_t(T_) + 1), f.b.resize(std::size_t(T_) + 1);
    f.v0.resize(std::size_t(T_) + 1), f.v1.resize(std::size_t(T_) + 1);
    frames.push_back(std::move(f));
  }
  return frames[std::size_t(depth)];
}

void BlockExec::exec(int32_t sid, Mask m, int depth) {
  const SNode& s = P.stmts[sid];
  switch (s.kind) {
    case StmtKind::Seq:
      for (int32_t c : s.stmts) exec(c, m, depth);
      return;
    case StmtKind::For:
      if (static_cast<const ir::For*>(s.src)->for_kind == ForKind::Parallel)
        exec_parallel(s, m, depth);
      else
        exec_for(s, m, depth);
      return;
    case StmtKind::Let:
      cur_ = &s;
      for (int k = 0; k < m.n; ++k) {
        int lane = m.ids[k];
        env_[std::size_t(lane) * nslots_ + s.slot] = eval(s.e0, lane);
      }
      exec(s.body, m, depth);
      return;
    case StmtKind::If: exec_if(s, m, depth); return;
    case StmtKind::Store: exec_store(s, m, false); return;
    case StmtKind::Atomic: exec_store(s, m, true); return;
    case StmtKind::Barrier: exec_barrier(s, m); return;
    case StmtKind::AsyncWait: exec_async_wait(s, m); return;
    case StmtKind::LdMatrix: exec_ldmatrix(s, m); return;
    case StmtKind::Prefetch: exec_prefetch(s, m); return;
    case StmtKind::Hold: exec_hold(s, m, depth); return;
    case StmtKind::Copy:
      begin_collective(s, m, "copy");
      exec_copy(s);
      ++epoch_;
      return;
    case StmtKind::Fill:
      begin_collective(s, m, "fill");
      exec_fill(s);
      ++epoch_;
      return;
    case StmtKind::Gemm:
      begin_collective(s, m, "gemm");
      exec_gemm(s);
      ++epoch_;
      if (s.body >= 0) exec_gemm_hints(s, m, depth);
      return;
    case StmtKind::Reduce:
      begin_collective(s, m, "reduce");
      exec_reduce(s);
      ++epoch_;
      return;
    case StmtKind::Mma:
      cur_ = &s;
      exec_mma(s, m);
      return;
    case StmtKind::MmaSync: exec_mma_sync(s, m); return;
    case StmtKind::MBarrier: exec_mbarrier(s, m); return;
    case StmtKind::BulkCopy: exec_bulk_copy(s, m); return;
    case StmtKind::Kernel: cur_ = &s; fail("a kernel inside a kernel");
  }
}

void BlockExec::exec_for(const SNode& s, Mask m, int depth) {
  cur_ = &s;
  Frame& f = frame(depth);
  bool uniform = true;
  int64_t max_extent = 0;
  for (int k = 0; k < m.n; ++k) {
    f.v0[k] = eval_int(s.e0, m.ids[k]);
    f.v1[k] = eval_int(s.e1, m.ids[k]);
    uniform = uniform && f.v0[k] == f.v0[0] && f.v1[k] == f.v1[0];
    max_extent = std::max(max_extent, f.v1[k]);
  }
  std::size_t slot = std::size_t(s.slot);
  if (uniform) {
    int64_t lo = f.v0[0];
    for (int64_t i = 0; i < max_extent; ++i) {
      for (int k = 0; k < m.n; ++k) env_[std::size_t(m.ids[k]) * nslots_ + slot] = Scalar::of_int(lo + i);
      exec(s.body, m, depth + 1);
    }
    return;
  }
  // Thread-dependent bounds: run to the longest trip count; a lane drops out after its own.
  for (int64_t i = 0; i < max_extent; ++i) {
    int n = 0;
    for (int k = 0; k < m.n; ++k) {
      if (i >= f.v1[k]) continue;
      f.a[n++] = m.ids[k];
      env_[std::size_t(m.ids[k]) * nslots_ + slot] = Scalar::of_int(f.v0[k] + i);
    }
    exec(s.body, Mask{f.a.data(), n}, depth + 1);
  }
}

void BlockExec::exec_parallel(const SNode& s, Mask m, int depth) {
  cur_ = &s;
  const std::size_t v = std::size_t(T_) * nslots_;  // the virtual lane's row
  if (single_lane_) {                               // nested in another parallel loop: already one lane
    int64_t lo = eval_int(s.e0, T_), n = eval_int(s.e1, T_);
    for (int64_t i = 0; i < n; ++i) {
      env_[v + s.slot] = Scalar::of_int(lo + i);
      exec(s.body, m, depth + 1);
    }
    return;
  }
  begin_collective(s, m, "parallel loop");
  for (int32_t slot : s.uniform_slots)
    for (int lane = 1; lane < T_; ++lane)
      if (env_[std::size_t(lane) * nslots_ + slot].i != env_[slot].i)
        fail("the body of a parallel loop reads a per-thread value (" + std::string("thread 0 and thread ") +
             std::to_string(lane) +
             " disagree); a parallel loop is run by the block as a whole: compute the value "
             "outside any thread-dependent code or use a serial loop");
  int64_t lo = eval_int(s.e0, 0), n = eval_int(s.e1, 0);
  std::copy(env_.begin(), env_.begin() + nslots_, env_.begin() + std::ptrdiff_t(v));
  single_lane_ = true;
  Mask one{&all_lanes_[std::size_t(T_)], 1};
  for (int64_t i = 0; i < n; ++i) {
    env_[v + s.slot] = Scalar::of_int(lo + i);
    exec(s.body, one, depth + 1);
  }
  single_lane_ = false;
  ++epoch_;
}

void BlockExec::exec_if(const SNode& s, Mask m, int depth) {
  cur_ = &s;
  Frame& f = frame(depth);
  int nt = 0, ne = 0;
  for (int k = 0; k < m.n; ++k) {  // every lane decides before either branch runs
    int lane = m.ids[k];
    if (eval(s.e0, lane).i)
      f.a[nt++] = lane;
    else
      f.b[ne++] = lane;
  }
  if (nt && ne && static_cast<const ir::If*>(s.src)->concurrent)
    return exec_roles(s, Mask{f.a.data(), nt}, Mask{f.b.data(), ne}, depth);
  if (nt) exec(s.body, Mask{f.a.data(), nt}, depth + 1);
  if (ne && s.orelse >= 0) exec(s.orelse, Mask{f.b.data(), ne}, depth + 1);
}

// A hint: the indices are evaluated (an error in them is still one) and nothing else happens. Any
// address is legal, so there is no bounds check, and nothing is accessed, so no race either.
void BlockExec::exec_prefetch(const SNode& s, Mask m) {
  cur_ = &s;
  for (int k = 0; k < m.n; ++k)
    for (int32_t i : s.idx) (void)eval_int(i, m.ids[k]);
}

// The gemm's hints, once per step in order, by one thread: they are block-wide values (the
// verifier rejects thread-dependent ones), and the gemm they interleave with has already run whole.
void BlockExec::exec_gemm_hints(const SNode& s, Mask m, int depth) {
  const int steps = static_cast<const ir::Gemm*>(s.src)->steps;
  if (m.n == 0) return;
  Mask one{m.ids, 1};
  const std::size_t slot = std::size_t(m.ids[0]) * nslots_ + std::size_t(s.slot);
  for (int i = 0; i < steps; ++i) {
    env_[slot] = Scalar::of_int(i);
    exec(s.body, one, depth + 1);
  }
}

// A lane shuffle: every lane of each group evaluates the value first, then each stores the value
// of its partner lane (t ^ mask), so no lane reads a value another already overwrote.
void BlockExec::exec_shuffle(const SNode& s, Mask m) {
  const auto* op = static_cast<const ir::Store*>(s.src);
  const int G = op->shuffle_width;
  if (single_lane_) fail("shuffle_xor inside a parallel loop; a lane shuffle is per-warp code");
  if (T_ % G != 0)
    fail("shuffle_xor over groups of " + std::to_string(G) + " lanes needs the block's thread count (" +
         std::to_string(T_) + ") to be a multiple of " + std::to_string(G));
  std::vector<int> active(std::size_t(T_ / G), 0);
  for (int k = 0; k < m.n; ++k) ++active[std::size_t(m.ids[k] / G)];
  for (int g = 0; g < T_ / G; ++g)
    if (active[std::size_t(g)] != 0 && active[std::size_t(g)] != G)
      fail("shuffle_xor reached by " + std::to_string(active[std::size_t(g)]) + " of the " + std::to_string(G) +
           " lanes of group " + std::to_string(g) + " (threads " + std::to_string(g * G) + ".." +
           std::to_string(g * G + G - 1) +
           "): a lane shuffle is executed by the whole warp/wave/subgroup; move it out of the divergent code");
  DType from = P.exprs[s.e0].type, to = P.bufs[s.buf].node->dtype;
  std::vector<Scalar> value(static_cast<std::size_t>(T_));
  for (int k = 0; k < m.n; ++k) value[std::size_t(m.ids[k])] = convert_scalar(from, to, eval(s.e0, m.ids[k]));
  const int rank = int(s.idx.size());
  for (int k = 0; k < m.n; ++k) {
    const int lane = m.ids[k];
    int64_t flat = element_index(s.buf, s.idx.data(), rank, lane, "shuffle into");
    write(s.buf, flat, lane, value[std::size_t(lane ^ op->shuffle_xor)]);
  }
}

void BlockExec::exec_store(const SNode& s, Mask m, bool atomic) {
  cur_ = &s;
  if (!atomic && static_cast<const ir::Store*>(s.src)->shuffle()) return exec_shuffle(s, m);
  DType from = P.exprs[s.e0].type, to = P.bufs[s.buf].node->dtype;
  bool global = L.shapes[s.buf].global != nullptr;
  bool tracked = !races_[s.buf].empty();
  int rank = int(s.idx.size());
  for (int k = 0; k < m.n; ++k) {
    int lane = m.ids[k];
    check_not_held(s.buf, lane, atomic ? "an atomic on" : "a store to");
    check_mma_registers(s.buf, lane, atomic ? "an atomic on" : "a store to");
    int64_t flat = element_index(s.buf, s.idx.data(), rank, lane, atomic ? "atomic on" : "store to");
    Scalar v = convert_scalar(from, to, eval(s.e0, lane));
    if (!atomic && static_cast<const ir::Store*>(s.src)->async) {
      issue_async(s, s.buf, flat, lane, v);
      continue;
    }
    if (!atomic) {
      if (tracked) note_write(s.buf, flat, lane);
      write(s.buf, flat, lane, v);
      continue;
    }
    // Atomics of different threads on one element are not races; they are serialised here, and
    // across blocks (host threads) by the launch's lock for Global buffers.
    if (tracked) note_atomic(s.buf, flat, lane);
    std::unique_lock<std::mutex> lock;
    if (global) lock = std::unique_lock<std::mutex>(*L.global_lock);
    Scalar old = read(s.buf, flat, lane), r;
    AtomicOp op = static_cast<const ir::Atomic*>(s.src)->op;
    if (to.is_float()) {
      double a = old.f, b = v.f;
      r = Scalar::of_float(round_float_to(to, op == AtomicOp::Add   ? a + b
                                              : op == AtomicOp::Max ? std::max(a, b)
                                                                    : std::min(a, b)));
    } else {
      int64_t a = old.i, b = v.i;
      r = Scalar::of_int(wrap_int_to(to, op == AtomicOp::Add   ? int64_t(uint64_t(a) + uint64_t(b))
                                         : op == AtomicOp::Max ? std::max(a, b)
                                                               : std::min(a, b)));
    }
    write(s.buf, flat, lane, r);
  }
}

// The latest legal schedule: an async store lands when the wait that completes its group runs,
// so a read before the wait sees the old value and, with race detection, is an error.
void BlockExec::issue_async(const SNode& s, int32_t buf, int64_t flat, int lane, Scalar v) {
  if (!races_[buf].empty()) {
    note_write(buf, flat, lane);  // the write may land at once: it conflicts from here on
    ++races_[buf][std::size_t(flat)].in_flight;
  }
  async_open_[std::size_t(lane)].push_back({buf, flat, v, int32_t(&s - P.stmts.data())});
}

void BlockExec::complete_group(int lane) {
  auto& groups = async_groups_[std::size_t(lane)];
  for (const PendingWrite& w : groups.front()) {
    if (!races_[w.buf].empty()) {
      --races_[w.buf][std::size_t(w.flat)].in_flight;
      note_write(w.buf, w.flat, lane);
    }
    write(w.buf, w.flat, lane, w.value);
  }
  groups.pop_front();
}

void BlockExec::exec_async_wait(const SNode& s, Mask m) {
  cur_ = &s;
  if (single_lane_) fail("async_wait inside a parallel loop; put it in per-thread code");
  const std::size_t keep = std::size_t(static_cast<const ir::AsyncWait*>(s.src)->in_flight);
  for (int k = 0; k < m.n; ++k) {
    const int lane = m.ids[k];
    if (lane >= T_) continue;
    auto& open = async_open_[std::size_t(lane)];
    auto& groups = async_groups_[std::size_t(lane)];
    groups.push_back(std::move(open));  // the commit: an empty group too, as cp.async counts it
    open.clear();
    while (groups.size() > keep) complete_group(lane);
  }
}

void BlockExec::exec_barrier(const SNode& s, Mask m) {
  cur_ = &s;
  if (single_lane_) fail("barrier inside a parallel loop; move it out of the loop");
  if (m.n != T_)
    fail("barrier reached by " + std::to_string(m.n) + " of " + std::to_string(T_) +
         " threads: a barrier inside thread-dependent control flow would deadlock on a GPU; move it out of "
         "the "
         "thread-dependent if or loop");
  ++epoch_;
}

void BlockExec::begin_collective(const SNode& s, Mask m, const char* what) {
  cur_ = &s;
  if (single_lane_) fail(std::string(what) + " inside a parallel loop; move it out of the loop");
  if (m.n != T_)
    fail(std::string(what) + " reached by " + std::to_string(m.n) + " of " + std::to_string(T_) +
         " threads: tile statements are performed by the whole block and must not be under thread-dependent "
         "control flow");
  for (int32_t e : s.operands) {
    if (P.exprs[e].kind == XKind::Const) continue;
    Scalar first = eval(e, 0);
    for (int lane = 1; lane < T_; ++lane) {
      Scalar v = eval(e, lane);
      if (v.i != first.i)
        fail(std::string(what) + " has an operand that depends on the thread: thread 0 computes " +
             std::to_string(scalar_as_double(P.exprs[e].type, first)) + ", thread " + std::to_string(lane) +
             " computes " + std::to_string(scalar_as_double(P.exprs[e].type, v)) +
             "; tile statements are performed once by the whole block");
    }
  }
  ++epoch_;
}

}  // namespace tg::interp
