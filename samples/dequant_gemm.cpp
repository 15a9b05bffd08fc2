// dequant_gemm: C[M, N] = A[M, K] · dequant(W)ᵀ, the weight-only int4 GEMM of LLM inference.
// Layout (as GPTQ/AWQ-style kernels keep it, K contiguous per output channel):
//   W       int4  [N, K]          two values a byte, element k of row n at flat index n*K + k
//   scales  f16   [N, K / group]  one scale per output channel and group of `group` K values
//   dequant(W)[n, k] = W[n, k] · scales[n, k / group], rounded to the activation dtype
// The kernel copies the packed tile to shared memory, widens it element-wise with k.parallel into
// an f16 tile (the IR's int4 dtype does the unpacking), and multiplies with gemm(trans_b).
// M = 1..16 is the decode case (one block row), larger M the prefill case.
#include "sample_support.h"

namespace tg::samples::detail {
namespace {

struct DequantShape {
  int64_t M, N, K, group, bm, bn, bk;
  explicit DequantShape(const Params& p)
      : M(param(p, "M")),
        N(param(p, "N")),
        K(param(p, "K")),
        group(param(p, "group")),
        bm(param(p, "block_M")),
        bn(param(p, "block_N")),
        bk(param(p, "block_K")) {}
};

void check_dequant(const DequantShape& s, DType t) {
  require(t == f16 || t == bf16, "dequant_gemm",
          "dtype " + dtype_name(t) + " is not supported; use f16 or bf16");
  require(s.K % s.group == 0, "dequant_gemm",
          "K (" + std::to_string(s.K) + ") must be a multiple of group (" + std::to_string(s.group) + ")");
  require(s.group % s.bk == 0, "dequant_gemm",
          "group (" + std::to_string(s.group) + ") must be a multiple of block_K (" + std::to_string(s.bk) +
              ") so that a K tile needs one scale per channel");
}

Kernel build_dequant_gemm(const Params& p, DType t) {
  const DequantShape g(p);
  check_dequant(g, t);
  const Expr bm = g.bm, bn = g.bn, bk = g.bk;
  KernelBuilder k("dequant_gemm");
  auto A = k.tensor("A", {g.M, g.K}, t);
  auto W = k.tensor("W", {g.N, g.K}, int4);
  auto Scales = k.tensor("scales", {g.N, g.K / g.group}, t);
  auto C = k.tensor("C", {g.M, g.N}, t);
  k.grid(ceildiv(g.N, bn), ceildiv(g.M, bm)).threads(int(param(p, "threads"))).body([&](Expr bx, Expr by) {
    auto As = k.shared({bm, bk}, t, "A_shared");
    auto Wq = k.shared({bn, bk}, int4, "W_packed");
    auto Ss = k.shared({bn}, t, "scale_shared");
    auto Wd = k.shared({bn, bk}, t, "W_dequant");
    auto Cf = k.fragment({bm, bn}, f32, "C_local");
    k.clear(Cf);
    k.pipelined(g.K / bk, int(param(p, "stages")), [&](Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(W.at(bx * bn, ko * bk), Wq);
      k.copy(Scales.slice({bx * bn, ko * bk / g.group}, {bn, 1}), Ss);
      k.parallel(Wd, [&](Expr n, Expr kk) { Wd(n, kk) = cast(t, Wq(n, kk)) * Ss(n); });
      k.gemm(As, Wd, Cf, GemmOptions{.trans_b = true});
    });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

Problem make_dequant_gemm(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const DequantShape g(p);
  check_dequant(g, t);
  Problem pr;
  pr.args.push_back(random_input("A", {g.M, g.K}, t, rng));
  pr.args.push_back(random_input("W", {g.N, g.K}, int4, rng, -8, 7));
  pr.args.push_back(random_input("scales", {g.N, g.K / g.group}, t, rng));
  pr.args.push_back(poisoned_output("C", {g.M, g.N}, t));
  if (!with_reference) return pr;
  const HostArray &W = pr.args[1], &Sc = pr.args[2];
  std::vector<double> w(size_t(g.N * g.K));  // dequant(W), N×K: already the Bᵀ layout
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t kk = 0; kk < g.K; ++kk)
      w[size_t(n * g.K + kk)] =
          round_float_to(t, W.get(n * g.K + kk) * Sc.get(n * (g.K / g.group) + kk / g.group));
  pr.expected.push_back(matmul_reference(to_doubles(pr.args[0]), w, g.M, g.N, g.K));
  return pr;
}

Params dequant_shape(int64_t M, int64_t N, int64_t K, int64_t group, int64_t bm, int64_t bn, int64_t bk) {
  return {{"M", M}, {"N", N}, {"K", K}, {"group", group}, {"block_M", bm}, {"block_N", bn}, {"block_K", bk}};
}

}  // namespace

Sample dequant_gemm_sample() {
  Sample s;
  s.name = "dequant_gemm";
  s.description = "C = A·dequant(W)ᵀ with W packed int4 [N, K] and per-group scales [N, K/group]";
  s.params = {{"M", 16, "rows of A and C (tokens): 1..16 decode, more prefill"},
              {"N", 4096, "output channels"},
              {"K", 4096, "input channels (a multiple of group)"},
              {"group", 128, "K values sharing one scale (a multiple of block_K)"},
              {"block_M", 16, "rows of a block's tile"},
              {"block_N", 128, "columns of a block's tile"},
              {"block_K", 64, "K step of the pipelined loop"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 2, "pipeline depth of the K loop"}};
  s.dtypes = {f16, bf16};
  s.build = build_dequant_gemm;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_dequant_gemm(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_dequant_gemm(p, t, rng, false);
  };
  s.tolerance = [](const Params& p, DType t) {
    Tolerance tol = accumulation_tolerance(t, param(p, "K"));
    tol.abs *= 8;  // weights up to 8 in magnitude
    return tol;
  };
  add_test_shape(s, "decode M=1, ragged N", dequant_shape(1, 40, 64, 32, 16, 32, 32));
  add_test_shape(s, "decode M=5, two groups a tile row", dequant_shape(5, 64, 128, 64, 16, 32, 32));
  add_test_shape(s, "prefill ragged M=37 N=50", dequant_shape(37, 50, 128, 128, 32, 32, 64));
  add_test_shape(s, "decode M=16, default tiles", dequant_shape(16, 300, 512, 128, 16, 128, 64), true);
  add_test_shape(s, "prefill ragged, default tiles", dequant_shape(100, 200, 256, 128, 64, 128, 64), true);
  s.bench_shapes = {
      dequant_shape(1, 4096, 4096, 128, 16, 128, 128), dequant_shape(16, 4096, 4096, 128, 16, 128, 128),
      dequant_shape(1, 11008, 4096, 128, 16, 128, 128), dequant_shape(1, 4096, 11008, 128, 16, 128, 128),
      dequant_shape(4096, 4096, 4096, 128, 128, 128, 64)};
  s.flops = [](const Params& p, DType) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); };
  s.bytes = [](const Params& p, DType t) {
    double M = param(p, "M"), N = param(p, "N"), K = param(p, "K"), G = param(p, "group");
    return (M * K + N * K / G + M * N) * element_bytes(t) + N * K * 0.5;
  };
  return s;
}

}  // namespace tg::samples::detail
