// The tilegen command, run as a user runs it: each form's exit status and key output lines,
// and every kind of usage error (exit 2 with a sentence, never an uncaught exception).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "tilegen/runtime.h"

namespace {

using tg::test::CliResult;
using tg::test::tilegen_env;
using tg::test::tilegen_path;

CliResult tilegen(const std::string& args) { return tilegen_env("", args); }

bool has(const CliResult& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  const std::string p = std::string(TILEGEN_BINARY_DIR) + "/test_cli_" + name;
  std::filesystem::remove(p);
  return p;
}

// Ragged (not a multiple of the tiles) yet small enough for the interpreter to run in well under
// a second; gemm and gemm_relu share these parameter names.
const std::string kSmallGemm = "--set M=50,N=37,K=45,block_M=32,block_N=32,block_K=16";

}  // namespace

TEST_CASE("cli: the binary exists") {
  REQUIRE_MESSAGE(std::filesystem::exists(tilegen_path()), tilegen_path());
}

TEST_CASE("cli: help, and no command") {
  auto r = tilegen("help");
  CHECK(r.status == 0);
  CHECK(has(r, "usage: tilegen COMMAND"));
  r = tilegen("");
  CHECK(r.status == 2);
  CHECK(has(r, "usage:"));
  CHECK(tilegen("run --help").status == 0);
}

TEST_CASE("cli: targets lists interp as available with a device") {
  auto r = tilegen("targets");
  CHECK(r.status == 0);
  CHECK(has(r, "TARGET"));
  CHECK(has(r, "interp"));
  CHECK(has(r, "available"));
  CHECK(has(r, "device 0:"));
}

TEST_CASE("cli: targets lists a plugin that aborts or faults as broken, the others as they are") {
  const std::string env =
      std::string("TILEGEN_PLUGIN_PATH=") + TILEGEN_CRASH_PLUGIN_DIR + ":" + TILEGEN_TEST_PLUGIN_DIR;
  auto r = tilegen_env(env, "targets");
  CHECK(r.status == 0);
  CHECK(has(r, "killed by SIGABRT (signal 6) while it was loaded and probed in a child process"));
#if defined(TILEGEN_SANITIZED)
  // UBSan may see the null store first and end the child with status 1 (see test_plugin_hostile.cpp).
  CHECK((has(r, "the process exited with status 1 while it was loaded and probed in a child process") ||
         has(r, "killed by SIGSEGV (signal 11) while it was loaded and probed in a child process")));
#else
  CHECK(has(r, "killed by SIGSEGV (signal 11) while it was loaded and probed in a child process"));
#endif
  CHECK(has(r, "testgood"));
  CHECK(has(r, "echo device"));
  CHECK(has(r, "device 0: "));
  // An interp-only run never loads them.
  r = tilegen_env(env, "run gemm --target interp --seed 5 " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "max error"));
}

TEST_CASE("cli: --set values outside a parameter's range are usage errors naming the range") {
  auto r = tilegen("run gemm --target interp --set M=2147483648");
  CHECK(r.status == 2);
  CHECK(has(r, "parameter 'M' of sample gemm is 2147483648; it must be between 1 and 2147483647"));
  r = tilegen("run gemm --target interp --set M=0");
  CHECK(r.status == 2);
  CHECK(has(r, "parameter 'M' of sample gemm is 0; it must be between 1 and 2147483647"));
}

TEST_CASE("cli: samples lists every sample with dtypes and parameters") {
  auto r = tilegen("samples");
  CHECK(r.status == 0);
  CHECK(has(r, "gemm: "));
  CHECK(has(r, "gemm_relu: "));
  CHECK(has(r, "dtypes: "));
  CHECK(has(r, "(default)"));
  CHECK(has(r, "parameters:"));
  r = tilegen("samples --names");
  CHECK(r.status == 0);
  CHECK(r.out.rfind("gemm\n", 0) == 0);
}

