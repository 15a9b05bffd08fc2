// The differential check (see kernel_check.h).
#include "kernel_check.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/runtime.h"

namespace tg::fuzz {

namespace {

bool is_unsupported(const Error& e) { return e.message().rfind("unsupported:", 0) == 0; }

// Vulkan without a device: a lavapipe-like subgroup and one with cooperative matrices (an H200's).
constexpr const char* kVulkanPlain = "vk1.3;sg=8;f16s;i64;sgops;smem=32768;thr=1024";
constexpr const char* kVulkanCoopmat =
    "vk1.3;sg=32;f16s;i64;sgops;smem=49152;thr=1024;cm=coopmat_16x16x16_f16_f32";

bool has_device(const std::string& plugin) {
  for (const TargetStatus& t : targets())
    if (t.name == plugin) return t.available && !t.devices.empty();
  return false;
}

/// Host memory of every tensor of a function, filled from a seed with small integers.
struct Tensors {
  static constexpr int kScalarValue = 2;  // every scalar parameter
  std::vector<Buffer> bufs;
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::pair<int, DType>>
      order;  // per non-size parameter: a tensor's index, or -1 and a scalar's type

  explicit Tensors(const Function& bound, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-4, 4);
    for (const Param& prm : bound.params) {
      if (prm.kind == Param::Kind::Scalar) order.emplace_back(-1, prm.var.dtype());
      if (prm.kind != Param::Kind::Tensor) continue;
      const Buffer& t = prm.buffer;
      std::vector<int64_t> shape;
      for (const Expr& d : t->shape) shape.push_back(*d.as_int());
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<uint8_t> bytes(storage_bytes(t->dtype, n));
      for (int64_t i = 0; i < n; ++i) {
        int v = dist(rng);
        store_element(t->dtype, bytes.data(), i,
                      t->dtype.is_float() ? Scalar::of_float(v) : Scalar::of_int(v));
      }
      order.emplace_back(int(bufs.size()), t->dtype);
      bufs.push_back(t), data.push_back(std::move(bytes)), shapes.push_back(std::move(shape));
    }
  }
  std::vector<HostArg> host_args() {
    std::vector<HostArg> out;
    for (auto [i, t] : order) {
      HostArg a;
      a.dtype = t;
      if (i < 0) {
        a.is_tensor = false;
        a.scalar = t.is_float() ? Scalar::of_float(kScalarValue) : Scalar::of_int(kScalarValue);
      } else {
        a.data = data[std::size_t(i)].data(), a.shape = shapes[std::size_t(i)];
      }
      out.push_back(a);
    }
    return out;
  }
  std::vector<KernelArg> kernel_args() {
    std::vector<KernelArg> out;
    for (auto [i, t] : order) {
      if (i < 0 && t.is_float())
        out.emplace_back(double(kScalarValue));
      else if (i < 0)
        out.emplace_back(int64_t(kScalarValue));
      else
        out.emplace_back(HostTensor{data[std::size_t(i)].data(), shapes[std::size_t(i)], t});
    }
    return out;
  }
};

double tolerance(DType t) {
  if (t.is_int()) return 0;
  if (t == f32 || t == f64) return 1e-5;
  return t == f16 ? 2e-3 : 1e-2;
}

/// The first element where `got` differs from `want`, or empty.
std::string compare(const Tensors& want, const Tensors& got) {
  for (std::size_t k = 0; k < want.bufs.size(); ++k) {
    DType t = want.bufs[k]->dtype;
    int64_t n = int64_t(want.data[k].size() / std::max<std::size_t>(1, storage_bytes(t, 1)));
    for (int64_t i = 0; i < n; ++i) {
      double a = scalar_as_double(t, load_element(t, want.data[k].data(), i));
      double b = scalar_as_double(t, load_element(t, got.data[k].data(), i));
      bool same = (std::isnan(a) && std::isnan(b)) || std::abs(a - b) <= tolerance(t) * (1 + std::abs(a));
      if (!same) {
        std::ostringstream s;
        s << want.bufs[k]->name << "[" << i << "] (flat): expected " << a << ", got " << b;
        return s.str();
      }
    }
  }
  return {};
}

Outcome fail(const Config& c, std::string category, std::string detail) {
  return {Verdict::Fail, c.name, std::move(category), std::move(detail)};
}

Outcome run_lowered(const Config& c, const Function& bound, const Tensors& want, unsigned seed) {
  std::string reason;
  TargetPlugin* plugin = find_plugin(c.plugin, &reason);
  if (!plugin) return {Verdict::Skip, c.name, "plugin", reason};
  Function lowered;
  try {
    TargetInfo info = c.arch.empty() ? plugin->probe().devices.at(0) : plugin->info_for_arch(c.arch);
    lowered = PassManager(plugin->pipeline(info, resolve_compile_options(*plugin, {}))).run(bound, info);
  } catch (const Error& e) {
    if (is_unsupported(e)) return {Verdict::Skip, c.name, "unsupported", e.message()};
    bool verify = e.message().rfind("after pass ", 0) == 0;
    return fail(c, verify ? "verify" : "pass-error", e.what());
  }
  Tensors got(bound, seed);
  try {
    interpret(lowered, got.host_args());
  } catch (const Error& e) {
    bool race = e.message().find("race on") != std::string::npos;
    Outcome o = fail(c, race ? "race" : "lowered-error", e.what());
    o.lowered = print(lowered);
    return o;
  }
  std::string diff = compare(want, got);
  if (diff.empty()) return {};
  Outcome o = fail(c, "mismatch", diff);
  o.lowered = print(lowered);
  return o;
}

// One Target per plugin for the process: opening a device is slow (vulkan) and done once.
const Target& target_of(const std::string& plugin) {
  static std::map<std::string, Target> opened;
  auto it = opened.find(plugin);
  if (it == opened.end()) it = opened.emplace(plugin, Target::get(plugin)).first;
  return it->second;
}

Outcome run_real(const Config& c, const Function& fn, const Tensors& want, const Function& bound,
                 unsigned seed) {
  std::optional<CompiledKernel> kernel;
  try {
    kernel = target_of(c.plugin).compile(Kernel(fn));
  } catch (const Error& e) {
    if (is_unsupported(e)) return {Verdict::Skip, c.name, "unsupported", e.message()};
    return fail(c, "compile", e.what());
  }
  Tensors got(bound, seed);
  try {
    kernel->launch(got.kernel_args());
  } catch (const Error& e) {
    if (is_unsupported(e)) return {Verdict::Skip, c.name, "unsupported", e.message()};
    return fail(c, "launch", e.what());
  }
  std::string diff = compare(want, got);
  return diff.empty() ? Outcome{} : fail(c, "mismatch", diff);
}

}  // namespace

