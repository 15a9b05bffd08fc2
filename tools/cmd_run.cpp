// `tilegen run SAMPLE`: build a sample, run it once on a target with fresh random inputs, compare
// every output with the float64 reference, then time it. `tilegen run FILE.tgir`: the same for a
// kernel written as IR text, with the interpreter on the same inputs as the reference. Exit 0
// only when every output passes.
#include <iomanip>
#include <iostream>

#include "cli.h"
#include "kernel_file.h"

namespace tg::cli {

namespace {

void row(const std::string& label, const std::string& value) {
  std::cout << std::left << std::setw(11) << label << value << "\n";
}

// "A f16[256,128] in, C f32[256,256] out"
std::string describe_tensors(const samples::Problem& p) {
  std::vector<std::string> items;
  for (const auto& arr : p.args) {
    std::vector<std::string> dims;
    for (int64_t d : arr.shape) dims.push_back(std::to_string(d));
    items.push_back(arr.name + " " + std::string(arr.dtype.name()) + "[" + join(dims, ",") + "]" +
                    (arr.is_output ? " out" : " in"));
  }
  return join(items, ", ");
}

std::string describe_tolerance(const samples::Tolerance& t) {
  return "abs " + format_number(t.abs) + ", rel " + format_number(t.rel);
}

// What a sample and a file share once the problem is made: one launch on host tensors, each
// output against its reference (`tols`: one per output), the time when every output passed, and
// the verdict.
int launch_and_check(const Target& target, const CompiledKernel& compiled, const Function& f,
                     samples::Problem& problem, const std::vector<samples::Tolerance>& tols,
                     const ProfileOptions& prof) {
  row("tensors", describe_tensors(problem));
  compiled.launch(samples::kernel_args(f, problem));
  const std::vector<OutputCheck> checks = check_outputs(problem, tols);
  bool pass = true, one_tolerance = true;
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const OutputCheck& c = checks[i];
    row("max error", format_number(c.cmp.max_abs_error) + " (" + c.name + ")");
    if (c.cmp.mismatches > 0) {
      pass = false;
      row("mismatch", describe_mismatch(c));
    }
    one_tolerance = one_tolerance && tols[i].abs == tols[0].abs && tols[i].rel == tols[0].rel;
  }
  if (one_tolerance)
    row("tolerance", describe_tolerance(tols[0]));
  else
    for (std::size_t i = 0; i < checks.size(); ++i)
      row("tolerance", describe_tolerance(tols[i]) + " (" + checks[i].name + ")");
  if (pass) {
    std::vector<DeviceBuffer> keep;
    const ProfileResult t = compiled.profile(device_args(target, f, problem, keep), prof);
    row("median", format_number(t.median_ms) + " ms (" + std::to_string(t.runs) + " runs, min " +
                      format_number(t.min_ms) + " ms)");
  }
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : 1;
}

// `tilegen run my.tgir --target cpu --set N=1000`: the kernel as written, compiled for the target
// as a host program would compile it (sizes bound at the launch), against the interpreter.
int run_file(const Args& a) {
  if (a.has("dtype"))
    throw UsageError("--dtype is for samples; the dtypes of " + a.positional[0] + " are those of its text");
  const KernelFile k = read_kernel_file(a.positional[0], parse_set(a.get("set")));
  try {
    require_values(k, true);
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
  const Target target = open_target(a.get("target"), int(a.get_int("device", 0)));
  const uint64_t seed = a.get_u64("seed", fresh_seed());
  const ProfileOptions prof = profile_options(a, target, 10);

  row("target", target.name());
  row("device", describe_device(target.info()));
  row("kernel", k.fn.name + " (" + k.path + ")");
  row("sizes", format_sizes(k));
  row("seed", std::to_string(seed));
  std::cout.flush();

  CompileOptions copt;
  copt.params = parse_param(a.get("param"));
  const CompiledKernel compiled = target.compile(Kernel(k.fn), copt);
  std::mt19937_64 rng(seed);
  samples::Problem problem = make_file_problem(k, rng);
  return launch_and_check(target, compiled, k.fn, problem, file_tolerances(problem), prof);
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen run SAMPLE [--target T] [--device N] [--set K=V,...] [--dtype D] [--param K=V,...] "
      "[--seed N] [--runs N] [--warmup N]\n"
      "       tilegen run FILE.tgir [--target T] [--device N] [--set NAME=V,...] [--param K=V,...] "
      "[--seed N] [--runs N] [--warmup N]\n";
  Args a = parse_args(
      argv, {{"target"}, {"device"}, {"set"}, {"dtype"}, {"param"}, {"seed"}, {"runs"}, {"warmup"}}, 1);
  if (a.has("help")) return print_usage(usage);
  if (a.positional.empty()) throw UsageError(std::string("missing SAMPLE or FILE.tgir; ") + usage);
  if (is_kernel_file(a.positional[0])) return run_file(a);
  const samples::Sample& s = find_sample(a.positional[0]);
  const DType dtype = pick_dtype(s, a.get("dtype"));
  const samples::Params overrides = parse_set(a.get("set"));
  resolve_params(s, overrides);  // a misspelt parameter is a usage error before any target opens
  const Target target = open_target(a.get("target"), int(a.get_int("device", 0)));
  const samples::Params params = resolve_params(s, overrides, target.info(), dtype, parse_param(a.get("param")));
  const uint64_t seed = a.get_u64("seed", fresh_seed());
  const Kernel kernel = build_kernel(s, params, dtype);
  const ProfileOptions prof = profile_options(a, target, 10);

  row("target", target.name());
  row("device", describe_device(target.info()));
  row("sample", s.name);
  row("dtype", std::string(dtype.name()));
  row("shape", format_params(params));
  row("seed", std::to_string(seed));
  std::cout.flush();

  CompileOptions copt;
  copt.params = parse_param(a.get("param"));
  const CompiledKernel compiled = target.compile(kernel, copt);
  std::mt19937_64 rng(seed);
  samples::Problem problem = s.make_problem(params, dtype, rng);
  const std::vector<samples::Tolerance> tols(problem.expected.size(), s.tolerance(params, dtype));
  return launch_and_check(target, compiled, kernel.function(), problem, tols, prof);
}

}  // namespace tg::cli
