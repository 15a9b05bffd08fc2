// gemm_relu: C = max(A·B, 0), the quickstart kernel of docs/language.md as written there — a tiled GEMM with a
// ReLU epilogue applied to the f32 fragment before the copy out.
#include <algorithm>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

Kernel matmul_relu(int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk, DType t) {
  tg::KernelBuilder k("gemm_relu");
  auto A = k.tensor("A", {M, K}, t);
  auto B = k.tensor("B", {K, N}, t);
  auto C = k.tensor("C", {M, N}, t);
  k.grid(tg::ceildiv(N, bn), tg::ceildiv(M, bm)).threads(128).body([&](tg::Expr bx, tg::Expr by) {
    auto As = k.shared({bm, bk}, t);
    auto Bs = k.shared({bk, bn}, t);
    auto Cf = k.fragment({bm, bn}, tg::f32);
    k.clear(Cf);
    k.pipelined(tg::ceildiv(K, bk), /*stages=*/3, [&](tg::Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](tg::Expr i, tg::Expr j) { Cf(i, j) = tg::max(Cf(i, j), 0.0f); });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

Kernel build_gemm_relu(const Params& p, DType t) {
  require(t == f16 || t == bf16 || t == f32, "gemm_relu",
          "dtype " + dtype_name(t) + " is not supported; use f16, bf16 or f32");
  return matmul_relu(param(p, "M"), param(p, "N"), param(p, "K"), param(p, "block_M"), param(p, "block_N"),
                     param(p, "block_K"), t);
}

Problem make_gemm_relu(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  Problem pr;
  pr.args.push_back(random_input("A", {M, K}, t, rng));
  pr.args.push_back(random_input("B", {K, N}, t, rng));
  pr.args.push_back(poisoned_output("C", {M, N}, t));
  if (!with_reference) return pr;
  std::vector<double> b = to_doubles(pr.args[1]), b_t(b.size());
  for (int64_t kk = 0; kk < K; ++kk)
    for (int64_t n = 0; n < N; ++n) b_t[size_t(n * K + kk)] = b[size_t(kk * N + n)];
  std::vector<double> c = matmul_reference(to_doubles(pr.args[0]), b_t, M, N, K);
  for (double& v : c) v = std::max(v, 0.0);
  pr.expected.push_back(std::move(c));
  return pr;
}

}  // namespace

Sample gemm_relu_sample() {
  Sample s;
  s.name = "gemm_relu";
  s.description = "C = max(A·B, 0): the quickstart kernel, a tiled GEMM with a ReLU epilogue on the fragment";
  s.params = {{"M", 1024, "rows of C"},
              {"N", 1024, "columns of C"},
              {"K", 1024, "reduction length"},
              {"block_M", 128, "rows of a block's tile"},
              {"block_N", 128, "columns of a block's tile"},
              {"block_K", 32, "K step of the pipelined loop"}};
  s.dtypes = {f16, bf16, f32};
  s.build = build_gemm_relu;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_gemm_relu(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_gemm_relu(p, t, rng, false);
  };
  s.tolerance = [](const Params& p, DType t) { return accumulation_tolerance(t, param(p, "K")); };
  const Params small_tiles = {{"block_M", 32}, {"block_N", 32}, {"block_K", 16}};
  auto with_tiles = [&](int64_t M, int64_t N, int64_t K) {
    Params out = small_tiles;
    out["M"] = M, out["N"] = N, out["K"] = K;
    return out;
  };
  add_test_shape(s, "aligned 64x64x32", with_tiles(64, 64, 32));
  add_test_shape(s, "ragged 45x39x50", with_tiles(45, 39, 50));
  add_test_shape(s, "ragged, default tiles", {{"M", 150}, {"N", 140}, {"K", 70}}, true);
  s.bench_shapes = {{{"M", 4096}, {"N", 4096}, {"K", 4096}}, {{"M", 8192}, {"N", 8192}, {"K", 8192}}};
  s.flops = [](const Params& p, DType) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); };
  s.tuned = gemm_tiles;
  s.bytes = [](const Params& p, DType t) {
    double M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
    return (M * K + K * N + M * N) * element_bytes(t);
  };
  return s;
}

}  // namespace tg::samples::detail
