// tg::autotune and `tilegen tune`: the space and its filter, failures reported and skipped,
// wrong results rejected, the stored best reused and a corrupt store ignored, misuse located
// at the caller's line. Small kernels on interp and cpu: each case takes well under a second.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_test_util.h"
#include "runtime_test_util.h"
#include "tilegen/autotune.h"
#include "tilegen/samples.h"

using namespace tg;
using tg::testing::at_line;
using tg::testing::error_of;
using tg::testing::ScratchDir;

namespace {

/// scale(X: f32[n], Y: f32[n]): Y = factor · X, a block per `bs` elements staged through a
/// shared tile of `bs` (so a large bs does not fit a GPU's shared memory), `threads` threads
/// (default: bs).
Kernel scale_kernel(int64_t n, int64_t bs, double factor = 2.0, int64_t threads = 0) {
  KernelBuilder k("scale");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(ceildiv(n, bs)).threads(int(threads ? threads : bs)).body([&](Expr bx) {
    auto S = k.shared({bs}, f32, "S");
    k.copy(X.slice({bx * bs}, {bs}), S);
    k.parallel(S, [&](Expr i) { S(i) = S(i) * float(factor); });
    k.copy(S, Y.slice({bx * bs}, {bs}));
  });
  return k.build();
}

TuneSpace scale_space(std::vector<int64_t> block_sizes) {
  return TuneSpace{{{"bs", std::move(block_sizes)}}, nullptr};
}

TuneOptions quick(const std::string& store_dir = {}) {
  TuneOptions o;
  o.profile.warmup = 0;
  o.profile.runs = 1;
  o.profile.flush_l2 = false;
  o.progress = TuneProgress::None;
  o.jobs = 2;
  o.store_dir = store_dir;
  o.use_store = !store_dir.empty();
  return o;
}

const TuneTrial& trial_of(const TuneResult& r, int64_t bs) {
  for (const TuneTrial& t : r.trials)
    if (t.config.at("bs") == bs) return t;
  FAIL("no trial for bs=", bs);
  return r.trials.front();
}

}  // namespace

TEST_CASE("autotune: the space enumerates every combination in order, less those the filter rejects") {
  TuneSpace s{{{"a", {1, 2}}, {"b", {10, 20, 30}}},
              [](const TuneConfig& c) { return c.at("a") * c.at("b") != 40; }};
  CHECK(s.size() == 6);
  const std::vector<TuneConfig> c = s.configs();
  REQUIRE(c.size() == 5);
  CHECK(c[0] == TuneConfig{{"a", 1}, {"b", 10}});
  CHECK(c[1] == TuneConfig{{"a", 1}, {"b", 20}});
  CHECK(c[2] == TuneConfig{{"a", 1}, {"b", 30}});
  CHECK(c[3] == TuneConfig{{"a", 2}, {"b", 10}});  // (2, 20) filtered
  CHECK(c[4] == TuneConfig{{"a", 2}, {"b", 30}});
  s.valid = nullptr;
  CHECK(s.configs().size() == 6);

  const int line = __LINE__ + 1;
  std::string e = error_of([] { TuneSpace{{{"a", {1}}, {"a", {2}}}, nullptr}.configs(); });
  CHECK(e.find(at_line(__FILE__, line)) == 0);
  CHECK(e.find("names 'a' twice") != std::string::npos);
  CHECK(error_of([] {
          TuneSpace{{{"a", {}}}, nullptr}.configs();
        }).find("has no values") != std::string::npos);
  CHECK(error_of([] {
          TuneSpace{{{"a", {4, 4}}}, nullptr}.configs();
        }).find("value 4 twice") != std::string::npos);
  CHECK(error_of([] { TuneSpace{}.configs(); }).find("no parameters") != std::string::npos);
  std::vector<int64_t> many(400);
  for (int64_t i = 0; i < 400; ++i) many[std::size_t(i)] = i;
  CHECK(error_of([&] {
          TuneSpace{{{"a", many}, {"b", many}}, nullptr}.configs();
        }).find("more than 100000") != std::string::npos);

  // A filter that rejects everything is the caller's mistake, said at the autotune call.
  const Target interp = Target::get("interp");
  TuneSpace none = scale_space({32, 64});
  none.valid = [](const TuneConfig&) { return false; };
  auto make = [](const TuneConfig& c) { return scale_kernel(64, c.at("bs")); };
  const int call = __LINE__ + 1;
  e = error_of([&] { autotune(interp, none, make, quick()); });
  CHECK(e.find(at_line(__FILE__, call)) == 0);
  CHECK(e.find("rejects all of its 2 combinations") != std::string::npos);
}

