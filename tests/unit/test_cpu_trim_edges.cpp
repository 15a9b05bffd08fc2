// The cpu pass trim_edge_tiles (targets/cpu/src/trim_edge_tiles.h): an edge block's gemm over the
// rows, columns and K steps that exist. The checks: the pass's IR in and out; what it leaves
// alone (a fragment read after the loop other than element by element, a copy out without bounds
// checks, an A copy not stepping K); the interpreter computes the same before and after; the
// edge gemms keep their prefetches; and cpu code equals the interpreter on ragged shapes in every
// dtype and transpose, with the pass and without it.
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
  static std::mt19937_64 r(1818);
  return r;
}

TargetPlugin* cpu_plugin() { return testing::cpu_plugin_or_skip("trim_edge_tiles"); }

// 20×20×20 in 8×16×8 tiles: the last row block has 4 rows, the last column block 4 columns
// (rounded up to a vector, 8), the last K step 4 of 8.
const std::string kRagged =
    "func g(A: f32[20, 20] global, B: f32[20, 20] global, C: f32[20, 20] global) {\n"
    "  kernel grid(2, 3) threads(1) -> (bx, by; tx) {\n"
    "    shared As: f32[8, 8]\n"
    "    shared Bs: f32[8, 16]\n"
    "    fragment Cf: f32[8, 16]\n"
    "    fill Cf = 0.0\n"
    "    for ko in pipelined(0 +: 3, stages=2) {\n"
    "      copy A[by*8 +: 8, ko*8 +: 8] -> As\n"
    "      copy B[ko*8 +: 8, bx*16 +: 16] -> Bs\n"
    "      gemm(As, Bs -> Cf)\n"
    "    }\n"
    "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n"
    "  }\n"
    "}\n";

// The last K step is trimmed only where nothing else is (five gemms, not eight).
const std::string kTrimmedGemm =
    "      if by*8 + 8 > 20 {\n"
    "        if bx*16 + 16 > 20 {\n"
    "          gemm(As[0 +: 4, 0 +: 8], Bs[0 +: 8, 0 +: 8] -> Cf[0 +: 4, 0 +: 8])\n"
    "        } else {\n"
    "          gemm(As[0 +: 4, 0 +: 8], Bs -> Cf[0 +: 4, 0 +: 16])\n"
    "        }\n"
    "      } else {\n"
    "        if bx*16 + 16 > 20 {\n"
    "          gemm(As, Bs[0 +: 8, 0 +: 8] -> Cf[0 +: 8, 0 +: 8])\n"
    "        } else {\n"
    "          if ko == 2 {\n"
    "            gemm(As[0 +: 8, 0 +: 4], Bs[0 +: 4, 0 +: 16] -> Cf)\n"
    "          } else {\n"
    "            gemm(As, Bs -> Cf)\n"
    "          }\n"
    "        }\n"
    "      }\n";

std::vector<float> interpret_c(const Function& f) {
  std::vector<float> a(400), b(400), c(400, -7.f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 11) - 5), b[i] = float(int(i % 7) - 3);
  std::vector<HostArg> args(3);
  args[0].data = a.data(), args[0].shape = {20, 20};
  args[1].data = b.data(), args[1].shape = {20, 20};
  args[2].data = c.data(), args[2].shape = {20, 20};
  interpret(f, args);
  return c;
}

}  // namespace

TEST_CASE("trim_edge_tiles: IR in, IR out") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const Function in = parse_function(kRagged, "ragged.tgir");
  verify(in);
  const Function out = testing::run_cpu_pass(*cpu, in, "trim_edge_tiles");
  CHECK(print(out) == with(kRagged, "      gemm(As, Bs -> Cf)\n", kTrimmedGemm));
  const std::vector<float> before = interpret_c(in), after = interpret_c(out);
  CHECK(before == after);
  CHECK(before[399] != -7.f);
  // Aligned in every dimension: nothing to trim. Once is enough (no whole-tile gemm is left in the loop).
  const std::string aligned =
      with(kRagged, "A: f32[20, 20] global, B: f32[20, 20] global, C: f32[20, 20] global",
           "A: f32[24, 24] global, B: f32[24, 32] global, C: f32[24, 32] global");
  CHECK(print(testing::run_cpu_pass(*cpu, parse_function(aligned, "a.tgir"), "trim_edge_tiles")) == aligned);
  CHECK(print(testing::run_cpu_pass(*cpu, out, "trim_edge_tiles")) == print(out));
  // trim_edges=0: the pass is not in the pipeline.
  CompileOptions off;
  off.params["trim_edges"] = "0";
  for (const PassEntry& p : cpu->pipeline(cpu->info_for_arch("haswell"), off))
    CHECK(p.name != "trim_edge_tiles");
}