TEST_CASE("cli: ir as built and after the interp pipeline's passes") {
  auto r = tilegen("ir gemm " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "func gemm"));
  r = tilegen("ir gemm --after all " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "// ---- input"));
  CHECK(has(r, "func gemm"));
  r = tilegen("ir gemm --after input " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "func gemm"));
  r = tilegen("ir gemm --after no_such_pass");
  CHECK(r.status == 2);
  CHECK(has(r, "has no pass 'no_such_pass'"));
  // A sample takes the tiles its target is tuned for, as run and bench do (the cpu's 96x128x128
  // below 2048), the user's --set over them.
  if (std::string why; !tg::find_plugin("cpu", &why)) {
    MESSAGE("skipped cpu: ", why);
    return;
  }
  r = tilegen("ir gemm --target cpu");
  CHECK(r.status == 0);
  CHECK(has(r, "shared A_shared: f16[96, 128]"));
  r = tilegen("ir gemm --target cpu --set block_M=64");
  CHECK(has(r, "shared A_shared: f16[64, 128]"));
}

TEST_CASE("cli: --param sets CompileOptions params; a key the target does not know is an error") {
  auto r = tilegen("ir gemm --target interp --param check_bounds=all --after check_element_accesses " +
                   kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "func gemm"));
  r = tilegen("ir gemm --target interp --after check_element_accesses " + kSmallGemm);  // off by default
  CHECK(r.status == 2);
  r = tilegen("run gemm --target interp --param check_bounds=all --param bogus=1 " + kSmallGemm);
  CHECK(r.status != 0);
  CHECK(has(r, "target 'interp' has no CompileOptions param 'bogus'; the params it knows are check_bounds"));
  r = tilegen("source gemm --target interp --param check_bounds " + kSmallGemm);
  CHECK(r.status == 2);
  CHECK(has(r, "--param takes KEY=VALUE items"));
}

TEST_CASE("cli: source for interp, to stdout and to a file") {
  auto r = tilegen("source gemm --target interp " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "gemm"));
  const std::string out = temp_path("source.txt");
  r = tilegen("source gemm --target interp -o " + out + " " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(read_file(out).find("gemm") != std::string::npos);
  r = tilegen("source gemm");
  CHECK(r.status == 2);
  CHECK(has(r, "needs --target"));
  r = tilegen("source gemm --target interp --emit pdf");
  CHECK(r.status == 2);
  CHECK(has(r, "--emit takes source, asm or binary"));
}

TEST_CASE("cli: run compares with the reference and times the kernel") {
  auto r = tilegen("run gemm --target interp --seed 5 " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "target     interp"));
  CHECK(has(r, "seed       5"));
  CHECK(has(r, "max error"));
  CHECK(has(r, "tolerance"));
  CHECK(has(r, "median"));
  CHECK(last_line(r.out) == "PASS");
  r = tilegen("run gemm_relu --target interp " + kSmallGemm);  // no --seed: a fresh one, printed
  CHECK(r.status == 0);
  CHECK(has(r, "seed       "));
}

TEST_CASE("cli: conformance prints the matrix and totals, and writes JSON") {
  const std::string json = temp_path("conformance.json");
  auto r = tilegen("conformance --target interp --sample gemm_relu --dtype f32 --seed 3 --json " + json);
  CHECK(r.status == 0);
  CHECK(has(r, "SAMPLE DTYPE SHAPE"));
  CHECK(has(r, "gemm_relu f32 "));
  CHECK(last_line(r.out).find(" passed, 0 failed, 0 skipped") != std::string::npos);
  const std::string text = read_file(json);
  CHECK(text.rfind("{\"cases\":[", 0) == 0);
  CHECK(text.find("\"sample\":\"gemm_relu\"") != std::string::npos);
  CHECK(text.find("\"status\":\"pass\"") != std::string::npos);
  CHECK(text.find("\"max_error\":") != std::string::npos);
  r = tilegen("conformance --target interp --sample no_such_sample");
  CHECK(r.status == 2);
  CHECK(has(r, "unknown sample 'no_such_sample'"));
}