TEST_CASE("autotune: configs that do not build or compile are reported with their reason and skipped") {
  const Target interp = Target::get("interp");
  // bs=8: the maker refuses it; bs=2048: more threads than a block has, refused by the builder.
  auto make = [](const TuneConfig& c) {
    if (c.at("bs") == 8) throw Error("bs=8 is too small for this kernel");
    return scale_kernel(256, c.at("bs"));
  };
  std::vector<std::string> seen;
  TuneOptions o = quick();
  o.on_trial = [&](const TuneTrial& t) { seen.push_back(format_config(t.config)); };
  const TuneResult r = autotune(interp, scale_space({8, 32, 2048, 64}), make, o);
  REQUIRE(r.trials.size() == 4);
  CHECK(trial_of(r, 8).status == TuneStatus::BuildFailed);
  CHECK(trial_of(r, 8).reason == "bs=8 is too small for this kernel");
  CHECK(trial_of(r, 2048).status == TuneStatus::BuildFailed);
  CHECK(trial_of(r, 2048).reason.find("at most 1024 threads per block") != std::string::npos);
  CHECK(trial_of(r, 32).status == TuneStatus::Ok);
  CHECK(trial_of(r, 64).status == TuneStatus::Ok);
  CHECK(trial_of(r, 32).time.runs == 1);
  REQUIRE(r.found());
  CHECK((r.best.at("bs") == 32 || r.best.at("bs") == 64));
  CHECK(!r.from_cache);
  // on_trial for each config, in order
  CHECK(seen == std::vector<std::string>{"bs=8", "bs=32", "bs=2048", "bs=64"});

  // A tile over a GPU's shared memory fails its compile (interp and cpu have no such limit):
  // on vulkan where there is a device (lavapipe in CI).
  for (const Target& t : tg::testing::host_test_targets(false)) {
    if (t.name() != "vulkan") continue;
    const TuneResult v = autotune(
        t, scale_space({32, 65536}),
        [](const TuneConfig& c) { return scale_kernel(256, c.at("bs"), 2.0, 32); }, quick());
    CHECK(trial_of(v, 32).status == TuneStatus::Ok);
    CHECK(trial_of(v, 65536).status == TuneStatus::CompileFailed);
    CHECK(trial_of(v, 65536).reason.find(" memory") != std::string::npos);  // vulkan: Workgroup memory
  }

  // Compile options no target takes are the caller's mistake, not a failed config.
  o = quick();
  o.compile.params["no_such_option"] = "1";
  CHECK(error_of([&] { autotune(interp, scale_space({32}), make, o); }).find("no_such_option") !=
        std::string::npos);

  // Nothing that builds: every trial says why, and no best.
  const TuneResult none = autotune(
      interp, scale_space({8, 16}), [](const TuneConfig&) -> Kernel { throw Error("never"); }, quick());
  CHECK(!none.found());
  REQUIRE(none.trials.size() == 2);
  CHECK(none.trials[1].status == TuneStatus::BuildFailed);
}

TEST_CASE("autotune: a config whose outputs differ from the reference's is rejected") {
  std::vector<Target> ts = tg::testing::host_test_targets();
  for (const Target& t : ts) {
    if (t.name() == "vulkan") continue;  // lavapipe compiles slowly; interp and cpu cover it
    for (TuneCheck check : {TuneCheck::FirstConfig, TuneCheck::Interpreter}) {
      CAPTURE(t.name());
      CAPTURE(int(check));
      TuneOptions o = quick();
      o.check = check;
      // bs=32 makes a wrong kernel: Y = 3X instead of 2X.
      const TuneResult r = autotune(
          t, scale_space({64, 32, 16}),
          [](const TuneConfig& c) { return scale_kernel(128, c.at("bs"), c.at("bs") == 32 ? 3.0 : 2.0); }, o);
      CHECK(trial_of(r, 64).status == TuneStatus::Ok);
      CHECK(trial_of(r, 16).status == TuneStatus::Ok);
      CHECK(trial_of(r, 32).status == TuneStatus::WrongResult);
      CHECK(trial_of(r, 32).reason.find("Y: ") == 0);
      CHECK(r.best.at("bs") != 32);
    }
  }
  // Unchecked, the wrong one is timed like the others.
  TuneOptions o = quick();
  o.check = TuneCheck::None;
  const TuneResult r = autotune(
      Target::get("interp"), scale_space({64, 32}),
      [](const TuneConfig& c) { return scale_kernel(128, c.at("bs"), c.at("bs") == 32 ? 3.0 : 2.0); }, o);
  CHECK(trial_of(r, 32).status == TuneStatus::Ok);
}

