// The kernel fuzzer's generator: random, valid tile programs, built through the KernelBuilder.
//
// A program is a ProgramSpec (data, so the shrinker can cut it down) that build_program() turns
// into builder calls. Every program has the same frame, and the ops in between vary:
//
//   A: in[M, K], B: in[K, N], X: in[M, N], Y: out[M, N], W: f32|i32[16]    (global; M, N, K
//                                                                              constants or sizes)
//   grid(ceildiv(N, bn), ceildiv(M, bm)).threads(T).body(bx, by) {
//     As: shared in[bm, bk] (or [bk, bm] transposed)   Bs: shared in[bk, bn] (or [bn, bk])
//     Xs: shared in[bm, bn]  Xf: fragment in[bm, bn]  Cf: fragment acc[bm, bn]
//     Cs: shared acc[bm, bn] Rf: fragment acc[bm]
//     fill every tile          # the prologue: nothing reads memory no statement wrote
//     ops...                   # copies with ragged boxes, gemm, reduce, parallel element code,
//                              # per-thread code with lets, ifs, locals, barriers and atomics,
//                              # serial and pipelined K loops, block-uniform ifs
//     copy Cf -> Y[by*bm, bx*bn]
//   }
//
// Values stay small integers (inputs in [-4, 4], element code clamped to [-64, 64]) so every
// target computes them exactly in every dtype, and a difference is a bug, not rounding.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tilegen/builder.h"

namespace tg::fuzz {

/// The on-chip tiles of every program, by index into ProgramSpec-independent names.
enum class TileId { As, Bs, Xs, Xf, Cf, Cs, Rf };
/// The global tensors of every program.
enum class TensorId { A, B, X, Y, W };

enum class OpKind {
  CopyIn,      // X -> Xs|Xf|Cf|Cs at the block's tile, whole or a ragged box
  CopyOut,     // Xs|Xf|Cf|Cs -> Y at the block's tile
  CopyTile,    // between two [bm, bn] tiles (dtype converted)
  Fill,        // fill or clear a tile
  Gemm,        // copy A, B tiles (ko = 0) and gemm(As, Bs -> Cf) with the program's options
  KLoop,       // for ko in serial|pipelined(ceildiv(K, bk)): copy A, B tiles; gemm; body
  Reduce,      // reduce sum|max|min|absmax (Cf|Xf -> Rf, axis 1)
  Elementwise, // parallel over a [bm, bn] tile (or Rf): t(i, j) = clamp(expr)
  ThreadCode,  // per thread: for e: idx = e*T + tx; if idx < n: Xs|Cs[idx] = expr; locals
  Barrier,
  Atomic,      // per thread: atomic add|max|min into W (global) or Cs (shared)
  IfBlock,     // if (block-uniform condition) { body } else { else_body }
};

struct OpSpec {
  OpKind kind = OpKind::Barrier;
  int dst = 0, src = 0, other = 0;  // TileId values; meaning by kind
  int variant = 0;                  // kind-specific choice (box, reduce op, atomic op, condition)
  int value = 0;                    // a fill value, a box extent cut, a shift
  uint32_t expr_seed = 0;           // the element expression: drawn from this seed ...
  int expr_depth = 0;               // ... this deep (0: one leaf)
  int stages = 0;                   // KLoop: 0 serial, else pipelined with that many stages;
                                    // ThreadCode: 0 serial loops, 1 unrolled
  bool flag = false;                // Fill: clear; Gemm/KLoop: clear; ThreadCode: use a local
  std::vector<OpSpec> body, else_body;
};

struct ProgramSpec {
  uint64_t seed = 0;
  int threads = 128;
  int bm = 16, bn = 16, bk = 16;
  int M = 16, N = 16, K = 16;
  bool symbolic = false;  // M, N, K as k.size(...)
  DType in = f32, acc = f32, out = f32;
  bool trans_a = false, trans_b = false;
  // The one atomic operation into W (0 add, 1 max, 2 min): blocks run in any order, so mixing
  // operations on one element would make the result depend on it.
  int w_atomic = 0;
  // Layout annotations of As, Bs and Xs: 0 none, 1 swizzled (layout_param bits), 2 padded
  // (layout_param elements).
  int layout = 0, layout_param = 0;
  std::vector<OpSpec> ops;
};

struct GenOptions {
  int max_ops = 8;
  int max_depth = 3;  // element expression depth
};

/// A random program from `seed`; the same seed gives the same program.
ProgramSpec generate_program(uint64_t seed, const GenOptions& opt = {});

/// The program through the builder (which verifies it). A tg::Error here is a generator bug.
Kernel build_program(const ProgramSpec& p);

/// The launch's symbolic sizes (empty when the program has none).
std::map<std::string, int64_t> program_sizes(const ProgramSpec& p);

/// One line: seed, shapes, dtypes, ops by kind.
std::string describe(const ProgramSpec& p);

}  // namespace tg::fuzz
