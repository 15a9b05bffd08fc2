// ProgramSpec -> builder calls (see kernel_gen.h for the frame every program shares).
#include <array>
#include <functional>
#include <random>

#include "kernel_gen.h"

namespace tg::fuzz {

namespace {

constexpr int kWSize = 16;      // elements of the atomics' global tensor W
constexpr int64_t kClamp = 64;  // element code stays in [-kClamp, kClamp]

/// What element code may read: the element being written, another tile's, a block-uniform
/// index, a reduced row value. Each leaf is an Expr of any dtype; the generator casts.
using Leaf = std::function<Expr(int)>;
constexpr int kLeaves = 6;  // leaf 5: the scalar parameter alpha

struct Builder {
  KernelBuilder& k;
  const ProgramSpec& p;
  Tensor A, B, X, Y, W;
  Expr M, N, K, bx, by, alpha;
  std::array<Tensor, 7> tiles;
  int names = 0;

  Tensor& tile(int id) { return tiles[std::size_t(id)]; }
  Expr lit(DType t, int64_t v) const { return t.is_float() ? make_float(double(v), t) : make_int(v, t); }
  Expr clamp(DType t, Expr e) const { return max(min(e, lit(t, kClamp)), lit(t, -kClamp)); }
  std::string name(const char* base) { return base + std::to_string(names++); }

  Expr expr(std::mt19937& r, int depth, DType t, const Leaf& leaf) const {
    auto pick = [&](int n) { return int(r() % uint32_t(n)); };
    if (depth <= 0) {
      int which = pick(kLeaves + 1);
      if (which == kLeaves) return lit(t, pick(7) - 3);
      if (which == kLeaves - 1) return cast(t, alpha);
      return cast(t, leaf(which));
    }
    Expr a = expr(r, depth - 1, t, leaf), b = expr(r, depth - 1, t, leaf);
    switch (pick(t.is_int() ? 9 : 7)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return max(a, b);
      case 3: return min(a, b);
      case 4: return select(a > b, a, b - lit(t, 1));
      case 5: return a * lit(t, pick(2) ? 2 : -1);
      case 6: return abs(a) + b;
      case 7: return a / lit(t, pick(3) + 1);
      default: return a % lit(t, pick(3) + 2);
    }
  }
  Expr element(const OpSpec& o, DType t, const Leaf& leaf) const {
    std::mt19937 r(o.expr_seed);
    return clamp(t, expr(r, o.expr_depth, t, leaf));
  }

