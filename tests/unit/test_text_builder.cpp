// The text form of builder-made kernels: print → parse → print is the identity, the parsed
// function verifies, and the interpreter gives bit-identical results for the original and the
// parsed function (the text loses nothing that matters to execution).
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "tilegen/builder.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"

using namespace tg;

namespace {

Function reparsed(const Kernel& k) {
  std::string a = k.ir();
  Function g = parse_function(a, k.name() + ".tgir");
  CHECK_MESSAGE(print(g) == a, "text:\n" << a << "\nreprinted:\n" << print(g));
  verify(g);
  return g;
}

// Runs f on deterministic random inputs: tensors get `shapes` in order, scalars `scalars`.
// Returns every tensor's bytes afterwards.
std::vector<std::vector<uint8_t>> run(const Function& f, const std::vector<std::vector<int64_t>>& shapes,
                                      const std::vector<double>& scalars) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<std::vector<uint8_t>> data;
  std::vector<HostArg> args;
  std::size_t t = 0, s = 0;
  data.reserve(shapes.size());
  for (auto& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    HostArg a;
    if (p.kind == Param::Kind::Scalar) {
      a.is_tensor = false;
      a.dtype = p.var.dtype();
      a.scalar =
          a.dtype.is_float() ? Scalar::of_float(scalars.at(s++)) : Scalar::of_int(int64_t(scalars.at(s++)));
    } else {
      a.shape = shapes.at(t++);
      a.dtype = p.buffer->dtype;
      int64_t n = 1;
      for (auto d : a.shape) n *= d;
      data.emplace_back(storage_bytes(a.dtype, n));
      for (int64_t i = 0; i < n; ++i)
        store_element(a.dtype, data.back().data(), i, Scalar::of_float(value(rng)));
      a.data = data.back().data();
    }
    args.push_back(a);
  }
  interpret(f, args);
  return data;
}

void check_same_results(const Kernel& k, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<double>& scalars = {}) {
  Function g = reparsed(k);
  auto want = run(k.function(), shapes, scalars), got = run(g, shapes, scalars);
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(want[i] == got[i]);
}

