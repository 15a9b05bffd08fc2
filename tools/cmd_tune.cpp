// `tilegen tune SAMPLE`: tg::autotune over the sample's tuning space (Sample::tune_space) at its
// bench shape, with the hand-picked tiles (what run and bench use) as the baseline; prints every
// config's time and status, and the winner against the baseline.
//
//   sample   gemm f16 K=4096,M=4096,N=4096,...
//   target   cuda: NVIDIA H200 (sm_90)
//   space    block_K=32:64 block_M=64:128:256 ... (108 combinations, 61 after the filter)
//   CONFIG                                              STATUS   MEDIAN_MS  TFLOP/s
//   block_K=32,block_M=128,block_N=128,stages=3,... *  ok       0.4121     333.5
//   ...
//   best     block_K=64,block_M=128,... 0.3512 ms 391.3 TFLOP/s: 1.173x the default (0.4121 ms)
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <set>

#include "cli.h"

namespace tg::cli {

namespace {

/// "block_M=32:64,stages=2" → {block_M: [32, 64], stages: [2]}.
std::vector<TuneParam> parse_space(const std::string& text) {
  std::vector<TuneParam> out;
  if (text.empty()) return out;
  for (const std::string& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("--space takes NAME=V:V:...,..., not '" + item + "'");
    TuneParam p{item.substr(0, eq), {}};
    for (const std::string& v : split(item.substr(eq + 1), ':'))
      p.values.push_back(parse_int(v, "--space " + p.name));
    out.push_back(std::move(p));
  }
  return out;
}

/// The sample's space for this problem and target, with --set names left out (the user's value
/// holds) and --space values in place of the sample's.
TuneSpace sample_space(const samples::Sample& s, const samples::Params& params, DType t,
                       const TargetInfo& info, const samples::Params& fixed, const std::string& space_flag) {
  if (!s.tune_space) throw UsageError("sample " + s.name + " declares no tuning space");
  TuneSpace space = s.tune_space(params, t, info);
  std::erase_if(space.params, [&](const TuneParam& p) { return fixed.count(p.name) != 0; });
  for (TuneParam& given : parse_space(space_flag)) {
    if (fixed.count(given.name)) throw UsageError("--space and --set both give " + given.name + "; give one");
    if (!params.count(given.name))
      throw UsageError("--space names '" + given.name + "', which is no parameter of sample " + s.name);
    auto it = std::find_if(space.params.begin(), space.params.end(),
                           [&](const TuneParam& p) { return p.name == given.name; });
    if (it != space.params.end())
      it->values = std::move(given.values);
    else
      space.params.push_back(std::move(given));
  }
  if (space.params.empty())
    throw UsageError("--set fixes every parameter of " + s.name + "'s tuning space; nothing is left to tune");
  try {
    space.configs();  // a value listed twice, ...: the user's to fix
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
  return space;
}

std::string space_text(const TuneSpace& space) {
  std::string out;
  for (const TuneParam& p : space.params) {
    out += (out.empty() ? "" : " ") + p.name + "=";
    for (std::size_t i = 0; i < p.values.size(); ++i) out += (i ? ":" : "") + std::to_string(p.values[i]);
  }
  return out;
}

std::string rate_text(const TuneTrial& t) {
  std::string out;
  if (t.tflops > 0) out += format_number(t.tflops) + " TFLOP/s";
  if (t.gbps > 0) out += (out.empty() ? "" : "  ") + format_number(t.gbps) + " GB/s";
  return out;
}

void print_table(const TuneResult& r) {
  std::size_t width = 6;
  for (const TuneTrial& t : r.trials) width = std::max(width, format_config(t.config).size() + 3);
  std::cout << std::left << std::setw(int(width)) << "CONFIG" << std::setw(16) << "STATUS" << std::setw(11)
            << "MEDIAN_MS"
            << "RATE / REASON\n";
  for (std::size_t i = 0; i < r.trials.size(); ++i) {
    const TuneTrial& t = r.trials[i];
    const std::string mark = r.best_index == i ? " *" : r.baseline_index == i ? " d" : "";
    std::cout << std::setw(int(width)) << format_config(t.config) + mark << std::setw(16)
              << status_name(t.status);
    if (t.status == TuneStatus::Ok)
      std::cout << std::setw(11) << format_number(t.time.median_ms) << rate_text(t);
    else
      std::cout << std::setw(11) << "-"
                << t.reason.substr(0, std::min(t.reason.find('\n'), std::size_t(160)));
    std::cout << "\n";
  }
  std::cout << "(* the best, d the default)\n";
}

void print_winner(const TuneResult& r) {
  const TuneTrial& best = r.trials[*r.best_index];
  std::cout << std::setw(9) << "best" << format_config(best.config) << "  "
            << format_number(best.time.median_ms) << " ms";
  if (!rate_text(best).empty()) std::cout << "  " << rate_text(best);
  if (r.baseline_index && r.trials[*r.baseline_index].status == TuneStatus::Ok) {
    const double base = r.trials[*r.baseline_index].time.median_ms;
    std::cout << "  " << format_number(base / best.time.median_ms) << "x the default (" << format_number(base)
              << " ms)";
  } else if (r.baseline_index) {
    std::cout << "  (the default: " << status_name(r.trials[*r.baseline_index].status) << ")";
  }
  std::cout << "\n";
}

TuneCheck parse_check(const std::string& v) {
  if (v.empty() || v == "first") return TuneCheck::FirstConfig;
  if (v == "interp") return TuneCheck::Interpreter;
  if (v == "none") return TuneCheck::None;
  throw UsageError("--check takes first, interp or none, not '" + v + "'");
}

}  // namespace

int cmd_tune(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen tune SAMPLE [--target T] [--device N] [--set K=V,...] [--dtype D] [--space "
      "K=V:V...,...]\n"
      "                   [--runs N] [--warmup N] [--jobs N] [--check first|interp|none] [--retune] "
      "[--no-store]\n"
      "                   [--seed N] [--param K=V,...]\n"
      "  tunes the sample's tiles at its bench shape; --set fixes a parameter, --space gives its values\n";
  static const std::vector<FlagSpec> flags = {
      {"target"}, {"device"}, {"set"},  {"dtype"}, {"space"},         {"runs"},           {"warmup"},
      {"jobs"},   {"check"},  {"seed"}, {"param"}, {"retune", false}, {"no-store", false}};
  Args a = parse_args(argv, flags, 1);
  if (a.has("help")) return print_usage(usage);
  if (a.positional.empty()) throw UsageError(std::string("missing SAMPLE; ") + usage);
  const samples::Sample& s = find_sample(a.positional[0]);
  const DType dtype = pick_dtype(s, a.get("dtype"));
  const samples::Params fixed = parse_set(a.get("set"));
  samples::Params overrides = s.bench_shapes.empty() ? samples::Params{} : s.bench_shapes.front();
  for (const auto& [k, v] : fixed) overrides[k] = v;
  resolve_params(s, overrides);  // a misspelt parameter is a usage error before any target opens
  const TuneCheck check = parse_check(a.get("check"));
  const int64_t jobs = a.get_int("jobs", 0);
  if (jobs < 0 || jobs > 1024) throw UsageError("--jobs takes a count from 0 (all cores) to 1024");
  const Target target = open_target(a.get("target"), int(a.get_int("device", 0)));
  const auto params_flag = parse_param(a.get("param"));
  const samples::Params params = resolve_params(s, overrides, target.info(), dtype, params_flag);
  TuneSpace space = sample_space(s, params, dtype, target.info(), fixed, a.get("space"));

  TuneOptions opt;
  opt.baseline.emplace();
  for (const TuneParam& p : space.params) (*opt.baseline)[p.name] = params.at(p.name);
  opt.check = check;
  opt.profile = profile_options(a, target, 20);
  opt.compile.params = params_flag;
  opt.jobs = int(jobs);
  opt.retune = a.has("retune");
  opt.use_store = !a.has("no-store");
  opt.flops = s.flops ? s.flops(params, dtype) : 0;
  opt.bytes = s.bytes ? s.bytes(params, dtype) : 0;
  const samples::Tolerance tol = s.tolerance(params, dtype);
  opt.tolerance = [tol](DType) { return TuneTolerance{tol.abs, tol.rel}; };
  // The sample's own inputs (int4 weights in range, ...) at the baseline's kernel parameters.
  const Kernel baseline = build_kernel(s, params, dtype);
  std::mt19937_64 rng(a.get_u64("seed", 1));
  samples::Problem problem =
      s.make_inputs ? s.make_inputs(params, dtype, rng) : s.make_problem(params, dtype, rng);
  opt.args = samples::kernel_args(baseline.function(), problem);

  std::cout << std::left << std::setw(9) << "sample" << s.name << " " << dtype.name() << " "
            << format_params(params) << "\n"
            << std::setw(9) << "target" << target.name() << ": " << describe_device(target.info()) << "\n"
            << std::setw(9) << "space" << space_text(space) << " (" << space.size() << " combinations, "
            << space.configs().size() << " after the filter)" << std::endl;
  const TuneResult r = autotune(
      target, space,
      [&](const TuneConfig& c) {
        samples::Params q = params;
        for (const auto& [k, v] : c) q[k] = v;
        return s.build(samples::resolve(s, q), dtype);
      },
      opt);
  if (r.from_cache) {
    std::cout << std::setw(9) << "best" << format_config(r.best) << "  "
              << format_number(r.best_time.median_ms) << " ms (stored in " << r.store_path
              << "; --retune tunes again)\n";
    return 0;
  }
  print_table(r);
  if (!r.found()) {
    std::cout << "no config ran correctly\n";
    return 1;
  }
  print_winner(r);
  if (!r.store_path.empty()) std::cout << std::setw(9) << "stored" << r.store_path << "\n";
  return 0;
}

}  // namespace tg::cli
