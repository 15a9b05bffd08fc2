// The default pipeline end to end: builder kernels with ragged symbolic sizes, specialised by
// infer_sizes + bind_sizes, lowered by default_pipeline(), and run by the interpreter
// against a host reference. Without the bounds pass the same kernels index out of range.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "tilegen/builder.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/simplify.h"

using namespace tg;

namespace {

// C = relu(A·B) through copies and gemm; D = 2·relu(A·B) through element stores (ragged edges
// need the bounds pass's guards).
Kernel matmul_relu_twice(int bm, int bn, int bk) {
  KernelBuilder k("matmul_relu_twice");
  Expr M = k.size("M"), N = k.size("N"), K = k.size("K");
  auto A = k.tensor("A", {M, K}, f32);
  auto B = k.tensor("B", {K, N}, f32);
  auto C = k.tensor("C", {M, N}, f32);
  auto D = k.tensor("D", {M, N}, f32);
  k.grid(ceildiv(N, bn), ceildiv(M, bm)).threads(64).body([&](Expr bx, Expr by) {
    auto As = k.shared({bm, bk}, f32);
    auto Bs = k.shared({bk, bn}, f32);
    auto Cf = k.fragment({bm, bn}, f32);
    k.clear(Cf);
    k.pipelined(ceildiv(K, bk), 2, [&](Expr ko) {
      k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf);
    });
    k.parallel(Cf, [&](Expr i, Expr j) { Cf(i, j) = max(Cf(i, j), 0.0f); });
    k.copy(Cf, C.at(by * bm, bx * bn));
    k.parallel(Cf, [&](Expr i, Expr j) { D(by * bm + i, bx * bn + j) = Cf(i, j) * 2.0f; });
  });
  return k.build();
}

std::vector<float> random_vector(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

HostArg arg(std::vector<float>& v, std::vector<int64_t> shape) {
  HostArg h;
  h.data = v.data();
  h.shape = std::move(shape);
  h.dtype = f32;
  return h;
}

Function lower(const Function& f, const std::vector<std::vector<int64_t>>& shapes, PassManager& pm) {
  return pm.run(bind_sizes(f, infer_sizes(f, shapes)), TargetInfo{});
}

}  // namespace

