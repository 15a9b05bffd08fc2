// Transaction barriers and bulk copies (ir::MBarrier, ir::BulkCopy; stmt.h is the definition),
// executed exactly in the SIMT executor's lock-step schedule:
//
//   if tx == 0 { mbarrier_init full[0], 1 }           // phase 0 expects 1 arrival
//   barrier
//   if tx == 0 { mbarrier_expect_tx full[0], 8192     // ... and 8192 bytes
//                bulk_copy A[r +: 64, c +: 64] -> As on full[0] }
//   mbarrier_wait full[0], 0                          // phase 0 complete: As may be read
//
// A bulk copy's elements are written when its phase completes (its arrivals in, its bytes
// counted); each element remembers the phase, and a thread that reads or writes it before it has
// waited for that phase fails, as does a wait that can never return (in this schedule no other
// thread runs while the waiting ones wait), a wait whose parity names a phase the thread already
// waited for (it would return at once, before the copy it means), arrivals beyond those a phase
// expects, a barrier used before its init, and a copy whose phase never completed by the end.
//
// mbarriers also order threads for the race detector, as on the GPU: an arrival releases what its
// thread has done so far (and what it has acquired), a wait that returns for that phase acquires
// it — clocks per thread (BlockExec::lane_vc_), joined at each arrival and wait. So a producer and
// its consumers need no barrier between them:
//
//   producer (tx == 0)                         consumers
//   mbarrier_wait empty[s], p                  mbarrier_wait full[s], q
//   mbarrier_expect_tx full[s], bytes          ... read slot s ...
//   bulk_copy ... -> S[s, ...] on full[s]      mbarrier_arrive empty[s]
//
// The copy's writes are ordered after the consumers' reads (their arrivals, the producer's wait),
// and after the slot's previous copy landed (the consumers knew it, having waited for full[s];
// their arrivals pass that on). Reads after a thread's arrival are not covered by it.
#include "interp_internal.h"

