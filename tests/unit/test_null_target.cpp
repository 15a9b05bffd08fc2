// The null skeleton target (targets/null), loaded through the real loader from beside libtilegen:
// listed as unavailable with its reason and never selected, yet its compile side and its
// host stand-in DeviceContext work hook by hook, so a copy of it starts from working code.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "runtime_test_util.h"
#include "sample_test_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/gpu_pipeline.h"

using namespace tg;
using namespace tg::testing;

#ifdef TILEGEN_HAVE_NULL_PLUGIN  // built unless TILEGEN_BUILD_PLUGINS=OFF (CI's sanitizer build)
namespace {

const char* kReason =
    "the null target is a skeleton to copy (targets/null, docs/adding_a_target.md); it has no device";

TargetPlugin& null_plugin() {
  std::string why;
  TargetPlugin* p = find_plugin("null", &why);
  REQUIRE_MESSAGE(p, "libtilegen_null.so is built by default beside libtilegen: ", why);
  return *p;
}

// gemm at a ragged shape small enough for the interpreter: 50×37×45 in 32×32×16 tiles.
samples::Params small_gemm() {
  return samples::resolve(
      *samples::find("gemm"),
      {{"M", 50}, {"N", 37}, {"K", 45}, {"block_M", 32}, {"block_N", 32}, {"block_K", 16}});
}

}  // namespace

TEST_CASE("null target: listed as unavailable with its reason, without devices, and never selected") {
  EnvGuard target("TILEGEN_TARGET", std::nullopt);
  std::vector<TargetStatus> all = targets();
  auto it = std::find_if(all.begin(), all.end(), [](const TargetStatus& s) { return s.name == "null"; });
  REQUIRE(it != all.end());
  CHECK(!it->available);
  CHECK(it->reason == kReason);
  CHECK(it->devices.empty());
  CHECK(it->path.find("libtilegen_null.so") != std::string::npos);
  CHECK(error_of([] { Target::get("null"); }).find(std::string("target 'null' is unavailable: ") + kReason) !=
        std::string::npos);
  for (const DeviceChoice& c : selection_order(all)) CHECK(all[c.target].name != "null");
  CHECK(Target::select().name() != "null");
}

TEST_CASE("null target: info_for_arch knows 'null' and names it for anything else") {
  TargetPlugin& p = null_plugin();
  CHECK(p.name() == "null");
  TargetInfo info = p.info_for_arch("null");
  CHECK(info.target == "null");
  CHECK(info.arch == "null");
  CHECK(info.warp_size == 32);
  CHECK(info.matrix_units.empty());
  CHECK(error_of([&] { p.info_for_arch("sm_80"); }) ==
        "null: architecture 'sm_80' is unknown; the null target has one, 'null'");
  CHECK(p.param_keys().empty());
  CompileOptions opt;
  opt.params["fast_math"] = "1";
  CHECK(error_of([&] { check_compile_options(p, opt); }).find("fast_math") != std::string::npos);
}

TEST_CASE("null target: pipeline is the shared GPU pipeline; codegen's source is the lowered IR") {
  TargetPlugin& p = null_plugin();
  const TargetInfo info = p.info_for_arch("null");
  CompileOptions opt;
  std::vector<std::string> names, want;
  for (const PassEntry& e : p.pipeline(info, opt)) names.push_back(e.name);
  for (const PassEntry& e : gpu_pipeline()) want.push_back(e.name);
  CHECK(names == want);
  opt.params["check_bounds"] = "all";
  CHECK(p.pipeline(info, opt).back().name == "check_element_accesses");

  const samples::Sample& s = *samples::find("gemm");
  Function f = s.build(small_gemm(), f16).function();
  std::vector<std::pair<std::string, std::string>> stages;
  Artifact a = Target::codegen_for(p, info, f, CompileOptions{}, &stages);
  REQUIRE(stages.size() == want.size() + 2);  // input, each pass, source
  CHECK(stages.front().first == "input");
  CHECK(stages[want.size()].first == "partition_threads");
  CHECK(stages.back().first == "source");
  CHECK(a.source == stages[want.size()].second);  // the IR after the last pass, as text
  CHECK(a.entry == "gemm");
  CHECK(a.binary.empty());
  Function parsed = parse_function(a.source);
  CHECK(parsed.name == "gemm");
  CHECK(a.source.find("fragment") == std::string::npos);  // per-thread code: no tile buffers left
  CHECK(a.source.find("fma(") != std::string::npos);      // no matrix units: gemm as per-thread FMAs
}

TEST_CASE("null target: its DeviceContext allocates, copies, loads the artifact and launches it") {
  TargetPlugin& p = null_plugin();
  const TargetInfo info = p.info_for_arch("null");
  const samples::Sample& s = *samples::find("gemm");
  const samples::Params params = small_gemm();
  Function f = s.build(params, f16).function();
  Artifact a = Target::codegen_for(p, info, f, CompileOptions{});
  Function lowered = parse_function(a.source);

  std::unique_ptr<DeviceContext> ctx = p.open(0);
  REQUIRE(ctx);
  std::mt19937_64 rng(5);
  samples::Problem pr = s.make_problem(params, f16, rng);
  std::vector<void*> device;
  std::vector<LaunchArg> args;
  for (samples::HostArray& h : pr.args) {
    void* d = ctx->allocate(h.bytes.size());
    ctx->copy_to_device(d, h.bytes.data(), h.bytes.size());
    device.push_back(d);
    LaunchArg la;
    la.device_ptr = d;
    la.shape = h.shape;
    la.dtype = h.dtype;
    args.push_back(la);
  }
  std::shared_ptr<void> loaded = ctx->load(a, lowered);
  ctx->launch(loaded, lowered, args);
  ctx->synchronize();
  for (std::size_t i = 0; i < pr.args.size(); ++i)
    if (pr.args[i].is_output) ctx->copy_to_host(pr.args[i].bytes.data(), device[i], pr.args[i].bytes.size());
  CHECK(check_outputs(pr, s.tolerance(params, f16)) == 1);
  std::vector<double> ms = ctx->time_launches(loaded, lowered, args, 2);  // plugin.h's wall-clock default
  CHECK(ms.size() == 2);
  for (double t : ms) CHECK(t >= 0);
  for (void* d : device) ctx->release(d);

  // load() reads the artifact alone, as on a kernel-cache hit: one that does not match is refused.
  Artifact wrong = a;
  wrong.entry = "other";
  CHECK(error_of([&] { ctx->load(wrong, lowered); }) ==
        "null: the artifact's entry is 'other' but its source defines 'gemm'");
  wrong = a;
  wrong.source = "not IR";
  CHECK(error_of([&] { ctx->load(wrong, lowered); }).find("null artifact of gemm") != std::string::npos);
  CHECK(error_of([&] { p.open(1); }) == "null: there is one stand-in context (0), not 1");
}
#endif
