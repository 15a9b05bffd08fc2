// The autotuner: compile a kernel for every config of a space, check each against a reference
// on the same inputs, time the ones that agree, and keep the fastest on disk beside the kernel
// cache, so the next run takes it without tuning. docs/autotune.md describes it.
//
//   tg::TuneSpace space{{{"block_M", {64, 128}}, {"block_N", {64, 128}}, {"stages", {2, 3}}},
//                       [](const tg::TuneConfig& c) { return c.at("block_M") * c.at("stages") <= 384; }};
//   tg::TuneOptions opt;
//   opt.flops = 2.0 * M * N * K;                       // for TFLOP/s in the results
//   tg::TuneResult r = tg::autotune(target, space, [&](const tg::TuneConfig& c) {
//     return matmul(M, N, K, c.at("block_M"), c.at("block_N"), c.at("stages"));
//   }, opt);                                           // random inputs: the kernel's shapes
//   auto kernel = target.compile(matmul(M, N, K, r.best.at("block_M"), ...));
//
// A config that does not build, compile, fit or launch, or whose outputs differ from the
// reference's, is a trial with that status and its reason, never an exception: only misuse (a
// malformed space, arguments that do not match the kernel) throws tg::Error at the caller's line.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/runtime.h"

namespace tg {

/// One config: a value for each parameter of the space, by name.
using TuneConfig = std::map<std::string, int64_t>;

/// A parameter of the space and the values to try, in order.
struct TuneParam {
  std::string name;
  std::vector<int64_t> values;
};

/// Every combination of the parameters' values, less those `valid` rejects.
struct TuneSpace {
  std::vector<TuneParam> params;
  /// False for a combination the kernel cannot be made with (a tile that does not divide, shared
  /// memory over the device's): left out before anything is compiled. Null: all are valid.
  std::function<bool(const TuneConfig&)> valid;

  /// The combinations in order (the first parameter varies slowest), those `valid` rejects left
  /// out. A parameter named twice, one without values, a value listed twice, or a space of more
  /// than kMaxConfigs combinations is a tg::Error at `loc`.
  std::vector<TuneConfig> configs(Loc loc = Loc::current()) const;
  /// The number of combinations before `valid`.
  std::size_t size() const;
  static constexpr std::size_t kMaxConfigs = 100000;
};

enum class TuneStatus : uint8_t {
  Ok,             // agreed with the reference, and timed
  BuildFailed,    // the kernel-making function threw (a combination the builder rejects)
  CompileFailed,  // the target did not compile it (shared memory or registers over the device's, ...)
  RunFailed,      // the launch or the timing failed
  WrongResult,    // an output outside the tolerance of the reference's
};
/// "ok", "build failed", "compile failed", "run failed", "wrong result".
const char* status_name(TuneStatus s);

/// One config tried.
struct TuneTrial {
  TuneConfig config;
  TuneStatus status = TuneStatus::Ok;
  std::string reason;           // what failed, when not Ok
  ProfileResult time;           // when Ok
  double tflops = 0, gbps = 0;  // when Ok and TuneOptions::flops / bytes are given
  double max_error = 0;         // largest |got - want| over the outputs, when checked
  double compile_ms = 0;        // wall time of make + compile
};

/// What each config is checked against.
enum class TuneCheck : uint8_t {
  FirstConfig,  // the outputs of the first config that compiles and runs (the baseline when given)
  Interpreter,  // the first config's kernel run by the interpreter (slow: small shapes only)
  None,         // not checked: every config that runs is timed
};

/// |got - want| <= abs * scale + rel * |want|, where scale is the largest |want| of that output
/// (at least 1): so `abs` does not depend on the output's magnitude.
struct TuneTolerance {
  double abs = 0, rel = 0;
};
/// Per dtype, for outputs that differ by summation order and rounding: f64 1e-9, f32 1e-4,
/// f16 1e-2, bf16 3e-2, fp8 0.125, fp4 0.5 (abs and rel alike); integers and bool exact.
TuneTolerance default_tolerance(DType t);

enum class TuneProgress : uint8_t {
  Auto,   // Bar when the stream is a terminal (std::cerr on a tty), else Lines
  Bar,    // one line redrawn: count, best so far, time left
  Lines,  // one line a config
  None,
};

struct TuneOptions {
  /// Launch arguments, as for CompiledKernel::launch (every config's kernel takes the same
  /// parameters). They are copied first: the tuner launches on its own device buffers and writes
  /// none of the caller's. Empty: random inputs (floats uniform in [-1, 1], integers in [-8, 8])
  /// of the first kernel's tensor shapes, `shapes` giving those with symbolic sizes and `scalars`
  /// the scalar parameters.
  std::vector<KernelArg> args;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, double> scalars;
  uint64_t seed = 1;

  /// Tried first, and the reference of TuneCheck::FirstConfig: the hand-picked config, so the
  /// results say how far the best is from it. Need not be one of the space's combinations.
  std::optional<TuneConfig> baseline;
  TuneCheck check = TuneCheck::FirstConfig;
  /// Null: default_tolerance.
  std::function<TuneTolerance(DType)> tolerance;

  ProfileOptions profile;
  CompileOptions compile;
  /// Host threads compiling configs at once; 0: the hardware's. Compiles all run before any
  /// timing, so they never share the machine with a timed run.
  int jobs = 0;
  /// Work of one launch, for TuneTrial::tflops and gbps; 0: not reported.
  double flops = 0, bytes = 0;

  /// Keep the best config on disk and take it from there (TuneResult::from_cache) when the key
  /// matches: kernel (name and the IR of the first config), argument shapes and dtypes, space,
  /// compile options, target and device. `retune` tunes again and replaces the stored one.
  bool use_store = true;
  bool retune = false;
  /// Empty: default_store_dir().
  std::string store_dir;

  TuneProgress progress = TuneProgress::Auto;
  std::ostream* progress_stream = nullptr;  // null: std::cerr
  /// Called on the calling thread for each trial, in order, once it is checked and timed or has
  /// failed (not on a store hit: nothing is tried).
  std::function<void(const TuneTrial&)> on_trial;
};

struct TuneResult {
  /// Every config tried, in the order tried (the baseline first), or — from the store — the
  /// stored best alone.
  std::vector<TuneTrial> trials;
  TuneConfig best;  // empty when no config was Ok
  ProfileResult best_time;
  std::optional<std::size_t> best_index;      // into trials
  std::optional<std::size_t> baseline_index;  // into trials, when a baseline was given and tuned
  bool from_cache = false;                    // the best came from the store; nothing was compiled or timed
  std::string store_path;                     // the file the best is kept in; empty when use_store is off
  bool found() const { return best_index.has_value(); }
};

/// Tune `make` over `space` on `target`. Throws tg::Error at `loc` for misuse only: an empty or
/// malformed space, a space whose every config `valid` rejects, arguments that do not match the
/// first kernel, options out of range, an untrusted store directory (as the kernel cache's).
TuneResult autotune(const Target& target, const TuneSpace& space,
                    const std::function<Kernel(const TuneConfig&)>& make, const TuneOptions& opt = {},
                    Loc loc = Loc::current());

/// Where tuned configs are kept: the kernel cache's directory (KernelCache::default_dir) plus
/// "/autotune".
std::string default_store_dir();

/// {block_M: 64, stages: 2} → "block_M=64,stages=2".
std::string format_config(const TuneConfig& c);

}  // namespace tg