TEST_CASE("autotune: the stored best is reused without timing; a corrupt or truncated store is tuned again") {
  ScratchDir dir("autotune_store");
  const Target interp = Target::get("interp");
  int timed = 0;
  TuneOptions o = quick(dir.str());
  o.on_trial = [&](const TuneTrial&) { ++timed; };
  o.flops = 256;
  auto make = [](const TuneConfig& c) { return scale_kernel(256, c.at("bs")); };
  const TuneResult first = autotune(interp, scale_space({32, 64, 128}), make, o);
  REQUIRE(first.found());
  CHECK(!first.from_cache);
  CHECK(timed == 3);
  CHECK(first.trials[*first.best_index].tflops > 0);
  REQUIRE(std::filesystem::exists(first.store_path));
  CHECK(first.store_path.rfind(dir.str(), 0) == 0);

  timed = 0;
  const TuneResult again = autotune(interp, scale_space({32, 64, 128}), make, o);
  CHECK(again.from_cache);
  CHECK(timed == 0);
  CHECK(again.best == first.best);
  CHECK(again.best_time.median_ms == doctest::Approx(first.best_time.median_ms).epsilon(1e-5));
  CHECK(again.store_path == first.store_path);

  // Another problem (shape), another space, or another target is another key.
  CHECK(!autotune(interp, scale_space({32, 64}), make, o).from_cache);
  CHECK(!autotune(
             interp, scale_space({32, 64, 128}),
             [](const TuneConfig& c) { return scale_kernel(512, c.at("bs")); }, o)
             .from_cache);

  // Truncated, then overwritten with garbage: a miss each time, tuned again and stored whole.
  std::filesystem::resize_file(first.store_path, std::filesystem::file_size(first.store_path) / 2);
  timed = 0;
  TuneResult r = autotune(interp, scale_space({32, 64, 128}), make, o);
  CHECK(!r.from_cache);
  CHECK(timed == 3);
  { std::ofstream(first.store_path, std::ios::trunc) << "not a store entry"; }
  CHECK(!autotune(interp, scale_space({32, 64, 128}), make, o).from_cache);
  CHECK(autotune(interp, scale_space({32, 64, 128}), make, o).from_cache);

  // retune: timed again although stored; use_store off: nothing read or written.
  timed = 0;
  o.retune = true;
  CHECK(!autotune(interp, scale_space({32, 64, 128}), make, o).from_cache);
  CHECK(timed == 3);
  o.retune = false;
  o.use_store = false;
  r = autotune(interp, scale_space({32, 64, 128}), make, o);
  CHECK(!r.from_cache);
  CHECK(r.store_path.empty());

  // A store directory others may write is refused, as the kernel cache's is: at the call.
  ScratchDir open_dir("autotune_open");
  std::filesystem::permissions(open_dir.path(), std::filesystem::perms::all);
  o = quick(open_dir.str());
  const int line = __LINE__ + 1;
  const std::string e = error_of([&] { autotune(interp, scale_space({32}), make, o); });
  CHECK(e.find(at_line(__FILE__, line)) == 0);
  CHECK(e.find("writable by other users") != std::string::npos);
}

