// fp8_gemm: C = scale_a · scale_b · A · Bᵀ, the per-tensor-scaled fp8 GEMM of inference and training
// (torch._scaled_mm's contract). A is M×K and B is N×K, both K-major as fp8 tensor-core units read
// them, in e4m3 or e5m2; scale_a and scale_b are one f32 each (device tensors, as a model's amax
// step leaves them); the f32 accumulator is scaled once, in registers, and stored in bf16 (or f16
// with out_f16=1).
#include "sample_support.h"

namespace tg::samples::detail {
namespace {

struct Fp8Shape {
  int64_t M, N, K, bm, bn, bk, threads, stages;
  DType out;
  explicit Fp8Shape(const Params& p)
      : M(param(p, "M")),
        N(param(p, "N")),
        K(param(p, "K")),
        bm(param(p, "block_M")),
        bn(param(p, "block_N")),
        bk(param(p, "block_K")),
        threads(param(p, "threads")),
        stages(param(p, "stages")),
        out(param(p, "out_f16") ? f16 : bf16) {}
};

void check_fp8(DType t) {
  require(t == fp8_e4m3 || t == fp8_e5m2, "fp8_gemm",
          "dtype " + dtype_name(t) + " is not supported; use e4m3 or e5m2 (gemm takes f16, bf16 and f32)");
}

Kernel build_fp8_gemm(const Params& p, DType t) {
  check_fp8(t);
  const Fp8Shape g(p);
  const Expr bm = g.bm, bn = g.bn, bk = g.bk;
  KernelBuilder k("fp8_gemm");
  auto A = k.tensor("A", {g.M, g.K}, t);
  auto B = k.tensor("B", {g.N, g.K}, t);
  auto scale_a = k.tensor("scale_a", {1}, f32);
  auto scale_b = k.tensor("scale_b", {1}, f32);
  auto C = k.tensor("C", {g.M, g.N}, g.out);
  k.grid(ceildiv(g.N, bn), ceildiv(g.M, bm)).threads(int(g.threads)).body([&](Expr bx, Expr by) {
    auto As = k.shared({bm, bk}, t, "A_shared");
    auto Bs = k.shared({bn, bk}, t, "B_shared");
    auto Cf = k.fragment({bm, bn}, f32, "C_local");
    k.clear(Cf);
    k.pipelined(ceildiv(g.K, bk), int(g.stages), [&](Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(bx * bn, ko * bk), Bs);
      k.gemm(As, Bs, Cf, GemmOptions{.trans_b = true});
    });
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = Cf(i, j) * (scale_a(0) * scale_b(0)); });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

Problem make_fp8_gemm(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  check_fp8(t);
  const Fp8Shape g(p);
  Problem pr;
  // Inputs over several binades (fp8's few mantissa bits make any value in range exact after
  // rounding); scales away from 1 so that a kernel dropping one is caught.
  pr.args.push_back(random_input("A", {g.M, g.K}, t, rng, -4.0, 4.0));
  pr.args.push_back(random_input("B", {g.N, g.K}, t, rng, -4.0, 4.0));
  pr.args.push_back(random_input("scale_a", {1}, f32, rng, 0.25, 0.75));
  pr.args.push_back(random_input("scale_b", {1}, f32, rng, 1.25, 2.0));
  pr.args.push_back(poisoned_output("C", {g.M, g.N}, g.out));
  if (with_reference) {
    std::vector<double> c = matmul_reference(to_doubles(pr.args[0]), to_doubles(pr.args[1]), g.M, g.N, g.K);
    const double scale = pr.args[2].get(0) * pr.args[3].get(0);
    for (double& v : c) v *= scale;
    pr.expected.push_back(std::move(c));
  }
  return pr;
}

void add_fp8_shapes(Sample& s) {
  auto shape = [](int64_t M, int64_t N, int64_t K) {
    return Params{{"M", M}, {"N", N}, {"K", K}, {"block_M", 32}, {"block_N", 32}, {"block_K", 32}};
  };
  add_test_shape(s, "aligned 64x64x64", shape(64, 64, 64));
  add_test_shape(s, "ragged 50x37x45", shape(50, 37, 45));
  Params f16_out = shape(33, 40, 70);
  f16_out["out_f16"] = 1;
  add_test_shape(s, "ragged 33x40x70, f16 out", f16_out);
  add_test_shape(s, "tiny 1x1x1", shape(1, 1, 1));
  add_test_shape(s, "ragged 200x150x136, default tiles", {{"M", 200}, {"N", 150}, {"K", 136}}, true);
  // One default-tile case (gemm's own cover the aligned 256³): software GPUs run these at their
  // full tiles, and CI's time is short.
}

}  // namespace

// Tiles as gemm's (gemm_tiles_with), with K steps of 128 where a warpgroup unit takes the dtype (wgmma
// k32 for e4m3/e5m2): one 128-byte swizzled row of fp8 per tile row, the f16 gemm's 64-wide steps
// in bytes. The default 32 is one step of mma.sync m16n8k32 (sm_89+) and MFMA 16x16x32: two
// unrolled steps of 128×128 took ptxas to 255 registers and a spill on sm_90, one stays within
// them. 3 stages with TMA too: 4 measured slower on an H100 (8192³ with roles, 2026-12-07: 2.247 ms
// against 2.181). On the cpu fp8 is widened to f32, so the f32 gemm's blocking holds.
Sample fp8_gemm_sample() {
  Sample s;
  s.name = "fp8_gemm";
  s.description =
      "C = scale_a·scale_b·A·Bᵀ: fp8 (e4m3, e5m2) inputs K-major, f32 accumulation, bf16 or f16 out";
  s.params = {{"M", 1024, "rows of C"},
              {"N", 1024, "columns of C"},
              {"K", 1024, "reduction length"},
              {"block_M", 128, "rows of a block's tile"},
              {"block_N", 128, "columns of a block's tile"},
              {"block_K", 32, "K step of the pipelined loop"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 3, "pipeline depth of the K loop"},
              flag("out_f16", 0, "C in f16 instead of bf16")};
  s.dtypes = {fp8_e4m3, fp8_e5m2};
  s.build = build_fp8_gemm;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_fp8_gemm(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_fp8_gemm(p, t, rng, false);
  };
  // The products of fp8 values are exact in f32 and the sum is f32's: the error is the output's
  // rounding (bf16 or f16), with gemm's floor for sums that cancel (values up to 4·4·scale here).
  s.tolerance = [](const Params& p, DType) {
    Tolerance tol = accumulation_tolerance(param(p, "out_f16") ? f16 : bf16, param(p, "K"));
    tol.abs *= 16.0;
    return tol;
  };
  add_fp8_shapes(s);
  s.bench_shapes = {{{"M", 8192}, {"N", 8192}, {"K", 8192}}, {{"M", 4096}, {"N", 4096}, {"K", 4096}}};
  s.flops = [](const Params& p, DType) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); };
  s.tuned = [](const TargetInfo& target, const Params& p, DType t) {
    return gemm_tiles_with(target, p, t, 128, 3);
  };
  s.bytes = [](const Params& p, DType) {
    double M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
    return M * K + K * N + M * N * 2.0;
  };
  return s;
}

}  // namespace tg::samples::detail
