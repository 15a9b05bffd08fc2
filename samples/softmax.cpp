// softmax: Y[i, :] = exp(X[i, :] - max) / sum, row-wise over an M×N matrix, any N. A block owns
// block_M rows. Where a row fits one tile (block_N ≥ N) the block reads it once into registers,
// reduces, scales and writes it once. Otherwise it walks the columns in block_N tiles three times: the max; exp(x - max) written
// to Y and summed; Y scaled by 1 / sum. exp runs once per element (an online max and sum would run
// it twice: once for the sum, again for the output); the second and third walks reread the block's
// own rows, which a cpu still holds in its caches. The max and the sum first accumulate per column
// of the tile (element-wise), and each row is reduced once at the end of its walk.
#include <algorithm>
#include <cmath>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

Kernel build_softmax(const Params& p, DType t) {
  require(t == f16 || t == bf16 || t == f32, "softmax",
          "dtype " + dtype_name(t) + " is not supported; use f16, bf16 or f32");
  const int64_t M = param(p, "M"), N = param(p, "N");
  const Expr bm = param(p, "block_M"), bn = param(p, "block_N");
  KernelBuilder k("softmax");
  auto X = k.tensor("X", {M, N}, t);
  auto Y = k.tensor("Y", {M, N}, t);
  const bool one_tile = param(p, "block_N") >= N;
  k.grid(ceildiv(M, bm)).threads(int(param(p, "threads"))).body([&](Expr bx) {
    auto Xf = k.fragment({bm, bn}, f32, "x");
    if (one_tile) {  // the rows fit one tile: read once, written once
      auto row_max = k.fragment({bm}, f32, "row_max");
      auto row_sum = k.fragment({bm}, f32, "row_sum");
      k.copy(X.at(bx * bm, 0), Xf);
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = select(j < N, Xf(i, j), lowest(f32)); });
      k.reduce_max(Xf, row_max, 1);
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = select(j < N, exp(Xf(i, j) - row_max(i)), 0.0f); });
      k.reduce_sum(Xf, row_sum, 1);
      k.parallel({bm}, [&](Expr i) { row_sum(i) = 1.0f / row_sum(i); });
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = Xf(i, j) * row_sum(i); });
      k.copy(Xf, Y.at(bx * bm, 0));
      return;
    }
    // Per column of the tile, the max (then the sum) over the tiles seen: element-wise updates,
    // so each row is reduced once per walk, not once per tile.
    auto acc = k.fragment({bm, bn}, f32, "acc");
    auto row_max = k.fragment({bm}, f32, "row_max");
    auto row_sum = k.fragment({bm}, f32, "row_sum");  // sum of exp(x - row_max), then its inverse
    // Columns past N were read as zero: keep them out of the max and the sum.
    auto in_row = [&](Expr jo, Expr j) { return jo * bn + j < N; };
    k.fill(acc, lowest(f32));
    k.serial(ceildiv(N, bn), [&](Expr jo) {
      k.copy(X.at(bx * bm, jo * bn), Xf);
      k.parallel(Xf, [&](Expr i, Expr j) {
        acc(i, j) = max(acc(i, j), select(in_row(jo, j), Xf(i, j), lowest(f32)));
      });
    });
    k.reduce_max(acc, row_max, 1);
    k.clear(acc);
    k.serial(ceildiv(N, bn), [&](Expr jo) {
      k.copy(X.at(bx * bm, jo * bn), Xf);
      k.parallel(Xf,
                 [&](Expr i, Expr j) { Xf(i, j) = select(in_row(jo, j), exp(Xf(i, j) - row_max(i)), 0.0f); });
      k.copy(Xf, Y.at(bx * bm, jo * bn));
      k.parallel(Xf, [&](Expr i, Expr j) { acc(i, j) = acc(i, j) + Xf(i, j); });
    });
    k.reduce_sum(acc, row_sum, 1);
    k.parallel({bm}, [&](Expr i) { row_sum(i) = 1.0f / row_sum(i); });
    // The block rereads its own rows of Y (in cache on a cpu: bm rows of N).
    k.serial(ceildiv(N, bn), [&](Expr jo) {
      k.copy(Y.at(bx * bm, jo * bn), Xf);
      k.parallel(Xf, [&](Expr i, Expr j) { Xf(i, j) = Xf(i, j) * row_sum(i); });
      k.copy(Xf, Y.at(bx * bm, jo * bn));
    });
  });
  return k.build();
}

