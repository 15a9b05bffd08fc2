// `tilegen run SAMPLE`: build a sample, run it once on a target with fresh random inputs, compare
// every output with the float64 reference, then time it. Exit 0 only when every output passes.
#include <iomanip>
#include <iostream>

#include "cli.h"

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

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen run SAMPLE [--target T] [--device N] [--set K=V,...] [--dtype D] [--param K=V,...] "
      "[--seed N] [--runs N] [--warmup N]\n";
  Args a = parse_args(
      argv, {{"target"}, {"device"}, {"set"}, {"dtype"}, {"param"}, {"seed"}, {"runs"}, {"warmup"}}, 1);
  if (a.has("help")) return print_usage(usage);
  if (a.positional.empty()) throw UsageError(std::string("missing SAMPLE; ") + usage);
  const samples::Sample& s = find_sample(a.positional[0]);
  const DType dtype = pick_dtype(s, a.get("dtype"));
  const samples::Params overrides = parse_set(a.get("set"));
  resolve_params(s, overrides);  // a misspelt parameter is a usage error before any target opens
  const Target target = open_target(a.get("target"), int(a.get_int("device", 0)));
  const samples::Params params = resolve_params(s, overrides, target.info(), dtype);
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
  row("tensors", describe_tensors(problem));
  compiled.launch(samples::kernel_args(kernel.function(), problem));

  const samples::Tolerance tol = s.tolerance(params, dtype);
  bool pass = true;
  for (const auto& c : check_outputs(problem, tol)) {
    row("max error", format_number(c.cmp.max_abs_error) + " (" + c.name + ")");
    if (c.cmp.mismatches > 0) {
      pass = false;
      row("mismatch", describe_mismatch(c));
    }
  }
  row("tolerance", "abs " + format_number(tol.abs) + ", rel " + format_number(tol.rel));
  if (pass) {
    std::vector<DeviceBuffer> keep;
    const ProfileResult t = compiled.profile(device_args(target, kernel.function(), problem, keep), prof);
    row("median", format_number(t.median_ms) + " ms (" + std::to_string(t.runs) + " runs, min " +
                      format_number(t.min_ms) + " ms)");
  }
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : 1;
}

}  // namespace tg::cli
