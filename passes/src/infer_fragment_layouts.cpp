// infer_fragment_layouts (see the header for the IR before and after). Two steps per kernel:
// FragmentUses decides which fragments can live in matrix-unit (or, without a matching unit, SIMT)
// registers, then LayoutLowering rewrites gemm into per-warp mma (or per-thread FMA loops) and the
// laid-out fragments' other uses into per-thread loops.
#include "tilegen/passes/infer_fragment_layouts.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "lane_layout.h"
#include "stmt_build.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/async_mma.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

using namespace lower;
using BufferKey = const ir::BufferNode*;

// How warps tile an M×N accumulator: a wm×wn warp grid, each warp mt×nt unit tiles. Without a
// matrix unit (unit null, the SIMT layout) threads tile it: a wm×wn thread grid, thread t owning
// the mt×nt elements (t / wn + wm·mi, t % wn + wn·ni), strided so that neighbouring threads touch
// neighbouring columns; `warps` is then the block's thread count. With `vec` > 1 (SIMT tiles copied
// in from memory) a thread owns runs of vec neighbouring columns instead of single ones, column
// (ni / vec)·wn·vec + (t % wn)·vec + ni % vec, so that its loads and stores are vector moves.
struct Tiling {
  const MatrixUnit* unit = nullptr;
  int64_t bm = 0, bn = 0;
  int wm = 0, wn = 0, mt = 0, nt = 0, warps = 0;
  int vec = 1;
  int used() const { return wm * wn; }
  int c_elems() const { return unit ? mt * nt * unit->c_regs() : mt * nt; }
  bool operator==(const Tiling& o) const {
    return unit == o.unit && bm == o.bm && bn == o.bn && wm == o.wm && wn == o.wn && mt == o.mt &&
           nt == o.nt && warps == o.warps && vec == o.vec;
  }
};

// Accumulators a thread may hold in the SIMT layout: 128×128 over 128 threads (the gemm sample's
// default tiles) is 128 f32 registers, which CUDA and HIP keep in registers without spilling.
constexpr int kMaxSimtElements = 128;

// The K steps of one gemm on a matrix unit that are unrolled (flash_attention's Q·Kᵀ at D = 128
// on m16n8k16 is 8): beyond it the loop stays serial, bounding the code a K tile adds.
constexpr int64_t kMaxUnrolledKSteps = 8;

bool linear_layouts(const MatrixUnit& u) {
  Var l("l"), r("r");
  return slot_exprs(u.a_layout, u.group_size, u.a_regs(), l, r) &&
         slot_exprs(u.b_layout, u.group_size, u.b_regs(), l, r) &&
         slot_exprs(u.c_layout, u.group_size, u.c_regs(), l, r);
}

const MatrixUnit* pick_unit(const TargetInfo& info, DType in, DType acc) {
  for (const std::string& name : info.matrix_units) {
    const MatrixUnit* u = find_matrix_unit(name);
    if (u && u->a_type == in && u->b_type == in && u->c_type == acc && u->group_size == info.warp_size &&
        linear_layouts(*u))
      return u;
  }
  return nullptr;
}

// The warp grid using the most warps, then the squarest warp tile. With `whole_rows` (an
// accumulator whose rows are reduced or scaled by row vectors), the fewest warps along N come
// before squareness: a warp holding whole rows reduces them with shuffles alone.
std::optional<Tiling> choose_tiling(const MatrixUnit& u, int64_t bm, int64_t bn, int threads,
                                    bool whole_rows) {
  if (threads % u.group_size != 0 || bm % u.m != 0 || bn % u.n != 0) return std::nullopt;
  Tiling best;
  const int warps = threads / u.group_size;
  for (int wm = 1; wm <= warps; ++wm)
    for (int wn = 1; wm * wn <= warps; ++wn) {
      if (bm % (int64_t(u.m) * wm) != 0 || bn % (int64_t(u.n) * wn) != 0) continue;
      auto skew = [&](int a, int b) { return std::abs(bm / a - bn / b); };
      if (best.unit) {
        if (wm * wn != best.used()) {
          if (wm * wn < best.used()) continue;
        } else if (whole_rows && wn != best.wn) {
          if (wn > best.wn) continue;
        } else if (skew(wm, wn) >= skew(best.wm, best.wn)) {
          continue;
        }
      }
      best = Tiling{&u, bm, bn, wm, wn, int(bm / wm / u.m), int(bn / wn / u.n), warps};
    }
  if (!best.unit) return std::nullopt;
  return best;
}

// The SIMT thread grid for a bm×bn accumulator: the most threads, then the fewest operand loads a
// K step (mt + nt), then the widest rows of threads; nullopt when a thread would hold more than
// kMaxSimtElements. With `row_lanes` > 0 (the warp), only grids whose rows a shuffle butterfly and,
// past one warp, shared scratch can reduce: a power-of-two gn up to row_lanes or a multiple of it,
// and whole warps of threads; at equal thread counts, rows within one warp (no scratch, no barrier)
// come first. `max_vec` > 1 gives the thread runs of up to max_vec columns (Tiling::vec).
std::optional<Tiling> choose_simt_tiling(int64_t bm, int64_t bn, int threads, int row_lanes = 0,
                                         int max_vec = 1) {
  std::optional<Tiling> best;
  if (row_lanes > 0 && threads % row_lanes != 0) return best;
  auto split = [&](int gn) { return row_lanes > 0 && gn > row_lanes; };  // rows over several warps
  for (int gm = 1; gm <= threads && gm <= bm; ++gm) {
    if (bm % gm != 0) continue;
    for (int gn = 1; gm * gn <= threads && gn <= bn; ++gn) {
      if (bn % gn != 0) continue;
      if (row_lanes > 0 && ((gn & (gn - 1)) != 0 || gm * gn % row_lanes != 0)) continue;
      const int64_t mt = bm / gm, nt = bn / gn;
      if (mt * nt > kMaxSimtElements) continue;
      if (best) {
        const int64_t loads = mt + nt, best_loads = best->mt + best->nt;
        if (gm * gn < best->used()) continue;
        if (gm * gn == best->used()) {
          if (split(gn) != split(best->wn)) {
            if (split(gn)) continue;
          } else if (loads > best_loads || (loads == best_loads && gn <= best->wn)) {
            continue;
          }
        }
      }
      best = Tiling{nullptr, bm, bn, gm, gn, int(mt), int(nt), threads};
    }
  }
  if (best)
    while (best->vec * 2 <= max_vec && best->nt % (best->vec * 2) == 0) best->vec *= 2;
  return best;
}

bool full_region(const Region& r);

// Accumulator registers a thread may hold on an asynchronous warpgroup unit: 128×128 over one
// warpgroup (two m64n128 tiles) is 128 f32 registers.
constexpr int kMaxAsyncCRegs = 128;

// The tiling on an asynchronous warpgroup unit (MatrixUnit::async: Hopper's wgmma, A and B read
// from shared memory), for a gemm whose A (M×K) and B (K×N, or N×K transposed where the target
// reads B K-major: TargetInfo::async_mma_trans_b) are whole row-major shared tiles and whose
// accumulator is not reduced by rows (or is, where TargetInfo::async_mma_rows: then one
// warpgroup holds whole rows): warpgroups tile M×N, each holding mt unit tiles of 64 rows and one
// unit tile (n = its columns) along N. The units are tried in the target's order.
//
// With `register_a` (TargetInfo::async_mma_register_a), A is a fragment the caller keeps in
// registers (the unit's RS form): only B is then a shared tile.
std::optional<Tiling> async_tiling(const ir::Gemm& g, const TargetInfo& info, int threads, int64_t bm,
                                   int64_t bn, int64_t k, bool whole_rows, bool register_a) {
  if (whole_rows && !info.async_mma_rows) return std::nullopt;
  if (register_a && !info.async_mma_register_a) return std::nullopt;
  const Buffer &a = g.a.buffer, &b = g.b.buffer, &c = g.c.buffer;
  if (g.trans_a || (g.trans_b && !info.async_mma_trans_b) ||
      a->scope != (register_a ? Scope::Fragment : Scope::Shared) || b->scope != Scope::Shared ||
      a.rank() != 2 || b.rank() != 2 || !full_region(g.a) || !full_region(g.b) || a->dtype.is_packed())
    return std::nullopt;
  // 8-bit units (wgmma k32 on e4m3/e5m2) read both operands K-major from shared memory.
  if (a->dtype.bits() == 8 && (!g.trans_b || register_a)) return std::nullopt;
  // The shared tiles must take a swizzle the unit's descriptors read (swizzle_shared_tiles).
  const int64_t e = a->dtype.bits() / 8;
  if ((!register_a && swizzle_bits_for(k * e, bm) == 0) ||
      (g.trans_b ? swizzle_bits_for(k * e, bn) : swizzle_bits_for(bn * e, k)) == 0)
    return std::nullopt;
  for (const std::string& name : info.matrix_units) {
    const MatrixUnit* u = find_matrix_unit(name);
    if (!u || !u->async || u->a_type != a->dtype || u->b_type != b->dtype || u->c_type != c->dtype ||
        k % u->k != 0)
      continue;
    auto t = choose_tiling(*u, bm, bn, threads, whole_rows);
    if (t && t->nt == 1 && t->c_elems() <= kMaxAsyncCRegs && (!whole_rows || t->wn == 1)) return t;
  }
  return std::nullopt;
}

