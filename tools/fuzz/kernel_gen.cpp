// The generator: random ProgramSpecs, and their builder calls (see kernel_gen.h).
#include "kernel_gen.h"

#include <algorithm>
#include <array>
#include <functional>
#include <sstream>

namespace tg::fuzz {

namespace {

using Rng = std::mt19937_64;

int pick(Rng& r, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(r); }
bool chance(Rng& r, double p) { return std::bernoulli_distribution(p)(r); }
template <class T, std::size_t N> T pick_of(Rng& r, const std::array<T, N>& xs) {
  return xs[std::size_t(pick(r, 0, int(N) - 1))];
}

constexpr std::array<int, 4> kTileSizes = {4, 8, 16, 32};
constexpr std::array<int, 4> kThreads = {32, 64, 128, 256};
// Tiles of shape [bm, bn] that element code, copies and fills work on.
constexpr std::array<TileId, 4> kSquareTiles = {TileId::Xs, TileId::Xf, TileId::Cf, TileId::Cs};
constexpr std::array<TileId, 2> kSharedTiles = {TileId::Xs, TileId::Cs};

OpSpec random_op(Rng& r, const ProgramSpec& p, const GenOptions& opt, int nesting);

std::vector<OpSpec> random_ops(Rng& r, const ProgramSpec& p, const GenOptions& opt, int n, int nesting) {
  std::vector<OpSpec> ops;
  for (int i = 0; i < n; ++i) ops.push_back(random_op(r, p, opt, nesting));
  return ops;
}

OpSpec random_op(Rng& r, const ProgramSpec& p, const GenOptions& opt, int nesting) {
  const bool gemm_ok = p.in.is_float();
  OpSpec o;
  o.expr_seed = uint32_t(r());
  o.expr_depth = pick(r, 0, opt.max_depth);
  o.flag = chance(r, 0.5);
  o.dst = int(pick_of(r, kSquareTiles));
  o.src = int(pick_of(r, kSquareTiles));
  o.other = int(pick_of(r, kSquareTiles));
  o.variant = pick(r, 0, 3);
  o.value = pick(r, -3, 3);
  for (;;) {
    int k = pick(r, 0, 11);
    o.kind = OpKind(k);
    if ((o.kind == OpKind::Gemm || o.kind == OpKind::KLoop) && !gemm_ok) continue;
    if ((o.kind == OpKind::IfBlock || o.kind == OpKind::KLoop) && nesting > 0) continue;
    break;
  }
  switch (o.kind) {
    case OpKind::CopyIn: o.variant = pick(r, 0, 2); break;  // 0 whole tile, 1 ragged box, 2 shifted
    case OpKind::CopyTile:
      while (o.src == o.dst) o.src = int(pick_of(r, kSquareTiles));
      break;
    case OpKind::Fill:
      if (chance(r, 0.2)) o.dst = int(TileId::Rf);
      break;
    case OpKind::Reduce: o.src = chance(r, 0.5) ? int(TileId::Cf) : int(TileId::Xf); break;
    case OpKind::Elementwise:
      if (chance(r, 0.15)) o.dst = int(TileId::Rf);
      while (o.other == o.dst) o.other = int(pick_of(r, kSquareTiles));
      break;
    case OpKind::ThreadCode:
    case OpKind::Atomic:
      o.dst = int(pick_of(r, kSharedTiles));
      o.src = int(pick_of(r, kSharedTiles));
      o.variant = pick(r, 0, 3);
      o.stages = pick(r, 0, 1);
      break;
    case OpKind::KLoop:
      o.stages = chance(r, 0.6) ? pick(r, 1, 4) : 0;
      o.body = random_ops(r, p, opt, pick(r, 0, 2), nesting + 1);
      break;
    case OpKind::IfBlock:
      o.body = random_ops(r, p, opt, pick(r, 1, 3), nesting + 1);
      if (chance(r, 0.5)) o.else_body = random_ops(r, p, opt, pick(r, 1, 2), nesting + 1);
      break;
    default: break;
  }
  return o;
}

}  // namespace

ProgramSpec generate_program(uint64_t seed, const GenOptions& opt) {
  Rng r(seed * 0x9E3779B97F4A7C15ull + 1);
  ProgramSpec p;
  p.seed = seed;
  p.threads = pick_of(r, kThreads);
  p.bm = pick_of(r, kTileSizes);
  p.bn = pick_of(r, kTileSizes);
  p.bk = pick_of(r, kTileSizes);
  // Ragged more often than not: a partial last tile in each dimension.
  p.M = chance(r, 0.3) ? p.bm * pick(r, 1, 2) : pick(r, 1, 2 * p.bm + p.bm / 2);
  p.N = chance(r, 0.3) ? p.bn * pick(r, 1, 2) : pick(r, 1, 2 * p.bn);
  p.K = chance(r, 0.3) ? p.bk * pick(r, 1, 3) : pick(r, 1, 3 * p.bk);
  p.symbolic = chance(r, 0.3);
  constexpr std::array<DType, 5> ins = {f32, f16, bf16, f16, i32};
  p.in = pick_of(r, ins);
  p.acc = p.in.is_float() ? f32 : i32;
  p.out = chance(r, 0.5) ? p.in : p.acc;
  p.trans_a = chance(r, 0.3);
  p.trans_b = chance(r, 0.3);
  p.w_atomic = pick(r, 0, 2);
  p.layout = chance(r, 0.7) ? 0 : pick(r, 1, 2);
  p.layout_param = p.layout == 1 ? pick(r, 1, 3) : pick(r, 1, 4);
  p.ops = random_ops(r, p, opt, pick(r, 1, opt.max_ops), 0);
  return p;
}

std::map<std::string, int64_t> program_sizes(const ProgramSpec& p) {
  if (!p.symbolic) return {};
  return {{"M", p.M}, {"N", p.N}, {"K", p.K}};
}

namespace {

const char* kind_name(OpKind k) {
  static const char* names[] = {"copy_in", "copy_out", "copy_tile", "fill",       "gemm",    "kloop",
                                "reduce",  "parallel", "thread",    "barrier",    "atomic",  "if"};
  return names[int(k)];
}

void describe_ops(std::ostringstream& s, const std::vector<OpSpec>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    s << (i ? " " : "") << kind_name(ops[i].kind);
    if (!ops[i].body.empty() || !ops[i].else_body.empty()) {
      s << "{";
      describe_ops(s, ops[i].body);
      if (!ops[i].else_body.empty()) s << " | ", describe_ops(s, ops[i].else_body);
      s << "}";
    }
  }
}

}  // namespace

std::string describe(const ProgramSpec& p) {
  std::ostringstream s;
  s << "seed " << p.seed << ": " << p.in.name() << "->" << p.acc.name() << "->" << p.out.name() << " MNK "
    << p.M << "x" << p.N << "x" << p.K << (p.symbolic ? " (symbolic)" : "") << " tile " << p.bm << "x" << p.bn
    << "x" << p.bk << " threads " << p.threads << (p.trans_a ? " tA" : "") << (p.trans_b ? " tB" : "")
    << (p.layout == 1 ? " swizzle" : p.layout == 2 ? " pad" : "") << (p.layout ? std::to_string(p.layout_param) : "")
    << " w-atomic " << p.w_atomic << ": ";
  describe_ops(s, p.ops);
  return s.str();
}

}  // namespace tg::fuzz
