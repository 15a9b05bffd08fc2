// ir::Mma: each group of group_size consecutive lanes (a warp, wave or subgroup) multiplies one
// M×N×K tile held in its lanes' registers, as the matrix-unit description lays it out.
//
//   mma "mma_m16n8k16_f16_f32" a: Ar[0], b: Br[0], c: Cr[0]
//   // lane l, register r of A is element a_layout[l*8 + r] of the 16×16 A tile, read from Ar[0 + r]
#include "interp_internal.h"

namespace tg::interp {

namespace {

// C += A·B on dense tiles, with the K-sum in double and one rounding into the accumulator type.
void multiply_accumulate(const MatrixUnit& u, std::vector<double> (&tiles)[3]) {
  std::vector<double>& c = tiles[2];
  for (int i = 0; i < u.m; ++i)
    for (int j = 0; j < u.n; ++j) {
      double sum = 0;
      for (int k = 0; k < u.k; ++k)
        sum += tiles[0][std::size_t(i * u.k + k)] * tiles[1][std::size_t(k * u.n + j)];
      double& cij = c[std::size_t(i * u.n + j)];
      cij = u.c_type.is_float() ? round_float_to(u.c_type, cij + sum)
                                : double(wrap_int_to(u.c_type, int64_t(cij) + int64_t(sum)));
    }
}

}  // namespace

// `a=tile A_s[.., r0, c0]`: lane l's register r is element layout[l*regs + r] = (row, col) of
// the tile, read by that lane from A_s[.., r0 + row, c0 + col] (so the race detector sees each
// lane's reads). Every lane of the group must name the same tile.
//
// For an async mma (`async` set) each element read must have been written before a proxy_fence
// of its writer, and stays marked read until the mma completes (a write to it before then fails).
void BlockExec::gather_tile(const XRegion& region, const MmaOperandView& o, int g, int G,
                            std::vector<double>& tile, PendingMma* async) {
  const BufShape& sh = L.shapes[o.buf];
  const std::size_t rank = region.offsets.size();
  const int rows = int(tile.size()) / o.cols;
  std::vector<int64_t> origin(rank), first(rank), at(rank);
  for (int l = 0; l < G; ++l) {
    const int lane = g * G + l;
    for (std::size_t d = 0; d < rank; ++d) origin[d] = eval_int(region.offsets[d], lane);
    if (l == 0) first = origin;
    if (origin != first)
      fail("mma operand " + std::string(o.name) + ": thread " + std::to_string(lane) + " names the tile of " +
           P.bufs[o.buf].node->name + " at " + index_text(origin.data(), int(rank)) + ", thread " +
           std::to_string(g * G) + " the one at " + index_text(first.data(), int(rank)) +
           ": the lanes of a group read one tile together");
    for (int r = 0; r < o.regs; ++r) {
      auto [row, col] = (*o.layout)[std::size_t(l * o.regs + r)];
      at = origin;
      at[rank - 2] += o.trans ? col : row;  // a transposed tile: its rows along the last dimension
      at[rank - 1] += o.trans ? row : col;
      int64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        if (at[d] < 0 || at[d] >= sh.dims[d])
          fail("mma operand " + std::string(o.name) + ": the " + std::to_string(rows) + "x" +
               std::to_string(o.cols) + " tile of " + P.bufs[o.buf].node->name + " at " +
               index_text(origin.data(), int(rank)) + " reaches element " + index_text(at.data(), int(rank)) +
               ", outside the buffer's shape " + index_text(sh.dims.data(), int(rank)));
        flat += at[d] * sh.strides[d];
      }
      if (!races_[o.buf].empty()) {
        note_read(o.buf, flat, lane);
        if (async) {
          RaceCell& c = races_[o.buf][std::size_t(flat)];
          if (c.w_lane >= 0 && c.w_clock > block_clock_ && c.w_clock > proxy_fenced_[std::size_t(c.w_lane)])
            fail(
                "async mma operand " + std::string(o.name) + " reads shared buffer " +
                element_name(o.buf, flat) + ", which thread " + std::to_string(c.w_lane) +
                " wrote without a proxy_fence after the write: the mma reads shared memory through the async "
                "proxy; add a proxy_fence after the writes (before the barrier that publishes them)" +
                site_lines(c.w_site, int32_t(cur_ - P.stmts.data())));
          ++c.mma_reads;
          async->reads.emplace_back(o.buf, flat);
        }
      }
      tile[std::size_t(row * o.cols + col)] = scalar_as_double(o.want, read(o.buf, flat, lane));
    }
  }
}