// The tiling a gemm can run with: on an asynchronous unit, else the matrix unit, else (f32/f64
// accumulators) the SIMT layout, else nullopt. `register_a`: A is a fragment to be read from
// registers (async_tiling).
std::optional<Tiling> gemm_tiling(const ir::Gemm& g, const TargetInfo& info, int threads, bool whole_rows,
                                  bool register_a = false) {
  const Buffer &a = g.a.buffer, &c = g.c.buffer;
  if (c->scope != Scope::Fragment) return std::nullopt;
  for (const Region* r : {&g.a, &g.b, &g.c})
    for (const Expr& e : r->extents)
      if (!e.as_int()) return std::nullopt;
  auto last = [](const Region& r, int from_end) { return *r.extents[r.extents.size() - from_end].as_int(); };
  const int64_t bm = last(g.c, 2), bn = last(g.c, 1), k = g.trans_a ? last(g.a, 2) : last(g.a, 1);
  if (auto t = async_tiling(g, info, threads, bm, bn, k, whole_rows, register_a)) return t;
  const MatrixUnit* u = pick_unit(info, a->dtype, c->dtype);
  if (u && k % u->k == 0)
    if (auto t = choose_tiling(*u, bm, bn, threads, whole_rows)) return t;
  // The SIMT loop rounds into C every K step, as mma does; f16/bf16 accumulators would drift
  // further from the interpreter's single rounding, so they stay tiles.
  if (c->dtype != f32 && c->dtype != f64) return std::nullopt;
  return choose_simt_tiling(bm, bn, threads);
}

// How a [bm] row vector lives beside a laid-out bm×bn fragment: each thread holds the rows its
// elements are in, mt·R registers (R rows of each unit tile; its C registers go q to a row, the R
// rows in turn, again every q·R registers: C register r is in row slot r / q % R — mma.sync
// m16n8k16 and wgmma m64nNk16 alike, q = R = 2),
// replicated across the lanes that hold the same rows (the xor masks: mma.sync m16n8k16 lanes
// 4r..4r+3, masks 1 and 2). A row's holders are then exactly those lanes in each warp along N.
// `split` warps hold parts of each row (the matrix unit's warps along N, or a SIMT row wider than
// a warp): their parts meet in shared scratch.
struct RowInfo {
  int R = 1, q = 1;
  std::vector<int> masks;
  int split = 1;
  int regs(const Tiling& t) const { return t.mt * R; }
};

std::optional<RowInfo> row_info(const Tiling& t, int warp_size) {
  RowInfo ri;
  if (!t.unit) {  // SIMT: thread th holds rows th / wn + wm·mi; the wn threads of a row are neighbours
    const int wn = t.wn;
    // Shuffles take whole warps: the block (t.warps is its thread count here) and the threads used;
    // a row wider than a warp spans whole warps.
    if ((wn & (wn - 1)) != 0 || (wn > warp_size && wn % warp_size != 0) || t.used() % warp_size != 0 ||
        t.warps % warp_size != 0)
      return std::nullopt;
    for (int m = 1; m < std::min(wn, warp_size); m <<= 1) ri.masks.push_back(m);
    ri.split = wn > warp_size ? wn / warp_size : 1;
    return ri;
  }
  const MatrixUnit& u = *t.unit;
  const int G = u.group_size, cr = u.c_regs();
  auto row = [&](int l, int r) { return u.c_layout[std::size_t(l * cr + r)].row; };
  std::vector<int> rows0;
  for (int r = 0; r < cr; ++r)
    if (std::find(rows0.begin(), rows0.end(), row(0, r)) == rows0.end()) rows0.push_back(row(0, r));
  ri.R = int(rows0.size());
  ri.q = 1;  // the first row's run of registers
  while (ri.q < cr && row(0, ri.q) == row(0, 0)) ++ri.q;
  if (cr % (ri.q * ri.R) != 0) return std::nullopt;
  for (int l = 0; l < G; ++l)
    for (int r = 0; r < cr; ++r) {
      const int slot = r / ri.q % ri.R;
      if (row(l, r) != row(l, slot * ri.q)) return std::nullopt;
      for (int s2 = 0; s2 < ri.R; ++s2)
        if (s2 != slot && row(l, s2 * ri.q) == row(l, r)) return std::nullopt;
    }
  for (int m = 1; m < G; m <<= 1) {
    bool same = true;
    for (int l = 0; l < G && same; ++l)
      for (int s2 = 0; s2 < ri.R && same; ++s2) same = row(l ^ m, s2 * ri.q) == row(l, s2 * ri.q);
    if (same) ri.masks.push_back(m);
  }
  // The butterfly must reach every holder of a row: G·R (lane, row) pairs over u.m rows.
  if ((int64_t(1) << ri.masks.size()) * u.m != int64_t(G) * ri.R) return std::nullopt;
  ri.split = t.wn;
  return ri;
}

// Whether two units' accumulators put the same rows in the same lanes' row slots (row_info):
// wgmma m64nNk16 for every N (attention's m64n64 scores and m64n128 output share row vectors).
bool same_unit_rows(const MatrixUnit* a, const MatrixUnit* b) {
  if (a == b) return true;
  if (!a || !b || a->group_size != b->group_size || a->m != b->m) return false;
  Tiling ta, tb;
  ta.unit = a, tb.unit = b;
  auto ra = row_info(ta, a->group_size), rb = row_info(tb, b->group_size);
  if (!ra || !rb || ra->R != rb->R || ra->masks != rb->masks) return false;
  for (int l = 0; l < a->group_size; ++l)
    for (int sl = 0; sl < ra->R; ++sl)
      if (a->c_layout[std::size_t(l * a->c_regs() + sl * ra->q)].row !=
          b->c_layout[std::size_t(l * b->c_regs() + sl * rb->q)].row)
        return false;
  return true;
}

// Whether two tilings put the same rows in the same threads (N may differ: a row vector fits both).
bool same_rows(const Tiling& a, const Tiling& b) {
  return same_unit_rows(a.unit, b.unit) && a.bm == b.bm && a.wm == b.wm && a.wn == b.wn && a.mt == b.mt &&
         a.warps == b.warps &&
         (a.unit || (a.nt == b.nt && a.vec == b.vec));  // SIMT rows: strided by the thread grid N shapes
}

// Where a gemm's A operand registers come from when A is a laid-out fragment: for each A register
// r of the unit `au`, the n-tile offset dn and the C register c of `cu` holding the same element
// in the same lane at K step 0 of an n-tile. Lane-independent by construction, or nullopt.
// Where a K step spans whole n-tiles of the fragment (au.k ≥ cu.n) K step kk starts at n-tile
// kk·tiles_per_k; where an n-tile spans several K steps (cu.n = steps_per_tile·au.k) step kk is in
// n-tile kk / steps_per_tile, its registers step_regs further on per step within it.
//   mma.sync m16n8k16 from m16n8 C: A registers 0-3 are C registers 0-3 of n-tile 2kk, 4-7 those of
//   n-tile 2kk + 1 (tiles_per_k 2).
//   wgmma m64nNk16 (RS) from wgmma m64n64 C: A register r of step kk is C register 8·kk + r
//   (steps_per_tile 4, step_regs 8): a contiguous run, which the RS form reads in place.
struct OperandMap {
  std::vector<std::pair<int, int>> from;  // A register → (dn, C register) at the tile's first step
  int tiles_per_k = 1;                    // n-tiles of the fragment a K step spans
  int steps_per_tile = 1, step_regs = 0;  // K steps an n-tile spans, C registers between them
  // The C register index (into the fragment's registers) of A register r at K step kk.
  Expr c_index(const Tiling& a, const Expr& mi, const Expr& kk, int r) const {
    auto [dn, c] = from[std::size_t(r)];
    const int cr = a.unit->c_regs();
    return (mi * a.nt + kk / steps_per_tile * tiles_per_k + dn) * cr + kk % steps_per_tile * step_regs + c;
  }
  // Whether every K step's A registers are C registers c0, c0 + 1, ... of one n-tile.
  bool contiguous() const {
    for (std::size_t r = 0; r < from.size(); ++r)
      if (from[r].first != from[0].first || from[r].second != from[0].second + int(r)) return false;
    return true;
  }
};

std::optional<OperandMap> operand_from_accumulator(const MatrixUnit& cu, const MatrixUnit& au) {
  const int G = au.group_size, ar = au.a_regs(), cr = cu.c_regs();
  if (cu.group_size != G || cu.m != au.m || (au.k % cu.n != 0 && cu.n % au.k != 0)) return std::nullopt;
  OperandMap map;
  map.tiles_per_k = std::max(1, au.k / cu.n);
  map.steps_per_tile = std::max(1, cu.n / au.k);
  // The C register holding (row, col) of an n-tile in lane l, or -1.
  auto find = [&](int l, int row, int col) {
    for (int c = 0; c < cr; ++c) {
      const MatrixUnit::Slot s = cu.c_layout[std::size_t(l * cr + c)];
      if (s.row == row && s.col == col) return c;
    }
    return -1;
  };
  for (int step = 0; step < map.steps_per_tile; ++step)
    for (int l = 0; l < G; ++l)
      for (int r = 0; r < ar; ++r) {
        const MatrixUnit::Slot a = au.a_layout[std::size_t(l * ar + r)];
        const int col = step * au.k + a.col, dn = col / cu.n;
        const int c = find(l, a.row, col % cu.n);
        if (c < 0) return std::nullopt;
        if (step == 0 && l == 0) {
          map.from.emplace_back(dn, c);
          continue;
        }
        const auto [dn0, c0] = map.from[std::size_t(r)];
        if (step == 1 && l == 0 && r == 0) map.step_regs = c - c0;
        if (dn != dn0 || c != c0 + step * map.step_regs) return std::nullopt;
      }
  return map;
}

// Whether fragment tiling `a` (the gemm's A operand) can feed a gemm accumulating into tiling `c`
// straight from registers: both on matrix units whose layouts meet (operand_from_accumulator),
// the same warps owning the same rows, whole rows a warp (wn = 1), and all K of A in the fragment.
// An async unit (wgmma's RS form) reads each K step's A registers in place: they must be a
// contiguous run of one unit tile (nt = 1).
std::optional<OperandMap> register_operand(const Tiling& a, const Tiling& c, const ir::Gemm& g) {
  if (!a.unit || !c.unit || g.trans_a || a.bm != c.bm || a.wm != c.wm || a.wn != 1 || c.wn != 1 ||
      a.mt != c.mt || a.warps != c.warps || a.bn % c.unit->k != 0)
    return std::nullopt;
  auto map = operand_from_accumulator(*a.unit, *c.unit);
  if (map && c.unit->async && (!map->contiguous() || a.nt != 1 || c.nt != 1)) return std::nullopt;
  return map;
}