TEST_CASE("autotune: the baseline is tried first; progress is lines off a terminal, a redrawn bar on one") {
  const Target interp = Target::get("interp");
  std::ostringstream lines, bar;
  TuneOptions o = quick();
  o.baseline = TuneConfig{{"bs", 16}};
  o.progress = TuneProgress::Lines;
  o.progress_stream = &lines;
  auto make = [](const TuneConfig& c) { return scale_kernel(64, c.at("bs")); };
  TuneResult r = autotune(interp, scale_space({32, 16, 64}), make, o);
  REQUIRE(r.trials.size() == 3);  // the baseline once, though the space lists it too
  CHECK(r.trials[0].config.at("bs") == 16);
  CHECK(r.baseline_index == std::size_t(0));
  CHECK(lines.str().find("tune: compiling 3 config(s)") != std::string::npos);
  CHECK(lines.str().find("tune: timing 3/3 bs=") != std::string::npos);
  CHECK(lines.str().find("(best ") != std::string::npos);
  CHECK(lines.str().find('\r') == std::string::npos);
  o.progress = TuneProgress::Bar;
  o.progress_stream = &bar;
  autotune(interp, scale_space({32, 16, 64}), make, o);
  CHECK(bar.str().find("\r") != std::string::npos);
  CHECK(bar.str().find("] 3/3") != std::string::npos);
  CHECK(bar.str().find("best ") != std::string::npos);
  // A baseline without every parameter of the space is misuse.
  o.baseline = TuneConfig{{"other", 1}};
  CHECK(error_of([&] { autotune(interp, scale_space({32}), make, o); }).find("has no value for 'bs'") !=
        std::string::npos);
}

TEST_CASE("autotune: inputs are the caller's arguments, copied, or random ones of the kernel's shapes") {
  const Target interp = Target::get("interp");
  auto make = [](const TuneConfig& c) { return scale_kernel(64, c.at("bs")); };
  std::vector<float> x(64, 1.5f), y(64, 7.0f);
  TuneOptions o = quick();
  o.args = {HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}};
  CHECK(autotune(interp, scale_space({32, 64}), make, o).found());
  CHECK(y[0] == 7.0f);  // the caller's output is not written

  o.args = {HostTensor{x.data(), {32}, f32}, HostTensor{y.data(), {64}, f32}};
  CHECK(error_of([&] {
          autotune(interp, scale_space({32}), make, o);
        }).find("its tensor 'X' has dimension 0 = 64, the arguments' is 32") != std::string::npos);

  const int line = __LINE__ + 2;
  o.args = {HostTensor{x.data(), {64}, f32}};
  std::string e = error_of([&] { autotune(interp, scale_space({32}), make, o); });
  CHECK(e.find(at_line(__FILE__, line)) == 0);
  CHECK(e.find("has 1 argument(s)") != std::string::npos);
  o.args = {HostTensor{x.data(), {64}, f16}, HostTensor{y.data(), {64}, f32}};
  CHECK(error_of([&] { autotune(interp, scale_space({32}), make, o); }).find("has dtype f16") !=
        std::string::npos);

  // Symbolic sizes need shapes; a shape for no tensor is misuse too.
  auto symbolic = [](const TuneConfig&) { return tg::testing::matmul_kernel(); };
  o = quick();
  CHECK(error_of([&] { autotune(interp, scale_space({1}), symbolic, o); }).find("TuneOptions::shapes") !=
        std::string::npos);
  o.shapes = {{"A", {3, 4}}, {"B", {4, 5}}, {"C", {3, 5}}};
  CHECK(autotune(interp, scale_space({1}), symbolic, o).found());
  o.shapes["Z"] = {1};
  CHECK(error_of([&] { autotune(interp, scale_space({1}), symbolic, o); }).find("names 'Z'") !=
        std::string::npos);
  // Scalars need values.
  o = quick();
  auto axpy = [](const TuneConfig&) { return tg::testing::axpy_kernel(64); };
  CHECK(error_of([&] { autotune(interp, scale_space({1}), axpy, o); }).find("scalar 'alpha'") !=
        std::string::npos);
  o.scalars = {{"alpha", 0.5}};
  CHECK(autotune(interp, scale_space({1}), axpy, o).found());
  o.profile.runs = 0;
  CHECK(error_of([&] { autotune(interp, scale_space({1}), axpy, o); }).find("runs >= 1") !=
        std::string::npos);
}

