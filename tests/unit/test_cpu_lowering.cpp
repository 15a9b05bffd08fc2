// The cpu target's lowering of each IR construct, compared element by element with the
// interpreter on random inputs: copies with predication, fill, reduce, gemm (every transpose,
// f32/f16/bf16, the micro-kernel and the plain path), loops of every kind, if/let/select,
// atomics, int4/fp8/f16/bf16 element access and thread-level code with barriers.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/builder.h"

using namespace tg;
using tg::testing::check_cpu_matches_interpreter;
using tg::testing::gemm_kernel;
using tg::testing::random_array;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(2024);
  return r;
}

// copy a ragged 70×45 tensor through a 32×16 shared tile and back, with a scale on the way.
Kernel ragged_copy(DType t) {
  KernelBuilder k("ragged_copy");
  auto A = k.tensor("A", {70, 45}, t);
  auto C = k.tensor("C", {70, 45}, t);
  k.grid(3, 3).threads(64).body([&](Expr bx, Expr by) {
    auto S = k.shared({32, 16}, t, "S");
    auto F = k.fragment({32, 16}, f32, "F");
    k.copy(A.at(by * 32, bx * 16), S);
    k.copy(S, F);
    k.parallel(F, [&](Expr i, Expr j) { F(i, j) = F(i, j) * 2.0f + 1.0f; });
    k.copy(F, C.at(by * 32, bx * 16));
  });
  return k.build();
}

}  // namespace

TEST_CASE("cpu lowering: bounds-checked copies of a ragged tensor, f32/f16/bf16/i8") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  for (DType t : {f32, f16, bf16, i8}) {
    INFO(t.name());
    Kernel k = ragged_copy(t);
    check_cpu_matches_interpreter(*cpu, k.function(),
                                  {random_array({70, 45}, t, rng()), random_array({70, 45}, t, rng())});
  }
}

TEST_CASE("cpu lowering: gemm, every transpose, micro-kernel and plain path") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  CompileOptions plain;
  plain.params["gemm"] = "plain";
  for (DType t : {f32, f16, bf16})
    for (int tr = 0; tr < 4; ++tr)
      for (const CompileOptions* opt :
           {static_cast<const CompileOptions*>(nullptr), static_cast<const CompileOptions*>(&plain)}) {
        bool ta = tr & 1, tb = tr & 2;
        INFO(t.name() << " trans_a " << ta << " trans_b " << tb << (opt ? " plain" : " micro-kernel"));
        // 50×37 tiles of 24×20 (rows not a multiple of 6, columns not of 8): every edge path.
        Kernel k = gemm_kernel(t, ta, tb, 50, 37, 45, 24, 20, 16);
        std::vector<int64_t> as = ta ? std::vector<int64_t>{45, 50} : std::vector<int64_t>{50, 45};
        std::vector<int64_t> bs = tb ? std::vector<int64_t>{37, 45} : std::vector<int64_t>{45, 37};
        check_cpu_matches_interpreter(
            *cpu, k.function(),
            {random_array(as, t, rng()), random_array(bs, t, rng()), random_array({50, 37}, f32, rng())}, {},
            1e-4, opt ? *opt : CompileOptions{});
      }
}

TEST_CASE("cpu lowering: fill, reduce sum/max/min/absmax on both axes, with and without clear") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  for (int axis = 0; axis < 2; ++axis)
    for (bool clear : {true, false}) {
      INFO("axis " << axis << " clear " << clear);
      KernelBuilder k("red");
      auto X = k.tensor("X", {8, 24, 40}, f32);
      auto Y = k.tensor("Y", {8, 4, axis == 0 ? 40 : 24}, f32);
      k.grid(8).threads(16).body([&](Expr b) {
        auto F = k.fragment({24, 40}, f32, "F");
        auto R = k.fragment({axis == 0 ? 40 : 24}, f32, "R");
        k.copy(X.slice({b, 0, 0}, {1, 24, 40}), F);
        int n = 0;
        for (auto op : {&KernelBuilder::reduce_sum, &KernelBuilder::reduce_max, &KernelBuilder::reduce_min,
                        &KernelBuilder::reduce_absmax}) {
          k.fill(R, 0.5f);
          (k.*op)(F, R, axis, clear, Loc::current());
          k.copy(R, Y.slice({b, n++, 0}, {1, 1, axis == 0 ? 40 : 24}));
        }
      });
      Kernel kern = k.build();
      check_cpu_matches_interpreter(
          *cpu, kern.function(),
          {random_array({8, 24, 40}, f32, rng()), random_array({8, 4, axis == 0 ? 40 : 24}, f32, rng())});
    }
}