bool full_region(const Region& r) {
  for (std::size_t d = 0; d < r.offsets.size(); ++d)
    if (!is_const(r.offsets[d], 0) || !equal(r.extents[d], r.buffer->shape[d])) return false;
  return true;
}

// A perfect nest of two parallel loops from 0: for i in parallel { for j in parallel { body } }.
const ir::For* inner_of_nest(const ir::For* op) {
  if (op->for_kind != ForKind::Parallel || !is_const(op->min, 0)) return nullptr;
  const ir::For* inner = op->body.as<ir::For>();
  if (!inner || inner->for_kind != ForKind::Parallel || !is_const(inner->min, 0)) return nullptr;
  return inner;
}

// A parallel loop from 0 whose body holds no other parallel loop: a loop over rows.
bool row_nest(const ir::For* op) {
  if (op->for_kind != ForKind::Parallel || !is_const(op->min, 0)) return false;
  struct Inner : IRVisitor {
    bool found = false;
    void visit(const ir::For* f) override {
      found = found || f->for_kind == ForKind::Parallel;
      IRVisitor::visit(f);
    }
  } inner;
  inner.visit_stmt(op->body);
  return !inner.found;
}

// The fragments a nest (over i, j; or over i alone: j null) accesses, and how: exactly F[i, j],
// or a row vector at r[i] (read, or written too).
struct NestAccess : IRVisitor {
  struct Use {
    bool exact = true;  // every access is [i, j]
    bool row = true;    // every access is [i]
    bool written = false;
  };
  const std::map<BufferKey, int>& frags;
  const Var& i;
  const Var* j;
  std::map<BufferKey, Use> uses;
  std::map<BufferKey, bool> exact;  // fragment → all accesses at [i, j]
  bool other_store = false;         // a store or atomic into a buffer that is not a fragment
  // A loop of one iteration has had its variable simplified to 0 in the body (x[0, j] for a
  // one-row tile): index 0 then counts as the loop's.
  bool i_one = false, j_one = false;
  NestAccess(const std::map<BufferKey, int>& f, const ir::For* outer, const ir::For* inner)
      : frags(f), i(outer->var), j(inner ? &inner->var : nullptr) {
    i_one = is_const(outer->extent, 1);
    j_one = inner && is_const(inner->extent, 1);
  }
  bool is_i(const Expr& e) const { return e.same_as(i) || (i_one && is_const(e, 0)); }
  bool is_j(const Expr& e) const { return e.same_as(*j) || (j_one && is_const(e, 0)); }
  void note(BufferKey b, const std::vector<Expr>& idx, bool write) {
    if (!frags.count(b)) {
      other_store = other_store || write;
      return;
    }
    Use& u = uses[b];
    const bool at_ij = j && idx.size() == 2 && is_i(idx[0]) && is_j(idx[1]);
    const bool at_i = idx.size() == 1 && is_i(idx[0]);
    u.exact = u.exact && at_ij;
    u.row = u.row && at_i;
    u.written = u.written || write;
    auto [it, fresh] = exact.emplace(b, at_ij);
    if (!fresh) it->second = it->second && at_ij;
  }
  void visit(const ir::Load* op) override {
    note(op->buffer.get(), op->indices, false);
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    note(op->buffer.get(), op->indices, true);
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    note(op->buffer.get(), {}, true);
    IRVisitor::visit(op);
  }
};

// A fragment's layout: the registers of a tiling, or (rows) the row vector beside it.
struct Laid {
  Tiling t;
  bool rows = false;
};

// Which fragments of one kernel can be laid out, and with which tiling. Accumulators get theirs
// from their gemm; with TargetInfo::lane_shuffle, [bm] row vectors then get the rows of the
// tiling they are reduced from or read beside (rules in the header), settled to a fixpoint in
// which every use left is one the layouts serve.
class FragmentUses : public IRVisitor {
 public:
  // `no_register_a`: gemms whose A fragment could not stay in the registers an async unit reads
  // (lost_register_a of an earlier try): they take the tiling of a shared A.
  FragmentUses(const ir::Kernel& k, const TargetInfo& info, const std::set<const ir::Gemm*>& no_register_a)
      : info_(info), threads_(k.threads), rows_ok_(info.lane_shuffle), no_register_a_(no_register_a) {
    for (const Buffer& b : k.buffers)
      if (b->scope == Scope::Fragment) index_.emplace(b.get(), int(index_.size())), state_.emplace_back();
    find_row_coupled(k.body);
    visit_stmt(k.body);
    settle();
  }
  /// The laid-out fragments and their layouts.
  std::map<BufferKey, Laid> result() const {
    std::map<BufferKey, Laid> out;
    for (auto& [b, i] : index_)
      if (laid(b)) out.emplace(b, Laid{*state_[std::size_t(i)].tiling, b->shape.size() == 1});
    return out;
  }

  /// Gemms given an async tiling that reads A from registers whose A fragment did not end up in
  /// registers it can read: try again with them in no_register_a.
  std::vector<const ir::Gemm*> lost_register_a() const {
    std::vector<const ir::Gemm*> lost;
    for (const Operand& o : operands_) {
      if (!o.register_a || !laid_tile(o.c) || !st(o.c).tiling->unit || !st(o.c).tiling->unit->async) continue;
      if (!laid_tile(o.a) || !register_operand(*st(o.a).tiling, *st(o.c).tiling, *o.g)) lost.push_back(o.g);
    }
    return lost;
  }

  void visit(const ir::Gemm* op) override {
    const Buffer &a = op->a.buffer, &c = op->c.buffer;
    const bool operand =
        state(a) && a.get() != c.get() && state(c) && a.rank() == 2 && full_region(op->a) && !op->trans_a;
    const bool register_a = operand && info_.async_mma_register_a && !no_register_a_.count(op);
    if (operand)
      operands_.push_back({a.get(), c.get(), op, register_a});
    else
      fail(a);
    fail(op->b.buffer);
    if (State* s = state(c)) {
      auto t = full_region(op->c) && c.rank() == 2
                   ? gemm_tiling(*op, info_, threads_, coupled_.count(c.get()) > 0, register_a)
                   : std::nullopt;
      if (!t || (s->tiling && !(*s->tiling == *t)))
        s->ok = false;
      else
        s->tiling = t;
      gemm_tiled_.insert(c.get());
    }
    IRVisitor::visit(op);
  }
  void visit(const ir::Fill* op) override {
    if (!full_region(op->dst)) fail(op->dst.buffer);
    IRVisitor::visit(op);
  }
  void visit(const ir::Copy* op) override {
    const bool src_frag = state(op->src.buffer) != nullptr, dst_frag = state(op->dst.buffer) != nullptr;
    const std::size_t rank = op->src.squeezed_extents().size();
    if (src_frag && dst_frag && rows_ok_ && op->src.buffer.rank() == 1 && op->dst.buffer.rank() == 1 &&
        full_region(op->src) && full_region(op->dst) &&
        equal(op->src.buffer->shape[0], op->dst.buffer->shape[0])) {
      copies_.push_back({op->src.buffer.get(), op->dst.buffer.get()});
      return IRVisitor::visit(op);
    }
    if (src_frag && dst_frag && op->src.buffer.rank() == 2 && op->dst.buffer.rank() == 2 &&
        full_region(op->src) && full_region(op->dst) &&
        equal(op->src.buffer->shape[0], op->dst.buffer->shape[0]) &&
        equal(op->src.buffer->shape[1], op->dst.buffer->shape[1]) &&
        op->src.buffer.get() != op->dst.buffer.get()) {
      tile_copies_.push_back({op->src.buffer.get(), op->dst.buffer.get()});  // e.g. f32 scores → f16 P
      return IRVisitor::visit(op);
    }
    // Copies pair the regions' dimensions of extent above 1 (a one-row tile is a row of memory).
    const bool same_rank = rank == op->dst.squeezed_extents().size();
    if (dst_frag && !src_frag && op->dst.buffer.rank() == 2 && same_rank && full_region(op->dst)) {
      copied_in_.push_back(op->dst.buffer.get());
      // Runs of columns a 16-byte move of the source's elements holds (1 for sub-byte types).
      const int bits = op->src.buffer->dtype.bits();
      const int v = bits >= 8 ? 128 / bits : 1;
      auto [it, fresh] = copy_vec_.emplace(op->dst.buffer.get(), v);
      if (!fresh) it->second = std::min(it->second, v);
    }
    for (const Region* r : {&op->src, &op->dst}) {
      const bool row_vector = rows_ok_ && r->buffer.rank() == 1 && same_rank;
      if ((src_frag && dst_frag) || !full_region(*r) || !((r->buffer.rank() == 2 && same_rank) || row_vector))
        fail(r->buffer);
    }
    IRVisitor::visit(op);
  }
  void visit(const ir::Reduce* op) override {
    const bool fits = rows_ok_ && state(op->src) && state(op->dst) && op->src.rank() == 2 &&
                      op->dst.rank() == 1 && (op->axis == 1 || op->axis == -1) &&
                      equal(op->src->shape[0], op->dst->shape[0]) && op->dst->dtype == f32;
    if (fits) {
      reduces_.push_back({op->src.get(), op->dst.get()});
    } else {
      fail(op->src);
      fail(op->dst);
    }
    IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    fail(Buffer(op->buffer));  // outside a matching nest
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    fail(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic* op) override {
    fail(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const ir::For* op) override {
    if (const ir::For* inner = inner_of_nest(op)) return nest2(op, inner);
    if (rows_ok_ && row_nest(op)) return nest1(op);
    IRVisitor::visit(op);
  }

 private:
  struct State {
    bool ok = true;
    std::optional<Tiling> tiling;  // [bm] row vectors: the tiling whose rows they hold
  };
  struct Nest2 {
    std::vector<BufferKey> tiles, row_reads;
    bool row_written = false;
  };
  struct Nest1 {
    std::vector<BufferKey> rows;
    bool bad = false;
  };

  State* state(const Buffer& b) { return state(b.get()); }
  State* state(BufferKey b) {
    auto it = index_.find(b);
    return it == index_.end() ? nullptr : &state_[std::size_t(it->second)];
  }
  const State& st(BufferKey b) const { return state_[std::size_t(index_.at(b))]; }
  void fail(const Buffer& b) { fail(b.get()); }
  void fail(BufferKey b) {
    if (State* s = state(b)) s->ok = false;
  }
  bool laid(BufferKey b) const { return st(b).ok && st(b).tiling; }
  bool laid_tile(BufferKey b) const { return laid(b) && b->shape.size() == 2; }

  // Accumulators whose rows are reduced or read beside row vectors: their gemm prefers whole rows.
  void find_row_coupled(const Stmt& body) {
    struct Finder : IRVisitor {
      FragmentUses& u;
      explicit Finder(FragmentUses& x) : u(x) {}
      void visit(const ir::Reduce* op) override {
        if (u.rows_ok_ && u.state(op->src) && op->src.rank() == 2) u.coupled_.insert(op->src.get());
      }
      std::set<BufferKey> operands;
      std::vector<std::pair<BufferKey, BufferKey>> copies;  // (src, dst) between fragment tiles
      void visit(const ir::Gemm* op) override {  // an operand read from registers: whole rows a warp
        if (u.state(op->a.buffer) && u.state(op->c.buffer)) {
          u.coupled_.insert(op->c.buffer.get());
          operands.insert(op->a.buffer.get());
        }
      }
      void visit(const ir::Copy* op) override {
        for (const Region* r : {&op->src, &op->dst})
          if (!u.state(r->buffer) || r->buffer.rank() != 2) return;
        copies.push_back({op->src.buffer.get(), op->dst.buffer.get()});
      }
      void visit(const ir::For* op) override {
        if (!u.rows_ok_) return IRVisitor::visit(op);
        const ir::For* inner = inner_of_nest(op);
        if (!inner) return IRVisitor::visit(op);
        NestAccess acc(u.index_, op, inner);
        acc.visit_stmt(inner->body);
        bool rows = false;
        for (auto& [b, use] : acc.uses) rows = rows || b->shape.size() == 1;
        if (rows)
          for (auto& [b, use] : acc.uses)
            if (b->shape.size() == 2) u.coupled_.insert(b);
      }
    } finder(*this);
    finder.visit_stmt(body);
    // The tiles a register operand is copied from (scores → P) want whole rows too.
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& [src, dst] : finder.copies)
        if (finder.operands.count(dst) && finder.operands.insert(src).second) grew = true;
    }
    coupled_.insert(finder.operands.begin(), finder.operands.end());
  }

