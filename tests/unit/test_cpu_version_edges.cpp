// The cpu pass version_edge_copies (targets/cpu/src/version_edge_copies.h): a lowered nest whose
// guards test its inner index runs them once where the whole row is in bounds. The checks: IR in
// and out; what it leaves alone (terms in the outer index, through a let bound inside the nest,
// non-linear, not monotone, or a nest with a loop inside); the interpreter computes the same
// before and after; scratch zeroing is unchanged; cpu code equals the interpreter on ragged
// gemms with and without it.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/plugin.h"

using namespace tg;
using tg::testing::with;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(1919);
  return r;
}

TargetPlugin* cpu_plugin() { return testing::cpu_plugin_or_skip("version_edge_copies"); }

// A lowered copy in (select) and out (if) over 20×20 in 8×16 blocks: the column guard holds for
// every column of block bx = 0, not of bx = 1.
const std::string kNests =
    "func g(A: f32[20, 20] global, C: f32[20, 20] global) {\n"
    "  kernel grid(2, 3) threads(1) -> (bx, by; tx) {\n"
    "    shared As: f32[8, 16]\n"
    "    for c0 in parallel(0 +: 8) {\n"
    "      for c1 in parallel(0 +: 16) {\n"
    "        As[c0, c1] = select(by*8 + c0 < 20 && bx*16 + c1 < 20, A[by*8 + c0, bx*16 + c1], 0.0)\n"
    "      }\n"
    "    }\n"
    "    for c0 in parallel(0 +: 8) {\n"
    "      for c1 in parallel(0 +: 16) {\n"
    "        if by*8 + c0 < 20 && bx*16 + c1 < 20 {\n"
    "          C[by*8 + c0, bx*16 + c1] = As[c0, c1] + 1.0\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

const std::string kVersionedCopyIn =
    "    if bx*16 + 15 < 20 {\n"
    "      for c0 in parallel(0 +: 8) {\n"
    "        for c1 in parallel(0 +: 16) {\n"
    "          As[c0, c1] = select(by*8 + c0 < 20, A[by*8 + c0, bx*16 + c1], 0.0)\n"
    "        }\n"
    "      }\n"
    "    } else {\n"
    "      for c0 in parallel(0 +: 8) {\n"
    "        for c1 in parallel(0 +: 16) {\n"
    "          As[c0, c1] = select(by*8 + c0 < 20 && bx*16 + c1 < 20, A[by*8 + c0, bx*16 + c1], 0.0)\n"
    "        }\n"
    "      }\n"
    "    }\n";

std::vector<float> interpret_c(const Function& f) {
  std::vector<float> a(400), c(400, -7.f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 11) - 5);
  std::vector<HostArg> args(2);
  args[0].data = a.data(), args[0].shape = {20, 20};
  args[1].data = c.data(), args[1].shape = {20, 20};
  interpret(f, args);
  return c;
}

bool versioned(TargetPlugin& cpu, const std::string& text) {
  const Function f = parse_function(text, "case.tgir");
  verify(f);
  const Function out = testing::run_cpu_pass(cpu, f, "version_edge_copies");
  CHECK(interpret_c(f) == interpret_c(out));
  return print(out) != print(f);
}

}  // namespace

TEST_CASE("version_edge_copies: IR in, IR out") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const Function in = parse_function(kNests, "nests.tgir");
  verify(in);
  const Function out = testing::run_cpu_pass(*cpu, in, "version_edge_copies");
  const std::string text = print(out);
  INFO(text);
  CHECK(text.find(kVersionedCopyIn) != std::string::npos);
  CHECK(text.find("      for c0 in parallel(0 +: 8) {\n        for c1 in parallel(0 +: 16) {\n"
                  "          if by*8 + c0 < 20 {\n") != std::string::npos);
  const std::vector<float> before = interpret_c(in), after = interpret_c(out);
  CHECK(before == after);
  CHECK(before[399] == -5.f + 1.f + float(399 % 11));
  // version_edges=0: the pass is not in the pipeline.
  CompileOptions off;
  off.params["version_edges"] = "0";
  for (const PassEntry& p : cpu->pipeline(cpu->info_for_arch("haswell"), off))
    CHECK(p.name != "version_edge_copies");
}

TEST_CASE("version_edge_copies: which terms it versions") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const std::string copy_in = "select(by*8 + c0 < 20 && bx*16 + c1 < 20, A[by*8 + c0, bx*16 + c1], 0.0)";
  // The copy in's guard replaced by `term`; the copy out's column term made non-linear (the same
  // values: bx*16 + c1 < 32), so only the copy in can be versioned.
  auto in_term = [&](const std::string& term) {
    return with(
        with(kNests, copy_in, "select(" + term + ", A[min(by*8 + c0, 19), min(bx*16 + c1, 19)], 0.0)"),
        "if by*8 + c0 < 20 && bx*16 + c1 < 20 {", "if by*8 + c0 < 20 && (bx*16 + c1) % 32 < 20 {");
  };
  CHECK(versioned(*cpu, kNests));
  CHECK(versioned(*cpu, in_term("bx*16 + c1 <= 19")));
  CHECK(versioned(*cpu, in_term("19 - c1 >= bx*16")));       // a negative coefficient: the last c1
  CHECK(versioned(*cpu, in_term("bx*16 + c1 >= 4")));        // a lower bound: the first c1
  CHECK(!versioned(*cpu, in_term("by*8 + c0 < 20")));        // the outer index: a branch per row already
  CHECK(!versioned(*cpu, in_term("bx*16 + c1 / 2 < 20")));   // not linear in c1
  CHECK(!versioned(*cpu, in_term("bx*16 + c1 != 20")));      // not monotone
  CHECK(!versioned(*cpu, in_term("bx*16 + c1 + c0 < 20")));  // the outer index too
  // Through a let bound inside the nest: its value is not known where the If would go.
  CHECK(!versioned(*cpu, with(in_term("bx*16 + c1 < 20"), "        As[c0, c1] = select(bx*16 + c1 < 20,",
                              "        let col: i32 = bx*16 + c1\n        As[c0, c1] = select(col < 20,")));
}

TEST_CASE("version_edge_copies: cpu code equals the interpreter on ragged gemms, with and without") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::check_ragged_gemms(*cpu, "version_edges", {"1", "0"}, {f32, f16}, rng());
}