TEST_CASE("cpu lowering: serial, pipelined, unrolled, vectorized loops; if/else, let, select, scalars") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  KernelBuilder k("loops");
  auto X = k.tensor("X", {4, 64}, f32);
  auto Y = k.tensor("Y", {4, 64}, f32);
  auto Z = k.tensor("Z", {4, 64}, i32);
  Expr alpha = k.scalar("alpha", f32);
  Expr shift = k.scalar("shift", i32);
  k.grid(4).threads(1).body([&](Expr b) {
    k.serial(2, [&](Expr s) {
      k.pipelined(4, 2, [&](Expr p) {
        k.unrolled(4, [&](Expr u) {
          k.vectorized(2, [&](Expr v) {
            Expr j = k.let("j", s * 32 + p * 8 + u * 2 + v);
            Expr x = X(b, j);
            Y(b, j) = select(x > 0.0f, sqrt(x) * alpha, exp(x) - 1.0f) + tanh(x) + erf(x) + sigmoid(x);
            k.if_(j % 3 == 0, [&] {
               Z(b, j) = (j - shift * 6) / 5 + (j - shift * 6) % 5 + (shift << 2);
             }).else_([&] { Z(b, j) = max(min(j * 7 - 100, 50), -50) ^ (j >> 1); });
          });
        });
      });
    });
  });
  Kernel kern = k.build();
  check_cpu_matches_interpreter(*cpu, kern.function(),
                                {random_array({4, 64}, f32, rng()), random_array({4, 64}, f32, rng()),
                                 random_array({4, 64}, i32, rng())},
                                {0.75, 3}, 1e-5);
}

TEST_CASE("cpu lowering: atomics from many blocks (add, max, min; f32 and i32)") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  KernelBuilder k("atomics");
  auto X = k.tensor("X", {64, 32}, f32);
  auto I = k.tensor("I", {64, 32}, i32);
  auto S = k.tensor("S", {3}, f32);
  auto T = k.tensor("T", {3}, i32);
  k.grid(64).threads(32).body([&](Expr b) {
    Expr tx = k.thread_index();
    // Integer-valued floats, so the sum does not depend on the order of the additions.
    k.atomic_add(S(0), floor(X(b, tx) * 8.0f));
    k.atomic_max(S(1), X(b, tx));
    k.atomic_min(S(2), X(b, tx));
    k.atomic_add(T(0), I(b, tx));
    k.atomic_max(T(1), I(b, tx));
    k.atomic_min(T(2), I(b, tx));
  });
  Kernel kern = k.build();
  check_cpu_matches_interpreter(*cpu, kern.function(),
                                {random_array({64, 32}, f32, rng()), random_array({64, 32}, i32, rng()),
                                 random_array({3}, f32, rng()), random_array({3}, i32, rng())});
}

TEST_CASE("cpu lowering: int4, uint4, fp4, fp8, f16, bf16 element loads, stores and casts") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  for (DType t : {int4, uint4, fp4_e2m1, fp8_e4m3, fp8_e5m2, f16, bf16, u8, i16, u32, i64, f64, boolean}) {
    INFO(t.name());
    KernelBuilder k("narrow");
    auto X = k.tensor("X", {6, 32}, t);
    auto Y = k.tensor("Y", {6, 32}, t);
    auto W = k.tensor("W", {6, 32}, f32);
    k.grid(6).threads(1).body([&](Expr b) {
      k.parallel({32}, [&](Expr j) {
        Expr x = X(b, j);
        W(b, j) = cast(f32, x) * 1.5f;
        // Round trip through f32 arithmetic back into the narrow type (rounding, saturation).
        Y(b, 31 - j) = cast(t, cast(f32, x) * 0.75f + 0.5f);
      });
    });
    Kernel kern = k.build();
    check_cpu_matches_interpreter(*cpu, kern.function(),
                                  {random_array({6, 32}, t, rng()), random_array({6, 32}, t, rng()),
                                   random_array({6, 32}, f32, rng())});
  }
}