Kernel matmul_relu(int bm, int bn, int bk) {
  KernelBuilder k("matmul_relu");
  Expr M = k.size("M"), N = k.size("N"), K = k.size("K");
  auto A = k.tensor("A", {M, K}, f16);
  auto B = k.tensor("B", {K, N}, f16);
  auto C = k.tensor("C", {M, N}, f16);
  k.grid(ceildiv(N, bn), ceildiv(M, bm)).threads(32).body([&](Expr bx, Expr by) {
    auto As = k.shared({bm, bk}, f16);
    auto Bs = k.shared({bk, bn}, f16);
    auto Cf = k.fragment({bm, bn}, f32);
    k.annotate_layout(As, Layout{Layout::Kind::Swizzle, 1, ""});
    k.clear(Cf);
    k.pipelined(ceildiv(K, bk), 2, [&](Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = max(Cf(i, j), 0.0f); });
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

Kernel block_sum() {
  KernelBuilder k("block_sum");
  Expr n = k.size("N");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {1}, f32);
  constexpr int threads = 16, per_block = 64;
  k.grid(ceildiv(n, per_block)).threads(threads).body([&](Expr bx) {
    Expr tx = k.thread_index();
    auto acc = k.local({1}, f32, "acc");
    auto red = k.shared({threads}, f32, "red");
    acc(0) = 0.0f;
    k.serial(per_block / threads, [&](Expr it) {
      Expr idx = k.let("idx", bx * per_block + it * threads + tx);
      k.if_(idx < n, [&] { acc(0) += X(idx); }).else_([&] { acc(0) -= 0.0f; });
    });
    red(tx) = acc(0);
    k.barrier();
    for (int s = threads / 2; s > 0; s /= 2) {
      k.if_(tx < s, [&] { red(tx) += red(tx + s); });
      k.barrier();
    }
    k.if_(tx == 0, [&] { k.atomic_add(Y(0), red(0)); });
  });
  return k.build();
}

Kernel softmax_rows() {
  KernelBuilder k("softmax_rows");
  Expr m = k.size("M");
  auto X = k.tensor("X", {m, 32}, bf16);
  auto Y = k.tensor("Y", {m, 32}, bf16);
  Expr scale = k.scalar("scale", f32);
  k.grid(ceildiv(m, 4)).threads(32).body([&]() {
    Expr row0 = k.let("row0", k.block_index(0) * 4);
    auto xs = k.fragment({4, 16}, f32, "xs");
    auto mx = k.fragment({4}, f32, "mx");
    auto sum = k.fragment({4}, f32, "sum");
    auto part = k.fragment({4}, f32, "part");
    auto tmp = k.local({4}, f32, "tmp");
    k.fill(mx, lowest(f32));
    k.clear(sum);
    k.serial(2, [&](Expr c) {
      k.copy(X.slice({row0, c * 16}, {4, 16}), xs);
      k.reduce_max(xs, mx, 1, /*clear=*/false);
    });
    k.serial(2, [&](Expr c) {
      k.copy(X.at(row0, c * 16), xs);
      k.parallel(xs, [&](Expr i, Expr j) { xs(i, j) = exp2(xs(i, j) * scale - mx(i) * scale); });
      k.reduce_sum(xs, part, 1);
      k.parallel(sum, [&](Expr i) { sum(i) += part(i); });
    });
    k.unrolled(4, [&](Expr u) { tmp(u) = 0.0f; });
    k.vectorized(4, [&](Expr v) { tmp(v) += 1.5f; });
    k.serial(2, [&](Expr c) {
      k.copy(X.at(row0, c * 16), xs);
      k.parallel(xs, [&](Expr i, Expr j) {
        xs(i, j) = select(sum(i) > 0.0f, exp2(xs(i, j) * scale - mx(i) * scale) / sum(i), -1.0f);
      });
      k.copy(xs, Y.at(row0, c * 16));
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("text: a builder gemm reads back and computes the same") {
  Kernel k = matmul_relu(16, 16, 8);
  CHECK(k.ir().find("kernel grid((N + 16 - 1) / 16, (M + 16 - 1) / 16) threads(32) -> (bx, by; tx) {") !=
        std::string::npos);
  check_same_results(k, {{20, 12}, {12, 24}, {20, 24}});  // ragged M, N and K
}

TEST_CASE("text: a builder thread-level reduction reads back and computes the same") {
  check_same_results(block_sum(), {{100}, {1}});
}

TEST_CASE("text: a builder softmax with scalars, lets and local loops reads back and computes the same") {
  check_same_results(softmax_rows(), {{6, 32}, {6, 32}}, {0.75});
}

#ifdef TILEGEN_HAVE_SAMPLES
#include "tilegen/passes/pipeline.h"
#include "tilegen/samples.h"

TEST_CASE("text: every sample reads back, in every dtype") {
  for (auto& s : samples::all()) {
    for (DType t : s.dtypes) {
      INFO(s.name << " " << t.name());
      reparsed(s.build(samples::resolve(s, {}), t));
    }
  }
}

// The IR after every pass of the default pipeline (what TILEGEN_DUMP_AFTER shows and the kernel
// cache hashes) reads back too.
TEST_CASE("text: the IR after each default pass reads back, for every sample") {
  TargetInfo info;
  info.target = "interp";
  for (auto& s : samples::all()) {
    PassManager pm(default_pipeline());
    pm.run(s.build(samples::resolve(s, {}), s.dtypes[0]).function(), info);
    for (auto& [pass, text] : pm.stages()) {
      INFO(s.name << " after " << pass);
      CHECK(print(parse_function(text, s.name + ".tgir")) == text);
    }
  }
}
#endif