TEST_CASE("pipeline: ragged matmul with element stores, end to end in the interpreter") {
  const int64_t M = 50, N = 70, K = 40;
  Kernel kern = matmul_relu_twice(32, 32, 16);
  std::mt19937 rng(7);
  std::vector<float> a = random_vector(M * K, rng), b = random_vector(K * N, rng);
  std::vector<float> c(M * N, NAN), d(M * N, NAN);
  std::vector<std::vector<int64_t>> shapes = {{M, K}, {K, N}, {M, N}, {M, N}};
  std::vector<HostArg> args = {arg(a, {M, K}), arg(b, {K, N}), arg(c, {M, N}), arg(d, {M, N})};

  // As built, the element stores of the last blocks fall outside D.
  CHECK_THROWS_AS(interpret(kern.function(), args), Error);

  PassManager pm(default_pipeline());
  Function lowered = lower(kern.function(), shapes, pm);
  INFO(print(lowered));
  std::fill(c.begin(), c.end(), NAN);
  std::fill(d.begin(), d.end(), NAN);
  interpret(lowered, args);
  int bad = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (int64_t x = 0; x < K; ++x) want += double(a[i * K + x]) * b[x * N + j];
      want = std::max(want, 0.0);
      bad += std::abs(c[i * N + j] - want) > 1e-4 || std::abs(d[i * N + j] - 2 * want) > 2e-4;
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("pipeline: exact tiles need no checks at all") {
  Kernel kern = matmul_relu_twice(32, 32, 16);
  PassManager pm(default_pipeline());
  Function lowered = lower(kern.function(), {{64, 32}, {32, 96}, {64, 96}, {64, 96}}, pm);
  struct Checks : IRVisitor {
    int copies_checked = 0, ifs = 0, selects = 0;
    void visit(const ir::Copy* op) override { copies_checked += op->check_bounds; }
    void visit(const ir::If* op) override {
      ++ifs;
      IRVisitor::visit(op);
    }
    void visit(const ir::Select* op) override {
      ++selects;
      IRVisitor::visit(op);
    }
  } checks;
  checks.visit_stmt(lowered.body);
  CHECK(checks.copies_checked == 0);
  CHECK(checks.ifs == 0);
  CHECK(checks.selects == 0);
  // The ragged version keeps the checks it needs.
  Function ragged = lower(kern.function(), {{50, 40}, {40, 70}, {50, 70}, {50, 70}}, pm);
  Checks r;
  r.visit_stmt(ragged.body);
  CHECK(r.copies_checked == 3);  // A and B tiles, and the C tile
  CHECK(r.ifs == 1);             // D's element store
}

TEST_CASE("pipeline: thread-level loop over a ragged vector") {
  // for e in [0, 4): C[(bx*4 + e)*64 + tx] = A[(bx*4 + e)*64 + tx] + 1, N = 1000 (not 4·64·k).
  KernelBuilder k("add_one");
  Expr n = k.size("N");
  auto A = k.tensor("A", {n}, f32);
  auto C = k.tensor("C", {n}, f32);
  k.grid(ceildiv(n, 256)).threads(64).body([&](Expr bx) {
    Expr tx = k.thread_index();
    k.serial(4, [&](Expr e) {
      Expr idx = (bx * 4 + e) * 64 + tx;
      C(idx) = A(idx) + 1.0f;
    });
  });
  Function f = k.build().function();
  const int64_t N = 1000;
  std::mt19937 rng(3);
  std::vector<float> a = random_vector(N, rng), c(N, NAN);
  PassManager pm(default_pipeline());
  Function lowered = lower(f, {{N}, {N}}, pm);
  interpret(lowered, {arg(a, {N}), arg(c, {N})});
  int bad = 0;
  for (int64_t i = 0; i < N; ++i) bad += c[i] != a[i] + 1.0f;
  CHECK(bad == 0);
  // The pass output is valid text: it parses back to the same IR.
  CHECK(print(parse_function(print(lowered))) == print(lowered));
}

TEST_CASE("pipeline: thread-level reduction with let, if, barrier, locals and atomics") {
  // Each block sums 128 elements of A (two per thread, guarded by hand), then thread 0 adds the
  // block's partial sums into out[0].
  KernelBuilder k("block_sum");
  Expr n = k.size("N");
  auto A = k.tensor("A", {n}, f32);
  auto Out = k.tensor("out", {1}, f32);
  k.grid(ceildiv(n, 128)).threads(64).body([&](Expr bx) {
    Expr tx = k.thread_index();
    auto S = k.shared({64}, f32);
    auto acc = k.local({1}, f32);
    acc(0) = 0.0f;
    k.serial(2, [&](Expr e) {
      Expr idx = k.let("idx", bx * 128 + e * 64 + tx);
      k.if_(idx < n, [&] { acc(0) += A(idx); });
    });
    S(tx) = acc(0);
    k.barrier();
    k.if_(tx == 0, [&] {
      acc(0) = 0.0f;
      k.serial(64, [&](Expr i) { acc(0) += S(i); });
      k.atomic_add(Out(0), acc(0));
    });
  });
  Function f = k.build().function();
  const int64_t N = 1000;
  std::mt19937 rng(11);
  std::vector<float> a = random_vector(N, rng), out = {0.0f};
  double want = 0;
  for (float x : a) want += x;

  interpret(f, {arg(a, {N}), arg(out, {1})});  // guarded by hand: runs as built
  CHECK(std::abs(out[0] - want) < 1e-3);

  PassManager pm(default_pipeline());
  Function lowered = lower(f, {{N}, {1}}, pm);
  INFO(print(lowered));
  struct Selects : IRVisitor {
    int n = 0;
    void visit(const ir::Select* op) override {
      ++n;
      IRVisitor::visit(op);
    }
  } selects;
  selects.visit_stmt(lowered.body);
  CHECK(selects.n == 0);  // A(idx) is proven by the hand-written guard, seen through the let
  out[0] = 0.0f;
  interpret(lowered, {arg(a, {N}), arg(out, {1})});
  CHECK(std::abs(out[0] - want) < 1e-3);
}