  void nest2(const ir::For* op, const ir::For* inner) {
    NestAccess acc(index_, op, inner);
    acc.visit_stmt(inner->body);
    Nest2 n;
    for (auto& [b, use] : acc.uses) {
      const auto& shape = b->shape;
      if (shape.size() == 2 && use.exact && equal(op->extent, shape[0]) && equal(inner->extent, shape[1])) {
        n.tiles.push_back(b);
      } else if (rows_ok_ && shape.size() == 1 && use.row && equal(op->extent, shape[0])) {
        n.row_reads.push_back(b);
        n.row_written = n.row_written || use.written;
      } else {
        fail(b);
      }
    }
    nests2_.push_back(std::move(n));
  }

  void nest1(const ir::For* op) {
    NestAccess acc(index_, op, nullptr);
    acc.visit_stmt(op->body);
    Nest1 n;
    n.bad = acc.other_store;  // replicated threads would store it more than once
    for (auto& [b, use] : acc.uses) {
      if (b->shape.size() == 1 && use.row && equal(op->extent, b->shape[0])) {
        n.rows.push_back(b);
      } else {
        fail(b);
        n.bad = true;
      }
    }
    nests1_.push_back(std::move(n));
  }

  // The nest's tiling: that of its laid-out tiles (one, once settled).
  std::optional<Tiling> nest_tiling(const Nest2& n) const {
    for (BufferKey b : n.tiles)
      if (laid_tile(b)) return st(b).tiling;
    return std::nullopt;
  }

  // Row vectors take the rows of what they are reduced from, read beside, copied from or computed
  // with; a vector offered two layouts fails.
  void assign_rows() {
    for (auto& [b, i] : index_)
      if (b->shape.size() == 1) state_[std::size_t(i)].tiling.reset();
    std::set<BufferKey> clash;
    bool grew = true;
    auto offer = [&](BufferKey b, const Tiling& t) {
      State* s = state(b);
      if (!s || !s->ok) return;
      if (!s->tiling) {
        s->tiling = t;
        grew = true;
      } else if (!same_rows(*s->tiling, t)) {
        clash.insert(b);
      }
    };
    for (auto& [src, dst] : reduces_)
      if (laid_tile(src)) offer(dst, *st(src).tiling);
    for (const Nest2& n : nests2_)
      if (auto t = nest_tiling(n))
        for (BufferKey r : n.row_reads) offer(r, *t);
    while (grew) {
      grew = false;
      for (auto& [a, b] : copies_) {
        if (laid(a)) offer(b, *st(a).tiling);
        if (laid(b)) offer(a, *st(b).tiling);
      }
      for (const Nest1& n : nests1_)
        for (BufferKey r : n.rows)
          if (laid(r))
            for (BufferKey o : n.rows) offer(o, *st(r).tiling);
    }
    for (BufferKey b : clash) fail(b);
  }

  // One round of the rules that fail a use the layouts cannot serve; true when something failed.
  bool check_rows() {
    std::vector<bool> before;
    for (const State& s : state_) before.push_back(s.ok);
    for (auto& [src, dst] : reduces_) {
      const bool ok = laid_tile(src) && laid(dst) && same_rows(*st(src).tiling, *st(dst).tiling) &&
                      row_info(*st(src).tiling, info_.warp_size);
      if (!ok) fail(src), fail(dst);
    }
    for (const Nest1& n : nests1_) {
      bool ok = !n.bad;
      for (BufferKey r : n.rows) ok = ok && laid(r);
      if (!ok)
        for (BufferKey r : n.rows) fail(r);
    }
    for (const Nest2& n : nests2_) {
      const auto t = nest_tiling(n);
      if (n.row_written) {
        for (BufferKey b : n.tiles) fail(b);
        for (BufferKey b : n.row_reads) fail(b);
        continue;
      }
      for (BufferKey r : n.row_reads)
        if (laid(r) && (!t || !same_rows(*st(r).tiling, *t))) fail(r);
    }
    for (auto& [b, i] : index_)
      if (b->shape.size() == 1 && laid(b) && !row_info(*st(b).tiling, info_.warp_size)) fail(b);
    for (std::size_t i = 0; i < state_.size(); ++i)
      if (before[i] != state_[i].ok) return true;
    return false;
  }

  void settle() {
    for (auto& [b, i] : index_)  // only tiles and (with lane shuffles) row vectors are laid out
      if (b->shape.size() != 2 && !(rows_ok_ && b->shape.size() == 1)) state_[std::size_t(i)].ok = false;
    for (bool changed = true; changed;) {
      assign_tiles();
      settle_nests();
      assign_rows();
      changed = check_rows();
      changed = check_tiles() || changed;
    }
  }

  // A tile no gemm accumulates into takes the tiling of the laid-out tile it is copied from and,
  // with lane shuffles, of the laid-out tiles it shares a 2-deep nest with. One copied in from
  // memory with no such source (softmax's and rmsnorm's rows) gets the SIMT layout, whose rows
  // shuffles reduce where the tile's rows are reduced.
  void assign_tiles() {
    for (auto& [b, i] : index_)
      if (b->shape.size() == 2 && !gemm_tiled_.count(b)) state_[std::size_t(i)].tiling.reset();
    auto offer = [&](BufferKey b, const Tiling& t) {
      State* s = state(b);
      if (!s->ok || s->tiling) return false;
      s->tiling = t;
      return true;
    };
    auto spread = [&] {
      for (bool grew = true; grew;) {
        grew = false;
        for (auto& [src, dst] : tile_copies_)
          if (laid_tile(src)) grew = offer(dst, *st(src).tiling) || grew;
        if (!rows_ok_) continue;
        for (const Nest2& n : nests2_)
          if (auto t = nest_tiling(n))
            for (BufferKey b : n.tiles) grew = offer(b, *t) || grew;
      }
    };
    spread();
    if (!rows_ok_) return;
    for (BufferKey b : copied_in_) {
      if (!st(b).ok || st(b).tiling) continue;
      const auto bm = b->shape[0].as_int(), bn = b->shape[1].as_int();
      if (!bm || !bn) continue;
      auto t =
          choose_simt_tiling(*bm, *bn, threads_, coupled_.count(b) ? info_.warp_size : 0, copy_vec_.at(b));
      if (t && offer(b, *t)) spread();
    }
  }

  // Tile copies need one tiling on both sides; a gemm operand in registers needs registers the
  // unit's operand layout can be read from (register_operand). Else the copy's destination, or
  // the operand, stays a tile. True when something failed.
  bool check_tiles() {
    bool failed = false;
    auto drop = [&](BufferKey b) {
      failed = failed || st(b).ok;
      fail(b);
    };
    for (auto& [src, dst] : tile_copies_)
      if (laid_tile(src) && laid_tile(dst) && !(*st(src).tiling == *st(dst).tiling)) drop(dst);
    for (const Operand& o : operands_)
      if (laid_tile(o.a) && !(laid_tile(o.c) && register_operand(*st(o.a).tiling, *st(o.c).tiling, *o.g)))
        drop(o.a);
    return failed;
  }