Problem make_softmax(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const int64_t M = param(p, "M"), N = param(p, "N");
  Problem pr;
  pr.args.push_back(random_input("X", {M, N}, t, rng));
  pr.args.push_back(poisoned_output("Y", {M, N}, t));
  if (!with_reference) return pr;
  std::vector<double> x = to_doubles(pr.args[0]), y(x.size());
  for (int64_t i = 0; i < M; ++i) {
    const double* row = x.data() + i * N;
    double mx = *std::max_element(row, row + N), sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += std::exp(row[j] - mx);
    for (int64_t j = 0; j < N; ++j) y[size_t(i * N + j)] = std::exp(row[j] - mx) / sum;
  }
  pr.expected.push_back(std::move(y));
  return pr;
}

// Outputs lie in (0, 1]; the error is the output rounding, relative to the value.
Tolerance softmax_tolerance(const Params&, DType t) {
  if (t == f16) return {1e-5, 1e-2};
  if (t == bf16) return {1e-4, 3e-2};
  return {1e-7, 1e-4};
}

}  // namespace

Params whole_row_tiles(const TargetInfo& target, const Params& p, DType) {
  if (target.is_cpu || target.software || !target.lane_shuffle || target.warp_size <= 1) return {};
  int64_t width = 1;
  while (width < param(p, "N")) width *= 2;
  if (width > 16384) return {};
  const int64_t cap = std::min<int64_t>(1024, target.max_threads);
  const int64_t threads = std::clamp<int64_t>(width / 16, std::min<int64_t>(target.warp_size, cap), cap);
  return {{"block_M", 1}, {"block_N", width}, {"threads", threads}};
}

Sample softmax_sample() {
  Sample s;
  s.name = "softmax";
  s.description = "row-wise softmax of an M×N matrix, any N: max, exp and sum, scale, over column tiles";
  s.params = {{"M", 1024, "rows"},
              {"N", 2048, "row length"},
              {"block_M", 4, "rows per block"},
              {"block_N", 256, "columns per tile"},
              {"threads", 128, "threads per block", 1, 1024}};
  s.dtypes = {f32, f16, bf16};
  s.build = build_softmax;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_softmax(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_softmax(p, t, rng, false);
  };
  s.tolerance = softmax_tolerance;
  s.tuned = whole_row_tiles;
  add_test_shape(s, "one tile per row", {{"M", 8}, {"N", 32}, {"block_M", 4}, {"block_N", 32}});
  add_test_shape(s, "ragged 13x100, tiles of 32", {{"M", 13}, {"N", 100}, {"block_M", 4}, {"block_N", 32}});
  add_test_shape(s, "single column", {{"M", 5}, {"N", 1}, {"block_M", 2}, {"block_N", 16}});
  // One row a block over several warps (GPU targets reduce it by shuffles, then shared scratch).
  add_test_shape(s, "a row over 4 warps",
                 {{"M", 3}, {"N", 1024}, {"block_M", 1}, {"block_N", 1024}, {"threads", 128}});
  add_test_shape(s, "ragged row over 8 warps",
                 {{"M", 3}, {"N", 1000}, {"block_M", 1}, {"block_N", 1024}, {"threads", 256}});
  add_test_shape(s, "ragged rows in one tile", {{"M", 13}, {"N", 100}, {"block_M", 2}, {"block_N", 128}});
  add_test_shape(s, "ragged, default tiles", {{"M", 37}, {"N", 1000}}, true);
  add_test_shape(s, "vocabulary row", {{"M", 4}, {"N", 32000}}, true);
  s.bench_shapes = {{{"M", 4096}, {"N", 4096}}, {{"M", 8192}, {"N", 1024}}, {{"M", 1024}, {"N", 32000}}};
  s.flops = [](const Params&, DType) { return 0.0; };
  // One read and one write of X is the floor (what one tile a row does); walking tiles, the kernel
  // reads X twice and rewrites Y once more.
  s.bytes = [](const Params& p, DType t) { return 2.0 * param(p, "M") * param(p, "N") * element_bytes(t); };
  return s;
}

}  // namespace tg::samples::detail
