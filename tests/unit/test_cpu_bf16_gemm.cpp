// The cpu target's bf16 × bf16 gemm schemes (emit_gemm.cpp): AMX tiles (tdpbf16ps) by default
// where the CPU has amx-bf16, vdpbf16ps on request ({"bf16_dot": "1"}) where it has avx512_bf16,
// else both operands widened to f32 for FMA. On any host: the code generated for a named CPU uses
// each scheme exactly where it should. On a host that can run a scheme: its results match the
// interpreter for odd K tiles, transposed operands, partial k steps, row and column tile edges and
// scalar columns.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "cpu_test_util.h"

using namespace tg;
using tg::testing::gemm_kernel;
using Opts = std::map<std::string, std::string>;

namespace {

std::string assembly_for(const Target& cpu, const std::string& arch, const Kernel& k, Opts params = {}) {
  CompileOptions opt;
  opt.params = std::move(params);
  TargetPlugin& p = cpu.plugin();
  return Target::codegen_for(p, p.info_for_arch(arch), k.function(), opt).assembly;
}

bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// A CPU with AMX-BF16 to read code for. Not the host's own name: on a host LLVM calls
// "sapphirerapids" whose kernel does not grant AMX (a VM), that name means the host's features.
std::string amx_cpu(const Target& cpu) {
  for (const char* name : {"sapphirerapids", "graniterapids", "emeraldrapids"})
    if (cpu.info().arch != name) return name;
  return "sapphirerapids";
}

// Runs every case with `params` where the host's code for it contains `instruction`; returns
// whether it could (false: the host cannot run that scheme).
bool check_scheme(const Target& cpu, const Opts& params, const char* instruction) {
  struct Case {
    bool ta, tb;
    int64_t M, N, K, bm, bn, bk;
  };
  // Tiles bm×bn×bk. bk odd: the last pair's high half is zero; bk 80: k steps of 32, 32, 16.
  // bn 64: four 16-column tiles (vdpbf16ps: one 4-vector strip); 40: two and 8 scalar columns;
  // 48: three (an odd tile); 80: five. bm 24 and 48: a 16-row tile and 8 rows, three 16-row tiles.
  const Case cases[] = {{false, false, 70, 100, 45, 32, 64, 15}, {true, false, 50, 37, 33, 24, 40, 16},
                        {false, true, 64, 96, 64, 16, 48, 8},    {true, true, 33, 70, 31, 16, 80, 7},
                        {false, false, 100, 130, 200, 48, 64, 80}};
  CompileOptions opt;
  opt.params = params;
  for (const Case& c : cases) {
    INFO("trans_a " << c.ta << " trans_b " << c.tb << " " << c.M << "x" << c.N << "x" << c.K << " tiles " << c.bm
                    << "x" << c.bn << "x" << c.bk);
    // Said before running: a crash (SIGILL from a tile instruction) then still names its case.
    std::fprintf(stderr, "  %s: trans_a %d trans_b %d %lldx%lldx%lld tiles %lldx%lldx%lld\n", instruction, int(c.ta),
                 int(c.tb), (long long)c.M, (long long)c.N, (long long)c.K, (long long)c.bm, (long long)c.bn,
                 (long long)c.bk);
    Kernel k = gemm_kernel(bf16, c.ta, c.tb, c.M, c.N, c.K, c.bm, c.bn, c.bk);
    tg::testing::NoKernelCache no_cache;
    if (!has(cpu.compile(k, opt).assembly(), instruction)) return false;
    std::mt19937_64 r(uint64_t(c.M * 1000 + c.N));
    auto a = tg::testing::random_array(c.ta ? std::vector<int64_t>{c.K, c.M} : std::vector<int64_t>{c.M, c.K}, bf16, r);
    auto b = tg::testing::random_array(c.tb ? std::vector<int64_t>{c.N, c.K} : std::vector<int64_t>{c.K, c.N}, bf16, r);
    auto out = tg::testing::random_array({c.M, c.N}, f32, r);  // every element overwritten
    // Products of bf16 values are exact in f32; only the f32 sums round (the interpreter's in double).
    tg::testing::check_cpu_matches_interpreter(cpu, k.function(), {a, b, out}, {}, 1e-4, opt);
  }
  return true;
}

}  // namespace

