// tg::autotune: enumerate the space, make and compile every config on a pool of threads, then
// one at a time check each against the reference and time it, keep the fastest.
//
// Compiling in parallel is safe: Target::compile runs the pass pipeline (functions of their
// input IR) and the plugin's codegen, which keeps no state between calls in any plugin (cpu: an
// LLVMContext and TargetMachine per call; cuda: NVRTC, thread-safe, one program per call; hip:
// hiprtc, or clang in a private temporary directory per call; vulkan: its own SPIR-V builder per call;
// interp: the IR text); the one step that touches the device, loading the module, holds the device's lock;
// kernel-cache writes use unique temporary names. Timing is kept apart from compiling so that no timed run
// shares the machine with a compiler (on the cpu target they would share the cores).
#include "tilegen/autotune.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>
#include <thread>

#include "autotune_internal.h"

namespace tg {

using namespace autotune_detail;

// ---- The space

std::size_t TuneSpace::size() const {
  std::size_t n = params.empty() ? 0 : 1;
  for (const TuneParam& p : params) {
    if (p.values.empty()) return 0;
    if (n > kMaxConfigs) return n;  // the caller reports it; no overflow on the way there
    n *= p.values.size();
  }
  return n;
}

std::vector<TuneConfig> TuneSpace::configs(Loc loc) const {
  const SourceLoc where = SourceLoc::from(loc);
  if (params.empty()) throw Error("autotune: the space has no parameters; give each its values", where);
  std::set<std::string> names;
  for (const TuneParam& p : params) {
    if (p.name.empty()) throw Error("autotune: a parameter of the space has no name", where);
    if (!names.insert(p.name).second)
      throw Error("autotune: the space names '" + p.name + "' twice; give each parameter once", where);
    if (p.values.empty())
      throw Error("autotune: parameter '" + p.name + "' of the space has no values", where);
    std::set<int64_t> seen;
    for (int64_t v : p.values)
      if (!seen.insert(v).second)
        throw Error("autotune: parameter '" + p.name + "' lists the value " + std::to_string(v) + " twice",
                    where);
  }
  if (size() > kMaxConfigs)
    throw Error("autotune: the space has more than " + std::to_string(kMaxConfigs) +
                    " combinations; give fewer values, or split it",
                where);
  std::vector<TuneConfig> out;
  std::vector<std::size_t> at(params.size(), 0);
  for (;;) {
    TuneConfig c;
    for (std::size_t i = 0; i < params.size(); ++i) c[params[i].name] = params[i].values[at[i]];
    if (!valid || valid(c)) out.push_back(std::move(c));
    std::size_t i = params.size();  // odometer: the last parameter turns fastest
    while (i > 0 && ++at[i - 1] == params[i - 1].values.size()) at[--i] = 0;
    if (i == 0) break;
  }
  return out;
}

const char* status_name(TuneStatus s) {
  switch (s) {
    case TuneStatus::Ok: return "ok";
    case TuneStatus::BuildFailed: return "build failed";
    case TuneStatus::CompileFailed: return "compile failed";
    case TuneStatus::RunFailed: return "run failed";
    case TuneStatus::WrongResult: return "wrong result";
  }
  return "?";
}

TuneTolerance default_tolerance(DType t) {
  switch (t.code) {
    case TypeCode::F64: return {1e-9, 1e-9};
    case TypeCode::F32: return {1e-4, 1e-4};
    case TypeCode::F16: return {1e-2, 1e-2};
    case TypeCode::BF16: return {3e-2, 3e-2};
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2: return {0.125, 0.125};
    case TypeCode::F4E2M1: return {0.5, 0.5};
    default: return {0, 0};
  }
}

std::string default_store_dir() { return KernelCache::default_dir() + "/autotune"; }

std::string format_config(const TuneConfig& c) {
  std::string out;
  for (const auto& [k, v] : c) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return out;
}

namespace {

std::string message_of(const std::exception& e) {
  if (auto* te = dynamic_cast<const Error*>(&e)) return te->message();
  return e.what();
}

/// One config on its way: made, compiled, then checked and timed.
struct Candidate {
  TuneTrial trial;
  std::optional<CompiledKernel> compiled;
  Kernel kernel;
};

/// The configs to try: the baseline first, then the space's, without repeats.
std::vector<TuneConfig> configs_to_try(const TuneSpace& space, const TuneOptions& opt, const SourceLoc& where,
                                       Loc loc) {
  std::vector<TuneConfig> configs = space.configs(loc);
  if (opt.baseline) {
    for (const TuneParam& p : space.params)
      if (!opt.baseline->count(p.name))
        throw Error("autotune: the baseline " + format_config(*opt.baseline) + " has no value for '" +
                        p.name + "'; give it every parameter of the space",
                    where);
    if (opt.baseline->size() != space.params.size())
      throw Error("autotune: the baseline " + format_config(*opt.baseline) +
                      " names a parameter the space does not have",
                  where);
    configs.erase(std::remove(configs.begin(), configs.end(), *opt.baseline), configs.end());
    configs.insert(configs.begin(), *opt.baseline);
  }
  if (configs.empty())
    throw Error("autotune: the space's filter rejects all of its " + std::to_string(space.size()) +
                    " combinations; loosen it or give other values",
                where);
  return configs;
}

/// make() of each config and Target::compile on `jobs` threads. The first kernel (made on the
/// caller's thread) fixes the parameters every other kernel must take.
void compile_all(const Target& target, std::vector<Candidate>& cands,
                 const std::function<Kernel(const TuneConfig&)>& make, const Inputs& in,
                 const TuneOptions& opt, Progress& progress) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < cands.size(); i = next++) {
      Candidate& c = cands[i];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        if (!c.kernel.function().body) c.kernel = make(c.trial.config);
        if (std::string why = in.mismatch(c.kernel.function()); !why.empty()) {
          c.trial.status = TuneStatus::BuildFailed;
          c.trial.reason = "its kernel's parameters differ from the first config's: " + why;
        }
      } catch (const std::exception& e) {
        c.trial.status = TuneStatus::BuildFailed;
        c.trial.reason = message_of(e);
      } catch (...) {
        c.trial.status = TuneStatus::BuildFailed;
        c.trial.reason = "the kernel-making function threw something that is not a std::exception";
      }
      if (c.trial.status == TuneStatus::Ok) {
        try {
          c.compiled = target.compile(c.kernel, opt.compile);
        } catch (const std::exception& e) {
          c.trial.status = TuneStatus::CompileFailed;
          c.trial.reason = message_of(e);
        }
      }
      c.trial.compile_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      progress.step(c.trial, nullptr);
    }
  };
  unsigned jobs = opt.jobs > 0 ? unsigned(opt.jobs) : std::max(1u, std::thread::hardware_concurrency());
  jobs = unsigned(std::min<std::size_t>(jobs, cands.size()));
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < jobs; ++j) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

