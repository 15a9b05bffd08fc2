// conv2d: 2-D convolution as an implicit GEMM, im2col done inside the kernel.
// Layouts:
//   input   [N, H, W, C]            NHWC
//   filter  [KH * KW * C, F]        the [KH, KW, C, F] filter (HWIO) in row-major order, viewed
//                                   as the GEMM's K×F operand: row (kh * KW + kw) * C + c
//   output  [N, OH, OW, F]          OH = (H + 2·pad − KH) / stride + 1, likewise OW
// GEMM view: M = N·OH·OW output pixels, K = KH·KW·C, N = F. The A tile is gathered with
// k.parallel straight from the input (select gives the zero padding); the filter tile is a plain
// copy; the epilogue scatters the fragment back to NHWC with a bounds check.
#include <algorithm>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

struct ConvShape {
  int64_t N, H, W, C, F, KH, KW, stride, pad, OH, OW;
  explicit ConvShape(const Params& p)
      : N(param(p, "N")),
        H(param(p, "H")),
        W(param(p, "W")),
        C(param(p, "C")),
        F(param(p, "F")),
        KH(param(p, "KH")),
        KW(param(p, "KW")),
        stride(param(p, "stride")),
        pad(param(p, "pad")),
        OH((H + 2 * pad - KH) / stride + 1),
        OW((W + 2 * pad - KW) / stride + 1) {}
  int64_t gemm_m() const { return N * OH * OW; }
  int64_t gemm_k() const { return KH * KW * C; }
};

void check_conv(const ConvShape& s, DType t) {
  require(t == f16 || t == bf16 || t == f32, "conv2d",
          "dtype " + dtype_name(t) + " is not supported; use f16, bf16 or f32");
  require(s.H + 2 * s.pad >= s.KH && s.W + 2 * s.pad >= s.KW, "conv2d",
          "the filter (" + std::to_string(s.KH) + "x" + std::to_string(s.KW) +
              ") is larger than the padded input (" + std::to_string(s.H + 2 * s.pad) + "x" +
              std::to_string(s.W + 2 * s.pad) + "); raise pad or H/W");
}

Expr clamp(Expr v, Expr lo, Expr hi) { return min(max(v, lo), hi); }

Kernel build_conv2d(const Params& p, DType t) {
  const ConvShape s(p);
  check_conv(s, t);
  const Expr bm = param(p, "block_M"), bn = param(p, "block_N"), bk = param(p, "block_K");
  const int64_t GM = s.gemm_m(), GK = s.gemm_k();
  KernelBuilder k("conv2d");
  auto X = k.tensor("input", {s.N, s.H, s.W, s.C}, t);
  auto Wt = k.tensor("filter", {GK, s.F}, t);
  auto Y = k.tensor("output", {s.N, s.OH, s.OW, s.F}, t);
  k.grid(ceildiv(s.F, bn), ceildiv(GM, bm)).threads(int(param(p, "threads"))).body([&](Expr bx, Expr by) {
    auto As = k.shared({bm, bk}, t, "patches");
    auto Bs = k.shared({bk, bn}, t, "filter_shared");
    auto Cf = k.fragment({bm, bn}, f32, "C_local");
    k.clear(Cf);
    k.pipelined(ceildiv(GK, bk), int(param(p, "stages")), [&](Expr ko) {
      // im2col: row m of the tile is output pixel (n, oh, ow), column kk is filter tap (kh, kw, c).
      k.parallel(As, [&](Expr i, Expr j) {
        Expr m = k.let("m", by * bm + i), kk = k.let("kk", ko * bk + j);
        Expr n = m / (s.OH * s.OW), oh = m / s.OW % s.OH, ow = m % s.OW;
        Expr kh = kk / (s.KW * s.C), kw = kk / s.C % s.KW, c = kk % s.C;
        Expr ih = k.let("ih", oh * s.stride - s.pad + kh), iw = k.let("iw", ow * s.stride - s.pad + kw);
        Expr inside = m < GM && kk < GK && ih >= 0 && ih < s.H && iw >= 0 && iw < s.W;
        // The load is clamped into the input so it is always legal; select zeroes the padding.
        Expr pixel = X(min(n, s.N - 1), clamp(ih, 0, s.H - 1), clamp(iw, 0, s.W - 1), c);
        As(i, j) = select(inside, pixel, 0.0);
      });
      k.copy(Wt.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](Expr i, Expr j) {
      Expr m = k.let("m", by * bm + i), f = bx * bn + j;
      k.if_(m < GM && f < s.F,
            [&] { Y(m / (s.OH * s.OW), m / s.OW % s.OH, m % s.OW, f) = cast(t, Cf(i, j)); });
    });
  });
  return k.build();
}

std::vector<double> conv_reference(const ConvShape& s, const std::vector<double>& x,
                                   const std::vector<double>& w) {
  std::vector<double> y(size_t(s.gemm_m() * s.F));
  for (int64_t m = 0; m < s.gemm_m(); ++m) {
    const int64_t n = m / (s.OH * s.OW), oh = m / s.OW % s.OH, ow = m % s.OW;
    double* out = y.data() + m * s.F;
    for (int64_t kh = 0; kh < s.KH; ++kh)
      for (int64_t kw = 0; kw < s.KW; ++kw) {
        const int64_t ih = oh * s.stride - s.pad + kh, iw = ow * s.stride - s.pad + kw;
        if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
        for (int64_t c = 0; c < s.C; ++c) {
          const double xv = x[size_t(((n * s.H + ih) * s.W + iw) * s.C + c)];
          const double* wr = w.data() + ((kh * s.KW + kw) * s.C + c) * s.F;
          for (int64_t f = 0; f < s.F; ++f) out[f] += xv * wr[f];
        }
      }
  }
  return y;
}

Problem make_conv2d(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const ConvShape s(p);
  check_conv(s, t);
  Problem pr;
  pr.args.push_back(random_input("input", {s.N, s.H, s.W, s.C}, t, rng));
  pr.args.push_back(random_input("filter", {s.gemm_k(), s.F}, t, rng));
  pr.args.push_back(poisoned_output("output", {s.N, s.OH, s.OW, s.F}, t));
  if (with_reference)
    pr.expected.push_back(conv_reference(s, to_doubles(pr.args[0]), to_doubles(pr.args[1])));
  return pr;
}

Params conv_shape(int64_t N, int64_t H, int64_t W, int64_t C, int64_t F, int64_t KH, int64_t KW,
                  int64_t stride, int64_t pad) {
  return {{"N", N},   {"H", H},   {"W", W},           {"C", C},    {"F", F},
          {"KH", KH}, {"KW", KW}, {"stride", stride}, {"pad", pad}};
}

Params with_tiles(Params p, int64_t bm, int64_t bn, int64_t bk) {
  p["block_M"] = bm, p["block_N"] = bn, p["block_K"] = bk;
  return p;
}

}  // namespace