TEST_CASE("cpu lowering: f16 and bf16 arithmetic rounds like the interpreter") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  for (DType t : {f16, bf16}) {
    INFO(t.name());
    KernelBuilder k("half");
    auto X = k.tensor("X", {256}, t);
    auto Y = k.tensor("Y", {256}, t);
    k.grid(2).threads(128).body([&](Expr b) {
      Expr i = b * 128 + k.thread_index();
      Y(i) = X(i) * X(i) + X(i) / cast(t, 3.0f) - exp(X(i));
    });
    Kernel kern = k.build();
    check_cpu_matches_interpreter(*cpu, kern.function(),
                                  {random_array({256}, t, rng()), random_array({256}, t, rng())}, {}, 0.0);
  }
}

TEST_CASE("cpu lowering: thread-level code with barriers, locals and a per-thread let across a barrier") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  KernelBuilder k("tree");
  auto X = k.tensor("X", {8, 64}, f32);
  auto Y = k.tensor("Y", {8}, f32);
  auto Z = k.tensor("Z", {8, 64}, f32);
  k.grid(8).threads(64).body([&](Expr b) {
    Expr tx = k.thread_index();
    auto S = k.shared({64}, f32, "S");
    auto acc = k.local({2}, f32, "acc");
    Expr mine = k.let("mine", X(b, tx) * 2.0f);
    acc(0) = mine;
    acc(1) = mine + 1.0f;
    S(tx) = acc(0);
    k.barrier();
    k.serial(6, [&](Expr s) {
      Expr step = Expr(32) >> s;
      k.if_(tx < step, [&] { S(tx) = S(tx) + S(tx + step); });
      k.barrier();
    });
    k.if_(tx == 0, [&] { Y(b) = S(0); });
    Z(b, tx) = mine + acc(1) + S(63 - tx);
  });
  Kernel kern = k.build();
  check_cpu_matches_interpreter(
      *cpu, kern.function(),
      {random_array({8, 64}, f32, rng()), random_array({8}, f32, rng()), random_array({8, 64}, f32, rng())},
      {}, 1e-5);
}

TEST_CASE("cpu codegen: source is LLVM IR, assembly is x86, the binary is an object; IR text alone loads") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  Kernel k = gemm_kernel(f32, false, false, 64, 64, 64, 32, 32, 16);
  tg::testing::NoKernelCache no_cache;
  CompiledKernel ck = cpu->compile(k);
  CHECK(ck.source().find("define void @g_k0(") != std::string::npos);
  CHECK(ck.source().find("fmuladd") + ck.source().find("llvm.fma") != 2 * std::string::npos);
  CHECK(ck.assembly().find("vfmadd") != std::string::npos);
  REQUIRE(ck.binary().size() > 4);
  CHECK(std::string(ck.binary().begin(), ck.binary().begin() + 4) ==
        "\x7f"
        "ELF");
  CHECK(cpu->info().is_cpu);
  CHECK(!cpu->info().arch.empty());  // the LLVM CPU name: "znver3", "sapphirerapids", ...
  CHECK(!cpu->info().device_name.empty());
  CHECK((cpu->info().vector_bytes == 32 || cpu->info().vector_bytes == 64));
  // A kernel-cache hit hands load() the source and entry only.
  Artifact text_only;
  text_only.source = ck.source();
  text_only.entry = "g_k0";
  auto ctx = cpu->plugin().open(0);
  CHECK(ctx->load(text_only, ck.lowered()) != nullptr);
}

TEST_CASE("cpu codegen: num_threads and fast_math are compile options; the module records the thread count") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  Kernel k = gemm_kernel(f32, false, true, 40, 40, 40, 16, 16, 8);
  for (const char* n : {"1", "2"}) {
    CompileOptions opt;
    opt.params["num_threads"] = n;
    opt.params["fast_math"] = "1";
    tg::testing::NoKernelCache no_cache;
    CompiledKernel ck = cpu->compile(k, opt);
    std::size_t at = ck.source().find("@g_num_threads = ");
    REQUIRE(at != std::string::npos);
    std::string line = ck.source().substr(at, ck.source().find('\n', at) - at);
    CHECK(line.find(std::string("constant i32 ") + n) != std::string::npos);
    std::mt19937_64 r(5);
    check_cpu_matches_interpreter(
        *cpu, k.function(),
        {random_array({40, 40}, f32, r), random_array({40, 40}, f32, r), random_array({40, 40}, f32, r)}, {},
        1e-4, opt);
  }
}
