// gemm_softmax: Y = softmax(A·B) along each row, the fused GEMM epilogue with row statistics
// (attention scores of short keys, a mixture-of-experts router). A block owns block_M whole rows
// of the product (N ≤ block_N): the K loop accumulates them in a fragment, then the row max, the
// exponentials, the row sum and the scaling run on that fragment, with no trip through memory.
// Columns past N hold zero products; they are masked to -inf before the max.
#include <algorithm>
#include <cmath>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

Kernel build_gemm_softmax(const Params& p, DType t) {
  require(t == f16 || t == bf16, "gemm_softmax", "dtype " + dtype_name(t) + " is not supported; use f16 or bf16");
  const int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  const int64_t bm = param(p, "block_M"), bn = param(p, "block_N"), bk = param(p, "block_K");
  require(N <= bn, "gemm_softmax",
          "N = " + std::to_string(N) + " is more than block_N = " + std::to_string(bn) +
              ": a block holds whole rows; set block_N to at least N");
  KernelBuilder k("gemm_softmax");
  auto A = k.tensor("A", {M, K}, t);
  auto B = k.tensor("B", {K, N}, t);
  auto Y = k.tensor("Y", {M, N}, t);
  k.grid(ceildiv(M, bm)).threads(int(param(p, "threads"))).body([&](Expr bx) {
    auto As = k.shared({bm, bk}, t, "A_shared");
    auto Bs = k.shared({bk, bn}, t, "B_shared");
    auto Cf = k.fragment({bm, bn}, f32, "scores");
    auto mx = k.fragment({bm}, f32, "row_max");
    auto sum = k.fragment({bm}, f32, "row_sum");
    k.clear(Cf);
    k.pipelined(ceildiv(K, bk), int(param(p, "stages")), [&](Expr ko) {
      k.copy(A.at(bx * bm, ko * bk), As);
      k.copy(B.at(ko * bk, 0), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = select(j < N, Cf(i, j), -infinity(f32)); });
    k.reduce_max(Cf, mx, 1);
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = exp(Cf(i, j) - mx(i)); });
    k.reduce_sum(Cf, sum, 1);
    k.parallel({bm}, [&](Expr i) { sum(i) = 1.0f / sum(i); });
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = Cf(i, j) * sum(i); });
    k.copy(Cf, Y.at(bx * bm, 0));
  });
  return k.build();
}

Problem make_gemm_softmax(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  Problem pr;
  pr.args.push_back(random_input("A", {M, K}, t, rng));
  pr.args.push_back(random_input("B", {K, N}, t, rng));
  pr.args.push_back(poisoned_output("Y", {M, N}, t));
  if (!with_reference) return pr;
  std::vector<double> b = to_doubles(pr.args[1]), b_t(b.size());
  for (int64_t kk = 0; kk < K; ++kk)
    for (int64_t n = 0; n < N; ++n) b_t[size_t(n * K + kk)] = b[size_t(kk * N + n)];
  std::vector<double> y = matmul_reference(to_doubles(pr.args[0]), b_t, M, N, K);
  for (int64_t i = 0; i < M; ++i) {
    double* row = y.data() + i * N;
    const double mx = *std::max_element(row, row + N);
    double sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += (row[j] = std::exp(row[j] - mx));
    for (int64_t j = 0; j < N; ++j) row[j] /= sum;
  }
  pr.expected.push_back(std::move(y));
  return pr;
}

}  // namespace

Sample gemm_softmax_sample() {
  Sample s;
  s.name = "gemm_softmax";
  s.description = "Y = row softmax of A·B, fused: the product's rows stay in the accumulator for max, exp, sum, scale";
  s.params = {{"M", 4096, "rows"},
              {"N", 128, "columns (at most block_N: a block holds whole rows)"},
              {"K", 1024, "reduction length"},
              {"block_M", 64, "rows per block"},
              {"block_N", 128, "columns of the block's tile (at least N)"},
              {"block_K", 32, "K step of the pipelined loop"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 2, "pipeline depth of the K loop"}};
  s.dtypes = {f16, bf16};
  s.build = build_gemm_softmax;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) { return make_gemm_softmax(p, t, rng, true); };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) { return make_gemm_softmax(p, t, rng, false); };
  // Outputs lie in (0, 1]: the f32 products' error moves each exponent by K·eps(f32)-ish, far
  // below the output's rounding to the input dtype, relative to the value.
  s.tolerance = [](const Params&, DType t) { return t == bf16 ? Tolerance{1e-4, 3e-2} : Tolerance{1e-5, 1e-2}; };
  auto shape = [](int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk) {
    return Params{{"M", M}, {"N", N}, {"K", K}, {"block_M", bm}, {"block_N", bn}, {"block_K", bk}};
  };
  add_test_shape(s, "aligned 32x64x32", shape(32, 64, 32, 16, 64, 16));
  add_test_shape(s, "ragged 50x37x45", shape(50, 37, 45, 16, 64, 16));
  add_test_shape(s, "ragged 130x100x72, default tiles", {{"M", 130}, {"N", 100}, {"K", 72}}, true);
  add_test_shape(s, "N=1 ragged 33x1x20", shape(33, 1, 20, 16, 32, 16));
  s.bench_shapes = {{{"M", 16384}, {"N", 128}, {"K", 4096}}};
  s.flops = [](const Params& p, DType) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); };
  s.bytes = [](const Params& p, DType t) {
    double M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
    return (M * K + K * N + M * N) * element_bytes(t);
  };
  return s;
}

}  // namespace tg::samples::detail
