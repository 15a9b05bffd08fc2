// flash_attention: O = softmax(Q·Kᵀ / sqrt(D)) · V, forward, for Q, O of shape [B, H, S, D] and
// K, V of shape [B, HKV, S, D] (grouped-query attention: head h reads kv head h / (H / HKV)).
// A block owns block_M query rows of one head and streams K/V in block_N tiles with the online
// softmax of FlashAttention: a running row max m (of the raw scores) and sum l in fragments, the
// log2 domain (log2(e) / sqrt(D) folded into one scale applied inside exp2's argument, an fma a
// score, as FlashAttention-2 does), the output accumulator
// rescaled whenever m grows. The probabilities P are a fragment in the input dtype, cast from
// the scores and fed to the P·V gemm: on mma.sync they never leave registers. With `causal`, key
// positions after the query are masked and the K/V loop stops at the last tile any row of the
// block can see.
#include <algorithm>
#include <cmath>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

struct AttentionShape {
  int64_t B, H, HKV, S, D, bm, bn;
  bool causal;
  explicit AttentionShape(const Params& p)
      : B(param(p, "B")),
        H(param(p, "H")),
        HKV(param(p, "HKV")),
        S(param(p, "S")),
        D(param(p, "D")),
        bm(param(p, "block_M")),
        bn(param(p, "block_N")),
        causal(param(p, "causal") != 0) {}
  std::vector<int64_t> q_shape() const { return {B, H, S, D}; }
  std::vector<int64_t> kv_shape() const { return {B, HKV, S, D}; }
};

void check_attention(const AttentionShape& a, DType t) {
  require(t == f16 || t == bf16, "flash_attention",
          "dtype " + dtype_name(t) + " is not supported; use f16 or bf16");
  require(a.H % a.HKV == 0, "flash_attention",
          "H (" + std::to_string(a.H) + ") must be a multiple of HKV (" + std::to_string(a.HKV) +
              "): each kv head serves H / HKV query heads");
  require(a.D % 16 == 0 && a.D <= 256, "flash_attention",
          "head dimension D = " + std::to_string(a.D) +
              " is not supported; use a multiple of 16 up to 256 (64, 128)");
}

