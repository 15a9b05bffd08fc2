// The sample kernels: each a builder function, a float64 host reference, test shapes (ragged
// ones included) and bench shapes. The conformance suite, `tilegen run/bench/conformance`, the
// demo and the benchmarks all read this one registry.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tilegen/autotune.h"
#include "tilegen/builder.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/target_info.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/runtime.h"

namespace tg::samples {

/// Parameter values by name (sizes, block sizes, flags as 0/1).
using Params = std::map<std::string, int64_t>;

struct ParamInfo {
  std::string name;
  int64_t default_value;
  std::string help;
  /// Accepted range; resolve() rejects values outside it (sizes must be positive, flags 0/1).
  /// Sizes and block sizes become i32 index expressions, so no value may pass INT32_MAX.
  int64_t min_value = 1;
  int64_t max_value = INT32_MAX;
};

/// A host tensor with its storage, in the dtype's storage format.
struct HostArray {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = f32;
  std::vector<uint8_t> bytes;
  bool is_output = false;
  /// An output whose initial contents are part of the result (`total += ...`): filled with
  /// random data like an input instead of being poisoned.
  bool accumulates = false;
  int64_t numel() const;
  HostTensor view();
  double get(int64_t i) const;        // element i as double
  void set(int64_t i, double v);      // rounds to dtype
};

/// One prepared problem: inputs filled with random values, outputs poisoned (NaN, or 0x7F.. for
/// integers), and the float64 reference result of each output.
struct Problem {
  std::vector<HostArray> args;                      // kernel parameter order (sizes omitted)
  std::vector<std::vector<double>> expected;        // one per output arg, in args order
  std::vector<double> scalars;                      // scalar params, in order, when any
};

struct Tolerance {
  double abs = 0, rel = 0;  // |got - want| <= abs + rel * |want|
};

struct Sample {
  std::string name;
  std::string description;
  std::vector<ParamInfo> params;      // every parameter with its default
  std::vector<DType> dtypes;          // supported input dtypes; first is the default
  /// Build the kernel for these parameters (defaults filled in) and input dtype.
  std::function<Kernel(const Params&, DType)> build;
  /// Random inputs and the float64 reference.
  std::function<Problem(const Params&, DType, std::mt19937_64&)> make_problem;
  std::function<Tolerance(const Params&, DType)> tolerance;
  /// Shapes for the conformance suite (each with a label, ragged ones included) and for bench.
  std::vector<Params> test_shapes;
  std::vector<Params> bench_shapes;
  /// Parallel to test_shapes: a label per shape, and whether it is too big for the interpreter
  /// in a Debug unit test (run it in Release conformance runs only).
  struct ShapeInfo {
    std::string label;
    bool conformance_only = false;
  };
  std::vector<ShapeInfo> test_shape_info;
  /// make_problem without the float64 reference (expected left empty): inputs for bench shapes,
  /// where the reference would take minutes.
  std::function<Problem(const Params&, DType, std::mt19937_64&)> make_inputs;
  /// Work of one launch, for TFLOP/s (flops) or GB/s (bytes) in bench; 0 when not meaningful.
  std::function<double(const Params&, DType)> flops;
  std::function<double(const Params&, DType)> bytes;
  /// Tile parameters for a target whose best tiles differ from the defaults (sized for GPUs): given
  /// the target, the resolved parameters and the dtype, the values to use instead. resolve_for()
  /// applies them under the user's own settings. Null, or an empty result: the defaults.
  std::function<Params(const TargetInfo&, const Params&, DType)> tuned;
  /// What `tilegen tune` and tg::autotune try (samples/tune_spaces.cpp): the tile parameters
  /// (names of `params`) with values for the kind of device — GPU, cpu, software — and a filter
  /// for combinations that cannot work there, given the resolved parameters (the problem's
  /// shape) and the dtype.
  std::function<TuneSpace(const Params&, DType, const TargetInfo&)> tune_space;
};

/// Every sample, in a stable order: gemm, gemm_relu, softmax, rmsnorm, flash_attention,
/// dequant_gemm, conv2d, block_reduce, gemm_softmax, fp8_gemm.
const std::vector<Sample>& all();
/// nullptr when unknown.
const Sample* find(const std::string& name);
/// Defaults overlaid with `overrides`; throws tg::Error naming an unknown parameter.
Params resolve(const Sample& s, const Params& overrides);
/// resolve(), with the sample's tuned parameters for `target` in place of defaults that
/// `overrides` does not set (what `tilegen run/bench/source` use for the chosen target).
Params resolve_for(const Sample& s, const Params& overrides, const TargetInfo& target, DType t);
/// Whether a sample parameter is a tile size (its name starts with block_): what fit_to_device
/// may shrink.
bool is_tile_param(const std::string& name);
/// `p` with its tile parameters (is_tile_param) halved, largest first, until the kernel
/// lowered by `pipeline` (the target plugin's) needs no more shared memory than
/// `target.shared_mem_bytes`: defaults sized for large GPUs then run on a smaller device (a
/// software Vulkan device has 32 KiB). Parameters in `fixed` (the user's own) are never changed,
/// and a value the sample rejects is skipped. Returns `p` itself when it fits, when it does not
/// lower, or when nothing can shrink (the compile then says what does not fit). `budget`, when
/// positive, replaces shared_mem_bytes: a caller whose compile still found too little room (a
/// code generator may add to the IR's buffers, as vulkan's prefetch slots do) asks for less.
Params fit_to_device(const Sample& s, const Params& p, DType t, const TargetInfo& target,
                     const std::vector<PassEntry>& pipeline, const std::set<std::string>& fixed,
                     int64_t budget = 0);

/// An input filled with uniform values in [lo, hi] rounded to `t` (integers: uniform integers).
HostArray random_input(std::string name, std::vector<int64_t> shape, DType t, std::mt19937_64& rng,
                       double lo = -1.0, double hi = 1.0);
/// An output poisoned with NaN (floats) or bytes 0x7F (integers), so an element the kernel
/// forgets to write cannot match the reference.
HostArray poisoned_output(std::string name, std::vector<int64_t> shape, DType t);

/// Tolerance for a value accumulated from `terms` products in f32 and stored in `t`:
/// relative error from the output rounding (f32 1e-4, f16 1e-2, bf16 3e-2), and an absolute
/// floor growing with sqrt(terms) for results that cancel to near zero.
Tolerance accumulation_tolerance(DType t, int64_t terms);
/// Every element of `a` as a double, in storage order.
std::vector<double> to_doubles(const HostArray& a);

/// Compare one output against its reference; returns the largest |got - want| and counts
/// elements outside the tolerance. An element equal to its reference matches (infinities
/// included), and so does a NaN where the reference has one (a reference that is itself a run of
/// the kernel, `tilegen run FILE.tgir`, leaves the same NaN); any other NaN counts as outside.
struct Comparison {
  double max_abs_error = 0;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;
};
Comparison compare(const HostArray& got, const std::vector<double>& want, Tolerance tol);

/// The problem's arrays and scalars as launch arguments for `f` (the kernel built from the same
/// parameters), matched to f's parameters by name, sizes omitted. The arrays are referenced, not
/// copied: outputs land in `p.args`. Throws tg::Error when a parameter has no array.
std::vector<HostArg> host_args(const Function& f, Problem& p);
std::vector<KernelArg> kernel_args(const Function& f, Problem& p);

}  // namespace tg::samples
