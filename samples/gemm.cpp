// gemm: C = op(A) · op(B), op a transpose when trans_A / trans_B is set. Inputs f16, bf16 or f32,
// accumulated in f32, stored in the input dtype. The tiled kernel every target must do well:
// shared A/B tiles, an f32 fragment for C, a pipelined K loop, one copy out.
#include "sample_support.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::samples::detail {
namespace {

struct GemmShape {
  int64_t M, N, K, bm, bn, bk, threads, stages;
  bool trans_a, trans_b;
  explicit GemmShape(const Params& p)
      : M(param(p, "M")),
        N(param(p, "N")),
        K(param(p, "K")),
        bm(param(p, "block_M")),
        bn(param(p, "block_N")),
        bk(param(p, "block_K")),
        threads(param(p, "threads")),
        stages(param(p, "stages")),
        trans_a(param(p, "trans_A") != 0),
        trans_b(param(p, "trans_B") != 0) {}
  // Tensor shapes follow the transposes: A is K×M when trans_A, B is N×K when trans_B.
  std::vector<int64_t> a_shape() const {
    return trans_a ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
  }
  std::vector<int64_t> b_shape() const {
    return trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  }
};

std::vector<Expr> exprs(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

Kernel build_gemm(const Params& p, DType t) {
  const GemmShape g(p);
  require(t == f16 || t == bf16 || t == f32, "gemm",
          "dtype " + dtype_name(t) + " is not supported; use f16, bf16 or f32");
  const Expr bm = g.bm, bn = g.bn, bk = g.bk;
  KernelBuilder k("gemm");
  auto A = k.tensor("A", exprs(g.a_shape()), t);
  auto B = k.tensor("B", exprs(g.b_shape()), t);
  auto C = k.tensor("C", {g.M, g.N}, t);
  k.grid(ceildiv(g.N, bn), ceildiv(g.M, bm)).threads(int(g.threads)).body([&](Expr bx, Expr by) {
    auto As = g.trans_a ? k.shared({bk, bm}, t, "A_shared") : k.shared({bm, bk}, t, "A_shared");
    auto Bs = g.trans_b ? k.shared({bn, bk}, t, "B_shared") : k.shared({bk, bn}, t, "B_shared");
    auto Cf = k.fragment({bm, bn}, f32, "C_local");
    k.clear(Cf);
    k.pipelined(ceildiv(g.K, bk), int(g.stages), [&](Expr ko) {
      k.copy(g.trans_a ? A.at(ko * bk, by * bm) : A.at(by * bm, ko * bk), As);
      k.copy(g.trans_b ? B.at(bx * bn, ko * bk) : B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf, GemmOptions{.trans_a = g.trans_a, .trans_b = g.trans_b});
    });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

// op(A) as M×K and op(B)ᵀ as N×K, the layouts matmul_reference takes.
std::vector<double> canonical(const HostArray& x, int64_t rows, int64_t cols, bool transposed) {
  std::vector<double> v = to_doubles(x);
  if (!transposed) return v;
  std::vector<double> out(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(r * cols + c)] = v[size_t(c * rows + r)];
  return out;
}

Problem make_gemm(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const GemmShape g(p);
  Problem pr;
  pr.args.push_back(random_input("A", g.a_shape(), t, rng));
  pr.args.push_back(random_input("B", g.b_shape(), t, rng));
  pr.args.push_back(poisoned_output("C", {g.M, g.N}, t));
  if (with_reference) {
    std::vector<double> a = canonical(pr.args[0], g.M, g.K, g.trans_a);
    std::vector<double> b_t = canonical(pr.args[1], g.N, g.K, !g.trans_b);
    pr.expected.push_back(matmul_reference(a, b_t, g.M, g.N, g.K));
  }
  return pr;
}

void add_gemm_shapes(Sample& s) {
  const Params small_tiles = {{"block_M", 32}, {"block_N", 32}, {"block_K", 16}};
  auto shape = [&](Params extra) {
    Params out = small_tiles;
    for (auto& [k, v] : extra) out[k] = v;
    return out;
  };
  add_test_shape(s, "aligned 64x64x64", shape({{"M", 64}, {"N", 64}, {"K", 64}}));
  add_test_shape(s, "ragged 50x37x45", shape({{"M", 50}, {"N", 37}, {"K", 45}}));
  add_test_shape(s, "ragged trans_A", shape({{"M", 45}, {"N", 33}, {"K", 40}, {"trans_A", 1}}));
  add_test_shape(s, "ragged trans_B", shape({{"M", 33}, {"N", 45}, {"K", 40}, {"trans_B", 1}}));
  add_test_shape(s, "ragged trans_A trans_B",
                 shape({{"M", 40}, {"N", 35}, {"K", 47}, {"trans_A", 1}, {"trans_B", 1}}));
  add_test_shape(s, "tiny 1x1x1", shape({{"M", 1}, {"N", 1}, {"K", 1}}));
  add_test_shape(s, "ragged, default tiles", {{"M", 200}, {"N", 150}, {"K", 100}}, true);
  add_test_shape(s, "ragged trans_B, default tiles", {{"M", 130}, {"N", 257}, {"K", 72}, {"trans_B", 1}},
                 true);
  add_test_shape(s, "aligned 256^3, default tiles", {{"M", 256}, {"N", 256}, {"K", 256}}, true);
}

}  // namespace

// Tiles a device wants beside the defaults (the user's own params still win).
// On the cpu the default 128×128×32 (sized for a GPU's shared memory) pays a tile copy and a pass
// over the C fragment every 32 k steps. Measured there (PERF.md, CPU): 96×128×128 below 2048,
// 192×256×64 from 2048 (L2-sized blocks); bf16 in AMX tiles wants K steps of 256, as a C tile is
// then loaded and stored once per 8 tile products instead of 2.
// Where a warpgroup unit (wgmma) takes the dtype, K steps of 64: one 128-byte swizzled row of f16
// per tile row, and half the waits per K of 32. Measured on an H100 at 18f6100 (PERF.md, GEMM
// f16 4096³, 128×128, 3 stages): 0.297 ms against 0.343 ms with K steps of 32. Where bulk copies
// (TMA) fill them too, `bulk_stages` stages: measured on an H100 (2026-12-07, PERF.md), f16
// 4096³ 128×128×64 with TMA 0.2672 ms at 4 stages against 0.2846 at 3.
Params gemm_tiles_with(const TargetInfo& target, const Params& p, DType t, int64_t warpgroup_block_k,
                       int64_t bulk_stages) {
  if (!target.is_cpu) {
    for (const std::string& name : target.matrix_units) {
      const MatrixUnit* u = find_matrix_unit(name);
      if (!u || u->family != "wgmma" || u->a_type != t) continue;
      if (target.bulk_copy) return {{"block_K", warpgroup_block_k}, {"stages", bulk_stages}};
      return {{"block_K", warpgroup_block_k}};
    }
    return {};
  }
  const bool big = std::min(param(p, "M"), param(p, "N")) >= 2048;
  Params tiles = big ? Params{{"block_M", 192}, {"block_N", 256}, {"block_K", 64}}
                     : Params{{"block_M", 96}, {"block_N", 128}, {"block_K", 128}};
  for (const std::string& name : target.matrix_units) {
    const MatrixUnit* u = find_matrix_unit(name);
    if (u && u->family == "amx" && u->a_type == t) tiles["block_K"] = 256;
  }
  return tiles;
}

Sample gemm_sample() {
  Sample s;
  s.name = "gemm";
  s.description = "C = op(A)·op(B) with optional transposes; f32 accumulation, output in the input dtype";
  s.params = {{"M", 1024, "rows of C"},
              {"N", 1024, "columns of C"},
              {"K", 1024, "reduction length"},
              {"block_M", 128, "rows of a block's tile"},
              {"block_N", 128, "columns of a block's tile"},
              {"block_K", 32, "K step of the pipelined loop"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 3, "pipeline depth of the K loop"},
              flag("trans_A", 0, "A is stored K×M"),
              flag("trans_B", 0, "B is stored N×K")};
  s.dtypes = {f16, bf16, f32};
  s.build = build_gemm;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) { return make_gemm(p, t, rng, true); };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) { return make_gemm(p, t, rng, false); };
  s.tolerance = [](const Params& p, DType t) { return accumulation_tolerance(t, param(p, "K")); };
  add_gemm_shapes(s);
  s.bench_shapes = {{{"M", 4096}, {"N", 4096}, {"K", 4096}},
                    {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"trans_B", 1}},
                    {{"M", 8192}, {"N", 8192}, {"K", 8192}},
                    {{"M", 2048}, {"N", 2048}, {"K", 2048}}};
  s.flops = [](const Params& p, DType) { return 2.0 * param(p, "M") * param(p, "N") * param(p, "K"); };
  s.tuned = gemm_tiles;
  s.bytes = [](const Params& p, DType t) {
    double M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
    return (M * K + K * N + M * N) * element_bytes(t);
  };
  return s;
}

}  // namespace tg::samples::detail