  /// A box inside a [bm, bn] tile, smaller where the sizes allow: rows cut by |value|, a column.
  std::pair<int, int> box(const OpSpec& o) const {
    return {std::max(1, p.bm - std::abs(o.value)), std::max(1, p.bn - 1)};
  }
  void declare();
  void allocate();
  void ops(const std::vector<OpSpec>& list);
  void op(const OpSpec& o);
  void copy_in(const OpSpec& o);
  void gemm_tiles(Expr ko);
  void reduce(const OpSpec& o);
  void elementwise(const OpSpec& o);
  void thread_code(const OpSpec& o);
  void atomic(const OpSpec& o);
  void if_block(const OpSpec& o);
  void k_loop(const OpSpec& o);
};

void Builder::declare() {
  if (p.symbolic) {
    M = k.size("M"), N = k.size("N"), K = k.size("K");
  } else {
    M = Expr(p.M), N = Expr(p.N), K = Expr(p.K);
  }
  A = p.trans_a ? k.tensor("A", {K, M}, p.in) : k.tensor("A", {M, K}, p.in);
  B = p.trans_b ? k.tensor("B", {N, K}, p.in) : k.tensor("B", {K, N}, p.in);
  X = k.tensor("X", {M, N}, p.in);
  Y = k.tensor("Y", {M, N}, p.out);
  W = k.tensor("W", {kWSize}, p.acc);
  alpha = k.scalar("alpha", p.acc);
}

void Builder::allocate() {
  auto sq = [&](int a, int b) { return std::vector<Expr>{Expr(a), Expr(b)}; };
  tile(int(TileId::As)) = k.shared(p.trans_a ? sq(p.bk, p.bm) : sq(p.bm, p.bk), p.in, "As");
  tile(int(TileId::Bs)) = k.shared(p.trans_b ? sq(p.bn, p.bk) : sq(p.bk, p.bn), p.in, "Bs");
  tile(int(TileId::Xs)) = k.shared(sq(p.bm, p.bn), p.in, "Xs");
  tile(int(TileId::Xf)) = k.fragment(sq(p.bm, p.bn), p.in, "Xf");
  tile(int(TileId::Cf)) = k.fragment(sq(p.bm, p.bn), p.acc, "Cf");
  tile(int(TileId::Cs)) = k.shared(sq(p.bm, p.bn), p.acc, "Cs");
  tile(int(TileId::Rf)) = k.fragment({Expr(p.bm)}, p.acc, "Rf");
  if (p.layout != 0) {
    Layout l{p.layout == 1 ? Layout::Kind::Swizzle : Layout::Kind::Padded, p.layout_param, {}};
    for (TileId t : {TileId::As, TileId::Bs, TileId::Xs}) k.annotate_layout(tile(int(t)), l);
  }
  for (Tensor& t : tiles) k.fill(t, lit(t.dtype(), 1));  // nothing reads unwritten memory
}

void Builder::ops(const std::vector<OpSpec>& list) {
  for (const OpSpec& o : list) op(o);
}

void Builder::op(const OpSpec& o) {
  switch (o.kind) {
    case OpKind::CopyIn: copy_in(o); return;
    case OpKind::CopyOut:
      if (o.variant == 1) {
        auto [er, ec] = box(o);
        k.copy(tile(o.dst).slice({Expr(0), Expr(0)}, {Expr(er), Expr(ec)}),
               Y.slice({by * p.bm, bx * p.bn}, {Expr(er), Expr(ec)}));
      } else {
        k.copy(tile(o.dst), Y.at(by * p.bm, bx * p.bn));
      }
      return;
    case OpKind::CopyTile: k.copy(tile(o.src), tile(o.dst)); return;
    case OpKind::Fill:
      if (o.flag)
        k.clear(tile(o.dst));
      else
        k.fill(tile(o.dst), lit(tile(o.dst).dtype(), o.value));
      return;
    case OpKind::Gemm:
      gemm_tiles(Expr(0));
      if (o.variant == 3 && p.bk == p.bn)  // a fragment as the A operand (registers where the unit allows)
        k.gemm(tile(int(TileId::Xf)), tile(int(TileId::Bs)), tile(int(TileId::Cf)),
               {.trans_b = p.trans_b, .clear = o.flag});
      else
        k.gemm(tile(int(TileId::As)), tile(int(TileId::Bs)), tile(int(TileId::Cf)),
               {.trans_a = p.trans_a, .trans_b = p.trans_b, .clear = o.flag});
      return;
    case OpKind::KLoop: k_loop(o); return;
    case OpKind::Reduce: reduce(o); return;
    case OpKind::Elementwise: elementwise(o); return;
    case OpKind::ThreadCode: thread_code(o); return;
    case OpKind::Barrier: k.barrier(); return;
    case OpKind::Atomic: atomic(o); return;
    case OpKind::IfBlock: if_block(o); return;
  }
}

// Whole tile at the block's offset, a ragged box (smaller on both sides), or the tile shifted
// down a row (so it crosses into the next block's rows and past M).
void Builder::copy_in(const OpSpec& o) {
  Tensor& t = tile(o.dst);
  if (o.variant == 1 || o.variant == 3) {
    auto [er, ec] = box(o);
    const int row0 = o.variant == 3 && p.bm > 1 ? 1 : 0;
    er = std::min(er, p.bm - row0);
    k.copy(X.slice({by * p.bm, bx * p.bn}, {Expr(er), Expr(ec)}),
           t.slice({Expr(row0), Expr(0)}, {Expr(er), Expr(ec)}));
  } else if (o.variant == 2) {
    k.copy(X.at(by * p.bm + 1, bx * p.bn), t);
  } else {
    k.copy(X.at(by * p.bm, bx * p.bn), t);
  }
}

void Builder::gemm_tiles(Expr ko) {
  Tensor &As = tile(int(TileId::As)), &Bs = tile(int(TileId::Bs));
  if (p.trans_a)
    k.copy(A.at(ko * p.bk, by * p.bm), As);
  else
    k.copy(A.at(by * p.bm, ko * p.bk), As);
  if (p.trans_b)
    k.copy(B.at(bx * p.bn, ko * p.bk), Bs);
  else
    k.copy(B.at(ko * p.bk, bx * p.bn), Bs);
}

void Builder::k_loop(const OpSpec& o) {
  Tensor& Cf = tile(int(TileId::Cf));
  if (o.flag) k.clear(Cf);
  auto step = [&](Expr ko) {
    gemm_tiles(ko);
    k.gemm(tile(int(TileId::As)), tile(int(TileId::Bs)), Cf, {.trans_a = p.trans_a, .trans_b = p.trans_b});
    ops(o.body);
  };
  Expr n = ceildiv(K, Expr(p.bk));
  if (o.stages > 0)
    k.pipelined(n, o.stages, step);
  else
    k.serial(n, step);
}

void Builder::reduce(const OpSpec& o) {
  Tensor &src = tile(o.src), &Rf = tile(int(TileId::Rf));
  switch (o.variant) {
    case 0: k.reduce_sum(src, Rf, 1, o.flag); return;
    case 1: k.reduce_max(src, Rf, 1, o.flag); return;
    case 2: k.reduce_min(src, Rf, 1, o.flag); return;
    default: k.reduce_absmax(src, Rf, 1, o.flag); return;
  }
}

void Builder::elementwise(const OpSpec& o) {
  Tensor &d = tile(o.dst), &other = tile(o.other), &Rf = tile(int(TileId::Rf));
  if (o.dst == int(TileId::Rf)) {
    Expr j0(std::abs(o.value) % p.bn);
    k.parallel({Expr(p.bm)}, [&](Expr i) {
      Leaf leaf = [&](int w) -> Expr {
        switch (w) {
          case 0: return Rf(i);
          case 1: return other(i, j0);
          case 2: return i;
          case 3: return by;
          default: return Rf(i);
        }
      };
      Rf(i) = element(o, Rf.dtype(), leaf);
    });
    return;
  }
  auto [rows, cols] = o.variant == 1 ? box(o) : std::pair<int, int>{p.bm, p.bn};
  k.parallel({Expr(rows), Expr(cols)}, [&](Expr i, Expr j) {
    Leaf leaf = [&](int w) -> Expr {
      switch (w) {
        case 0: return d(i, j);
        case 1: return other(i, j);
        case 2: return i;
        case 3: return j;
        default: return Rf(i);
      }
    };
    d(i, j) = element(o, d.dtype(), leaf);
  });
}

// Each thread owns elements idx = e*T + tx of a shared tile; it may read another shared tile at
// a permuted index (which needs that tile complete: a barrier, or a collective, before), and
// stage values through a local buffer first.
void Builder::thread_code(const OpSpec& o) {
  Tensor &d = tile(o.dst), &s = tile(o.src);
  const int n = p.bm * p.bn, per = (n + p.threads - 1) / p.threads, T = p.threads;
  const int variant = o.src == o.dst ? 0 : o.variant;  // reading its own tile: only its own elements
  Expr tx = k.thread_index();
  auto src_index = [&](Expr idx) -> Expr {
    switch (variant) {
      case 1: return Expr(n - 1) - idx;
      case 2: return (idx + 1) % n;
      default: return idx;
    }
  };
  auto loop = [&](const std::function<void(Expr)>& body) {
    if (o.stages == 1)
      k.unrolled(Expr(per), body);
    else
      k.serial(Expr(per), body);
  };
  Tensor L;
  if (o.flag) {
    L = k.local({Expr(per)}, p.acc, name("L"));
    loop([&](Expr e) {
      Expr idx = k.let(name("i"), e * T + tx);
      k.if_(idx < n, [&] {
        Expr si = src_index(idx);
        L(e) = cast(p.acc, s(si / p.bn, si % p.bn));
      });
    });
  }
  loop([&](Expr e) {
    Expr idx = k.let(name("i"), e * T + tx);
    k.if_(idx < n, [&] {
      Expr si = src_index(idx);
      Leaf leaf = [&](int w) -> Expr {
        switch (w) {
          case 0: return d(idx / p.bn, idx % p.bn);
          case 1: return s(si / p.bn, si % p.bn);
          case 2: return tx % 8;
          case 3: return L.buffer() ? Expr(L(e)) : Expr(e);
          default: return bx;
        }
      };
      d(idx / p.bn, idx % p.bn) = element(o, d.dtype(), leaf);
    });
  });
}

// Atomics into W (global, every block's threads) or into Cs's first row (shared).
void Builder::atomic(const OpSpec& o) {
  Tensor& s = tile(o.src);
  Expr tx = k.thread_index();
  const int n = p.bm * p.bn;
  Expr si = tx % n;
  Expr v = cast(p.acc, s(si / p.bn, si % p.bn));
  if (o.variant >= 2 && o.src != int(TileId::Cs)) {
    // The oracle's race detection does not track atomics: a plain read of Cs by another thread
    // in the same barrier interval would race unseen (tests/fuzz/README.md, known failures).
    k.barrier();
    k.atomic_add(tile(int(TileId::Cs))(Expr(0), tx % p.bn), v);
    k.barrier();
    return;
  }
  ElementRef w = W(tx % kWSize);
  switch (p.w_atomic) {
    case 0: k.atomic_add(w, v); return;
    case 1: k.atomic_max(w, v); return;
    default: k.atomic_min(w, v); return;
  }
}

void Builder::if_block(const OpSpec& o) {
  Expr cond;
  switch (o.variant) {
    case 0: cond = bx == 0; break;
    case 1: cond = by < 1; break;
    case 2: cond = (bx + by) % 2 == 0; break;
    default: {
      Expr row = k.let(name("row"), by * p.bm);
      cond = row + p.bm <= M;  // a full tile of rows
    }
  }
  auto chain = k.if_(cond, [&] { ops(o.body); });
  if (!o.else_body.empty()) chain.else_([&] { ops(o.else_body); });
}

}  // namespace

Kernel build_program(const ProgramSpec& p) {
  KernelBuilder k("fuzz_" + std::to_string(p.seed));
  Builder b{k, p, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 0};
  b.declare();
  k.grid(ceildiv(b.N, Expr(p.bn)), ceildiv(b.M, Expr(p.bm))).threads(p.threads).body([&](Expr bx, Expr by) {
    b.bx = bx, b.by = by;
    b.allocate();
    b.ops(p.ops);
    k.copy(b.tile(int(TileId::Cf)), b.Y.at(by * p.bm, bx * p.bn));
  });
  return k.build();
}

}  // namespace tg::fuzz
