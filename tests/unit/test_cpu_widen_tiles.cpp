// widen_gemm_tiles (targets/cpu/src/widen_gemm_tiles.h): narrow-float tiles that only copies fill
// and only micro-kernel gemms read become f32, both operands of a gemm together; IR in, IR out, the
// interpreter's answer unchanged; and what it leaves alone.
#include <doctest/doctest.h>

#include "cpu_test_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/plugin.h"

using namespace tg;
using tg::testing::with;

namespace {

TargetPlugin* cpu_plugin() { return testing::cpu_plugin_or_skip("widen_gemm_tiles"); }

// fp8_gemm's shape at 20×20×20 in 8×16×8 tiles (B stored N×K): ragged edges, zero-filled copies.
const std::string kFp8 =
    "func g(A: e4m3[20, 20] global, B: e4m3[20, 20] global, C: f32[20, 20] global) {\n"
    "  kernel grid(2, 3) threads(1) -> (bx, by; tx) {\n"
    "    shared As: e4m3[8, 8]\n"
    "    shared Bs: e4m3[16, 8]\n"
    "    fragment Cf: f32[8, 16]\n"
    "    fill Cf = 0.0\n"
    "    for ko in pipelined(0 +: 3, stages=2) {\n"
    "      copy A[by*8 +: 8, ko*8 +: 8] -> As\n"
    "      copy B[bx*16 +: 16, ko*8 +: 8] -> Bs\n"
    "      gemm(As, Bs -> Cf, trans_b)\n"
    "    }\n"
    "    copy Cf -> C[by*8 +: 8, bx*16 +: 16]\n"
    "  }\n"
    "}\n";

std::vector<float> interpret_c(const Function& f) {
  std::vector<uint8_t> a(400), b(400);
  std::vector<float> c(400, -7.f);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = float_to_fp8_bits(fp8_e4m3, float(int(i % 11) - 5) / 4),
    b[i] = float_to_fp8_bits(fp8_e4m3, float(int(i % 7) - 3));
  std::vector<HostArg> args(3);
  args[0].data = a.data(), args[0].shape = {20, 20}, args[0].dtype = fp8_e4m3;
  args[1].data = b.data(), args[1].shape = {20, 20}, args[1].dtype = fp8_e4m3;
  args[2].data = c.data(), args[2].shape = {20, 20};
  interpret(f, args);
  return c;
}

}  // namespace

TEST_CASE("widen_gemm_tiles: IR in, IR out; the interpreter's answer is the same") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const Function in = parse_function(kFp8, "fp8.tgir");
  verify(in);
  const Function out = testing::run_cpu_pass(*cpu, in, "widen_gemm_tiles");
  const std::string want = with(with(kFp8, "    shared As: e4m3[8, 8]\n", "    shared As: f32[8, 8]\n"),
                                "    shared Bs: e4m3[16, 8]\n", "    shared Bs: f32[16, 8]\n");
  CHECK(print(out) == want);
  const std::vector<float> before = interpret_c(in), after = interpret_c(out);
  CHECK(before == after);
  CHECK(before[399] != -7.f);
  // f16 likewise; with gemm=plain (no micro-kernel) or widen_tiles=0 the pass is not in the pipeline.
  const std::string f16_in =
      with(with(with(kFp8, "e4m3[20, 20] global, B: e4m3", "f16[20, 20] global, B: f16"),
                "    shared As: e4m3", "    shared As: f16"),
           "    shared Bs: e4m3", "    shared Bs: f16");
  CHECK(print(testing::run_cpu_pass(*cpu, parse_function(f16_in, "f16.tgir"), "widen_gemm_tiles"))
            .find("f16[8, 8]") == std::string::npos);
  CompileOptions plain, off;
  plain.params["gemm"] = "plain";
  off.params["widen_tiles"] = "0";
  for (const CompileOptions& o : {plain, off})
    for (const PassEntry& p : cpu->pipeline(cpu->info_for_arch("haswell"), o))
      CHECK(p.name != "widen_gemm_tiles");
}

TEST_CASE("widen_gemm_tiles: what it leaves alone") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  // A tile read elsewhere too (a load beside the gemm): neither operand widens, the pair keeps one dtype.
  const std::string read_too =
      with(kFp8, "      gemm(As, Bs -> Cf, trans_b)\n",
           "      gemm(As, Bs -> Cf, trans_b)\n      Cf[0, 0] = Cf[0, 0] + cast<f32>(As[0, 0])\n");
  CHECK(print(testing::run_cpu_pass(*cpu, parse_function(read_too, "r.tgir"), "widen_gemm_tiles")) ==
        read_too);
  // bf16: the vdpbf16ps and AMX forms read the tiles as pairs.
  const std::string bf = with(with(with(kFp8, "e4m3[20, 20] global, B: e4m3", "bf16[20, 20] global, B: bf16"),
                                   "    shared As: e4m3", "    shared As: bf16"),
                              "    shared Bs: e4m3", "    shared Bs: bf16");
  CHECK(print(testing::run_cpu_pass(*cpu, parse_function(bf, "bf.tgir"), "widen_gemm_tiles")) == bf);
  // Filled from another dtype (a converting copy): the copy's rounding to the tile's dtype stays.
  const std::string conv = with(kFp8, "A: e4m3[20, 20] global", "A: f32[20, 20] global");
  CHECK(print(testing::run_cpu_pass(*cpu, parse_function(conv, "c.tgir"), "widen_gemm_tiles")) == conv);
}
