// rmsnorm: Y[i, j] = X[i, j] / sqrt(mean(X[i, :]²) + eps) · w[j], any row length. A block owns
// block_M rows: where a row fits one tile (block_N ≥ N) it is read once, reduced, scaled and
// written; otherwise one pass over column tiles accumulates the sum of squares into a fragment, a
// second pass scales and stores. eps is a compile-time constant, eps_e6 · 1e-6.
#include <cmath>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

double eps_of(const Params& p) { return double(param(p, "eps_e6")) * 1e-6; }

Kernel build_rmsnorm(const Params& p, DType t) {
  require(t == f16 || t == bf16 || t == f32, "rmsnorm",
          "dtype " + dtype_name(t) + " is not supported; use f16, bf16 or f32");
  const int64_t M = param(p, "M"), N = param(p, "N");
  const Expr bm = param(p, "block_M"), bn = param(p, "block_N");
  const double eps = eps_of(p);
  KernelBuilder k("rmsnorm");
  auto X = k.tensor("X", {M, N}, t);
  auto W = k.tensor("W", {N}, t);
  auto Y = k.tensor("Y", {M, N}, t);
  const bool one_tile = param(p, "block_N") >= N;
  k.grid(ceildiv(M, bm)).threads(int(param(p, "threads"))).body([&](Expr bx) {
    auto Xf = k.fragment({bm, bn}, f32, "x");
    auto Ws = k.shared({bn}, t, "w");
    auto sum_sq = k.fragment({bm}, f32, "sum_sq");
    auto inv_rms = k.fragment({bm}, f32, "inv_rms");
    if (one_tile) {  // the rows fit one tile: read once, written once
      auto sq = k.fragment({bm, bn}, f32, "sq");
      k.copy(X.at(bx * bm, 0), Xf);
      k.copy(W.at(0), Ws);
      k.parallel(Xf, [&](Expr i, Expr j) { sq(i, j) = Xf(i, j) * Xf(i, j); });
      k.reduce_sum(sq, sum_sq, 1);
      k.parallel({bm}, [&](Expr i) { inv_rms(i) = rsqrt(sum_sq(i) / double(N) + eps); });
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = Xf(i, j) * inv_rms(i) * Ws(j); });
      k.copy(Xf, Y.at(bx * bm, 0));
      return;
    }
    k.clear(sum_sq);
    // Columns past N read as zero and add nothing to the sum of squares.
    k.serial(ceildiv(N, bn), [&](Expr jo) {
      k.copy(X.at(bx * bm, jo * bn), Xf);
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = Xf(i, j) * Xf(i, j); });
      k.reduce_sum(Xf, sum_sq, 1, /*clear=*/false);
    });
    k.parallel({bm}, [&](Expr i) { inv_rms(i) = rsqrt(sum_sq(i) / double(N) + eps); });
    k.serial(ceildiv(N, bn), [&](Expr jo) {
      k.copy(X.at(bx * bm, jo * bn), Xf);
      k.copy(W.at(jo * bn), Ws);
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = Xf(i, j) * inv_rms(i) * Ws(j); });
      k.copy(Xf, Y.at(bx * bm, jo * bn));
    });
  });
  return k.build();
}

Problem make_rmsnorm(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const int64_t M = param(p, "M"), N = param(p, "N");
  Problem pr;
  pr.args.push_back(random_input("X", {M, N}, t, rng));
  pr.args.push_back(random_input("W", {N}, t, rng));
  pr.args.push_back(poisoned_output("Y", {M, N}, t));
  if (!with_reference) return pr;
  std::vector<double> x = to_doubles(pr.args[0]), w = to_doubles(pr.args[1]), y(x.size());
  for (int64_t i = 0; i < M; ++i) {
    double sum_sq = 0;
    for (int64_t j = 0; j < N; ++j) sum_sq += x[size_t(i * N + j)] * x[size_t(i * N + j)];
    double inv_rms = 1.0 / std::sqrt(sum_sq / double(N) + eps_of(p));
    for (int64_t j = 0; j < N; ++j) y[size_t(i * N + j)] = x[size_t(i * N + j)] * inv_rms * w[size_t(j)];
  }
  pr.expected.push_back(std::move(y));
  return pr;
}

// |y| ≲ 1.7 for inputs in [-1, 1]; the error is the output rounding plus a few f32 roundings.
Tolerance rmsnorm_tolerance(const Params&, DType t) {
  if (t == f16) return {1e-3, 1e-2};
  if (t == bf16) return {8e-3, 3e-2};
  return {1e-6, 1e-4};
}

}  // namespace

Sample rmsnorm_sample() {
  Sample s;
  s.name = "rmsnorm";
  s.description = "RMS normalisation of each row with a weight vector: x / sqrt(mean(x²) + eps) · w";
  s.params = {{"M", 1024, "rows"},
              {"N", 4096, "row length"},
              {"block_M", 4, "rows per block"},
              {"block_N", 512, "columns per tile"},
              {"threads", 128, "threads per block", 1, 1024},
              {"eps_e6", 1, "eps in units of 1e-6 (compiled in as a constant)", 0}};
  s.dtypes = {f32, f16, bf16};
  s.build = build_rmsnorm;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_rmsnorm(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_rmsnorm(p, t, rng, false);
  };
  s.tolerance = rmsnorm_tolerance;
  s.tuned = whole_row_tiles;
  add_test_shape(s, "one tile per row", {{"M", 8}, {"N", 64}, {"block_M", 4}, {"block_N", 64}});
  add_test_shape(s, "ragged 11x90, tiles of 32", {{"M", 11}, {"N", 90}, {"block_M", 4}, {"block_N", 32}});
  // One row a block over several warps (GPU targets reduce it by shuffles, then shared scratch).
  add_test_shape(s, "a row over 4 warps",
                 {{"M", 3}, {"N", 1024}, {"block_M", 1}, {"block_N", 1024}, {"threads", 128}});
  add_test_shape(s, "ragged row over 8 warps",
                 {{"M", 3}, {"N", 1000}, {"block_M", 1}, {"block_N", 1024}, {"threads", 256}});
  add_test_shape(s, "large eps", {{"M", 3}, {"N", 7}, {"block_M", 2}, {"block_N", 16}, {"eps_e6", 500000}});
  add_test_shape(s, "ragged, default tiles", {{"M", 37}, {"N", 1100}}, true);
  s.bench_shapes = {{{"M", 4096}, {"N", 4096}}, {{"M", 4096}, {"N", 8192}}, {{"M", 16384}, {"N", 1024}}};
  s.flops = [](const Params&, DType) { return 0.0; };
  s.bytes = [](const Params& p, DType t) {
    return (2.0 * param(p, "M") * param(p, "N") + param(p, "N")) * element_bytes(t);
  };
  return s;
}

}  // namespace tg::samples::detail