  // A nest becomes one per-thread loop, so all laid-out tiles in it must share a tiling;
  // where they do not, none of them is laid out. Repeat until nothing changes.
  void settle_nests() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const Nest2& n : nests2_) {
        std::optional<Tiling> t;
        bool clash = false;
        for (BufferKey b : n.tiles) {
          if (!laid_tile(b)) continue;
          const Tiling& bt = *st(b).tiling;
          if (t && !(*t == bt)) clash = true;
          t = bt;
        }
        if (!clash) continue;
        for (BufferKey b : n.tiles) fail(b);
        changed = true;
      }
    }
  }

  const TargetInfo& info_;
  int threads_;
  bool rows_ok_;
  std::map<BufferKey, int> index_;
  std::vector<State> state_;
  std::set<BufferKey> coupled_;
  struct Operand {
    BufferKey a, c;
    const ir::Gemm* g;
    bool register_a;  // its tiling was chosen for A in registers (async_tiling)
  };
  const std::set<const ir::Gemm*>& no_register_a_;
  std::set<BufferKey> gemm_tiled_;     // accumulators: their tiling is their gemm's
  std::vector<Operand> operands_;      // fragments used as a gemm's A operand
  std::vector<BufferKey> copied_in_;   // 2-D fragments a copy fills from memory, in program order
  std::map<BufferKey, int> copy_vec_;  // their widest vector move: elements of 16 bytes of the source
  std::vector<std::pair<BufferKey, BufferKey>> reduces_, copies_, tile_copies_;
  std::vector<Nest2> nests2_;
  std::vector<Nest1> nests1_;
};

// Replaces F[i, j] by regs[idx] for every laid-out tile F of a nest body, and r[i] by
// rregs[rslot] for every laid-out row vector r.
struct ToRegisters : IRMutator {
  const std::map<BufferKey, Buffer>& regs;
  const std::map<BufferKey, Laid>& laid;
  Expr idx, rslot;
  ToRegisters(const std::map<BufferKey, Buffer>& r, const std::map<BufferKey, Laid>& l, Expr i, Expr rs)
      : regs(r), laid(l), idx(std::move(i)), rslot(std::move(rs)) {}
  const Expr& at(BufferKey b) const { return laid.at(b).rows ? rslot : idx; }
  Expr visit(const ir::Load* op, const Expr& self) override {
    auto it = regs.find(op->buffer.get());
    return it == regs.end() ? IRMutator::visit(op, self) : it->second.load({at(op->buffer.get())});
  }
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    auto it = regs.find(op->buffer.get());
    if (it == regs.end()) return IRMutator::visit(op, self);
    return make_store(it->second, {at(op->buffer.get())}, mutate(op->value), op->loc);
  }
};