namespace tg::interp {

void BlockExec::reset_mbarriers() {
  if (mbar_base_.empty()) {  // first block: number the mbarriers of this kernel's buffers
    mbar_base_.assign(P.bufs.size(), -1);
    if (kernel_ >= 0)
      for (int32_t b : P.kernels[std::size_t(kernel_)].local_bufs)
        if (P.bufs[std::size_t(b)].mbarrier) {
          mbar_base_[std::size_t(b)] = nbars_;
          nbars_ += int(L.shapes[std::size_t(b)].numel);
        }
    mbars_.resize(std::size_t(nbars_));
    for (std::size_t b = 0; b < mbar_base_.size(); ++b)
      for (int64_t e = 0; mbar_base_[b] >= 0 && e < L.shapes[b].numel; ++e) {
        mbars_[std::size_t(mbar_base_[b] + e)].buf = int32_t(b);
        mbars_[std::size_t(mbar_base_[b] + e)].flat = e;
      }
  }
  for (MBar& b : mbars_) {
    const int32_t buf = b.buf;
    const int64_t flat = b.flat;
    b = MBar{};
    b.buf = buf, b.flat = flat;
  }
  observed_.assign(std::size_t(T_) * std::size_t(nbars_), 0);
  known_.assign(std::size_t(T_) * std::size_t(nbars_), 0);
  if (nbars_ > 0) {
    lane_vc_.assign(std::size_t(T_) * std::size_t(T_), 0);
    for (int l = 0; l < T_; ++l) lane_vc_[std::size_t(l) * std::size_t(T_) + std::size_t(l)] = 1;
    readers_.clear();
  }
  ++blocks_run_;
}

// An arrival releases what the lane knows (the clocks of the lanes it is ordered after, its own
// included, and the phases it knows complete) to whoever waits for this phase; its own clock then
// advances, so that its later accesses are not covered.
void BlockExec::release_to(MBar& b, int lane) {
  if (lane_vc_.empty()) return;
  b.rel_lanes.resize(std::size_t(T_), 0);
  b.rel_bars.resize(std::size_t(nbars_), 0);
  uint32_t* vc = &lane_vc_[std::size_t(lane) * std::size_t(T_)];
  for (int l = 0; l < T_; ++l) b.rel_lanes[std::size_t(l)] = std::max(b.rel_lanes[std::size_t(l)], vc[l]);
  const int64_t* known = &known_[std::size_t(lane) * std::size_t(nbars_)];
  for (int x = 0; x < nbars_; ++x) b.rel_bars[std::size_t(x)] = std::max(b.rel_bars[std::size_t(x)], known[x]);
  ++vc[lane];
}

// A wait that returns for the last completed phase acquires what its arrivals released.
void BlockExec::acquire_from(const MBar& b, int lane) {
  if (lane_vc_.empty() || b.done_lanes.empty()) return;
  uint32_t* vc = &lane_vc_[std::size_t(lane) * std::size_t(T_)];
  for (int l = 0; l < T_; ++l) vc[l] = std::max(vc[l], b.done_lanes[std::size_t(l)]);
  int64_t* known = &known_[std::size_t(lane) * std::size_t(nbars_)];
  for (int x = 0; x < nbars_; ++x) known[x] = std::max(known[x], b.done_bars[std::size_t(x)]);
}

BlockExec::MBar& BlockExec::mbarrier_of(const SNode& s, int lane, int32_t* id) {
  const int64_t flat = element_index(s.buf, s.idx.data(), int(s.idx.size()), lane, "mbarrier");
  *id = mbar_base_[std::size_t(s.buf)] + int32_t(flat);
  MBar& b = mbars_[std::size_t(*id)];
  if (!b.init && static_cast<const ir::MBarrier*>(s.src)->op != ir::MBarrier::Op::Init)
    fail("mbarrier " + element_name(s.buf, flat) + " is used by thread " + std::to_string(lane) +
         " before any mbarrier_init of it: initialise it first (one thread, then a barrier)");
  return b;
}

// Every phase whose arrivals and bytes are all in completes: its copies land, the next begins.
void BlockExec::complete_phases(MBar& b) {
  if (!b.init || b.pending != 0 || b.tx != 0) return;
  for (const PendingWrite& w : b.landing) write(w.buf, w.flat, 0, w.value);
  b.landing.clear();
  ++b.phase;
  b.pending = b.count;
  ++phases_done_;
  if (!lane_vc_.empty()) {
    b.done_lanes = std::move(b.rel_lanes);
    b.done_bars = std::move(b.rel_bars);
    b.done_lanes.resize(std::size_t(T_), 0);
    b.done_bars.resize(std::size_t(nbars_), 0);
    b.rel_lanes.assign(std::size_t(T_), 0);
    b.rel_bars.assign(std::size_t(nbars_), 0);
    // Its waiters know this phase complete (and, with it, the copies that landed in it).
    const int32_t id = mbar_base_[std::size_t(b.buf)] + int32_t(b.flat);
    b.done_bars[std::size_t(id)] = std::max(b.done_bars[std::size_t(id)], b.phase);
  }
}

void BlockExec::exec_mbarrier(const SNode& s, Mask m) {
  cur_ = &s;
  const auto* op = static_cast<const ir::MBarrier*>(s.src);
  const int32_t site = int32_t(&s - P.stmts.data());
  // In warp roles, a wait for a phase not yet complete lets the other role run (interp_roles.cpp).
  if (op->op == ir::MBarrier::Op::Wait && in_roles()) {
    auto blocked = [&] {
      for (int k = 0; k < m.n; ++k) {
        const int lane = m.ids[k];
        if (lane >= T_) continue;
        int32_t id = -1;
        const MBar& b = mbarrier_of(s, lane, &id);
        const int64_t parity = eval_int(s.e0, lane);
        if ((parity == 0 || parity == 1) && b.phase % 2 == parity) return true;
      }
      return false;
    };
    while (blocked() && yield_role()) {
    }
  }
  for (int k = 0; k < m.n; ++k) {
    const int lane = m.ids[k];
    if (lane >= T_) continue;
    int32_t id = -1;
    MBar& b =
        op->op == ir::MBarrier::Op::Init
            ? mbars_[std::size_t(mbar_base_[std::size_t(s.buf)] +
                                 element_index(s.buf, s.idx.data(), int(s.idx.size()), lane, "mbarrier"))]
            : mbarrier_of(s, lane, &id);
    const bool races = !races_[std::size_t(b.buf)].empty();
    const std::string name = element_name(b.buf, b.flat);
    switch (op->op) {
      case ir::MBarrier::Op::Init: {
        const int64_t n = eval_int(s.e0, lane);
        if (n < 1 || n >= (1 << 20))
          fail("mbarrier_init " + name + " with " + std::to_string(n) +
               " arrivals: a phase expects 1 to 2^20 - 1");
        if (b.init)
          fail("mbarrier " + name + " initialised twice (thread " + std::to_string(lane) +
               "): initialise each barrier once, by one thread" + site_lines(b.init_site, site));
        if (races) note_write(b.buf, b.flat, lane);
        b.init = true, b.count = b.pending = int32_t(n), b.init_site = site;
        break;
      }
      case ir::MBarrier::Op::Arrive:
      case ir::MBarrier::Op::ExpectTx: {
        if (races) note_atomic(b.buf, b.flat, lane);
        if (op->op == ir::MBarrier::Op::ExpectTx) {
          const int64_t bytes = eval_int(s.e0, lane);
          if (bytes < 0 || bytes >= (1 << 20))
            fail("mbarrier_expect_tx " + name + " of " + std::to_string(bytes) +
                 " bytes: a phase expects 0 to 2^20 - 1");
          b.tx += bytes;
        }
        release_to(b, lane);
        if (b.pending == 0)
          fail("thread " + std::to_string(lane) + " arrives on mbarrier " + name + " in phase " +
               std::to_string(b.phase) + ", which expects no more arrivals (" + std::to_string(b.count) +
               " a phase): its bulk copies' bytes are what it waits for; arrive once per expected thread");
        --b.pending;
        complete_phases(b);
        break;
      }
      case ir::MBarrier::Op::Wait: {
        if (races) note_atomic(b.buf, b.flat, lane);
        const int64_t parity = eval_int(s.e0, lane);
        if (parity != 0 && parity != 1)
          fail("mbarrier_wait " + name + " with parity " + std::to_string(parity) + ": the parity is 0 or 1");
        if (b.phase % 2 == parity)
          fail("mbarrier_wait " + name + " by thread " + std::to_string(lane) + " waits for phase " +
               std::to_string(b.phase) + " (parity " + std::to_string(parity) + "), which still expects " +
               std::to_string(b.pending) + " arrival(s) and " + std::to_string(b.tx) +
               " byte(s); " +
               (in_roles() ? std::string("neither role can go on: the other role has finished or waits too, "
                                         "with no phase completed since (a deadlock on the GPU)")
                           : std::string("nothing that runs before this wait completes it (the block's "
                                         "threads run in lock-step: an arrival or copy the wait depends on "
                                         "must come first)")));
        // The phase it returns for: the last completed (-1, a fresh barrier's, for parity 1).
        const int64_t got = b.phase - 1;
        int64_t& seen = observed_[std::size_t(lane) * std::size_t(nbars_) + std::size_t(id)];
        if (got >= 0 && got < seen)
          fail("mbarrier_wait " + name + " by thread " + std::to_string(lane) + " with parity " +
               std::to_string(parity) + " returns for phase " + std::to_string(got) +
               ", which this thread already waited for: the phase it means has not completed (a phase "
               "error: wait for each phase in turn, the parity flipping each time)");
        seen = std::max(seen, b.phase);
        int64_t& known = known_[std::size_t(lane) * std::size_t(nbars_) + std::size_t(id)];
        known = std::max(known, b.phase);
        acquire_from(b, lane);
        break;
      }
    }
  }
}

// Each executing thread issues the whole copy: its elements wait for the barrier's phase.
void BlockExec::exec_bulk_copy(const SNode& s, Mask m) {
  cur_ = &s;
  const int32_t site = int32_t(&s - P.stmts.data());
  const XRegion &src = s.regions[0], &dst = s.regions[1];
  const BufShape &ss = L.shapes[std::size_t(src.buf)], &ds = L.shapes[std::size_t(dst.buf)];
  const DType t = P.bufs[std::size_t(dst.buf)].node->dtype;
  const std::size_t rs = src.offsets.size(), rd = dst.offsets.size();
  std::vector<int64_t> so(rs), se(rs), dof(rd), de(rd), c(rs);
  for (int k = 0; k < m.n; ++k) {
    const int lane = m.ids[k];
    if (lane >= T_) continue;
    int32_t id = -1;
    MBar& b = mbarrier_of(s, lane, &id);
    for (std::size_t d = 0; d < rs; ++d)
      so[d] = eval_int(src.offsets[d], lane), se[d] = eval_int(src.extents[d], lane);
    for (std::size_t d = 0; d < rd; ++d)
      dof[d] = eval_int(dst.offsets[d], lane), de[d] = eval_int(dst.extents[d], lane);
    int64_t count = 1;
    for (int64_t e : se) count *= e;
    int64_t dcount = 1;
    for (int64_t e : de) dcount *= e;
    if (count != dcount || count <= 0)
      fail("bulk_copy from " + P.bufs[std::size_t(src.buf)].node->name + " (box " +
           index_text(se.data(), int(rs)) + ") into " + P.bufs[std::size_t(dst.buf)].node->name + " (" +
           index_text(de.data(), int(rd)) + "): the boxes differ");
    const bool races = !races_[std::size_t(dst.buf)].empty();
    std::fill(c.begin(), c.end(), 0);
    for (int64_t e = 0; e < count; ++e) {
      // Source element: zero outside the tensor (the box may overhang any edge).
      bool inside = true;
      int64_t fs = 0;
      for (std::size_t d = 0; d < rs; ++d) {
        const int64_t x = so[d] + c[d];
        inside = inside && x >= 0 && x < ss.dims[d];
        if (inside) fs += x * ss.strides[d];
      }
      Scalar v = inside ? read(src.buf, fs, lane) : convert_scalar(i32, t, Scalar::of_int(0));
      // Destination: the same position in row-major order over its non-unit dimensions.
      int64_t rem = e, fd = 0;
      for (std::size_t d = rd; d-- > 0;) {
        const int64_t x = dof[d] + rem % de[d];
        rem /= de[d];
        if (x < 0 || x >= ds.dims[d])
          fail("bulk_copy writes " + P.bufs[std::size_t(dst.buf)].node->name + " outside its shape " +
               index_text(ds.dims.data(), int(rd)) + " (dimension " + std::to_string(d) + ", index " +
               std::to_string(x) + ")");
        fd += x * ds.strides[d];
      }
      if (races) {
        note_write(dst.buf, fd, lane);
        RaceCell& cell = races_[std::size_t(dst.buf)][std::size_t(fd)];
        cell.w_clock = 0;  // written through the async proxy: async mmas need no proxy_fence for it
        cell.bulk_bar = id, cell.bulk_phase = b.phase, cell.bulk_block = blocks_run_;
      }
      b.landing.push_back(PendingWrite{dst.buf, fd, v, site});
      for (std::size_t d = rs; d-- > 0;) {
        if (++c[d] < se[d]) break;
        c[d] = 0;
      }
    }
    b.tx -= count * int64_t(t.bits() / 8);
    complete_phases(b);
  }
}

void BlockExec::bulk_not_waited(int32_t buf, int64_t flat, int lane, const char* what) const {
  const RaceCell& c = races_[std::size_t(buf)][std::size_t(flat)];
  const MBar& b = mbars_[std::size_t(c.bulk_bar)];
  fail(std::string(what) + " of " + element_name(buf, flat) + " by thread " + std::to_string(lane) +
       ", which a bulk copy on mbarrier " + element_name(b.buf, b.flat) + " writes in its phase " +
       std::to_string(c.bulk_phase) + ", before this thread waited for that phase: add an mbarrier_wait " +
       element_name(b.buf, b.flat) + ", " + std::to_string(c.bulk_phase % 2) + " before it" +
       site_lines(c.w_site, int32_t(cur_ - P.stmts.data())));
}

void BlockExec::mbarrier_as_data(int32_t buf, const char* what) const {
  fail("the mbarrier buffer " + P.bufs[std::size_t(buf)].node->name + " is " + what +
       " as data; its elements are barriers, used only by mbarrier statements and bulk copies");
}

void BlockExec::check_mbarriers_at_end() {
  for (const MBar& b : mbars_)
    if (!b.landing.empty()) {
      cur_ = &P.stmts[std::size_t(b.landing.front().site)];
      fail("the bulk copy into " + element_name(b.landing.front().buf, b.landing.front().flat) +
           " on mbarrier " + element_name(b.buf, b.flat) +
           " never completed before the kernel ended: its phase " + std::to_string(b.phase) +
           " still expects " + std::to_string(b.pending) + " arrival(s) and " + std::to_string(b.tx) +
           " byte(s) (an mbarrier_expect_tx of the copy's bytes completes it)");
    }
}

}  // namespace tg::interp