Kernel build_flash_attention(const Params& p, DType t) {
  const AttentionShape a(p);
  check_attention(a, t);
  const Expr bm = a.bm, bn = a.bn, D = a.D, S = a.S;
  const int64_t group = a.H / a.HKV;
  const double scale_log2 = 1.4426950408889634 / std::sqrt(double(a.D));  // log2(e) / sqrt(D)
  KernelBuilder k("flash_attention");
  auto Q = k.tensor("Q", {a.B, a.H, a.S, a.D}, t);
  auto K = k.tensor("K", {a.B, a.HKV, a.S, a.D}, t);
  auto V = k.tensor("V", {a.B, a.HKV, a.S, a.D}, t);
  auto O = k.tensor("O", {a.B, a.H, a.S, a.D}, t);
  k.grid(ceildiv(S, bm), a.H, a.B).threads(int(param(p, "threads"))).body([&](Expr bx, Expr h, Expr b) {
    auto Qs = k.shared({bm, D}, t, "Q_shared");
    auto Ks = k.shared({bn, D}, t, "K_shared");
    auto Vs = k.shared({bn, D}, t, "V_shared");
    auto Sf = k.fragment({bm, bn}, f32, "scores");
    auto P = k.fragment({bm, bn}, t, "P");  // the probabilities in the input dtype, for P·V
    auto Of = k.fragment({bm, D}, f32, "O_local");
    auto m = k.fragment({bm}, f32, "row_max");        // running max of the raw scores
    auto m_scaled = k.fragment({bm}, f32, "row_max_scaled");  // m · log2(e) / sqrt(D)
    auto rescale = k.fragment({bm}, f32, "rescale");  // previous max, then exp2(m_prev - m)
    auto l = k.fragment({bm}, f32, "row_sum");        // running sum of exp2(score - m)
    auto tile_sum = k.fragment({bm}, f32, "tile_sum");
    Expr kv_head = h / group;
    k.copy(Q.slice({b, h, bx * bm, 0}, {1, 1, bm, D}), Qs);
    k.clear(Of);
    k.clear(l);
    k.fill(m, lowest(f32));
    // Causal: rows of this block end at (bx + 1) * bm - 1, so later K/V tiles are fully masked.
    Expr kv_tiles = a.causal ? min(ceildiv(S, bn), ceildiv((bx + 1) * bm, bn)) : ceildiv(S, bn);
    k.pipelined(kv_tiles, int(param(p, "stages")), [&](Expr j) {
      k.copy(K.slice({b, kv_head, j * bn, 0}, {1, 1, bn, D}), Ks);
      k.copy(V.slice({b, kv_head, j * bn, 0}, {1, 1, bn, D}), Vs);
      k.gemm(Qs, Ks, Sf, GemmOptions{.trans_b = true, .clear = true});
      // Where no key of the tile is masked (range analysis proves it for S a multiple of block_N,
      // non-causal), the select folds away and this nest moves nothing.
      k.parallel(Sf, [&](Expr i, Expr c) {
        Expr row = bx * bm + i, col = j * bn + c;
        Expr masked = a.causal ? (col > row || col >= S) : (col >= S);
        Sf(i, c) = select(masked, -infinity(f32), Sf(i, c));
      });
      k.copy(m, rescale);
      k.reduce_max(Sf, m, 1, /*clear=*/false);
      // exp2(s·scale - m·scale): one fma a score, with m·scale once a row.
      k.parallel({bm}, [&](Expr i) { m_scaled(i) = m(i) * scale_log2; });
      k.parallel(Sf, [&](Expr i, Expr c) { Sf(i, c) = exp2(Sf(i, c) * scale_log2 - m_scaled(i)); });
      k.reduce_sum(Sf, tile_sum, 1);
      k.parallel({bm}, [&](Expr i) {
        rescale(i) = exp2((rescale(i) - m(i)) * scale_log2);
        l(i) = l(i) * rescale(i) + tile_sum(i);
      });
      k.parallel(Of, [&](Expr i, Expr d) { Of(i, d) = Of(i, d) * rescale(i); });
      k.copy(Sf, P);
      k.gemm(P, Vs, Of);
    });
    k.parallel(Of, [&](Expr i, Expr d) { Of(i, d) = Of(i, d) / l(i); });
    k.copy(Of, O.slice({b, h, bx * bm, 0}, {1, 1, bm, D}));
  });
  return k.build();
}

// O for one (batch, head): rows of q against kv rows, softmax in float64.
void attend(const double* q, const double* kk, const double* v, double* o, int64_t S, int64_t D,
            bool causal) {
  std::vector<double> p(static_cast<size_t>(S));
  const double scale = 1.0 / std::sqrt(double(D));
  for (int64_t i = 0; i < S; ++i) {
    const int64_t n = causal ? i + 1 : S;
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t d = 0; d < D; ++d) s += q[i * D + d] * kk[j * D + d];
      p[size_t(j)] = s * scale;
      mx = std::max(mx, p[size_t(j)]);
    }
    for (int64_t j = 0; j < n; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - mx));
    for (int64_t d = 0; d < D; ++d) {
      double acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += p[size_t(j)] * v[j * D + d];
      o[i * D + d] = acc / sum;
    }
  }
}