TEST_CASE("cpu bf16 gemm: each scheme in the code for the CPUs that have it, and only there") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  Kernel bf = gemm_kernel(bf16, false, false, 128, 128, 128, 64, 64, 32);
  // Sapphire Rapids: AMX tiles by default, configured once.
  std::string spr = assembly_for(*cpu, amx_cpu(*cpu), bf);
  CHECK(has(spr, "tdpbf16ps"));
  CHECK(has(spr, "ldtilecfg"));
  CHECK(has(spr, "tilerelease"));
  CHECK_FALSE(has(spr, "vdpbf16ps"));
  // Without AMX: widened to f32 unless vdpbf16ps is asked for.
  std::string widened = assembly_for(*cpu, amx_cpu(*cpu), bf, {{"amx", "0"}});
  CHECK_FALSE(has(widened, "tdpbf16ps"));
  CHECK_FALSE(has(widened, "vdpbf16ps"));
  CHECK(has(widened, "vfmadd231ps"));
  std::string dot = assembly_for(*cpu, amx_cpu(*cpu), bf, {{"amx", "0"}, {"bf16_dot", "1"}});
  CHECK(has(dot, "vdpbf16ps"));
  CHECK(has(dot, "%zmm"));
  // CPUs without the instructions never get them, whatever is asked.
  for (const char* arch : {"skylake-avx512", "znver3"}) {
    std::string s = assembly_for(*cpu, arch, bf, {{"bf16_dot", "1"}});
    CHECK_FALSE(has(s, "vdpbf16ps"));
    CHECK_FALSE(has(s, "tdpbf16ps"));
  }
  // Cooper Lake has avx512_bf16 and no AMX.
  CHECK(has(assembly_for(*cpu, "cooperlake", bf, {{"bf16_dot", "1"}}), "vdpbf16ps"));
  CHECK_FALSE(has(assembly_for(*cpu, "cooperlake", bf), "tdpbf16ps"));
  // Only bf16 × bf16: f16 and f32 gemms keep FMA on f32.
  for (DType t : {f16, f32}) {
    std::string s = assembly_for(*cpu, amx_cpu(*cpu), gemm_kernel(t, false, false, 64, 64, 64, 32, 32, 16),
                                 {{"bf16_dot", "1"}});
    CHECK_FALSE(has(s, "tdpbf16ps"));
    CHECK_FALSE(has(s, "vdpbf16ps"));
  }
}

TEST_CASE("cpu bf16 gemm: a scheme switch other than 0 or 1 is an error naming it") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  Kernel bf = gemm_kernel(bf16, false, false, 64, 64, 64, 32, 32, 16);
  for (const char* name : {"amx", "bf16_dot"}) {
    INFO(name);
    const std::string want = std::string("param \"") + name + "\" is 'yes'; it takes 0 or 1";
    CHECK_THROWS_WITH_AS(assembly_for(*cpu, amx_cpu(*cpu), bf, {{name, "yes"}}), doctest::Contains(want.c_str()),
                         Error);
  }
}

TEST_CASE("cpu bf16 gemm: AMX tiles match the interpreter (edges, transposes, odd K, partial k steps)") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  if (!check_scheme(*cpu, {}, "tdpbf16ps"))
    MESSAGE("skipped: this host does not run AMX tiles (no amx-bf16, or Linux did not grant the tile state)");
}

TEST_CASE("cpu bf16 gemm: vdpbf16ps matches the interpreter (edges, transposes, odd K)") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  if (!check_scheme(*cpu, {{"amx", "0"}, {"bf16_dot", "1"}}, "vdpbf16ps"))
    MESSAGE("skipped: this CPU has no avx512_bf16 (vdpbf16ps cannot run here)");
}

TEST_CASE("cpu bf16 gemm: widened to f32 matches the interpreter on every host") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  CHECK(check_scheme(*cpu, {{"amx", "0"}}, "vfmadd"));
}
