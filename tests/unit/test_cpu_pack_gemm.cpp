// The cpu pass pack_gemm_operands (targets/cpu/src/pack_gemm_operands.h): a block column's B
// panel copied once for several row blocks run in order. The checks: the pass's IR in and out;
// what it must leave alone (B written by the kernel, a B tile that depends on the row block, a
// scratch buffer read before the block writes it, the pass off); the interpreter computes the
// same before and after; and cpu code from the packed IR equals the interpreter on ragged shapes,
// every dtype and transpose. Also the code generator's scratch zeroing (scratch_zeroing.h): a
// buffer the block reads before writing still starts zeroed; one it overwrites first is not
// cleared.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/plugin.h"

using namespace tg;
using tg::testing::check_cpu_matches_interpreter;
using tg::testing::random_array;
using tg::testing::with;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(18);
  return r;
}

TargetPlugin* cpu_plugin() { return testing::cpu_plugin_or_skip("pack_gemm_operands"); }

CompileOptions panel_rows(int rows) {
  CompileOptions o;
  o.params["gemm_panel_rows"] = std::to_string(rows);
  return o;
}

/// The cpu pipeline's pack_gemm_operands on f.
Function pack(TargetPlugin& cpu, const Function& f, int rows) {
  return testing::run_cpu_pass(cpu, f, "pack_gemm_operands", panel_rows(rows));
}

// A tiled gemm as the cpu pipeline has it after bounds: 5 row blocks of 8 rows, 2 block columns,
// K = 20 in steps of 8 (the last one ragged, so the B copy keeps its bounds checks).
const std::string kTiled =
    "func g(A: f32[40, 20] global, B: f32[20, 32] global, C: f32[40, 32] global) {\n"
    "  kernel grid(2, 5) threads(1) -> (bx, by; tx) {\n"
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

// rows 2: 5 row blocks in blocks of 2, 2 and 1; the panel is B's 24 (3 steps of 8) rows × 16.
const std::string kPacked =
    "func g(A: f32[40, 20] global, B: f32[20, 32] global, C: f32[40, 32] global) {\n"
    "  kernel grid(2, 3) threads(1) -> (bx, by; tx) {\n"
    "    shared As: f32[8, 8]\n"
    "    shared Bs_panel: f32[24, 16]\n"
    "    fragment Cf: f32[8, 16]\n"
    "    copy B[0 +: 24, bx*16 +: 16] -> Bs_panel\n"
    "    for by_row in serial(0 +: 2) {\n"
    "      if by*2 + by_row < 5 {\n"
    "        fill Cf = 0.0\n"
    "        for ko in pipelined(0 +: 3, stages=2) {\n"
    "          copy A[(by*2 + by_row) * 8 +: 8, ko*8 +: 8] -> As\n"
    "          gemm(As, Bs_panel[ko*8 +: 8, 0 +: 16] -> Cf)\n"
    "        }\n"
    "        copy Cf -> C[(by*2 + by_row) * 8 +: 8, bx*16 +: 16]\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

std::vector<float> run_interpreter(const Function& f, const std::vector<float>& a,
                                   const std::vector<float>& b) {
  std::vector<float> av = a, bv = b, c(40 * 32, -7.f);
  std::vector<HostArg> args(3);
  args[0].data = av.data(), args[0].shape = {40, 20};
  args[1].data = bv.data(), args[1].shape = {20, 32};
  args[2].data = c.data(), args[2].shape = {40, 32};
  interpret(f, args);
  return c;
}

}  // namespace

TEST_CASE("pack_gemm_operands: IR in, IR out") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const Function in = parse_function(kTiled, "tiled.tgir");
  verify(in);
  const Function out = pack(*cpu, in, 2);
  CHECK(print(out) == kPacked);
  // The interpreter computes the same C (every element written, ragged K zero-filled).
  std::vector<float> a(40 * 20), b(20 * 32);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 11) - 5);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 7) - 3);
  const std::vector<float> before = run_interpreter(in, a, b), after = run_interpreter(out, a, b);
  CHECK(before == after);
  CHECK(before[0] != -7.f);
  // Row blocks that divide the grid need no guard; the pass runs once (no tile copy is left).
  const std::string five = print(pack(*cpu, in, 5));
  CHECK(five.find("grid(2, 1)") != std::string::npos);
  CHECK(five.find("if by*5") == std::string::npos);
  CHECK(print(pack(*cpu, out, 2)) == kPacked);
  // Off (0 or 1): unchanged.
  CHECK(print(pack(*cpu, in, 0)) == kTiled);
  CHECK(print(pack(*cpu, in, 1)) == kTiled);
}

