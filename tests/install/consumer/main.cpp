// A minimal host application of tilegen, built against the installed package
// (find_package(tilegen), tests/install/consumer/CMakeLists.txt) or against the source tree
// (add_subdirectory, tests/install/subdir/CMakeLists.txt); docs/embedding.md walks through it.
//
// It builds a small kernel with the builder (a tiled f32 matrix product with a ReLU), compiles
// it for the cpu target and for interp, the reference interpreter, launches it on host arrays
// and checks every element against the same product computed here. A target that is not there
// (no cpu plugin in a core-only build, no LLVM) is reported as skipped, unless it is named with
// --require: `consumer --require cpu` fails where the cpu target cannot be had.
#include <tilegen/tilegen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// C = max(A·B, 0), A: M×K, B: K×N, in bm×bn tiles of C, K in steps of bk (docs/language.md).
tg::Kernel matmul_relu(int M, int N, int K, int bm, int bn, int bk) {
  tg::KernelBuilder k("matmul_relu");
  auto A = k.tensor("A", {M, K}, tg::f32);
  auto B = k.tensor("B", {K, N}, tg::f32);
  auto C = k.tensor("C", {M, N}, tg::f32);
  k.grid(tg::ceildiv(N, bn), tg::ceildiv(M, bm)).threads(128).body([&](tg::Expr bx, tg::Expr by) {
    auto As = k.shared({bm, bk}, tg::f32);
    auto Bs = k.shared({bk, bn}, tg::f32);
    auto Cf = k.fragment({bm, bn}, tg::f32);
    k.clear(Cf);
    k.pipelined(tg::ceildiv(K, bk), /*stages=*/2, [&](tg::Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](tg::Expr i, tg::Expr j) { Cf(i, j) = tg::max(Cf(i, j), 0.0f); });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

// Runs the kernel on one target and checks C against the product computed here; a compile or
// launch error is a tg::Error.
bool run_on(const tg::Target& target, const tg::Kernel& kernel, int M, int N, int K) {
  // Small integers: every product and sum is exact in f32, so the check is exact.
  std::vector<float> a(M * K), b(K * N), c(M * N, -1.0f);
  for (int i = 0; i < M * K; ++i) a[i] = float(i % 7 - 3);
  for (int i = 0; i < K * N; ++i) b[i] = float(i % 5 - 2);

  tg::CompiledKernel compiled = target.compile(kernel);  // cached: a second run compiles nothing
  tg::HostTensor A{a.data(), {M, K}, tg::f32}, B{b.data(), {K, N}, tg::f32}, C{c.data(), {M, N}, tg::f32};
  compiled(A, B, C);  // host arrays: copied in, C copied back when the launch returns

  double max_err = 0, sum = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int kk = 0; kk < K; ++kk) want += double(a[i * K + kk]) * b[kk * N + j];
      want = std::max(want, 0.0);
      max_err = std::max(max_err, std::fabs(c[i * N + j] - want));
      sum += c[i * N + j];
    }
  std::printf("%-6s %s: matmul_relu %dx%dx%d on %s (%s): max error %g, sum of C %.0f\n",
              target.name().c_str(), max_err == 0 ? "ok" : "FAIL", M, N, K,
              target.info().device_name.c_str(), target.info().arch.c_str(), max_err, sum);
  return max_err == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> required;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--require") required.push_back(argv[i + 1]);

  // Ragged sizes (not multiples of the tiles): the edge tiles are predicated.
  const int M = 80, N = 72, K = 40;
  tg::Kernel kernel = matmul_relu(M, N, K, 32, 32, 16);

  int failures = 0;
  for (std::string name : {"cpu", "interp"}) {
    bool must = name == "interp" ||  // built into libtilegen: always there
                std::find(required.begin(), required.end(), name) != required.end();
    try {
      tg::Target target = tg::Target::get(name);  // a tg::Error, with the reason, where it cannot run
      try {
        failures += !run_on(target, kernel, M, N, K);
      } catch (const tg::Error& e) {
        std::printf("%-6s FAIL: %s\n", name.c_str(), e.what());
        ++failures;
      }
    } catch (const tg::Error& e) {
      std::printf("%-6s %s: %s\n", name.c_str(), must ? "FAIL" : "skipped", e.what());
      failures += must;
    }
  }
  return failures == 0 ? 0 : 1;
}
