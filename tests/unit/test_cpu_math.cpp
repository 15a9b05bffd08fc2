// The cpu target's inline f32 exp and exp2 (targets/cpu/src/emit_math.cpp): within 2 ulp of the
// correctly rounded value over the whole range, and the special values exact.
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

#include "cpu_test_util.h"
#include "tilegen/builder.h"

using namespace tg;

namespace {

/// Distance in units in the last place between two finite floats of the same sign.
int64_t ulps(float a, float b) {
  return std::abs(int64_t(std::bit_cast<int32_t>(a)) - int64_t(std::bit_cast<int32_t>(b)));
}

std::vector<float> exp_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,     -0.0f,   1.0f,    -1.0f,   88.72f,      88.73f,       89.0f,  100.0f,
                          -87.3f,   -87.4f,  -100.0f, -103.9f, -104.0f,     -110.0f,      inf,    -inf,
                          -FLT_MAX, FLT_MAX, 1e-8f,   -1e-8f,  0.34657359f, -0.34657359f, 126.9f, 127.5f,
                          128.0f,   -126.0f, -149.0f, -149.5f, -160.0f};
  for (int i = 0; i < 4000; ++i) x.push_back(-110.0f + 200.0f * float(i) / 4000.0f);  // the whole range
  for (int i = 0; i < 1000; ++i) x.push_back(-2.0f + 4.0f * float(i) / 1000.0f);      // softmax's usual
  while (x.size() % 8) x.push_back(0.5f);
  return x;
}

}  // namespace

TEST_CASE("cpu math: inline f32 exp and exp2 are within 2 ulp, special values exact") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  std::vector<float> x = exp_inputs();
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  while (x.size() % 8) x.push_back(0.0f);
  const int64_t n = int64_t(x.size());
  KernelBuilder k("exps");
  auto X = k.tensor("X", {n}, f32);
  auto E = k.tensor("E", {n}, f32);
  auto E2 = k.tensor("E2", {n}, f32);
  k.grid(1).threads(1).body([&](Expr) {
    k.parallel({n}, [&](Expr i) {
      E(i) = exp(X(i));
      E2(i) = exp2(X(i));
    });
  });
  Kernel kern = k.build();
  std::vector<float> e(x.size()), e2(x.size());
  tg::testing::NoKernelCache no_cache;
  CompiledKernel ck = cpu->compile(kern);
  ck(HostTensor{x.data(), {n}, f32}, HostTensor{e.data(), {n}, f32}, HostTensor{e2.data(), {n}, f32});
  // The loop was vectorised and calls nothing (the point of the inline polynomial).
  CHECK(ck.assembly().find("call") == std::string::npos);
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int base2 = 0; base2 < 2; ++base2) {
      const float got = base2 ? e2[i] : e[i];
      const double want_d = base2 ? std::exp2(double(x[i])) : std::exp(double(x[i]));
      const float want = float(want_d);  // correctly rounded (double has margin to spare)
      INFO("x = " << x[i] << (base2 ? " exp2" : " exp") << ": got " << got << ", want " << want);
      if (std::isnan(x[i])) {
        CHECK(std::isnan(got));
      } else if (std::isinf(want) || want == 0.0f) {
        CHECK(got == want);
      } else if (std::fabs(want) < FLT_MIN) {
        CHECK(ulps(got, want) <= 1);  // denormals: one rounding, at the last multiplication
      } else {
        CHECK(ulps(got, want) <= 2);
      }
    }
  }
}