TEST_CASE("pack_gemm_operands: what it leaves alone") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  auto unchanged = [&](const std::string& text) {
    const Function f = parse_function(text, "case.tgir");
    verify(f);
    CHECK(print(pack(*cpu, f, 2)) == print(f));
  };
  // The tile depends on the row block: the blocks of a column do not share it.
  unchanged(
      with(with(kTiled, "B: f32[20, 32]", "B: f32[40, 32]"), "copy B[ko*8 +: 8", "copy B[ko*8 + by +: 8"));
  // The kernel writes B: a panel copied first would miss the writes.
  unchanged(with(kTiled, "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n",
                 "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n    copy Cf -> B[0 +: 8, bx*16 +: 16]\n"));
  // Cf is accumulated into before anything writes it: it relies on starting zeroed in every block.
  unchanged(with(kTiled, "    fill Cf = 0.0\n", ""));
  // The tile is read by something besides the gemm.
  unchanged(with(kTiled, "      gemm(As, Bs -> Cf)\n", "      gemm(As, Bs -> Cf)\n      copy Bs -> Cf\n"));
  // The gemm reads the tile before this iteration copies it (the previous iteration's tile).
  unchanged(with(with(kTiled, "      copy B[ko*8 +: 8, bx*16 +: 16] -> Bs\n", ""),
                 "      gemm(As, Bs -> Cf)\n",
                 "      gemm(As, Bs -> Cf)\n      copy B[ko*8 +: 8, bx*16 +: 16] -> Bs\n"));
  // One row block: nothing to share.
  unchanged(with(kTiled, "grid(2, 5)", "grid(2, 1)"));
}

TEST_CASE("pack_gemm_operands: cpu code equals the interpreter, ragged, every dtype and transpose") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  for (DType t : {f32, f16, bf16})
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 1, tb = tr & 2;
      INFO(t.name() << " trans_a " << ta << " trans_b " << tb);
      // 61×83×70 in 12×48×16 tiles: 6 row blocks (blocks of 4: 4 and 2), ragged in M, N and K.
      const int64_t M = 61, N = 83, K = 70;
      Kernel k = tg::testing::gemm_kernel(t, ta, tb, M, N, K, 12, 48, 16, 3);
      std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
      std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      check_cpu_matches_interpreter(
          *cpu, k.function(),
          {random_array(as, t, rng()), random_array(bs, t, rng()), random_array({M, N}, f32, rng())}, {},
          1e-4, panel_rows(4));
    }
}

TEST_CASE("cpu scratch: zeroed per block where the block reads it first, not where it overwrites it") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  TargetPlugin* plugin = cpu_plugin();
  if (!plugin) return;
  // S is read (S[i] + X[...]) before anything writes it: every block must see zeros there, or
  // the second block sees the first block's values.
  const std::string reads_first =
      "func z(X: f32[64] global, Y: f32[64] global) {\n"
      "  kernel grid(4) threads(1) -> (bx; tx) {\n"
      "    shared S: f32[16]\n"
      "    for i in parallel(0 +: 16) {\n"
      "      S[i] = S[i] + X[bx*16 + i]\n"
      "    }\n"
      "    for i in parallel(0 +: 16) {\n"
      "      Y[bx*16 + i] = S[i]\n"
      "    }\n"
      "  }\n"
      "}\n";
  const std::string overwrites = with(reads_first, "S[i] = S[i] + X[bx*16 + i]", "S[i] = X[bx*16 + i]");
  for (const std::string& text : {reads_first, overwrites}) {
    const Function f = parse_function(text, "z.tgir");
    verify(f);
    check_cpu_matches_interpreter(*cpu, f, {random_array({64}, f32, rng()), random_array({64}, f32, rng())});
  }
  const TargetInfo info = plugin->info_for_arch("");
  auto memsets = [&](const std::string& text) {
    const std::string src = Target::codegen_for(*plugin, info, parse_function(text, "z.tgir"), {}).source;
    int n = 0;
    for (std::size_t p = src.find("call void @llvm.memset"); p != std::string::npos;
         p = src.find("call void @llvm.memset", p + 1))
      ++n;
    return n;
  };
  CHECK(memsets(reads_first) == 1);
  CHECK(memsets(overwrites) == 0);
}