Sample conv2d_sample() {
  Sample s;
  s.name = "conv2d";
  s.description = "NHWC 2-D convolution as an implicit GEMM with im2col gathered inside the kernel";
  s.params = {{"N", 8, "batch"},
              {"H", 56, "input height"},
              {"W", 56, "input width"},
              {"C", 64, "input channels"},
              {"F", 64, "output channels (filters)"},
              {"KH", 3, "filter height"},
              {"KW", 3, "filter width"},
              {"stride", 1, "stride in both directions"},
              {"pad", 1, "zero padding on every side", 0},
              {"block_M", 64, "output pixels per block"},
              {"block_N", 64, "filters per block"},
              {"block_K", 32, "filter taps per pipeline step"},
              {"threads", 128, "threads per block", 1, 1024},
              {"stages", 2, "pipeline depth of the K loop"}};
  s.dtypes = {f16, bf16, f32};
  s.build = build_conv2d;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_conv2d(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_conv2d(p, t, rng, false);
  };
  s.tolerance = [](const Params& p, DType t) {
    return accumulation_tolerance(t, param(p, "KH") * param(p, "KW") * param(p, "C"));
  };
  add_test_shape(s, "3x3 pad 1, ragged", with_tiles(conv_shape(1, 6, 7, 5, 9, 3, 3, 1, 1), 32, 16, 16));
  add_test_shape(s, "3x3 stride 2", with_tiles(conv_shape(2, 9, 8, 4, 16, 3, 3, 2, 1), 32, 16, 16));
  add_test_shape(s, "1x1", with_tiles(conv_shape(1, 5, 5, 8, 8, 1, 1, 1, 0), 16, 16, 16));
  add_test_shape(s, "5x3 pad 2", with_tiles(conv_shape(1, 8, 6, 3, 5, 5, 3, 1, 2), 32, 16, 16));
  add_test_shape(s, "ragged, default tiles", conv_shape(2, 14, 14, 24, 40, 3, 3, 1, 1), true);
  add_test_shape(s, "stride 2 no padding, default tiles", conv_shape(2, 17, 15, 16, 70, 3, 3, 2, 0), true);
  s.bench_shapes = {conv_shape(32, 56, 56, 64, 64, 3, 3, 1, 1), conv_shape(32, 28, 28, 128, 128, 3, 3, 1, 1),
                    conv_shape(32, 14, 14, 256, 256, 3, 3, 1, 1),
                    conv_shape(32, 56, 56, 64, 256, 1, 1, 1, 0)};
  s.flops = [](const Params& p, DType) {
    const ConvShape c(p);
    return 2.0 * c.gemm_m() * c.F * c.gemm_k();
  };
  s.bytes = [](const Params& p, DType t) {
    const ConvShape c(p);
    return double(c.N * c.H * c.W * c.C + c.gemm_k() * c.F + c.gemm_m() * c.F) * element_bytes(t);
  };
  return s;
}

}  // namespace tg::samples::detail