std::vector<Config> configs_for(const std::string& target, std::vector<std::string>* skipped) {
  std::vector<Config> all = {
      {"cuda:sm_80", "cuda", "sm_80", false},
      {"cuda:sm_90a", "cuda", "sm_90a", false},
      {"hip:gfx90a", "hip", "gfx90a", false},
      {"hip:gfx942", "hip", "gfx942", false},
      {"vulkan:plain", "vulkan", kVulkanPlain, false},
      {"vulkan:coopmat", "vulkan", kVulkanCoopmat, false},
      {"cpu:lowered", "cpu", "", false},
      {"cpu:run", "cpu", "", true},
      {"vulkan:run", "vulkan", "", true},
  };
  std::vector<Config> out;
  for (Config& c : all) {
    if (target != "all" && target != c.plugin) continue;
    std::string reason;
    if (!find_plugin(c.plugin, &reason)) {
      if (skipped) skipped->push_back(c.name + ": " + reason);
      continue;
    }
    if ((c.execute || c.arch.empty()) && !has_device(c.plugin)) {
      if (skipped) skipped->push_back(c.name + ": no " + c.plugin + " device here");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

Outcome check_case(const Case& c, const std::vector<Config>& configs, const std::string& only,
                   std::map<std::string, double>* seconds, bool execute) {
  auto start = std::chrono::steady_clock::now();
  auto lap = [&](const std::string& what) {
    auto now = std::chrono::steady_clock::now();
    if (seconds) (*seconds)[what] += std::chrono::duration<double>(now - start).count();
    start = now;
  };
  const unsigned seed = 1234;
  Function bound;
  try {
    bound = c.sizes.empty() ? c.fn : bind_sizes(c.fn, c.sizes);
  } catch (const Error& e) {
    return {Verdict::Invalid, "oracle", "bind", e.what()};
  }
  Tensors want(bound, seed);
  try {
    interpret(c.fn, want.host_args());
  } catch (const Error& e) {
    return {Verdict::Invalid, "oracle", "interpret", e.what()};
  }
  lap("oracle");
  Outcome skip;
  for (const Config& cfg : configs) {
    if (!only.empty() && cfg.name != only) continue;
    if (cfg.execute && !execute && only.empty()) continue;
    Outcome o;
    try {
      o = cfg.execute ? run_real(cfg, c.fn, want, bound, seed) : run_lowered(cfg, bound, want, seed);
    } catch (const std::exception& e) {  // anything but tg::Error out of the library is a bug
      o = fail(cfg, "exception", e.what());
    }
    lap(cfg.name);
    if (o.verdict == Verdict::Fail) return o;
    if (o.verdict == Verdict::Skip) skip = o;
  }
  return skip;
}

std::string case_text(const Case& c, const std::string& comment) {
  std::ostringstream s;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) s << "# " << line << "\n";
  s << "# sizes";
  for (const auto& [k, v] : c.sizes) s << " " << k << "=" << v;
  s << "\n" << print(c.fn);
  return s.str();
}

Case parse_case(const std::string& text, const std::string& origin) {
  Case c;
  c.fn = parse_function(text, origin);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# sizes", 0) != 0) continue;
    std::istringstream items(line.substr(7));
    for (std::string item; items >> item;) {
      auto eq = item.find('=');
      const std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
      std::size_t used = 0;
      int64_t v = 0;
      try {
        v = std::stoll(value, &used);
      } catch (const std::exception&) {  // not a number, or past int64: the message below
        used = 0;
      }
      if (eq == std::string::npos || eq == 0 || used == 0 || used != value.size())
        throw Error(origin + ": '# sizes' wants NAME=VALUE items with integer values, not '" + item + "'");
      c.sizes[item.substr(0, eq)] = v;
    }
  }
  return c;
}

}  // namespace tg::fuzz