#ifdef TILEGEN_HAVE_SAMPLES
TEST_CASE("autotune: every sample declares a tuning space its defaults' names belong to") {
  for (const auto& s : samples::all()) {
    CAPTURE(s.name);
    REQUIRE(s.tune_space);
    for (const char* target : {"interp", "cpu", "gpu"}) {
      TargetInfo info;
      info.target = target;
      info.is_cpu = std::string(target) == "cpu";
      info.software = std::string(target) == "interp";
      info.warp_size = info.is_cpu || info.software ? 1 : 32;
      info.shared_mem_bytes = 227 * 1024;
      const samples::Params p =
          samples::resolve(s, s.bench_shapes.empty() ? samples::Params{} : s.bench_shapes[0]);
      const TuneSpace space = s.tune_space(p, s.dtypes.front(), info);
      CHECK(!space.configs().empty());
      for (const TuneParam& tp : space.params) CHECK(p.count(tp.name) == 1);
    }
  }
}

TEST_CASE("autotune: a sample's configs compile in parallel on the cpu target and are timed") {
  std::optional<Target> cpu;
  try {
    cpu = Target::get("cpu");
  } catch (const Error& e) {
    MESSAGE("skipped: ", std::string(e.what()));
    return;
  }
  const samples::Sample& s = *samples::find("gemm");
  const samples::Params p = samples::resolve(s, {{"M", 48}, {"N", 40}, {"K", 32}});
  TuneSpace space{{{"block_M", {16, 32}}, {"block_N", {32, 64}}}, nullptr};
  TuneOptions o = quick();
  o.check = TuneCheck::Interpreter;
  o.flops = s.flops(p, f32);
  const TuneResult r = autotune(
      *cpu, space,
      [&](const TuneConfig& c) {
        samples::Params q = p;
        for (auto& [k, v] : c) q[k] = v;
        return s.build(q, f32);
      },
      o);
  REQUIRE(r.trials.size() == 4);
  for (const TuneTrial& t : r.trials) {
    CAPTURE(format_config(t.config));
    CAPTURE(t.reason);
    CHECK(t.status == TuneStatus::Ok);
    CHECK(t.tflops > 0);
  }
}

namespace {

using CliRun = tg::test::CliResult;
CliRun tilegen_cli(const std::string& env, const std::string& args) {
  return tg::test::tilegen_env(env, args);
}

}  // namespace

TEST_CASE("cli: tune prints every config's time and status and the winner, then reuses it") {
  ScratchDir dir("autotune_cli");
  std::string target = "cpu";
  try {
    Target::get("cpu");
  } catch (const Error&) {
    target = "interp";
  }
  const std::string env = "TILEGEN_CACHE_DIR=" + dir.str();
  const std::string args =
      "tune gemm --target " + target +
      " --dtype f32 --set M=48,N=40,K=32 --space block_M=16:32,block_N=64,block_K=16 --runs 2";
  CliRun r = tilegen_cli(env, args);
  CAPTURE(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("space    block_M=16:32 block_N=64 block_K=16 (2 combinations, 2 after the filter)") !=
        std::string::npos);
  CHECK(r.out.find("CONFIG") != std::string::npos);
  CHECK(r.out.find("block_K=16,block_M=32,block_N=64") != std::string::npos);
  CHECK(r.out.find("TFLOP/s") != std::string::npos);
  CHECK(r.out.find("x the default (") != std::string::npos);
  CHECK(r.out.find("tune: timing 3/3") != std::string::npos);  // progress lines: not a terminal
  CHECK(r.out.find("stored   " + dir.str() + "/autotune/") != std::string::npos);

  r = tilegen_cli(env, args);
  CHECK(r.status == 0);
  CHECK(r.out.find("--retune tunes again") != std::string::npos);
  CHECK(r.out.find("CONFIG") == std::string::npos);
  r = tilegen_cli(env, args + " --retune");
  CHECK(r.out.find("CONFIG") != std::string::npos);

  CHECK(tilegen_cli(env, "tune gemm --target interp --space bogus=1").status == 2);
  CHECK(tilegen_cli(env, "tune gemm --target interp --check maybe").status == 2);
  CliRun e = tilegen_cli(env, "tune gemm --target interp --set block_M=32 --space block_M=16");
  CHECK(e.status == 2);
  CHECK(e.out.find("--space and --set both give block_M") != std::string::npos);
}
#endif