TEST_CASE("trim_edge_tiles: what it leaves alone") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  auto trimmed_dims = [&](const std::string& text) {
    const Function f = parse_function(text, "case.tgir");
    verify(f);
    const std::string p = print(testing::run_cpu_pass(*cpu, f, "trim_edge_tiles"));
    return std::vector<bool>{p.find("if by*8 + 8 > 20") != std::string::npos,
                             p.find("if bx*16 + 16 > 20") != std::string::npos,
                             p.find("if ko == 2") != std::string::npos};
  };
  CHECK(trimmed_dims(kRagged) == std::vector<bool>{true, true, true});
  // A fragment read across rows after the loop (a transposed copy) keeps its rows and columns.
  CHECK(trimmed_dims(with(kRagged, "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n",
                          "    for i in parallel(0 +: 8) {\n      for j in parallel(0 +: 16) {\n"
                          "        Cf[i, j] = Cf[7 - i, j]\n      }\n    }\n"
                          "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n")) ==
        std::vector<bool>{false, false, true});
  // ... but element-wise updates (an epilogue) are fine.
  CHECK(trimmed_dims(with(kRagged, "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n",
                          "    for i in parallel(0 +: 8) {\n      for j in parallel(0 +: 16) {\n"
                          "        Cf[i, j] = max(Cf[i, j], 0.0)\n      }\n    }\n"
                          "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n")) ==
        std::vector<bool>{true, true, true});
  // The A copy does not step K with the loop: K steps stay whole.
  CHECK(trimmed_dims(with(kRagged, "copy A[by*8 +: 8, ko*8 +: 8]", "copy A[by*8 +: 8, 0 +: 8]")) ==
        std::vector<bool>{true, true, false});
  // Another reader of the fragment inside the loop: no trimming at all.
  CHECK(trimmed_dims(with(kRagged, "      gemm(As, Bs -> Cf)\n",
                          "      gemm(As, Bs -> Cf)\n      copy Cf -> C[0 +: 8, 0 +: 16]\n")) ==
        std::vector<bool>{false, false, false});
}

TEST_CASE("trim_edge_tiles: the edge gemms keep the prefetches of the next tiles") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  // 44×48×40 in 24×32×16 tiles: edges of 20 rows, 16 columns and 8 K steps, each with whole
  // AVX2 micro-tiles (6×16), so every edge gemm has steps to prefetch in.
  Kernel k = tg::testing::gemm_kernel(f32, false, false, 44, 48, 40, 24, 32, 16, 3);
  const TargetInfo info = cpu->info_for_arch("haswell");
  std::vector<std::pair<std::string, std::string>> stages;
  CompileOptions opt;
  Target::codegen_for(*cpu, info, k.function(), opt, &stages);
  std::string last;
  for (auto& [name, text] : stages)
    if (name == "insert_prefetches") last = text;
  REQUIRE(!last.empty());
  int gemms = 0, hinted = 0;
  for (std::size_t p = last.find("gemm("); p != std::string::npos; p = last.find("gemm(", p + 1)) ++gemms;
  for (std::size_t p = last.find("interleave t"); p != std::string::npos;
       p = last.find("interleave t", p + 1))
    ++hinted;
  CHECK(gemms > 1);
  CHECK(hinted == gemms);
}

TEST_CASE("trim_edge_tiles: cpu code equals the interpreter, ragged, every dtype and transpose") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::check_ragged_gemms(*cpu, "trim_edges", {"1", "0"}, {f32, f16, bf16}, rng());
}