/// The outputs every config is compared with, and how to get them.
struct Reference {
  TuneCheck check;
  std::optional<std::vector<std::vector<uint8_t>>> outputs;
};

/// Launch once on the reset inputs and compare; then time. Fills c.trial.
void check_and_time(Candidate& c, Inputs& in, Reference& ref, const TuneOptions& opt) {
  TuneTrial& t = c.trial;
  std::vector<std::vector<uint8_t>> got;
  try {
    in.reset();
    c.compiled->launch(in.args());
    got = in.outputs();
  } catch (const std::exception& e) {
    t.status = TuneStatus::RunFailed;
    t.reason = message_of(e);
    return;
  }
  if (ref.check == TuneCheck::Interpreter && !ref.outputs) {
    try {
      std::vector<std::vector<uint8_t>> host;
      std::vector<KernelArg> args = in.host_args(host);
      Target::get("interp").compile(c.kernel).launch(args);
      std::vector<std::vector<uint8_t>> outs;
      for (std::size_t i = 0, k = 0; i < in.slots.size(); ++i)
        if (in.slots[i].is_tensor) {
          if (in.slots[i].written) outs.push_back(host[k]);
          ++k;
        }
      ref.outputs = std::move(outs);
    } catch (const std::exception& e) {
      t.status = TuneStatus::RunFailed;
      t.reason = "the interpreter, the reference, could not run this config's kernel: " + message_of(e);
      return;
    }
  }
  if (ref.check == TuneCheck::FirstConfig && !ref.outputs) ref.outputs = got;  // the reference itself
  if (ref.check != TuneCheck::None) {
    std::string why = compare_outputs(in, got, *ref.outputs, opt.tolerance, &t.max_error);
    if (!why.empty()) {
      t.status = TuneStatus::WrongResult;
      t.reason = why;
      return;
    }
  }
  try {
    t.time = c.compiled->profile(in.args(), opt.profile);
  } catch (const std::exception& e) {
    t.status = TuneStatus::RunFailed;
    t.reason = message_of(e);
    return;
  }
  if (opt.flops > 0 && t.time.median_ms > 0) t.tflops = opt.flops / (t.time.median_ms * 1e9);
  if (opt.bytes > 0 && t.time.median_ms > 0) t.gbps = opt.bytes / (t.time.median_ms * 1e6);
}