TEST_CASE("cli: bench times, appends CSV rows under one header") {
  const std::string csv = temp_path("bench.csv");
  auto r = tilegen("bench gemm --target interp --runs 2 " + kSmallGemm + " --csv " + csv);
  CHECK(r.status == 0);
  CHECK(has(r, "median"));
  CHECK(has(r, "TFLOP/s"));
  r = tilegen("bench gemm --target interp --runs 1 --check " + kSmallGemm + " --csv " + csv);
  CHECK(r.status == 0);
  CHECK(has(r, "check    pass"));
  const std::string text = read_file(csv);
  CHECK(text.rfind("date,sample,target,", 0) == 0);
  CHECK(text.find("date,", 1) == std::string::npos);  // the header once
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
}

TEST_CASE("cli: bench --vs peers") {
  auto r = tilegen("bench gemm --target interp --vs cublas " + kSmallGemm);
  CHECK(r.status == 2);
  CHECK(has(r, "peer cublas is not available in this build"));
  r = tilegen("bench gemm --vs no_such_peer");
  CHECK(r.status == 2);
  CHECK(has(r, "unknown peer 'no_such_peer'"));
  r = tilegen("bench softmax --vs openblas");
  CHECK(r.status == 2);
  CHECK(has(r, "peer openblas has no softmax"));
  r = tilegen("bench gemm --target interp --dtype f32 --runs 1 --vs openblas " + kSmallGemm);
  if (has(r, "cannot load libopenblas")) return;  // the peer's library is optional
  CHECK(r.status == 0);
  CHECK(last_line(r.out).rfind("speedup_vs_openblas=", 0) == 0);
}

TEST_CASE("cli: run without --target selects one; TILEGEN_TARGET naming none is a usage error") {
  auto r = tilegen("run gemm_relu " + kSmallGemm + " --seed 1");
  CHECK(r.status == 0);
  r = tilegen_env("TILEGEN_TARGET=no_such_target", "run gemm_relu " + kSmallGemm);
  CHECK(r.status == 2);
  CHECK(has(r, "TILEGEN_TARGET=no_such_target"));
}

TEST_CASE("cli: usage errors exit 2 with a sentence") {
  struct Case {
    const char* args;
    const char* says;
  };
  const Case cases[] = {
      {"frobnicate", "unknown command 'frobnicate'"},
      {"run no_such_sample", "unknown sample 'no_such_sample'"},
      {"run gemm --target no_such_target", "unknown target 'no_such_target'"},
      {"run gemm --set no_such_param=3", "no_such_param"},
      {"run gemm --dtype f17", "unknown dtype 'f17'"},
      {"run gemm --set M=abc", "needs an integer, got 'abc'"},
      {"run gemm --set M", "NAME=VALUE"},
      {"run gemm --frobnicate", "unknown option '--frobnicate'"},
      {"run gemm -x", "unknown option '-x'"},
      {"run gemm --seed", "needs a value"},
      {"run gemm --seed -4", "non-negative integer"},
      {"run", "missing SAMPLE"},
      {"run gemm extra", "unexpected argument 'extra'"},
      {"ir gemm --target no_such_target --after all", "unknown target 'no_such_target'"},
      {"conformance --target no_such_target", "unknown target 'no_such_target'"},
      {"conformance --dtype f17", "unknown dtype 'f17'"},
      {"targets --all", "unknown option '--all'"},
      {"bench gemm --target interp --runs 0", "--runs must be at least 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto r = tilegen(c.args);
    CHECK(r.status == 2);
    CHECK(has(r, c.says));
    CHECK(!has(r, "internal error"));
  }
}

TEST_CASE("cli: fuzz runs a counted, seeded batch and replays case files; bad options are usage errors") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(TILEGEN_BINARY_DIR) / "test-cli-fuzz";
  fs::remove_all(dir);
  if (std::string why; !tg::find_plugin("cpu", &why)) {
    MESSAGE("skipped: ", why);
    return;
  }
  CliResult r = tilegen("fuzz --target cpu --count 5 --seed 3 --execute-every 2 --out " + dir.string());
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "fuzz: target cpu, seed 3"));
  CHECK(has(r, "5 programs: "));
  CHECK(has(r, "0 failed"));
  CHECK_FALSE(fs::exists(dir));  // nothing failed, nothing written

  r = tilegen("fuzz --replay " + std::string(TILEGEN_SOURCE_DIR) + "/tests/fuzz/kernels --target cpu");
  CHECK(r.status == 0);
  CHECK(has(r, "0 unexpected"));

  CHECK(tilegen("fuzz --target nope").status == 2);
  CHECK(tilegen("fuzz --count -1").status == 2);
  r = tilegen("fuzz --replay /nonexistent/cases");
  CHECK(r.status == 1);
  CHECK(has(r, "no case file or folder /nonexistent/cases"));
}

