// The cpu target's bf16 gemm through vdpbf16ps (emit_gemm.cpp's second scheme, for CPUs with
// avx512_bf16, on request: {"bf16_dot": "1"}): on any host, the code generated for such a CPU
// multiplies bf16 pairs with it when asked, and only then and there; on a host that has the
// instruction, results match the interpreter for odd K tiles, transposed operands and column strips
// that end in a partial vector and scalar columns.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>

#include "cpu_test_util.h"

using namespace tg;
using tg::testing::gemm_kernel;

namespace {

std::string assembly_for(const Target& cpu, const std::string& arch, const Kernel& k,
                         std::map<std::string, std::string> params = {}) {
  CompileOptions opt;
  opt.params = std::move(params);
  TargetPlugin& p = cpu.plugin();
  return Target::codegen_for(p, p.info_for_arch(arch), k.function(), opt).assembly;
}

bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("cpu bf16 dot: code for an avx512_bf16 CPU multiplies bf16 pairs with vdpbf16ps when asked, only there") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  const std::map<std::string, std::string> dot{{"bf16_dot", "1"}};
  Kernel bf = gemm_kernel(bf16, false, false, 128, 128, 128, 64, 64, 32);
  std::string spr = assembly_for(*cpu, "sapphirerapids", bf, dot);
  CHECK(has(spr, "vdpbf16ps"));
  CHECK(has(spr, "%zmm"));
  // By default bf16 is widened to f32 (faster there); a CPU without avx512_bf16 never gets it.
  std::string widened = assembly_for(*cpu, "sapphirerapids", bf);
  CHECK_FALSE(has(widened, "vdpbf16ps"));
  CHECK(has(widened, "vfmadd231ps"));
  CHECK_FALSE(has(assembly_for(*cpu, "skylake-avx512", bf, dot), "vdpbf16ps"));
  CHECK_FALSE(has(assembly_for(*cpu, "znver3", bf, dot), "vdpbf16ps"));
  // Only bf16 × bf16: f16 and f32 gemms keep FMA on f32.
  CHECK_FALSE(has(assembly_for(*cpu, "sapphirerapids", gemm_kernel(f16, false, false, 64, 64, 64, 32, 32, 16), dot),
                  "vdpbf16ps"));
  CHECK_FALSE(has(assembly_for(*cpu, "sapphirerapids", gemm_kernel(f32, false, false, 64, 64, 64, 32, 32, 16), dot),
                  "vdpbf16ps"));
}

TEST_CASE("cpu bf16 dot: matches the interpreter on odd K tiles, transposes and ragged strips") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    MESSAGE("skipped: this CPU has no avx512_bf16 (vdpbf16ps cannot run here)");
    return;
  }
  struct Case {
    bool ta, tb;
    int64_t M, N, K, bm, bn, bk;
  };
  // bn 64: whole 4-vector strips; 40: two vectors and 8 scalar columns; 48: 3-vector strips;
  // 80: one 64-column strip and a 1-vector strip. bk odd: the last pair's high half is zero.
  for (Case c : {Case{false, false, 70, 100, 45, 32, 64, 15}, Case{true, false, 50, 37, 33, 24, 40, 16},
                 Case{false, true, 64, 96, 64, 16, 48, 8}, Case{true, true, 33, 70, 31, 16, 80, 7}}) {
    INFO("trans_a " << c.ta << " trans_b " << c.tb << " " << c.M << "x" << c.N << "x" << c.K << " tiles " << c.bm
                    << "x" << c.bn << "x" << c.bk);
    Kernel k = gemm_kernel(bf16, c.ta, c.tb, c.M, c.N, c.K, c.bm, c.bn, c.bk);
    tg::testing::NoKernelCache no_cache;
    CompileOptions opt;
    opt.params["bf16_dot"] = "1";
    CHECK(has(cpu->compile(k, opt).assembly(), "vdpbf16ps"));
    std::mt19937_64 r(uint64_t(c.M * 1000 + c.N));
    auto a = tg::testing::random_array(c.ta ? std::vector<int64_t>{c.K, c.M} : std::vector<int64_t>{c.M, c.K}, bf16, r);
    auto b = tg::testing::random_array(c.tb ? std::vector<int64_t>{c.N, c.K} : std::vector<int64_t>{c.K, c.N}, bf16, r);
    auto out = tg::testing::random_array({c.M, c.N}, f32, r);  // every element overwritten
    // Products of bf16 values are exact in f32; only the f32 sums round (the interpreter's in double).
    tg::testing::check_cpu_matches_interpreter(*cpu, k.function(), {a, b, out}, {}, 1e-4, opt);
  }
}