void check_options(const Target& target, const TuneOptions& opt, const SourceLoc& where) {
  if (opt.profile.runs < 1 || opt.profile.warmup < 0)
    throw Error("autotune: TuneOptions::profile needs runs >= 1 and warmup >= 0 (got runs " +
                    std::to_string(opt.profile.runs) + ", warmup " + std::to_string(opt.profile.warmup) + ")",
                where);
  if (opt.jobs < 0)
    throw Error("autotune: TuneOptions::jobs is " + std::to_string(opt.jobs) + "; give 0 (all) or more",
                where);
  if (!(opt.flops >= 0) || !(opt.bytes >= 0))
    throw Error("autotune: TuneOptions::flops and bytes must be 0 (not reported) or positive", where);
  resolve_compile_options(target.plugin(), opt.compile, where);  // the same for every config: misuse
  if (!opt.args.empty() && (!opt.shapes.empty() || !opt.scalars.empty()))
    throw Error("autotune: give TuneOptions::args, or shapes and scalars for random inputs, not both", where);
}

}  // namespace

TuneResult autotune(const Target& target, const TuneSpace& space,
                    const std::function<Kernel(const TuneConfig&)>& make, const TuneOptions& opt, Loc loc) {
  const SourceLoc where = SourceLoc::from(loc);
  if (!make) throw Error("autotune: the kernel-making function is empty", where);
  check_options(target, opt, where);
  std::vector<Candidate> cands;
  for (TuneConfig& c : configs_to_try(space, opt, where, loc)) {
    cands.emplace_back();
    cands.back().trial.config = std::move(c);
  }
  Progress progress(opt.progress, opt.progress_stream);

  // The first config that builds fixes the kernel's parameters, the inputs and the store key.
  std::size_t first = 0;
  for (; first < cands.size(); ++first) {
    try {
      cands[first].kernel = make(cands[first].trial.config);
      break;
    } catch (const std::exception& e) {
      cands[first].trial.status = TuneStatus::BuildFailed;
      cands[first].trial.reason = message_of(e);
    } catch (...) {
      cands[first].trial.status = TuneStatus::BuildFailed;
      cands[first].trial.reason = "the kernel-making function threw something that is not a std::exception";
    }
  }
  TuneResult result;
  if (first == cands.size()) {  // nothing builds: every trial says why
    for (Candidate& c : cands) result.trials.push_back(std::move(c.trial));
    return result;
  }
  const Kernel first_kernel = cands[first].kernel;
  Inputs in = Inputs::make(target, first_kernel.function(), opt, where);

  std::optional<Store> store;
  std::vector<std::string> names;
  for (const TuneParam& p : space.params) names.push_back(p.name);
  if (opt.use_store && KernelCache::enabled()) {
    try {
      store = make_store(opt.store_dir.empty() ? default_store_dir() : opt.store_dir, target, space,
                         first_kernel, in, opt);
      result.store_path = store->cache.path_of(store->key);
      if (!opt.retune)
        if (std::optional<TuneTrial> hit = store->load(names)) {
          result.trials.push_back(*hit);
          result.best = hit->config;
          result.best_time = hit->time;
          result.best_index = 0;
          result.from_cache = true;
          progress.note("best config from " + result.store_path + ": " + format_config(result.best));
          return result;
        }
    } catch (const Error& e) {
      throw Error(e.message(), where);  // an untrusted directory: the user's to fix
    }
  }

  progress.start("compiling", cands.size() - first);
  std::vector<Candidate> todo(std::make_move_iterator(cands.begin() + std::ptrdiff_t(first)),
                              std::make_move_iterator(cands.end()));
  compile_all(target, todo, make, in, opt, progress);
  progress.finish();

  Reference ref{opt.check, {}};
  progress.start("timing", todo.size());
  for (std::size_t i = 0; i < first; ++i) {
    result.trials.push_back(std::move(cands[i].trial));
    if (opt.on_trial) opt.on_trial(result.trials.back());
  }
  for (Candidate& c : todo) {
    if (c.compiled) check_and_time(c, in, ref, opt);
    c.compiled.reset();  // one loaded module at a time from here on
    result.trials.push_back(c.trial);
    const TuneTrial& t = result.trials.back();
    if (t.status == TuneStatus::Ok && (!result.best_index || t.time.median_ms < result.best_time.median_ms)) {
      result.best_index = result.trials.size() - 1;
      result.best = t.config;
      result.best_time = t.time;
    }
    progress.step(t, result.best_index ? &result.trials[*result.best_index] : nullptr);
    if (opt.on_trial) opt.on_trial(t);
  }
  progress.finish();
  if (opt.baseline && result.trials.front().config == *opt.baseline) result.baseline_index = 0;
  if (store && result.best_index) store->save(result);
  return result;
}

}  // namespace tg
