#include "cli.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <set>

namespace tg::cli {

namespace {

std::string sample_names() {
  std::vector<std::string> names;
  for (const auto& s : samples::all()) names.push_back(s.name);
  return join(names, ", ");
}

std::string dtype_names(const samples::Sample& s) {
  std::vector<std::string> names;
  for (DType t : s.dtypes) names.emplace_back(t.name());
  return join(names, ", ");
}

/// Only the named plugin is loaded: a broken library beside it cannot stop `--target interp`.
TargetPlugin& load_named_plugin(const std::string& name) {
  const std::vector<std::string> names = target_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UsageError("unknown target '" + name + "'; targets are " + join(names, ", "));
  std::string reason;
  TargetPlugin* plugin = find_plugin(name, &reason);
  if (!plugin) throw UsageError("cannot load target " + name + ": " + reason);
  return *plugin;
}

}  // namespace

int print_usage(const char* usage) {
  std::cout << usage;
  return 0;
}

const samples::Sample& find_sample(const std::string& name) {
  if (const samples::Sample* s = samples::find(name)) return *s;
  throw UsageError("unknown sample '" + name + "'; samples are " + sample_names());
}

DType pick_dtype(const samples::Sample& s, const std::string& name) {
  if (s.dtypes.empty()) throw Error("sample " + s.name + " lists no dtypes");
  if (name.empty()) return s.dtypes.front();
  auto t = DType::from_name(name);
  if (!t) throw UsageError("unknown dtype '" + name + "'; " + s.name + " supports " + dtype_names(s));
  for (DType ok : s.dtypes)
    if (ok == *t) return *t;
  throw UsageError("sample " + s.name + " does not support dtype " + name + "; it supports " +
                   dtype_names(s));
}

samples::Params resolve_params(const samples::Sample& s, const samples::Params& overrides) {
  try {
    return samples::resolve(s, overrides);
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
}

samples::Params resolve_params(const samples::Sample& s, const samples::Params& overrides,
                               const TargetInfo& target, DType t, const std::map<std::string, std::string>& params) {
  try {
    samples::Params p = samples::resolve_for(s, overrides, target, t);
    TargetPlugin* plugin = find_plugin(target.target);
    if (!plugin) return p;
    std::set<std::string> fixed;
    for (const auto& [name, value] : overrides) fixed.insert(name);
    CompileOptions given;
    given.params = params;
    return samples::fit_to_device(s, p, t, target, plugin->pipeline(target, resolve_compile_options(*plugin, given)),
                                  fixed);
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
}

Kernel build_kernel(const samples::Sample& s, const samples::Params& p, DType t) {
  try {
    return s.build(p, t);
  } catch (const Error& e) {
    throw UsageError("cannot build " + s.name + " with " + format_params(p) + " (" + std::string(t.name()) +
                     "): " + e.what());
  }
}

Target open_target(const std::string& name, int device) {
  if (name.empty()) {
    const char* env = std::getenv("TILEGEN_TARGET");
    if (!env || !*env) return Target::select();
    try {
      return Target::select();
    } catch (const Error& e) {  // the user named the target, through the environment
      throw UsageError(e.message());
    }
  }
  load_named_plugin(name);
  try {  // unavailable, or no such device: the reason, as a usage error
    return Target::get(name, device);
  } catch (const Error& e) {
    throw UsageError(e.message());
  }
}

TargetPlugin& find_target_plugin(const std::string& name) { return load_named_plugin(name); }

TargetInfo codegen_info(TargetPlugin& plugin, const std::string& arch) {
  if (!arch.empty()) {
    try {
      return plugin.info_for_arch(arch);
    } catch (const Error& e) {
      throw UsageError("target " + plugin.name() + " cannot generate code for arch '" + arch +
                       "': " + e.message());
    }
  }
  ProbeResult probe = plugin.probe();
  if (!probe.devices.empty()) return probe.devices.front();
  throw UsageError("target " + plugin.name() + " has no device here (" +
                   (probe.reason.empty() ? std::string("none found") : probe.reason) +
                   "); give --arch ARCH to generate code without one");
}

std::string format_params(const samples::Params& p) {
  std::vector<std::string> items;
  for (const auto& [k, v] : p) items.push_back(k + "=" + std::to_string(v));
  return join(items, ",");
}

std::string describe_device(const TargetInfo& info) {
  std::string s = info.device_name.empty() ? std::string("device") : info.device_name;
  if (!info.arch.empty()) s += " (" + info.arch + ")";
  return s;
}

std::string format_number(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e6))
    std::snprintf(buf, sizeof buf, "%.3e", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

ProfileOptions profile_options(const Args& a, const Target& t, int default_runs) {
  const bool slow = t.name() == "interp";
  ProfileOptions opt;
  opt.warmup = int(a.get_int("warmup", slow ? 1 : 3));
  opt.runs = int(a.get_int("runs", slow ? 3 : default_runs));
  if (opt.runs < 1 || opt.warmup < 0) throw UsageError("--runs must be at least 1 and --warmup at least 0");
  return opt;
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ uint64_t(rd());
}

std::vector<KernelArg> device_args(const Target& target, const Function& f, samples::Problem& p,
                                   std::vector<DeviceBuffer>& keep) {
  std::vector<KernelArg> args = samples::kernel_args(f, p);
  keep.clear();
  keep.reserve(args.size());  // the pointers below must stay valid
  for (auto& a : args) {
    if (auto* h = std::get_if<HostTensor>(&a)) {
      keep.push_back(target.upload(*h));
      a = &keep.back();
    }
  }
  return args;
}

std::vector<OutputCheck> check_outputs(const samples::Problem& p, samples::Tolerance tol) {
  return check_outputs(p, std::vector<samples::Tolerance>(p.expected.size(), tol));
}

std::vector<OutputCheck> check_outputs(const samples::Problem& p,
                                       const std::vector<samples::Tolerance>& tols) {
  std::vector<OutputCheck> out;
  std::size_t k = 0;
  for (const auto& arr : p.args) {
    if (!arr.is_output) continue;
    if (k >= p.expected.size() || k >= tols.size())
      throw Error("sample problem has no reference or tolerance for output " + arr.name);
    OutputCheck c;
    c.name = arr.name;
    c.numel = arr.numel();
    c.cmp = samples::compare(arr, p.expected[k], tols[k]);
    if (c.cmp.first_mismatch >= 0) {
      c.got_at_first = arr.get(c.cmp.first_mismatch);
      c.want_at_first = p.expected[k][std::size_t(c.cmp.first_mismatch)];
    }
    out.push_back(c);
    ++k;
  }
  if (out.empty()) throw Error("sample problem marks no output to check");
  return out;
}

std::string describe_mismatch(const OutputCheck& c) {
  std::string s = c.name + ": " + std::to_string(c.cmp.mismatches) + " of " + std::to_string(c.numel) +
                  " elements outside tolerance";
  if (c.cmp.first_mismatch >= 0)
    s += ", first at " + std::to_string(c.cmp.first_mismatch) + ": got " + format_number(c.got_at_first) +
         ", want " + format_number(c.want_at_first);
  return s;
}

}  // namespace tg::cli