Problem make_flash_attention(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const AttentionShape a(p);
  check_attention(a, t);
  Problem pr;
  pr.args.push_back(random_input("Q", a.q_shape(), t, rng));
  pr.args.push_back(random_input("K", a.kv_shape(), t, rng));
  pr.args.push_back(random_input("V", a.kv_shape(), t, rng));
  pr.args.push_back(poisoned_output("O", a.q_shape(), t));
  if (!with_reference) return pr;
  std::vector<double> q = to_doubles(pr.args[0]), kk = to_doubles(pr.args[1]), v = to_doubles(pr.args[2]);
  std::vector<double> o(q.size());
  const int64_t head = a.S * a.D, group = a.H / a.HKV;
  for (int64_t b = 0; b < a.B; ++b)
    for (int64_t h = 0; h < a.H; ++h) {
      const int64_t qo = (b * a.H + h) * head, ko = (b * a.HKV + h / group) * head;
      attend(q.data() + qo, kk.data() + ko, v.data() + ko, o.data() + qo, a.S, a.D, a.causal);
    }
  pr.expected.push_back(std::move(o));
  return pr;
}

// Outputs are averages of V rows (|o| < 1); P is rounded to the input dtype before P·V, so the
// absolute floor is a fraction of that rounding.
Tolerance attention_tolerance(const Params&, DType t) {
  if (t == bf16) return {1.5e-2, 3e-2};
  return {2e-3, 1e-2};
}

Params attention_shape(int64_t B, int64_t H, int64_t HKV, int64_t S, int64_t D, bool causal, int64_t bm,
                       int64_t bn) {
  return {{"B", B}, {"H", H},           {"HKV", HKV},    {"S", S},
          {"D", D}, {"causal", causal}, {"block_M", bm}, {"block_N", bn}};
}

}  // namespace

Sample flash_attention_sample() {
  Sample s;
  s.name = "flash_attention";
  s.description = "attention forward with online softmax, grouped-query heads and an optional causal mask";
  s.params = {{"B", 4, "batch"},
              {"H", 32, "query heads"},
              {"HKV", 8, "key/value heads (H must be a multiple)"},
              {"S", 2048, "sequence length"},
              {"D", 128, "head dimension (a multiple of 16; 64 and 128 are the tuned ones)"},
              flag("causal", 0, "mask keys after the query position"),
              {"block_M", 64, "query rows per block"},
              {"block_N", 64, "key rows per K/V tile"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 2, "pipeline depth of the K/V loop"}};
  s.dtypes = {f16, bf16};
  s.build = build_flash_attention;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_flash_attention(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_flash_attention(p, t, rng, false);
  };
  s.tolerance = attention_tolerance;
  add_test_shape(s, "aligned S=32 D=64", attention_shape(1, 2, 2, 32, 64, false, 16, 16));
  add_test_shape(s, "ragged S=40, GQA 2:1", attention_shape(1, 2, 1, 40, 64, false, 16, 16));
  add_test_shape(s, "causal ragged S=37, GQA", attention_shape(2, 2, 1, 37, 64, true, 16, 16));
  add_test_shape(s, "causal D=128, block_N < block_M", attention_shape(1, 1, 1, 24, 128, true, 16, 8));
  add_test_shape(s, "ragged S=200 D=128 causal, default tiles",
                 attention_shape(1, 4, 2, 200, 128, true, 64, 64), true);
  add_test_shape(s, "ragged S=129 D=64, default tiles", attention_shape(2, 2, 2, 129, 64, false, 64, 64),
                 true);
  s.bench_shapes = {attention_shape(4, 32, 32, 4096, 128, false, 128, 64),
                    attention_shape(4, 32, 32, 4096, 128, true, 128, 64),
                    attention_shape(4, 32, 8, 4096, 128, true, 128, 64),
                    attention_shape(8, 16, 16, 2048, 64, false, 128, 64)};
  s.flops = [](const Params& p, DType) {
    double f = 4.0 * param(p, "B") * param(p, "H") * double(param(p, "S")) * param(p, "S") * param(p, "D");
    return param(p, "causal") ? f / 2 : f;
  };
  s.bytes = [](const Params& p, DType t) {
    double q = double(param(p, "B")) * param(p, "S") * param(p, "D") * element_bytes(t);
    return q * (2.0 * param(p, "H") + 2.0 * param(p, "HKV"));
  };
  return s;
}

}  // namespace tg::samples::detail
