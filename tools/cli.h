// Shared pieces of the tilegen subcommands: looking up samples, dtypes and targets by name (with
// usage errors that list what exists), building a sample's kernel, and turning a sample's
// Problem into launch arguments and a verdict.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "args.h"
#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace tg::cli {

// ---- The subcommands: each gets the words after its name and returns the exit status.
int cmd_targets(const std::vector<std::string>& argv);
int cmd_samples(const std::vector<std::string>& argv);
int cmd_ir(const std::vector<std::string>& argv);
int cmd_source(const std::vector<std::string>& argv);
int cmd_run(const std::vector<std::string>& argv);
int cmd_conformance(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_tune(const std::vector<std::string>& argv);
int cmd_fuzz(const std::vector<std::string>& argv);

/// Print a command's usage line on stdout (for --help); returns 0.
int print_usage(const char* usage);

// ---- Lookups. Each unknown name is a UsageError that lists the known ones.
const samples::Sample& find_sample(const std::string& name);
/// `name` empty: the sample's default dtype (its first).
DType pick_dtype(const samples::Sample& s, const std::string& name);
/// Defaults overlaid with `overrides`; an unknown parameter is a UsageError.
samples::Params resolve_params(const samples::Sample& s, const samples::Params& overrides);
/// The same with the sample's tuned tiles for the target (samples::resolve_for), and the tiles
/// the user did not set fitted to the target's shared memory (samples::fit_to_device) through the
/// pipeline the compile will run: the one `params` (--param) select.
samples::Params resolve_params(const samples::Sample& s, const samples::Params& overrides, const TargetInfo& target,
                               DType t, const std::map<std::string, std::string>& params = {});
/// The sample's kernel; a builder error for these parameters is a UsageError.
Kernel build_kernel(const samples::Sample& s, const samples::Params& p, DType t);
/// A target ready to compile and launch: `name` empty means Target::select(). An unknown or
/// unavailable target is a UsageError with the reason.
Target open_target(const std::string& name, int device);
/// The plugin of `name`, for work that needs no device (codegen, pipelines).
TargetPlugin& find_target_plugin(const std::string& name);
/// What to generate code for: info_for_arch(arch) when `arch` is given, else the first device's.
TargetInfo codegen_info(TargetPlugin& plugin, const std::string& arch);

// ---- Formatting.
/// {M: 1, N: 2} → "M=1,N=2" (the --set syntax, so it can be pasted back).
std::string format_params(const samples::Params& p);
/// "NVIDIA H200 (sm_90)".
std::string describe_device(const TargetInfo& info);
/// A compact number: 0.000123 → "1.23e-04", 12.5 → "12.5".
std::string format_number(double v);

/// --warmup and --runs, defaulting to `default_runs`; the interpreter (an oracle, not a
/// performance target) gets a brief default instead.
ProfileOptions profile_options(const Args& a, const Target& t, int default_runs);

/// A seed from std::random_device, for runs that were not given --seed.
uint64_t fresh_seed();

// ---- Launching a sample's problem.
/// samples::kernel_args with every tensor uploaded to a device buffer of `target`, kept alive
/// in `keep` (so timing measures the kernel, not host↔device copies).
std::vector<KernelArg> device_args(const Target& target, const Function& f, samples::Problem& p,
                                   std::vector<DeviceBuffer>& keep);

/// One output compared with its float64 reference.
struct OutputCheck {
  std::string name;
  int64_t numel = 0;
  samples::Comparison cmp;
  double got_at_first = 0, want_at_first = 0;  // values at cmp.first_mismatch, when any
};
std::vector<OutputCheck> check_outputs(const samples::Problem& p, samples::Tolerance tol);
/// The same with a tolerance per output, in order (a kernel file's outputs differ in dtype).
std::vector<OutputCheck> check_outputs(const samples::Problem& p,
                                       const std::vector<samples::Tolerance>& tols);
/// "C: 3 of 4096 elements outside tolerance, first at 17: got 1.5, want 1.25".
std::string describe_mismatch(const OutputCheck& c);

}  // namespace tg::cli