// The rewrite of one function, kernel by kernel.
class LayoutLowering : public IRMutator {
 public:
  explicit LayoutLowering(const TargetInfo& info) : info_(info) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    tx_ = op->thread_var;
    threads_ = op->threads;
    laid_.clear();
    regs_.clear();
    locals_.clear();
    // An async tiling reading A from registers holds only where A's fragment ends up in a layout
    // it reads; where not, that gemm is tried again with A from shared memory.
    std::set<const ir::Gemm*> no_register_a;
    std::map<BufferKey, Laid> laid;
    for (;;) {
      FragmentUses uses(*op, info_, no_register_a);
      const std::vector<const ir::Gemm*> lost = uses.lost_register_a();
      if (lost.empty()) {
        laid = uses.result();
        break;
      }
      no_register_a.insert(lost.begin(), lost.end());
    }
    for (auto& [b, l] : laid) {
      laid_.emplace(b, l);
      const int64_t n = l.rows ? row_info(l.t, info_.warp_size)->regs(l.t) : l.t.c_elems();
      regs_.emplace(b, Buffer::make(b->name, {Expr(n)}, b->dtype, Scope::Local, {}, b->loc));
    }
    Stmt body = mutate(op->body);
    if (body.same_as(op->body)) return self;
    auto k = std::make_shared<ir::Kernel>(*op);
    k->buffers.clear();
    for (const Buffer& b : op->buffers) {
      auto it = regs_.find(b.get());
      k->buffers.push_back(it == regs_.end() ? b : it->second);
    }
    for (const Buffer& b : locals_) k->buffers.push_back(b);
    k->body = std::move(body);
    return Stmt(std::move(k));
  }

  Stmt visit(const ir::Gemm* op, const Stmt& self) override {
    auto it = regs_.find(op->c.buffer.get());
    // A laid-out accumulator has the tiling FragmentUses chose for it (whole rows where rows are
    // reduced); one that stays a tile runs through temporary registers of the default tiling.
    std::optional<Tiling> t = it != regs_.end() ? std::optional<Tiling>(laid_.at(op->c.buffer.get()).t)
                                                : gemm_tiling(*op, info_, threads_, false);
    if (!t) return self;
    if (!t->unit)  // SIMT only for an accumulator in registers; a tile stays block-cooperative
      return it == regs_.end() ? self : lower_simt_gemm(*op, *t, it->second);
    auto a = regs_.find(op->a.buffer.get());
    // FragmentUses kept A in registers only where register_operand holds.
    const std::optional<RegisterA> from =
        a == regs_.end() ? std::nullopt
                         : std::optional<RegisterA>({a->second, laid_.at(op->a.buffer.get()).t});
    if (t->unit->async)
      return lower_async_gemm(*op, *t, it == regs_.end() ? Buffer() : it->second, from ? &*from : nullptr);
    if (from) return lower_gemm(*op, *t, it->second, &*from);
    return lower_gemm(*op, *t, it == regs_.end() ? Buffer() : it->second);
  }

  //   fill C_local = 0.0   →   for mi, ni, r { C_local[(mi*nt + ni)*4 + r] = 0.0 }
  Stmt visit(const ir::Fill* op, const Stmt& self) override {
    auto it = regs_.find(op->dst.buffer.get());
    if (it == regs_.end()) return self;
    Buffer regs = it->second;
    Expr v = cast(regs->dtype, op->value);
    const Laid& l = laid_.at(op->dst.buffer.get());
    if (l.rows)
      return per_row(l.t, op->loc, [&](const Expr& k, const Expr&, const Expr&) {
        return make_store(regs, {k}, v, op->loc);
      });
    return per_thread(l.t, op->loc, [&](const Expr& idx, const Expr&, const Expr&, const Expr&) {
      return make_store(regs, {idx}, v, op->loc);
    });
  }

  //   copy C_local -> C[by*32 +: 32, bx*32 +: 32]
  //   → for mi, ni, r { if (in range) C[by*32 + row, bx*32 + col] = cast<f16>(C_local[idx]) }
  Stmt visit(const ir::Copy* op, const Stmt& self) override {
    auto src = regs_.find(op->src.buffer.get()), dst = regs_.find(op->dst.buffer.get());
    if (src == regs_.end() && dst == regs_.end()) return self;
    if (src != regs_.end() && dst != regs_.end()) {  // same layout on both sides: register by register
      Buffer from = src->second, to = dst->second;
      const Laid& l = laid_.at(op->src.buffer.get());
      if (l.rows)
        return per_row(l.t, op->loc, [&](const Expr& k, const Expr&, const Expr&) {
          return make_store(to, {k}, cast(to->dtype, from.load({k})), op->loc);
        });
      //   copy scores -> P  (f32 → f16, one tiling)   →   for mi, ni, r { P[idx] = f16(scores[idx]) }
      return per_thread(l.t, op->loc, [&](const Expr& idx, const Expr&, const Expr&, const Expr&) {
        return make_store(to, {idx}, cast(to->dtype, from.load({idx})), op->loc);
      });
    }
    bool out = src != regs_.end();
    const Region& other = out ? op->dst : op->src;
    const Buffer& frag = out ? op->src.buffer : op->dst.buffer;
    Buffer regs = out ? src->second : dst->second;
    const Laid& l = laid_.at(out ? op->src.buffer.get() : op->dst.buffer.get());
    const Tiling& t = l.t;
    bool check = op->check_bounds && other.buffer->scope == Scope::Global;
    if (l.rows) {  // every holder reads a row in; only its representative writes it out
      Stmt s = per_row(t, op->loc, [&](const Expr& k, const Expr& row, const Expr& rep) {
        std::vector<Expr> at = region_index(other, squeezed(frag, {row}));
        Expr ok = check ? in_bounds(other.buffer, at) : Expr(true);
        if (out)
          return make_if(rep && ok,
                         make_store(other.buffer, at, cast(other.buffer->dtype, regs.load({k})), op->loc),
                         op->loc);
        Expr v = cast(regs->dtype, other.buffer.load(at));
        return make_store(regs, {k}, check ? select(ok, v, make_float(0, regs->dtype)) : v, op->loc);
      });
      return fenced(s, op->loc);
    }
    if (!t.unit && t.vec > 1 && !check) return fenced(vector_copy(*op, t, regs, frag, other, out), op->loc);
    Stmt s = per_thread(t, op->loc, [&](const Expr& idx, const Expr& row, const Expr& col, const Expr&) {
      std::vector<Expr> at = region_index(other, squeezed(frag, {row, col}));
      Expr ok = check ? in_bounds(other.buffer, at) : Expr(true);
      if (out)
        return make_if(ok, make_store(other.buffer, at, cast(other.buffer->dtype, regs.load({idx})), op->loc),
                       op->loc);
      Expr v = cast(regs->dtype, other.buffer.load(at));
      return make_store(regs, {idx}, check ? select(ok, v, make_float(0, regs->dtype)) : v, op->loc);
    });
    return fenced(s, op->loc);
  }

  //   for i in parallel(0 +: 32) { for j in parallel(0 +: 32) { C_local[i, j] = max(C_local[i, j], 0.0) } }
  //   → for mi, ni, r { C_local[idx] = max(C_local[idx], 0.0) }   (i, j replaced by row, col)
  Stmt visit(const ir::For* op, const Stmt& self) override {
    const ir::For* inner = inner_of_nest(op);
    const std::map<BufferKey, int> laid = laid_index();  // NestAccess keeps a reference
    if (!inner) {
      if (!row_nest(op)) return IRMutator::visit(op, self);
      //   for i in parallel(0 +: 64) { l[i] = l[i] * rescale[i] + tile_sum[i] }
      //   → per thread, for each row it holds: l[k] = l[k] * rescale[k] + tile_sum[k]   (i = its row)
      NestAccess acc(laid, op, nullptr);
      acc.visit_stmt(op->body);
      if (acc.uses.empty()) return IRMutator::visit(op, self);
      const Tiling& t = laid_.at(acc.uses.begin()->first).t;
      Stmt s = per_row(t, op->loc, [&](const Expr& k, const Expr& row, const Expr&) {
        Stmt body = ToRegisters(regs_, laid_, k, k).mutate(op->body);
        return substitute(body, {{op->var, row}});
      });
      return fenced(s, op->loc);
    }
    NestAccess acc(laid, op, inner);
    acc.visit_stmt(inner->body);
    const Tiling* t = nullptr;
    for (auto& [b, use] : acc.uses)
      if (!laid_.at(b).rows) t = &laid_.at(b).t;
    if (!t) return IRMutator::visit(op, self);
    Stmt s =
        per_thread(*t, op->loc, [&](const Expr& idx, const Expr& row, const Expr& col, const Expr& rslot) {
          Stmt body = ToRegisters(regs_, laid_, idx, rslot).mutate(inner->body);
          return substitute(body, {{op->var, row}, {inner->var, col}});
        });
    return fenced(s, op->loc);
  }

  //   reduce_max(scores -> row_max, axis 1) with both laid out over mma.sync m16n8k16 (wn = 1)
  //   → per thread: part[k] = -inf; for its elements: part[rslot] = max(part[rslot], scores[idx]);
  //     for m in 1, 2: shuffle_xor(m of 32) swap[k] = part[k]; part[k] = max(part[k], swap[k]);
  //     row_max[k] = max(row_max[k], part[k])    (clear=false; clear: row_max[k] = part[k])
  Stmt visit(const ir::Reduce* op, const Stmt& self) override {
    auto src = regs_.find(op->src.get()), dst = regs_.find(op->dst.get());
    if (src == regs_.end() || dst == regs_.end()) return self;
    const Tiling& t = laid_.at(op->src.get()).t;
    const RowInfo ri = *row_info(t, info_.warp_size);
    const int64_t n = ri.regs(t);
    const DType d = dst->second->dtype;
    Buffer part = new_local("row_part", n, d, op->loc), swap = new_local("row_swap", n, d, op->loc);
    const ReduceOp rop = op->op;
    auto merge = [&](const Expr& a, const Expr& b) {
      return rop == ReduceOp::Sum ? a + b : rop == ReduceOp::Min ? min(a, b) : max(a, b);
    };
    Expr ident = rop == ReduceOp::Sum || rop == ReduceOp::AbsMax ? make_float(0, d)
                 : rop == ReduceOp::Max                          ? -infinity(d)
                                                                 : infinity(d);
    const SourceLoc& loc = op->loc;
    std::vector<Stmt> steps;
    steps.push_back(per_row(
        t, loc, [&](const Expr& k, const Expr&, const Expr&) { return make_store(part, {k}, ident, loc); }));
    Buffer sregs = src->second;
    steps.push_back(per_thread(t, loc, [&](const Expr& idx, const Expr&, const Expr&, const Expr& rs) {
      Expr v = cast(d, sregs.load({idx}));
      if (rop == ReduceOp::AbsMax) v = abs(v);
      return make_store(part, {rs}, merge(part.load({rs}), v), loc);
    }));
    // Within a warp (a warpgroup's rows are in its warps: wgmma), over the unit's group if smaller.
    const int width = t.unit ? std::min(t.unit->group_size, info_.warp_size) : info_.warp_size;
    for (int m : ri.masks) {
      steps.push_back(per_row(t, loc, [&](const Expr& k, const Expr&, const Expr&) {
        auto st = std::make_shared<ir::Store>(loc);
        st->buffer = swap, st->indices = {k}, st->value = part.load({k});
        st->shuffle_xor = m, st->shuffle_width = width;
        return Stmt(std::move(st));
      }));
      steps.push_back(per_row(t, loc, [&](const Expr& k, const Expr&, const Expr&) {
        return make_store(part, {k}, merge(part.load({k}), swap.load({k})), loc);
      }));
    }
    Buffer dregs = dst->second;
    auto finish = [&](const Expr& k, const Expr& v) {
      return make_store(dregs, {k}, op->clear ? v : merge(dregs.load({k}), v), loc);
    };
    if (ri.split == 1) {
      steps.push_back(per_row(
          t, loc, [&](const Expr& k, const Expr&, const Expr&) { return finish(k, part.load({k})); }));
      return fenced(make_seq(std::move(steps), loc), loc);
    }
    // Several warps hold parts of the same rows (warps along N on a matrix unit, or a SIMT row
    // wider than a warp): one lane of each writes its warp's part to shared scratch[part, row];
    // after a barrier (outside the `warp < used` guard) every holder merges the parts in order.
    //   SIMT, a row over 256 threads (8 warps): scratch[tx % 256 / 32, row] = part[k]; barrier;
    //   row_sum[k] = scratch[0, row] + scratch[1, row] + ... + scratch[7, row]
    Buffer scratch = Buffer::make("row_scratch_" + std::to_string(counter_++), {Expr(ri.split), Expr(t.bm)},
                                  d, Scope::Shared, {}, loc);
    locals_.push_back(scratch);
    const Expr which = t.unit ? tx_ / t.unit->group_size % t.wn : tx_ % t.wn / info_.warp_size;
    steps.push_back(per_row(
        t, loc,
        [&](const Expr& k, const Expr& row, const Expr& lane_rep) {
          return make_if(lane_rep, make_store(scratch, {which, row}, part.load({k}), loc), loc);
        },
        /*lane_only=*/true));
    Stmt gather = per_row(t, loc, [&](const Expr& k, const Expr& row, const Expr&) {
      Expr v = scratch.load({Expr(0), row});
      for (int w = 1; w < ri.split; ++w) v = merge(v, scratch.load({Expr(w), row}));
      return finish(k, v);
    });
    return fenced(make_seq({make_seq(std::move(steps), loc), make_barrier(loc), gather}, loc), loc);
  }

 private:
  // A fragment's element index without the dimensions of extent 1, as Copy pairs a fragment's
  // elements with a region's (region_index): x[0, j] of a one-row x is the region's element j.
  static std::vector<Expr> squeezed(const Buffer& frag, const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (std::size_t d = 0; d < idx.size(); ++d)
      if (!is_const(frag->shape[d], 1)) out.push_back(idx[d]);
    return out;
  }

  // A SIMT tile with runs of vec columns copied from or to memory, run by run as vector moves
  // (match_vector_move; code generators emit one 16-byte access where the start is aligned). A
  // dtype conversion goes through registers of the memory's dtype, f16 X into f32 x (vec 8):
  //   for mi, g { for v in vectorized(0 +: 8) { x_stage[mi*32 + g*8 + v] = X[row, g*2048 + tx%256*8 + v] } }
  //   for mi, g, v { x[mi*32 + g*8 + v] = f32(x_stage[mi*32 + g*8 + v]) }
  Stmt vector_copy(const ir::Copy& op, const Tiling& t, const Buffer& regs, const Buffer& frag,
                   const Region& other, bool out) {
    const Buffer& mem = other.buffer;
    const SourceLoc& loc = op.loc;
    const bool convert = mem->dtype != regs->dtype;
    Buffer stage = convert ? new_local(regs->name + "_stage", t.c_elems(), mem->dtype, loc) : regs;
    auto moves = [&](const Expr& th) {
      return simt_elements(
          t, th, loc,
          [&](const Expr& idx, const Expr& row, const Expr& col, const Expr&) {
            std::vector<Expr> at = region_index(other, squeezed(frag, {row, col}));
            return out ? make_store(mem, at, stage.load({idx}), loc)
                       : make_store(stage, {idx}, mem.load(at), loc);
          },
          ForKind::Vectorized);
    };
    auto casts = [&](const Expr& th) {
      return simt_elements(t, th, loc, [&](const Expr& idx, const Expr&, const Expr&, const Expr&) {
        return out ? make_store(stage, {idx}, cast(mem->dtype, regs.load({idx})), loc)
                   : make_store(regs, {idx}, cast(regs->dtype, stage.load({idx})), loc);
      });
    };
    return in_threads(t, loc, [&](const Expr& th) {
      if (!convert) return moves(th);
      return out ? make_seq({casts(th), moves(th)}, loc) : make_seq({moves(th), casts(th)}, loc);
    });
  }

  struct RegisterA {  // a gemm's A operand held in a laid-out fragment
    Buffer regs;
    Tiling t;
  };
  // fn(register index, row, col, index of the row's register in a row vector beside it)
  using ElementFn = std::function<Stmt(const Expr& idx, const Expr& row, const Expr& col, const Expr& rslot)>;
  // fn(register index of the row vector, row, whether this thread is the row's one representative)
  using RowFn = std::function<Stmt(const Expr& k, const Expr& row, const Expr& rep)>;

  std::map<BufferKey, int> laid_index() const {
    std::map<BufferKey, int> m;
    for (auto& [b, t] : laid_) m.emplace(b, 0);
    return m;
  }

  Buffer new_local(const std::string& stem, int64_t n, DType t, const SourceLoc& loc) {
    Buffer b = Buffer::make(stem + "_" + std::to_string(counter_++), {Expr(n)}, t, Scope::Local, {}, loc);
    locals_.push_back(b);
    return b;
  }

  // let warp = tx / G { let lane = tx % G { if (warp < used) { body(warp, lane) } } }
  Stmt in_warps(const Tiling& t, const SourceLoc& loc,
                const std::function<Stmt(const Expr&, const Expr&)>& body) {
    Var warp("warp", tx_.dtype()), lane("lane", tx_.dtype());
    Stmt s = body(warp, lane);
    if (t.used() < t.warps) s = make_if(warp < t.used(), s, loc);
    const int g = t.unit->group_size;
    return make_let(warp, tx_ / g, make_let(lane, tx_ % g, s, loc), loc);
  }

  // for mi, ni, r over this thread's accumulator elements: fn(index, row, col) in the M×N tile.
  Stmt elements(const Tiling& t, const Expr& warp, const Expr& lane, const SourceLoc& loc,
                const ElementFn& fn) {
    const MatrixUnit& u = *t.unit;
    Var mi("mi"), ni("ni"), r("r");
    SlotExprs c = *slot_exprs(u.c_layout, u.group_size, u.c_regs(), lane, r);
    Expr row = warp / t.wn * (t.bm / t.wm) + mi * u.m + c.row;
    Expr col = warp % t.wn * (t.bn / t.wn) + ni * u.n + c.col;
    Expr idx = (mi * t.nt + ni) * u.c_regs() + r;
    const std::optional<RowInfo> ri = row_info(t, info_.warp_size);
    const int q = ri ? ri->q : 1, R = ri ? ri->R : u.c_regs();
    Stmt s = fn(idx, row, col, mi * R + r / q % R);
    s = make_for(r, 0, u.c_regs(), s, ForKind::Unrolled, loc);
    s = make_for(ni, 0, t.nt, s, ForKind::Unrolled, loc);
    return make_for(mi, 0, t.mt, s, ForKind::Unrolled, loc);
  }

  // if (tx < used) { body(tx) } for the SIMT layout.
  Stmt in_threads(const Tiling& t, const SourceLoc& loc, const std::function<Stmt(const Expr&)>& body) {
    Stmt s = body(tx_);
    return t.used() < t.warps ? make_if(tx_ < t.used(), s, loc) : s;
  }

  // for mi, ni over thread `th`'s SIMT elements: fn(mi·nt + ni, th / wn + wm·mi, th % wn + wn·ni).
  // With runs of vec columns (Tiling::vec), ni is g·vec + v over runs g and a last loop v of kind
  // `run` (Vectorized for the moves of a copy): column g·wn·vec + (th % wn)·vec + v.
  Stmt simt_elements(const Tiling& t, const Expr& th, const SourceLoc& loc, const ElementFn& fn,
                     ForKind run = ForKind::Unrolled) {
    Var mi("mi"), ni("ni");
    Expr row = th / t.wn + mi * t.wm;
    if (t.vec > 1) {
      Var g("g"), v("v");
      Stmt s = fn(mi * t.nt + g * t.vec + v, row, g * (t.wn * t.vec) + th % t.wn * t.vec + v, mi);
      s = make_for(v, 0, t.vec, s, run, loc);
      s = make_for(g, 0, t.nt / t.vec, s, ForKind::Unrolled, loc);
      return make_for(mi, 0, t.mt, s, ForKind::Unrolled, loc);
    }
    Stmt s = fn(mi * t.nt + ni, row, th % t.wn + ni * t.wn, mi);
    s = make_for(ni, 0, t.nt, s, ForKind::Unrolled, loc);
    return make_for(mi, 0, t.mt, s, ForKind::Unrolled, loc);
  }

  // For each row register k of this thread's row vector beside tiling t: fn(k, row, rep), rep
  // true in exactly one thread of those holding the row (lane bits of the masks 0, first warp
  // along N); with `lane_only`, in one lane of each warp along N.
  Stmt per_row(const Tiling& t, const SourceLoc& loc, const RowFn& fn, bool lane_only = false) {
    const RowInfo ri = *row_info(t, info_.warp_size);
    auto rep_of = [&](const Expr& lane) {
      Expr rep = true;
      for (int m : ri.masks) rep = rep && (lane / m % 2 == 0);
      return rep;
    };
    if (!t.unit)
      return in_threads(t, loc, [&](const Expr& th) {
        Var mi("mi");
        // A row over several warps: lane 0 of each (lane_only), else the first of its wn threads.
        Expr rep = ri.split > 1 && !lane_only ? th % t.wn == 0 : rep_of(th);
        Stmt s = fn(mi, th / t.wn + mi * t.wm, rep);
        return make_for(mi, 0, t.mt, s, ForKind::Unrolled, loc);
      });
    const MatrixUnit& u = *t.unit;
    return in_warps(t, loc, [&](const Expr& warp, const Expr& lane) {
      Var mi("mi"), sl("s");
      SlotExprs c = *slot_exprs(u.c_layout, u.group_size, u.c_regs(), lane, sl * ri.q);
      Expr row = warp / t.wn * (t.bm / t.wm) + mi * u.m + c.row;
      Expr rep = rep_of(lane);
      if (t.wn > 1 && !lane_only) rep = rep && (warp % t.wn == 0);
      Stmt s = fn(mi * ri.R + sl, row, rep);
      s = make_for(sl, 0, ri.R, s, ForKind::Unrolled, loc);
      return make_for(mi, 0, t.mt, s, ForKind::Unrolled, loc);
    });
  }

  Stmt per_thread(const Tiling& t, const SourceLoc& loc, const ElementFn& fn) {
    if (!t.unit) return in_threads(t, loc, [&](const Expr& th) { return simt_elements(t, th, loc, fn); });
    return in_warps(t, loc,
                    [&](const Expr& warp, const Expr& lane) { return elements(t, warp, lane, loc, fn); });
  }

  // Loads of one operand's registers for every unit tile along M (A) or N (B):
  //   for mi { for r { a_regs[mi*8 + r] = A_shared[row(mi, r), kk*16 + col(r)] } }
  // Where runs of w registers (w·element ≤ 32 bits: pairs of 16-bit elements, fours of 8-bit
  // ones) hold neighbours along the tile's contiguous dimension (A's k for a row-major A), each run
  // is loaded as one, which code generators turn into one 32-bit load:
  //   for mi { for p { for h in vectorized(0 +: 2) { a_regs[mi*8 + p*2 + h] = A_shared[..., ... + h] } } }
  Stmt load_operand(const ir::Gemm& g, const Tiling& t, bool is_a, const Buffer& regs, const Expr& warp,
                    const Expr& lane, const Expr& kk) {
    const MatrixUnit& u = *t.unit;
    const std::vector<MatrixUnit::Slot>& layout = is_a ? u.a_layout : u.b_layout;
    const int nregs = is_a ? u.a_regs() : u.b_regs();
    // The operand's (row, col) that is contiguous in the source buffer.
    const bool row_contiguous = is_a ? g.trans_a : g.trans_b;
    const int bits = (is_a ? g.a.buffer : g.b.buffer)->dtype.bits();
    int pair = 1;
    for (int w : {4, 2})
      if (pair == 1 && w * bits <= 32 && paired(layout, nregs, row_contiguous, w)) pair = w;
    std::vector<MatrixUnit::Slot> firsts;
    for (std::size_t i = 0; i < layout.size(); i += std::size_t(pair)) firsts.push_back(layout[i]);
    Var tile(is_a ? "mi" : "ni"), r(pair > 1 ? "p" : "r"), h("h");
    SlotExprs s = *slot_exprs(firsts, u.group_size, nregs / pair, lane, r);
    Expr step = pair > 1 ? Expr(h) : Expr(0);
    Expr row = s.row + (row_contiguous ? step : Expr(0)), col = s.col + (row_contiguous ? Expr(0) : step);
    std::vector<Expr> at;
    if (is_a) {
      Expr m = warp / t.wn * (t.bm / t.wm) + tile * u.m + row, k = kk * u.k + col;
      at = g.trans_a ? matrix_index(g.a, k, m) : matrix_index(g.a, m, k);
    } else {
      Expr k = kk * u.k + row, n = warp % t.wn * (t.bn / t.wn) + tile * u.n + col;
      at = g.trans_b ? matrix_index(g.b, n, k) : matrix_index(g.b, k, n);
    }
    const Buffer& src = is_a ? g.a.buffer : g.b.buffer;
    Stmt st = make_store(regs, {tile * nregs + r * pair + step}, cast(regs->dtype, src.load(at)), g.loc);
    if (pair > 1) st = make_for(h, 0, pair, st, ForKind::Vectorized, g.loc);
    st = make_for(r, 0, nregs / pair, st, ForKind::Unrolled, g.loc);
    return make_for(tile, 0, is_a ? t.mt : t.nt, st, ForKind::Unrolled, g.loc);
  }

  // Whether registers w·p .. w·p + w-1 always hold consecutive elements along rows (or columns).
  static bool paired(const std::vector<MatrixUnit::Slot>& layout, int regs, bool along_rows, int w = 2) {
    if (regs % w != 0) return false;
    for (std::size_t i = 0; i + std::size_t(w) - 1 < layout.size(); i += std::size_t(w))
      for (int j = 1; j < w; ++j) {
        MatrixUnit::Slot a = layout[i], b = layout[i + std::size_t(j)];
        if (along_rows ? (b.row != a.row + j || b.col != a.col) : (b.col != a.col + j || b.row != a.row))
          return false;
      }
    return true;
  }

  // A's registers for K step kk, moved from a laid-out fragment (register_operand's map):
  //   P·V with P over mma.sync m16n8k16 (nt = 8 n-tiles of P):
  //   for mi { a_regs[mi*8 + 0] = P[(mi*8 + kk*2)*4 + 0] ... a_regs[mi*8 + 4] = P[(mi*8 + kk*2 + 1)*4 + 0]
  //   ... }
  static Stmt move_operand(const ir::Gemm& g, const Tiling& t, const RegisterA& a, const Buffer& regs,
                           const Expr& kk) {
    const OperandMap map = *register_operand(a.t, t, g);
    const SourceLoc& loc = g.loc;
    const int ar = t.unit->a_regs();
    Var mi("mi");
    std::vector<Stmt> moves;
    for (int r = 0; r < ar; ++r)
      moves.push_back(make_store(regs, {mi * ar + r},
                                 cast(regs->dtype, a.regs.load({map.c_index(a.t, mi, kk, r)})), loc));
    return make_for(mi, 0, t.mt, make_seq(std::move(moves), loc), ForKind::Unrolled, loc);
  }

  // The per-group frame of a gemm on a matrix unit: `acc` is the laid-out accumulator, or null:
  // then the tile is loaded into temporary registers and stored back; clear_c zeroes it first;
  // `steps(warp, lane, acc)` writes the K steps between.
  Stmt group_gemm(
      const ir::Gemm& g, const Tiling& t, Buffer acc,
      const std::function<void(std::vector<Stmt>&, const Expr&, const Expr&, const Buffer&)>& steps) {
    const bool temp = !acc;
    if (temp) acc = new_local("c_regs", t.c_elems(), t.unit->c_type, g.loc);
    Stmt s = in_warps(t, g.loc, [&](const Expr& warp, const Expr& lane) {
      std::vector<Stmt> body;
      if (g.clear_c || temp)
        body.push_back(elements(
            t, warp, lane, g.loc, [&](const Expr& idx, const Expr& row, const Expr& col, const Expr&) {
              Expr v = g.clear_c ? make_float(0, acc->dtype)
                                 : cast(acc->dtype, g.c.buffer.load(matrix_index(g.c, row, col)));
              return make_store(acc, {idx}, v, g.loc);
            }));
      steps(body, warp, lane, acc);
      if (temp)
        body.push_back(elements(
            t, warp, lane, g.loc, [&](const Expr& idx, const Expr& row, const Expr& col, const Expr&) {
              const Buffer& c = g.c.buffer;
              return make_store(c, matrix_index(g.c, row, col), cast(c->dtype, acc.load({idx})), g.loc);
            }));
      return make_seq(std::move(body), g.loc);
    });
    return fenced(s, g.loc);
  }

  // gemm → per-warp register loads and mma over the K steps (group_gemm's frame). With
  // `a_in_regs`, A's registers are moved from a laid-out fragment and the K steps are unrolled
  // (register indices must be constants to stay registers).
  Stmt lower_gemm(const ir::Gemm& g, const Tiling& t, Buffer acc, const RegisterA* a_in_regs = nullptr) {
    const MatrixUnit& u = *t.unit;
    const int64_t k_extent = *g.a.extents[g.a.extents.size() - (g.trans_a ? 2 : 1)].as_int();
    Buffer ar = new_local("a_regs", int64_t(t.mt) * u.a_regs(), u.a_type, g.loc);
    Buffer br = new_local("b_regs", int64_t(t.nt) * u.b_regs(), u.b_type, g.loc);
    return group_gemm(
        g, t, acc, [&](std::vector<Stmt>& body, const Expr& warp, const Expr& lane, const Buffer& c) {
          Var kk("kk"), mi("mi"), ni("ni");
          Stmt mma = make_mma(u.name, {ar, mi * u.a_regs()}, {br, ni * u.b_regs()},
                              {c, (mi * t.nt + ni) * u.c_regs()}, g.loc);
          mma = make_for(mi, 0, t.mt, make_for(ni, 0, t.nt, mma, ForKind::Unrolled, g.loc), ForKind::Unrolled,
                         g.loc);
          Stmt load_a = a_in_regs ? move_operand(g, t, *a_in_regs, ar, kk)
                                  : load_operand(g, t, true, ar, warp, lane, kk);
          Stmt step = make_seq({load_a, load_operand(g, t, false, br, warp, lane, kk), mma}, g.loc);
          // Up to kMaxUnrolledKSteps K steps are unrolled: the operand loads of step kk + 1 then issue
          // before the mma of step kk (a serial loop waits on each step's loads).
          const int64_t steps = k_extent / u.k;
          const ForKind kind = a_in_regs || steps <= kMaxUnrolledKSteps ? ForKind::Unrolled : ForKind::Serial;
          body.push_back(make_for(kk, 0, steps, step, kind, g.loc));
        });
  }

  // gemm → per-warpgroup async mma on shared tiles (async_tiling; group_gemm's frame), e.g.
  // 128×128×32 f16 over one warpgroup on wgmma m64n128k16:
  //   let warp = tx / 128 { let lane = tx % 128 {
  //     mma_fence
  //     for kk in unrolled(0 +: 2) { for mi in unrolled(0 +: 2) {
  //       mma "wgmma_m64n128k16_f16_f32" a=tile A_s[mi*64, kk*16], b=tile B_s[kk*16, 0], c=C_local[mi*64] } }
  //     mma_wait 0 } }
  // The fence orders the accumulator's earlier register accesses (its clearing) before the
  // unit's; the wait completes the gemm before anything reads C or overwrites A_s and B_s.
  // With `a_in_regs` (the RS form), A is read in place from a laid-out fragment's registers,
  // each K step's run of them (register_operand), the K steps unrolled; attention's P·V with P in
  // the m64n64 scores' layout and O on m64n128:
  //     mma "wgmma_m64n128k16_f16_f32" a=P[kk*8], b=tile V_shared[kk*16, 0], c=O_local[0]
  Stmt lower_async_gemm(const ir::Gemm& g, const Tiling& t, Buffer acc,
                        const RegisterA* a_in_regs = nullptr) {
    const MatrixUnit& u = *t.unit;
    const int64_t k_extent = *g.a.extents[g.a.extents.size() - 1].as_int();
    const std::optional<OperandMap> map =
        a_in_regs ? register_operand(a_in_regs->t, t, g) : std::optional<OperandMap>();
    return group_gemm(
        g, t, acc, [&](std::vector<Stmt>& body, const Expr& warp, const Expr&, const Buffer& c) {
          body.push_back(make_mma_sync(ir::MmaSync::Op::Fence, 0, g.loc));
          Var kk("kk"), mi("mi");
          Expr m0 = warp / t.wn * (t.bm / t.wm) + mi * u.m, n0 = warp % t.wn * (t.bn / t.wn);
          // B stored N×K (trans_b) is a transposed tile: wgmma's K-major B.
          ir::MmaOperand b{g.b.buffer, Expr(),
                           g.trans_b ? matrix_index(g.b, n0, kk * u.k) : matrix_index(g.b, kk * u.k, n0)};
          b.trans = g.trans_b;
          ir::MmaOperand a = map ? ir::MmaOperand{a_in_regs->regs, map->c_index(a_in_regs->t, mi, kk, 0)}
                                 : ir::MmaOperand{g.a.buffer, Expr(), matrix_index(g.a, m0, kk * u.k)};
          Stmt mma = make_mma(u.name, a, b, {c, mi * u.c_regs()}, g.loc);
          mma = make_for(mi, 0, t.mt, mma, ForKind::Unrolled, g.loc);
          const int64_t steps = k_extent / u.k;
          body.push_back(make_for(kk, 0, steps, mma,
                                  map || steps <= kMaxUnrolledKSteps ? ForKind::Unrolled : ForKind::Serial,
                                  g.loc));
          body.push_back(make_mma_sync(ir::MmaSync::Op::Wait, 0, g.loc));
        });
  }

  // gemm → per-thread FMA loops over the thread's SIMT elements (the classic SGEMM), e.g. 32×32
  // over 128 threads (an 8×16 thread grid, 4×2 elements a thread):
  //   if clear: for mi, ni { C_local[mi*2 + ni] = 0.0 }
  //   for k in serial(0 +: 16) {
  //     for mi in unrolled(0 +: 4) { a_regs[mi] = f32(As[tx / 16 + mi*8, k]) }
  //     for ni in unrolled(0 +: 2) { b_regs[ni] = f32(Bs[k, tx % 16 + ni*16]) }
  //     for mi, ni { C_local[mi*2 + ni] = fma(a_regs[mi], b_regs[ni], C_local[mi*2 + ni]) } }
  // Like mma, it rounds into the accumulator's dtype every K step (once per step: fma).
  Stmt lower_simt_gemm(const ir::Gemm& g, const Tiling& t, const Buffer& acc) {
    const int64_t k_extent = *g.a.extents[g.a.extents.size() - (g.trans_a ? 2 : 1)].as_int();
    const DType d = acc->dtype;
    Buffer ar = new_local("a_regs", t.mt, d, g.loc), br = new_local("b_regs", t.nt, d, g.loc);
    Stmt s = in_threads(t, g.loc, [&](const Expr& th) {
      std::vector<Stmt> body;
      if (g.clear_c)
        body.push_back(
            simt_elements(t, th, g.loc, [&](const Expr& idx, const Expr&, const Expr&, const Expr&) {
              return make_store(acc, {idx}, make_float(0, d), g.loc);
            }));
      Var k("k"), mi("mi"), ni("ni");
      Expr row = th / t.wn + mi * t.wm, col = th % t.wn + ni * t.wn;
      Stmt la = make_store(
          ar, {mi},
          cast(d, g.a.buffer.load(g.trans_a ? matrix_index(g.a, k, row) : matrix_index(g.a, row, k))), g.loc);
      Stmt lb = make_store(
          br, {ni},
          cast(d, g.b.buffer.load(g.trans_b ? matrix_index(g.b, col, k) : matrix_index(g.b, k, col))), g.loc);
      Expr idx = mi * t.nt + ni;
      Stmt step_mn = make_store(acc, {idx}, fma(ar.load({mi}), br.load({ni}), acc.load({idx})), g.loc);
      Stmt fmas = make_for(mi, 0, t.mt, make_for(ni, 0, t.nt, step_mn, ForKind::Unrolled, g.loc),
                           ForKind::Unrolled, g.loc);
      Stmt step = make_seq({make_for(mi, 0, t.mt, la, ForKind::Unrolled, g.loc),
                            make_for(ni, 0, t.nt, lb, ForKind::Unrolled, g.loc), fmas},
                           g.loc);
      body.push_back(make_for(k, 0, k_extent, step, ForKind::Serial, g.loc));
      return make_seq(std::move(body), g.loc);
    });
    return fenced(s, g.loc);
  }

  const TargetInfo& info_;
  Var tx_;
  int threads_ = 0;
  int counter_ = 0;
  std::map<BufferKey, Laid> laid_;
  std::map<BufferKey, Buffer> regs_;
  std::vector<Buffer> locals_;
};

}  // namespace

Function infer_fragment_layouts(const Function& f, const TargetInfo& info) {
  if (info.warp_size <= 1) return f;  // CPU targets keep tiles
  LayoutLowering lower(info);
  Function out = lower.mutate_function(f);
  out.body = simplify_stmt(out.body, RangeContext::for_function(out));
  return out;
}

}  // namespace tg