void BlockExec::exec_mma(const SNode& s, Mask m) {
  cur_ = &s;
  const MatrixUnit& u = *s.unit;
  const int G = u.group_size;
  if (single_lane_) fail("mma inside a parallel loop; move it out of the loop");
  // Groups of G consecutive threads; where G does not divide the block's threads, the last group
  // is partial (a producer warp beside whole consumer warpgroups: warp_roles.h) and may not reach.
  const int groups = (T_ + G - 1) / G;
  const auto* mma = static_cast<const ir::Mma*>(s.src);
  MmaOperandView ops[3] = {{s.regions[0].buf, u.a_regs(), u.a_type, &u.a_layout, u.k, "A", mma->a.trans},
                           {s.regions[1].buf, u.b_regs(), u.b_type, &u.b_layout, u.n, "B", mma->b.trans},
                           {s.regions[2].buf, u.c_regs(), u.c_type, &u.c_layout, u.n, "C"}};
  for (auto& o : ops) {
    DType have = P.bufs[o.buf].node->dtype;
    if (have != o.want)
      fail("mma operand " + std::string(o.name) + " of " + u.name + " holds " + std::string(o.want.name()) +
           " registers, but " + P.bufs[o.buf].node->name + " is " + std::string(have.name()) +
           "; convert it first");
  }
  std::vector<int> active(std::size_t(groups), 0);
  for (int k = 0; k < m.n; ++k) ++active[std::size_t(m.ids[k] / G)];
  std::vector<double> tiles[3] = {std::vector<double>(std::size_t(u.m * u.k)),
                                  std::vector<double>(std::size_t(u.k * u.n)),
                                  std::vector<double>(std::size_t(u.m * u.n))};
  std::vector<int64_t> offsets(std::size_t(G) * 3);
  const int32_t c_buf = s.regions[2].buf;
  for (int k = 0; k < m.n; ++k) {  // a held accumulator is only the C operand of its own unit
    check_not_held(ops[0].buf, m.ids[k], "mma operand A from");
    check_not_held(ops[1].buf, m.ids[k], "mma operand B from");
  }
  for (int g = 0; g < groups; ++g) {
    int n = active[std::size_t(g)];
    if (n == 0) continue;  // a group that does not reach the mma (warp specialisation) skips it
    if (g * G + G > T_)
      fail("mma with " + u.name + " reached by threads " + std::to_string(g * G) + ".." +
           std::to_string(T_ - 1) + ", a partial group: the unit's groups are " + std::to_string(G) +
           " threads, and the block's " + std::to_string(T_) +
           " threads end within this one; give the block a multiple of " + std::to_string(G) +
           " threads, or keep the last group's threads out of the mma");
    if (n != G)
      fail("mma reached by " + std::to_string(n) + " of the " + std::to_string(G) + " lanes of group " +
           std::to_string(g) + " (threads " + std::to_string(g * G) + ".." + std::to_string(g * G + G - 1) +
           "): a warp/wave/subgroup executes a matrix instruction together; move it out of the divergent "
           "code");
    const bool held = !held_[std::size_t(c_buf)].empty() && held_[std::size_t(c_buf)][std::size_t(g * G)];
    if (held && static_cast<const ir::Hold*>(held_stmt_[std::size_t(c_buf)]->src)->unit != u.name)
      fail("mma with " + u.name + " accumulates into " + P.bufs[c_buf].node->name +
           ", which a hold keeps in the " + "registers of " +
           static_cast<const ir::Hold*>(held_stmt_[std::size_t(c_buf)]->src)->unit + "; use that unit");
    const int32_t a_regs = P.bufs[ops[0].buf].node->scope == Scope::Local ? ops[0].buf : -1;
    PendingMma issued{c_buf, {}, int32_t(&s - P.stmts.data()), a_regs};
    if (u.async)
      for (int32_t b : {c_buf, a_regs})
        for (int l = 0; b >= 0 && l < G; ++l)
          if (mma_touched_[std::size_t(b)][std::size_t(g * G + l)])
            fail("async mma " + u.name + (b == c_buf ? " into " : " reading A from ") + P.bufs[b].node->name +
                 ": thread " + std::to_string(g * G + l) +
                 " accessed these registers since its last mma_fence; add an mma_fence before the mma (it "
                 "orders earlier register accesses before the unit's)");
    for (int oi = 0; oi < 3; ++oi) {  // gather each operand tile from the lanes' registers
      const MmaOperandView& o = ops[oi];
      if (P.bufs[o.buf].node->scope == Scope::Shared) {
        gather_tile(s.regions[std::size_t(oi)], o, g, G, tiles[oi], u.async ? &issued : nullptr);
        continue;
      }
      int64_t numel = L.shapes[o.buf].numel;
      for (int l = 0; l < G; ++l) {
        int lane = g * G + l;
        int64_t off = eval_int(s.regions[std::size_t(oi)].offsets[0], lane);
        if (off < 0 || off + o.regs > numel)
          fail("mma operand " + std::string(o.name) + ": thread " + std::to_string(lane) + " reads " +
               P.bufs[o.buf].node->name + "[" + std::to_string(off) + " .. " +
               std::to_string(off + o.regs - 1) + "], outside its " + std::to_string(numel) + " elements");
        if (held && oi == 2 && off % o.regs != 0)
          fail("mma on the held " + P.bufs[o.buf].node->name + ": thread " + std::to_string(lane) +
               " names element " + std::to_string(off) +
               ", which is not the start of a unit tile (a multiple of " + std::to_string(o.regs) + ")");
        offsets[std::size_t(l * 3 + oi)] = off;
        for (int r = 0; r < o.regs; ++r) {
          auto [row, col] = (*o.layout)[std::size_t(l * o.regs + r)];
          tiles[oi][std::size_t(row * o.cols + col)] = scalar_as_double(o.want, read(o.buf, off + r, lane));
        }
      }
    }
    multiply_accumulate(u, tiles);
    const std::vector<double>& c = tiles[2];
    for (int l = 0; l < G; ++l) {  // scatter C back
      int lane = g * G + l;
      int64_t off = offsets[std::size_t(l * 3 + 2)];
      for (int r = 0; r < ops[2].regs; ++r) {
        auto [row, col] = u.c_layout[std::size_t(l * ops[2].regs + r)];
        double v = c[std::size_t(row * u.n + col)];
        write(ops[2].buf, off + r, lane,
              u.c_type.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(v)));
      }
    }
    if (u.async)  // in flight until the lanes' mma_wait completes it
      for (int l = 0; l < G; ++l) {
        const int lane = g * G + l;
        ++mma_pending_[std::size_t(c_buf)][std::size_t(lane)];
        if (a_regs >= 0) ++mma_pending_[std::size_t(a_regs)][std::size_t(lane)];
        mma_open_[std::size_t(lane)].push_back(
            l == 0 ? std::move(issued) : PendingMma{c_buf, {}, int32_t(&s - P.stmts.data()), a_regs});
      }
  }
}