TEST_CASE("cli: the null skeleton target is listed as unavailable, generates code without a device, and "
          "conformance skips it") {
  const std::string reason =
      "the null target is a skeleton to copy (targets/null, docs/adding_a_target.md); it has no device";
#ifndef TILEGEN_HAVE_NULL_PLUGIN
  MESSAGE("skipped: the null plugin is not built (TILEGEN_BUILD_PLUGINS=OFF)");
  return;
#endif
  CliResult r = tilegen("targets");
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "\nnull "));
  CHECK(has(r, "unavailable  " + reason));
  CHECK(!has(r, "killed by"));

  // Through info_for_arch("null"): the IR after the last pass of its pipeline is its source.
  CliResult source = tilegen("source gemm --target null --arch null " + kSmallGemm);
  CHECK(source.status == 0);
  CHECK(source.out.rfind("func gemm(", 0) == 0);
  CliResult ir = tilegen("ir gemm --target null --arch null --after partition_threads " + kSmallGemm);
  CHECK(ir.status == 0);
  CHECK(ir.out == source.out);
  r = tilegen("source gemm --target null " + kSmallGemm);
  CHECK(r.status == 2);
  CHECK(has(r, "give --arch ARCH"));
  r = tilegen("source gemm --target null --arch sm_80 " + kSmallGemm);
  CHECK(r.status == 2);
  CHECK(has(r, "the null target has one, 'null'"));

  r = tilegen("conformance --target null --sample gemm --dtype f32");
  CHECK(r.status == 0);
  CHECK(has(r, "case(s): target unavailable: " + reason));
  CHECK(has(r, "\n0 passed, 0 failed, "));
}

// ---- Kernels as IR text (FILE.tgir): a gemm and an element-wise kernel that are not samples.
namespace {

std::string cli_kernel(const std::string& name) {
  return std::string(TILEGEN_SOURCE_DIR) + "/tests/cli/" + name;
}

// `path` holding `text`, for the error cases.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

// Every stage name `tilegen ir --after all` printed, in order.
std::vector<std::string> stage_headers(const std::string& out) {
  std::vector<std::string> names;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("// ---- ", 0) == 0) names.push_back(line.substr(8));
  return names;
}

}  // namespace

