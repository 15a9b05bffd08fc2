// use_ldmatrix (cuda): mma operand loads proven equal to one ldmatrix become ir::LdMatrix, which
// the interpreter executes as PTX defines it, so a wrong proof is a wrong answer in CI.
#include <doctest/doctest.h>

#include "gpu_targets.h"
#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/use_ldmatrix.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Lowered {
  Function f;
  Problem problem;
  Tolerance tol;
};

Lowered lowered_gemm(DType t) {
  const Sample& s = *find("gemm");
  Params p = resolve(s, {{"M", 64}, {"N", 64}, {"K", 64}, {"block_M", 32}, {"block_N", 32}, {"block_K", 16}});
  Function f = s.build(p, t).function();
  std::mt19937_64 rng(11);
  Problem pr = s.make_problem(p, t, rng);
  std::vector<PassEntry> passes = gpu_pipeline();
  passes.push_back({"pad_shared_tiles", pad_shared_tiles});  // as cuda's pipeline: padded rows
  passes.push_back({"use_ldmatrix", use_ldmatrix});
  Function lowered =
      PassManager(passes).run(bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr))), test::sm80());
  return {lowered, pr, s.tolerance(p, t)};
}

// Every LdMatrix with its `trans` flipped: what a wrong proof would have produced.
struct FlipTrans : IRMutator {
  Stmt visit(const ir::LdMatrix* op, const Stmt&) override {
    auto n = std::make_shared<ir::LdMatrix>(*op);
    n->trans = !n->trans;
    return Stmt(std::move(n));
  }
};

}  // namespace

TEST_CASE("use_ldmatrix: f16 and bf16 gemm operands load by ldmatrix, executed exactly by the interpreter") {
  for (DType t : {f16, bf16}) {
    INFO(t.name());
    Lowered l = lowered_gemm(t);
    std::string ir = print(l.f);
    INFO(ir);
    CHECK(count(ir, "ldmatrix x4 ") > 0);  // A, row-major: directly
    // B, row-major K×N: transposed, two n8 tiles a load (x2 pairs) where the warp has several
    CHECK(count(ir, "ldmatrix x4 trans ") > 0);
    CHECK(count(ir, "ldmatrix x2 ") == 0);
    interpret(l.f, host_args(l.f, l.problem));
    testing::check_outputs(l.problem, l.tol);
    // The interpreter's ldmatrix is not the loop it replaced: flipping trans changes the answer.
    Lowered wrong = lowered_gemm(t);
    Function flipped = FlipTrans().mutate_function(wrong.f);
    interpret(flipped, host_args(flipped, wrong.problem));
    bool differs = false;
    for (std::size_t o = 0; o < wrong.problem.args.size(); ++o)
      if (wrong.problem.args[o].is_output) {
        Comparison c = compare(wrong.problem.args[o], wrong.problem.expected[0], wrong.tol);
        differs = differs || c.mismatches > 0;
      }
    CHECK(differs);
  }
}

TEST_CASE("use_ldmatrix: flash_attention's K and V operands load two n8 tiles an ldmatrix") {
  const Sample& s = *find("flash_attention");
  for (int causal : {0, 1}) {
    INFO("causal " << causal);
    Params p = resolve(s, {{"B", 1},
                           {"H", 2},
                           {"HKV", 1},
                           {"S", 100},
                           {"D", 64},
                           {"block_M", 64},
                           {"block_N", 32},
                           {"causal", causal}});
    Function f = s.build(p, f16).function();
    std::mt19937_64 rng(12);
    Problem pr = s.make_problem(p, f16, rng);
    std::vector<PassEntry> passes = gpu_pipeline();
    passes.push_back({"pad_shared_tiles", pad_shared_tiles});
    passes.push_back({"use_ldmatrix", use_ldmatrix});
    Function lowered =
        PassManager(passes).run(bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr))), test::sm80());
    std::string ir = print(lowered);
    INFO(ir);
    CHECK(count(ir, "ldmatrix x4 ") > 0);
    CHECK(count(ir, "ldmatrix x4 trans ") > 0);  // V, row-major: transposed
    CHECK(count(ir, "ldmatrix x2 ") == 0);
    interpret(lowered, host_args(lowered, pr));
    testing::check_outputs(pr, s.tolerance(p, f16));
  }
}

TEST_CASE("use_ldmatrix: f32 operands and non-cuda layouts keep their loops") {
  Lowered l = lowered_gemm(f32);
  CHECK(print(l.f).find("ldmatrix") == std::string::npos);
}

TEST_CASE("ldmatrix statements: printed, parsed back, verified, and checked when run") {
  const std::string text =
      "func f(G: f16[8, 8] global, Y: f16[32, 2] global) {\n"
      "  kernel grid(1) threads(32) -> (bx; tx) {\n"
      "    shared S: f16[8, 8]\n"
      "    local R: f16[2]\n"
      "    copy G -> S\n"
      "    ldmatrix x1 S[tx % 8, 0] -> R[0]\n"
      "    Y[tx, 0] = R[0]\n"
      "    Y[tx, 1] = R[1]\n"
      "  }\n"
      "}\n";
  Function f = parse_function(text, "t.tgir");
  verify(f);
  std::string printed = print(f);
  CHECK(printed.find("ldmatrix x1 S[tx % 8, 0] -> R[0]") != std::string::npos);
  CHECK(print(parse_function(printed)) == printed);
  // Lane t gets row t/4, columns 2(t%4) and 2(t%4) + 1 of the one 8×8 matrix.
  std::vector<uint16_t> g(64), y(64, 0);
  for (int i = 0; i < 64; ++i) g[std::size_t(i)] = uint16_t(0x3c00 + i);  // distinct f16 bit patterns
  std::vector<HostArg> args(2);
  args[0].data = g.data(), args[0].shape = {8, 8}, args[0].dtype = f16;
  args[1].data = y.data(), args[1].shape = {32, 2}, args[1].dtype = f16;
  interpret(f, args);
  for (int t = 0; t < 32; ++t)
    for (int h = 0; h < 2; ++h)
      CHECK(y[std::size_t(2 * t + h)] == g[std::size_t(8 * (t / 4) + 2 * (t % 4) + h)]);
  // A row with fewer than 8 elements left, and a non-16-bit dtype.
  std::string short_row = text;
  short_row.replace(short_row.find("S[tx % 8, 0] ->"), 15, "S[tx % 8, 4] ->");
  CHECK_THROWS_WITH_AS(interpret(parse_function(short_row, "t.tgir"), args),
                       doctest::Contains("fewer than 8 elements"), Error);
  std::string wide = text;
  for (auto at = wide.find("f16"); at != std::string::npos; at = wide.find("f16", at))
    wide.replace(at, 3, "f32");
  CHECK_THROWS_WITH_AS(verify(parse_function(wide, "t.tgir")),
                       doctest::Contains("ldmatrix moves 16-bit elements"), Error);
}