// ir::MmaSync: the fences and waits of async mmas (stmt.h).
void BlockExec::exec_mma_sync(const SNode& s, Mask m) {
  cur_ = &s;
  const auto* op = static_cast<const ir::MmaSync*>(s.src);
  if (single_lane_)
    fail(
        "mma_fence, proxy_fence, mma_wait and set_max_registers belong in per-thread code, not in a parallel "
        "loop");
  if (op->op == ir::MmaSync::Op::Registers) {  // a hint; collective over each warpgroup it reaches
    constexpr int G = 128;
    std::vector<int> active(std::size_t((T_ + G - 1) / G), 0);
    for (int k = 0; k < m.n; ++k)
      if (m.ids[k] < T_) ++active[std::size_t(m.ids[k] / G)];
    for (std::size_t g = 0; g < active.size(); ++g)
      if (active[g] != 0 && (active[g] != G || int(g) * G + G > T_))
        fail("set_max_registers reached by " + std::to_string(active[g]) + " threads of warpgroup " +
             std::to_string(g) + " (threads " + std::to_string(g * G) + ".." +
             std::to_string(std::min<int64_t>(T_, int64_t(g) * G + G) - 1) +
             "): a warpgroup's 128 threads move their registers together; reach it with the whole warpgroup");
    return;
  }
  for (int k = 0; k < m.n; ++k) {
    const int lane = m.ids[k];
    if (lane >= T_) continue;
    switch (op->op) {
      case ir::MmaSync::Op::Fence:
        for (auto& t : mma_touched_)
          if (!t.empty()) t[std::size_t(lane)] = 0;
        break;
      case ir::MmaSync::Op::ProxyFence: proxy_fenced_[std::size_t(lane)] = ++write_clock_; break;
      case ir::MmaSync::Op::Wait: {
        auto& open = mma_open_[std::size_t(lane)];
        auto& groups = mma_groups_[std::size_t(lane)];
        groups.push_back(std::move(open));
        open.clear();
        while (groups.size() > std::size_t(op->in_flight)) {
          for (const PendingMma& p : groups.front()) {
            --mma_pending_[std::size_t(p.c_buf)][std::size_t(lane)];
            if (p.a_buf >= 0) --mma_pending_[std::size_t(p.a_buf)][std::size_t(lane)];
            // The unit may read its tiles as late as this wait: the reads count in this barrier
            // interval too, so a write another thread makes after a barrier before the wait races.
            for (auto [b, flat] : p.reads) {
              --races_[std::size_t(b)][std::size_t(flat)].mma_reads;
              note_read(b, flat, lane);
            }
          }
          groups.pop_front();
        }
        break;
      }
      case ir::MmaSync::Op::Registers: break;  // returned above
    }
  }
}