TEST_CASE("cli: ir of a .tgir file as written, after bind_sizes, and after every pass") {
  const std::string gemm = cli_kernel("small_gemm.tgir");
  auto r = tilegen("ir " + gemm);
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "func small_gemm(A: f16[M, K] global"));  // sizes still free
  r = tilegen("ir " + gemm + " --after bind_sizes");     // the file's `# sizes M=50 N=37 K=45`
  CHECK(r.status == 0);
  CHECK(has(r, "func small_gemm(A: f16[50, 45] global, B: f16[45, 37] global, C: f32[50, 37] global)"));
  r = tilegen("ir " + gemm + " --after bind_sizes --set M=64");  // --set over the file's line
  CHECK(r.status == 0);
  CHECK(has(r, "A: f16[64, 45] global"));
  r = tilegen("ir " + gemm + " --after all");
  CHECK(r.status == 0);
  const std::vector<std::string> stages = stage_headers(r.out);
  REQUIRE(stages.size() >= 3);
  CHECK(stages[0] == "input");
  CHECK(stages[1] == "after bind_sizes");
  CHECK(has(r, "func small_gemm(A: f16[M, K] global"));
  CHECK(has(r, "func small_gemm(A: f16[50, 45] global"));
  r = tilegen("ir " + gemm + " --locations");
  CHECK(r.status == 0);
  CHECK(has(r, "small_gemm.tgir:"));
}

TEST_CASE("cli: bind_sizes is the first stage of every target's pipeline, samples included") {
  auto r = tilegen("ir gemm --after all " + kSmallGemm);
  CHECK(r.status == 0);
  std::vector<std::string> stages = stage_headers(r.out);
  REQUIRE(stages.size() >= 2);
  CHECK(stages[1] == "after bind_sizes");
  r = tilegen("ir gemm --after bind_sizes " + kSmallGemm);
  CHECK(r.status == 0);
  CHECK(has(r, "func gemm"));
  for (const char* t : {"cpu", "cuda --arch sm_80", "hip --arch gfx942"}) {
    const std::string target = t;
    const std::string name = target.substr(0, target.find(' '));
    if (std::string why; !tg::find_plugin(name, &why)) {
      MESSAGE("skipped ", name, ": ", why);
      continue;
    }
    r = tilegen("ir " + cli_kernel("small_gemm.tgir") + " --target " + target + " --after all");
    INFO(target, "\n", r.out);
    CHECK(r.status == 0);
    stages = stage_headers(r.out);
    REQUIRE(stages.size() >= 3);
    CHECK(stages[1] == "after bind_sizes");
  }
}

TEST_CASE("cli: the cpu's prefetches are a stage of its pipeline, shown by ir --after") {
  if (std::string why; !tg::find_plugin("cpu", &why)) {
    MESSAGE("skipped cpu: ", why);
    return;
  }
  // AVX2's 6×16 micro-tiles: a 32×32 tile has 5 × 2 whole ones, so the pipelined K loop's gemm
  // gets hints in 10 steps, A's 32 next lines 4 a step (B copied a tile a step: no packed panel).
  const std::string gemm =
      "ir gemm --target cpu --arch haswell --set M=64,N=64,K=64,block_M=32,block_N=32,block_K=16 "
      "--param gemm_panel_rows=0";
  auto r = tilegen(gemm + " --after all");
  INFO(r.out);
  CHECK(r.status == 0);
  const std::vector<std::string> stages = stage_headers(r.out);
  REQUIRE(!stages.empty());
  CHECK(stages.back() == "after version_edge_copies");
  CHECK(stages[stages.size() - 2] == "after insert_prefetches");
  r = tilegen(gemm + " --after insert_prefetches");
  CHECK(r.status == 0);
  CHECK(has(r, "gemm(A_shared, B_shared -> C_local) interleave t in steps(10) {"));
  CHECK(has(r, "prefetch read A[by*32 + t*4, ko*16 + 16] locality=3"));
  r = tilegen(gemm + " --after fuse_parallel_loops");
  CHECK(r.status == 0);
  CHECK(!has(r, "prefetch"));
}

TEST_CASE("cli: source of a .tgir file on interp and cpu") {
  const std::string gemm = cli_kernel("small_gemm.tgir");
  auto r = tilegen("source " + gemm + " --target interp");
  CHECK(r.status == 0);
  CHECK(has(r, "func small_gemm(A: f16[50, 45] global"));  // interp's source: the lowered IR
  if (std::string why; !tg::find_plugin("cpu", &why)) {
    MESSAGE("skipped cpu: ", why);
    return;
  }
  r = tilegen("source " + gemm + " --target cpu --set K=64");
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "define "));  // LLVM IR
}

