// partition_threads: collectives become per-thread code that the interpreter runs to the same
// results, with vector grouping, bounds predication, barriers, and fragments moved to shared.
#include "gpu_pass_test_util.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/lower_tile_ops.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/rasterize_blocks.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

TEST_CASE("partition_threads: a parallel nest becomes a strided per-thread loop with vector groups") {
  PassRun r = run_pass(R"(
func scale(X: f32[8, 64] global, Y: f32[8, 64] global) {
  kernel grid(2) threads(32) -> (bx; tx) {
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 64) {
        Y[bx*4 + i, j] = X[bx*4 + i, j] * 2.0
      }
    }
  }
})",
                       partition_threads);
  INFO(r.text);
  CHECK_FALSE(contains(r.text, "parallel"));
  CHECK(contains(r.text, "vectorized(0 +: 4)"));        // 16-byte groups of f32
  CHECK(contains(r.text, "for it in serial(0 +: 2)"));  // 64 groups over 32 threads
  check_same_results(r.before, r.after);
}

TEST_CASE("partition_threads: copies, fills and reductions; fragments become shared") {
  PassRun r = run_pass(R"(
func rows(X: f32[5, 30] global, Y: f32[5] global) {
  kernel grid(2) threads(64) -> (bx; tx) {
    fragment x: f32[4, 32]
    fragment m: f32[4]
    fill x = 0.0
    copy X[bx*4 +: 4, 0 +: 32] -> x
    reduce max(x -> m, axis=1, clear)
    copy m -> Y[bx*4 +: 4]
  }
})",
                       partition_threads);
  INFO(r.text);
  CHECK_FALSE(contains(r.text, "fragment "));  // no fragment declaration is left
  CHECK(contains(r.text, "shared x: f32[4, 32] from_fragment"));
  CHECK_FALSE(contains(r.text, "copy "));
  CHECK_FALSE(contains(r.text, "reduce "));
  CHECK(contains(r.text, "barrier"));
  CHECK(contains(r.text, "select("));  // ragged reads of X give 0
  check_same_results(r.before, r.after);
}

TEST_CASE("partition_threads: a reduction gets the largest power of two of lanes a row that fits") {
  // lanes · rows <= threads and lanes <= the axis; fewer than 4 lanes: a serial reduction.
  struct Case {
    int rows, len, threads, lanes;
  };
  for (Case c : {Case{4, 256, 128, 32}, Case{3, 5, 128, 4}, Case{1, 1000, 128, 128}, Case{2, 40, 96, 32},
                 Case{100, 64, 128, 1}}) {
    const std::string R = std::to_string(c.rows), L = std::to_string(c.len);
    PassRun r = run_pass("func rows(X: f32[" + R + ", " + L + "] global, Y: f32[" + R +
                             "] global) {\n"
                             "  kernel grid(1) threads(" +
                             std::to_string(c.threads) +
                             ") -> (bx; tx) {\n"
                             "    fragment x: f32[" +
                             R + ", " + L +
                             "]\n"
                             "    fragment m: f32[" +
                             R +
                             "]\n"
                             "    copy X[0 +: " +
                             R + ", 0 +: " + L +
                             "] -> x\n"
                             "    reduce sum(x -> m, axis=1, clear)\n"
                             "    copy m -> Y[0 +: " +
                             R +
                             "]\n"
                             "  }\n"
                             "}\n",
                         partition_threads);
    INFO(r.text);
    if (c.lanes >= 4)
      CHECK(contains(r.text, "m_partial: f32[" + std::to_string(c.rows * c.lanes) + "]"));
    else
      CHECK_FALSE(contains(r.text, "m_partial"));
    check_same_results(r.before, r.after);
  }
}

TEST_CASE("partition_threads: a gemm without a matrix unit becomes per-element dot products") {
  PassRun r = run_pass(GemmKernel{.k = 8}.text(), partition_threads);
  CHECK_FALSE(contains(r.text, "gemm("));
  check_same_results(r.before, r.after);
}

TEST_CASE("partition_threads: packed 4-bit stores come in whole bytes; an odd extent is an error") {
  Function f = parse_function(R"(
func pack(W: int4[4, 7] global, V: int4[4, 7] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    shared Ws: int4[4, 7]
    copy W -> Ws
    copy Ws -> V
  }
})");
  CHECK_THROWS_WITH_AS(partition_threads(f, test::sm80()),
                       doctest::Contains("odd innermost extent"), Error);
}

TEST_CASE("rasterize_blocks: gemm kernels visit blocks in panels; results unchanged") {
  Function f = parse_function(R"(
func mm(A: f32[80, 8] global, B: f32[8, 24] global, C: f32[80, 24] global) {
  kernel grid(3, 10) threads(32) -> (bx, by; tx) {
    shared As: f32[8, 8]
    shared Bs: f32[8, 8]
    fragment Cf: f32[8, 8]
    copy A[by*8 +: 8, 0 +: 8] -> As
    copy B[0 +: 8, bx*8 +: 8] -> Bs
    gemm(As, Bs -> Cf, clear)
    copy Cf -> C[by*8 +: 8, bx*8 +: 8]
  }
})");
  Function g = rasterize_blocks(f, test::sm80(), 4);  // panels of 4, 4 and 2 block rows
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "let block"));
  CHECK(contains(text, "by_r"));
  check_same_results(f, g);
  check_same_results(f, partition_threads(g, test::sm80()));
  // No gemm, or too few block rows: unchanged.
  CHECK(rasterize_blocks(f, test::sm80(), 16).body.same_as(f.body));
  // The grid covers C exactly (3 × 8 columns, 10 × 8 rows), and the permuted block indices are
  // bounded by it (min(..., 2), min(..., 9)): the lowered copies keep no bounds guard.
  CHECK(contains(text, "let bx_r: i32 = min(block % 12 / rows, 2)"));
  CHECK(contains(text, "% rows, 9)"));
  LowerTileOpsOptions keep;
  keep.lower_gemm = false;
  std::string lowered = print(simplify(lower_tile_ops(g, test::sm80(), keep), test::sm80()));
  INFO(lowered);
  CHECK(!contains(lowered, "select("));
  CHECK(!contains(lowered, "if "));
}

// Found by the kernel fuzzer (tests/fuzz/kernels/barrier-collective-without-shared.tgir): a
// collective whose lowered form touches no block memory (registers to global) still separates
// the per-thread code around it, as the interpreter runs the builder's IR.
TEST_CASE("gpu pipeline: a register-only collective keeps its barrier between per-thread phases") {
  const char* text =
      R"(func f(A: f32[4, 4] global, B: f32[4, 4] global, Y: f32[4, 4] global, W: f32[32] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    shared As: f32[4, 4]
    shared Bs: f32[4, 4]
    shared S: f32[32]
    fragment Cf: f32[4, 4]
    copy A -> As
    copy B -> Bs
    gemm(As, Bs -> Cf, clear)
    fill S = 0.0
    S[tx] = cast<f32>(tx)
    copy Cf -> Y
    W[tx] = S[(tx + 1) % 32]
  }
}
)";  // Cf lives in registers (the gemm's layout): `copy Cf -> Y` touches no shared memory
  for (const TargetInfo& info : {test::sm80(), test::gfx90a()}) {
    PassRun r = run_pass(
        text, [](const Function& f, const TargetInfo& i) { return PassManager(gpu_pipeline()).run(f, i); },
        info);
    INFO(info.arch << "\n" << r.text);
    CHECK(contains(r.text, "barrier"));
    check_same_results(r.before, r.after);  // the interpreter's race detection runs on both
  }
}