void BlockExec::mma_in_flight_access(int32_t buf, int lane, const char* what) const {
  fail(std::string(what) + " " + P.bufs[std::size_t(buf)].node->name + " by thread " + std::to_string(lane) +
       " while an async mma accumulating into it or reading A from it is in flight: complete it first "
       "(mma_wait)");
}

// ir::LdMatrix, as PTX defines ldmatrix.sync.aligned.m8n8.b16: each warp reads the rows its lanes
// supply and deals them out, so a wrong proof in the pass that chose it shows as a wrong answer.
void BlockExec::exec_ldmatrix(const SNode& s, Mask m) {
  cur_ = &s;
  const auto* op = static_cast<const ir::LdMatrix*>(s.src);
  constexpr int G = 32;
  if (single_lane_) fail("ldmatrix inside a parallel loop; move it out of the loop");
  if (T_ % G != 0)
    fail("ldmatrix needs the block's thread count (" + std::to_string(T_) + ") to be a multiple of 32");
  const int32_t regs = s.regions[0].buf;
  for (int k = 0; k < m.n; ++k) check_not_held(regs, m.ids[k], "ldmatrix into");
  const int64_t reg_numel = L.shapes[regs].numel;
  const BufShape& sh = L.shapes[s.buf];
  const int rank = int(s.idx.size());
  std::vector<int> active(std::size_t(T_ / G), 0);
  for (int k = 0; k < m.n; ++k)
    if (m.ids[k] < T_) ++active[std::size_t(m.ids[k] / G)];
  std::vector<int64_t> row(std::size_t(8 * op->matrices));
  for (int g = 0; g < T_ / G; ++g) {
    const int n = active[std::size_t(g)];
    if (n == 0) continue;
    if (n != G)
      fail("ldmatrix reached by " + std::to_string(n) + " of the 32 lanes of warp " + std::to_string(g) +
           ": a warp executes it together; move it out of the divergent code");
    for (int l = 0; l < 8 * op->matrices; ++l) {  // lane 8j + i: row i of matrix j
      const int lane = g * G + l;
      row[std::size_t(l)] = element_index(s.buf, s.idx.data(), rank, lane, "ldmatrix row");
      const int64_t last = eval_int(s.idx.back(), lane);
      if (last + 8 > sh.dims[std::size_t(rank - 1)])
        fail("ldmatrix: the row thread " + std::to_string(lane) + " supplies starts at element " +
             std::to_string(last) + " of " + P.bufs[s.buf].node->name + "'s last dimension (" +
             std::to_string(sh.dims[std::size_t(rank - 1)]) + "), so it has fewer than 8 elements");
    }
    for (int t = 0; t < G; ++t) {
      const int lane = g * G + t;
      const int64_t base = eval_int(s.regions[0].offsets[0], lane);
      if (base < 0 || base + 2 * op->matrices > reg_numel)
        fail("ldmatrix: thread " + std::to_string(lane) + " writes " + P.bufs[regs].node->name + "[" +
             std::to_string(base) + " .. " + std::to_string(base + 2 * op->matrices - 1) + "], outside its " +
             std::to_string(reg_numel) + " elements");
      for (int j = 0; j < op->matrices; ++j)
        for (int h = 0; h < 2; ++h) {
          const int r = op->trans ? 2 * (t % 4) + h : t / 4, c = op->trans ? t / 4 : 2 * (t % 4) + h;
          const int64_t flat = row[std::size_t(8 * j + r)] + c;
          if (!races_[s.buf].empty()) note_read(s.buf, flat, lane);
          write(regs, base + 2 * j + h, lane, read(s.buf, flat, lane));
        }
    }
  }
}

