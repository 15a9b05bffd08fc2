// docs/runtime.md's example, as written there (sizes made small), on the interpreter: the
// documented calls compile and do what the page says.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "tilegen/tilegen.h"

namespace {

// docs/language.md's quickstart kernel.
tg::Kernel matmul_relu(int M, int N, int K, int bm, int bn, int bk) {
  tg::KernelBuilder k("matmul_relu");
  auto A = k.tensor("A", {M, K}, tg::f16);
  auto B = k.tensor("B", {K, N}, tg::f16);
  auto C = k.tensor("C", {M, N}, tg::f16);
  k.grid(tg::ceildiv(N, bn), tg::ceildiv(M, bm)).threads(128).body([&](tg::Expr bx, tg::Expr by) {
    auto As = k.shared({bm, bk}, tg::f16);
    auto Bs = k.shared({bk, bn}, tg::f16);
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

uint16_t f16_bits(double v) {
  uint16_t h = 0;
  tg::store_element(tg::f16, &h, 0, tg::Scalar::of_float(v));
  return h;
}
double f16_value(uint16_t h) { return tg::scalar_as_double(tg::f16, tg::load_element(tg::f16, &h, 0)); }

}  // namespace

TEST_CASE("docs/runtime.md: the example runs as written") {
  const int M = 32, N = 16, K = 24;
  tg::Kernel k = matmul_relu(M, N, K, 16, 16, 8);
  tg::Target target = tg::Target::get("interp");
  tg::CompiledKernel kernel = target.compile(k);

  std::vector<uint16_t> a(M * K), b(K * N), c(M * N, f16_bits(-1));
  for (int i = 0; i < M * K; ++i) a[std::size_t(i)] = f16_bits((i % 7) - 3);
  for (int i = 0; i < K * N; ++i) b[std::size_t(i)] = f16_bits((i % 5) - 2);
  tg::HostTensor A{a.data(), {M, K}, tg::f16}, B{b.data(), {K, N}, tg::f16}, C{c.data(), {M, N}, tg::f16};
  kernel(A, B, C);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) want += ((i * K + kk) % 7 - 3) * ((kk * N + j) % 5 - 2);
      REQUIRE(f16_value(c[std::size_t(i * N + j)]) == std::max(want, 0.0));
    }

  std::vector<uint16_t> c2(M * N, f16_bits(-1));
  tg::DeviceBuffer dA = target.upload(A), dB = target.upload(B);
  tg::DeviceBuffer dC = target.alloc({M, N}, tg::f16);
  kernel(dA, dB, dC);
  dC.download(c2.data(), dC.bytes());
  CHECK(c2 == c);

  tg::ProfileResult t = kernel.profile({&dA, &dB, &dC}, tg::ProfileOptions{.warmup = 1, .runs = 3});
  CHECK(t.runs == 3);
  CHECK(t.median_ms > 0);
}