TEST_CASE("cli: run of a .tgir file against the interpreter on interp and cpu") {
  std::vector<std::string> targets{"interp"};
  if (std::string why; tg::find_plugin("cpu", &why))
    targets.push_back("cpu");
  else
    MESSAGE("skipped cpu: ", why);
  for (const std::string& t : targets) {
    auto r = tilegen("run " + cli_kernel("small_gemm.tgir") + " --target " + t + " --seed 11");
    INFO(t, "\n", r.out);
    CHECK(r.status == 0);
    CHECK(has(r, "kernel     small_gemm ("));
    CHECK(has(r, "sizes      M=50,N=37,K=45"));
    CHECK(has(r, "seed       11"));
    CHECK(has(r, "tensors    A f16[50,45] in, B f16[45,37] in, C f32[50,37] out"));
    CHECK(has(r, "max error"));
    CHECK(has(r, "tolerance  abs "));
    CHECK(last_line(r.out) == "PASS");
    // Y is read and written: an output whose old contents count, so random rather than poisoned.
    r = tilegen("run " + cli_kernel("ragged_axpy.tgir") + " --target " + t +
                " --set N=1000,alpha=3 --seed 2");
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(has(r, "tensors    X f32[1000] in, Y f32[1000] out"));
    CHECK(has(r, "(Y)"));
    CHECK(last_line(r.out) == "PASS");
  }
}

TEST_CASE("cli: a .tgir file that cannot be read, parsed or sized is a one-line usage error") {
  const std::string gemm = read_file(cli_kernel("small_gemm.tgir"));
  std::string unsized = gemm;
  unsized.erase(unsized.find("# sizes"),
                unsized.find('\n', unsized.find("# sizes")) + 1 - unsized.find("# sizes"));
  const std::string nosizes = write_temp("nosizes.tgir", unsized);
  std::string broken = gemm;
  broken.replace(broken.find("fill Cf = 0.0"), 13, "fill Cf == 0.0");
  const int broken_line = int(std::count(gemm.begin(), gemm.begin() + long(gemm.find("fill Cf")), '\n')) + 1;
  const std::string bad = write_temp("broken.tgir", broken);
  const std::string axpy = cli_kernel("ragged_axpy.tgir");
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {"ir /nonexistent/k.tgir", "cannot read IR file '/nonexistent/k.tgir': No such file or directory"},
      {"run missing.tgir --target interp", "cannot read IR file 'missing.tgir'"},
      {"ir " + bad, "test_cli_broken.tgir:" + std::to_string(broken_line) + ": expected '='"},
      {"run " + bad + " --target interp", "test_cli_broken.tgir:" + std::to_string(broken_line) + ": "},
      {"source " + nosizes + " --target interp",
       "size M of test_cli_nosizes.tgir is not given: add --set M=VALUE"},
      {"ir " + nosizes + " --after all --set M=8,N=8", "size K of test_cli_nosizes.tgir is not given"},
      {"run " + axpy + " --target interp --set N=100", "scalar alpha of ragged_axpy.tgir is not given"},
      {"run " + axpy + " --target interp --set alpha=2", "size N of ragged_axpy.tgir is not given"},
      {"run " + axpy + " --set Q=3", "--set Q: kernel ragged_axpy of " + axpy + " has no size or scalar"},
      {"ir " + axpy + " --dtype f16", "--dtype is for samples"},
      {"source " + axpy + " --target interp --set N=0", "size N = 0 of ragged_axpy; a size must be positive"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto r = tilegen(c.args);
    INFO(r.out);
    CHECK(r.status == 2);
    CHECK(has(r, c.says));
    CHECK(!has(r, "internal error"));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);  // the message, then the hint to run help
  }
  // Without --after, ir prints the file as written: no size is needed.
  CHECK(tilegen("ir " + nosizes).status == 0);
}