// ir::Hold: each group's lanes enter together; while they are inside, their elements of the
// accumulator belong to the unit's registers (the values stay in place: the round trip is exact),
// so any access to them but an mma of that unit as C is an error.
void BlockExec::exec_hold(const SNode& s, Mask m, int depth) {
  cur_ = &s;
  const MatrixUnit& u = *s.unit;
  const int G = u.group_size;
  const std::string& name = P.bufs[s.buf].node->name;
  if (single_lane_) fail("hold inside a parallel loop; move it out of the loop");
  if (T_ % G != 0)
    fail("hold with " + u.name + " needs the block's thread count (" + std::to_string(T_) +
         ") to be a multiple of " + std::to_string(G));
  if (L.shapes[s.buf].numel % u.c_regs() != 0)
    fail("hold " + name + ": its " + std::to_string(L.shapes[s.buf].numel) +
         " elements are not whole unit tiles of " + std::to_string(u.c_regs()));
  std::vector<int> active(std::size_t(T_ / G), 0);
  for (int k = 0; k < m.n; ++k) ++active[std::size_t(m.ids[k] / G)];
  for (int g = 0; g < T_ / G; ++g)
    if (active[std::size_t(g)] != 0 && active[std::size_t(g)] != G)
      fail("hold of " + name + " reached by " + std::to_string(active[std::size_t(g)]) + " of the " +
           std::to_string(G) + " lanes of group " + std::to_string(g) +
           ": a group moves its accumulators into the unit's registers together; move it out of the "
           "divergent code");
  std::vector<uint8_t>& lanes = held_[std::size_t(s.buf)];
  if (lanes.empty()) lanes.assign(std::size_t(T_) + 1, 0);
  for (int k = 0; k < m.n; ++k) {
    if (lanes[std::size_t(m.ids[k])]) fail("hold of " + name + " inside a hold of " + name);
    lanes[std::size_t(m.ids[k])] = 1;
  }
  const SNode* outer = held_stmt_[std::size_t(s.buf)];
  held_stmt_[std::size_t(s.buf)] = &s;
  exec(s.body, m, depth);
  held_stmt_[std::size_t(s.buf)] = outer;
  for (int k = 0; k < m.n; ++k) lanes[std::size_t(m.ids[k])] = 0;
}

void BlockExec::held_access(int32_t buf, const char* what) const {
  fail(std::string(what) + " " + P.bufs[buf].node->name +
       " inside a hold of it: its elements are in the registers of " +
       static_cast<const ir::Hold*>(held_stmt_[std::size_t(buf)]->src)->unit +
       ", which lanes cannot address; only that unit's mmas may use it, as C");
}

}  // namespace tg::interp
