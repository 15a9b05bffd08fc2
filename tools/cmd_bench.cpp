// `tilegen bench SAMPLE`: time a sample at its bench shape on a target, optionally next to a peer
// implementation, and append the result to a CSV file.
//
//   sample   gemm f32 K=4096,M=4096,N=4096
//   target   cpu: host (x86-64-v4)
//   tilegen  median 41.2 ms (20 runs, min 40.9 ms)  3.336 TFLOP/s
//   openblas median 45.0 ms (20 runs, min 44.1 ms)  3.054 TFLOP/s
//   speedup_vs_openblas=1.092
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "bench/peers.h"
#include "cli.h"
#include "tilegen/env.h"

namespace tg::cli {

namespace {

// Inputs for timing. make_problem also computes the float64 reference, which at bench shapes
// can take minutes: use the sample's make_inputs unless --check asks for the reference.
samples::Problem bench_problem(const samples::Sample& s, const samples::Params& p, DType t, uint64_t seed,
                               bool need_reference) {
  std::mt19937_64 rng(seed);
  if (need_reference || !s.make_inputs) return s.make_problem(p, t, rng);
  return s.make_inputs(p, t, rng);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr const char* kCsvHeader =
    "date,sample,target,device,arch,dtype,params,median_ms,min_ms,runs,tflops,gbps,peer,peer_median_ms,"
    "speedup";

struct BenchRow {
  std::string sample, target, device, arch, dtype, params;
  ProfileResult t;
  double tflops = 0, gbps = 0;
  std::string peer;
  double peer_ms = 0;
};

void append_csv(const std::string& path, const BenchRow& r) {
  struct stat st {};
  const bool fresh = stat(path.c_str(), &st) != 0 || st.st_size == 0;
  std::ofstream out(path, std::ios::app);
  if (!out) throw UsageError("cannot open '" + path + "' for appending");
  if (fresh) out << kCsvHeader << "\n";
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const auto num = [](double v) { return v > 0 ? format_number(v) : std::string(); };
  out << date << "," << csv_field(r.sample) << "," << csv_field(r.target) << "," << csv_field(r.device) << ","
      << csv_field(r.arch) << "," << r.dtype << "," << csv_field(r.params) << "," << num(r.t.median_ms) << ","
      << num(r.t.min_ms) << "," << r.t.runs << "," << num(r.tflops) << "," << num(r.gbps) << "," << r.peer
      << "," << num(r.peer_ms) << "," << (r.peer_ms > 0 ? format_number(r.peer_ms / r.t.median_ms) : "")
      << "\n";
  if (!out.flush()) throw Error("writing '" + path + "' failed");
}

// "median 41.2 ms (20 runs, min 40.9 ms)  3.336 TFLOP/s  12.1 GB/s"
std::string rate_line(double median_ms, double min_ms, int runs, double flops, double bytes) {
  std::string s = "median " + format_number(median_ms) + " ms (" + std::to_string(runs) + " runs, min " +
                  format_number(min_ms) + " ms)";
  if (flops > 0) s += "  " + format_number(flops / (median_ms * 1e9)) + " TFLOP/s";
  if (bytes > 0) s += "  " + format_number(bytes / (median_ms * 1e6)) + " GB/s";
  return s;
}

// --check: one launch compared with the reference before timing; false when an output is wrong.
bool check_first(const CompiledKernel& compiled, const Kernel& kernel, const samples::Sample& s,
                 const samples::Params& params, DType dtype, samples::Problem& problem, uint64_t seed) {
  compiled.launch(samples::kernel_args(kernel.function(), problem));
  for (const auto& c : check_outputs(problem, s.tolerance(params, dtype))) {
    if (c.cmp.mismatches > 0) {
      std::cout << "check    FAIL " << describe_mismatch(c) << " (seed " << seed << ")\n";
      return false;
    }
    std::cout << "check    pass " << c.name << " max error " << format_number(c.cmp.max_abs_error) << "\n";
  }
  return true;
}

const bench::Peer* pick_peer(const Args& a, const samples::Sample& s, DType t) {
  if (!a.has("vs")) return nullptr;
  const bench::Peer* peer = bench::find_peer(a.get("vs"));
  if (!peer) {
    std::vector<std::string> names;
    for (const auto& p : bench::peers()) names.push_back(p.name);
    throw UsageError("unknown peer '" + a.get("vs") + "'; peers are " + join(names, ", "));
  }
  if (auto why = peer->unsupported(s.name, t); !why.empty()) throw UsageError(why);
  return peer;
}

// --threads, else TILEGEN_NUM_THREADS (which caps the cpu target process-wide), else 0: each
// side's default. The peer gets the same count, so a ratio compares like with like.
int bench_threads(const Args& a) {
  if (a.has("threads")) {
    const int64_t n = a.get_int("threads", 0);
    if (n < 1 || n > 4096)
      throw UsageError("--threads takes a count from 1 to 4096, not " + a.get("threads"));
    return int(n);
  }
  return int(tg::env::integer("TILEGEN_NUM_THREADS", 1, 4096, 0));
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen bench SAMPLE [--target T] [--device N] [--set K=V,...] [--dtype D] [--vs PEER] "
      "[--csv FILE] [--runs N] [--warmup N] [--check] [--seed N] [--threads N] [--param K=V,...]\n"
      "  --threads N  host threads for the cpu target and the peer (default: TILEGEN_NUM_THREADS, else "
      "all)\n";
  static const std::vector<FlagSpec> flags = {{"target"},       {"device"}, {"set"},     {"dtype"},
                                              {"vs"},           {"csv"},    {"runs"},    {"warmup"},
                                              {"check", false}, {"seed"},   {"threads"}, {"param"}};
  Args a = parse_args(argv, flags, 1);
  if (a.has("help")) return print_usage(usage);
  if (a.positional.empty()) throw UsageError(std::string("missing SAMPLE; ") + usage);
  const samples::Sample& s = find_sample(a.positional[0]);
  const DType dtype = pick_dtype(s, a.get("dtype"));
  samples::Params overrides = s.bench_shapes.empty() ? samples::Params{} : s.bench_shapes.front();
  for (const auto& [k, v] : parse_set(a.get("set"))) overrides[k] = v;
  resolve_params(s, overrides);  // a misspelt parameter is a usage error before any target opens
  const bench::Peer* peer = pick_peer(a, s, dtype);
  const Target target = open_target(a.get("target"), int(a.get_int("device", 0)));
  const samples::Params params = resolve_params(s, overrides, target.info(), dtype, parse_param(a.get("param")));
  const uint64_t seed = a.get_u64("seed", fresh_seed());
  const Kernel kernel = build_kernel(s, params, dtype);
  const ProfileOptions prof = profile_options(a, target, 20);

  std::cout << std::left << std::setw(9) << "sample" << s.name << " " << dtype.name() << " "
            << format_params(params) << "\n"
            << std::setw(9) << "target" << target.name() << ": " << describe_device(target.info())
            << std::endl;
  const int threads = bench_threads(a);
  CompileOptions copt;
  copt.params = parse_param(a.get("param"));
  if (threads > 0 && target.name() == "cpu") copt.params["num_threads"] = std::to_string(threads);
  const CompiledKernel compiled = target.compile(kernel, copt);
  samples::Problem problem = bench_problem(s, params, dtype, seed, a.has("check"));
  if (a.has("check") && !check_first(compiled, kernel, s, params, dtype, problem, seed)) return 1;
  std::vector<DeviceBuffer> keep;
  BenchRow row;
  row.sample = s.name;
  row.target = target.name();
  row.device = target.info().device_name;
  row.arch = target.info().arch;
  row.dtype = dtype.name();
  row.params = format_params(params);
  row.t = compiled.profile(device_args(target, kernel.function(), problem, keep), prof);
  const double flops = s.flops ? s.flops(params, dtype) : 0, bytes = s.bytes ? s.bytes(params, dtype) : 0;
  row.tflops = flops > 0 ? flops / (row.t.median_ms * 1e9) : 0;
  row.gbps = bytes > 0 ? bytes / (row.t.median_ms * 1e6) : 0;
  std::cout << std::setw(9) << "tilegen" << rate_line(row.t.median_ms, row.t.min_ms, row.t.runs, flops, bytes)
            << std::endl;
  if (peer) {
    const bench::PeerTiming pt = peer->run(s.name, params, dtype, {prof.warmup, prof.runs, threads});
    row.peer = peer->name;
    row.peer_ms = pt.median_ms;
    std::cout << std::setw(9) << peer->name << rate_line(pt.median_ms, pt.min_ms, pt.runs, flops, bytes)
              << (pt.implementation.empty() ? "" : "  [" + pt.implementation + "]") << "\n";
  }
  if (a.has("csv")) append_csv(a.get("csv"), row);
  if (peer)
    std::cout << "speedup_vs_" << peer->name << "=" << format_number(row.peer_ms / row.t.median_ms) << "\n";
  return 0;
}

}  // namespace tg::cli
