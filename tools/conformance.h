// The conformance runner: every sample × dtype × test shape on each target, each output compared
// with the sample's float64 reference. A hardware team proves a new target with it:
//
//   tilegen conformance --target mytarget --json result.json
//
// A compile error whose message starts with "unsupported:" (a dtype or feature the target says
// it lacks) is a skip; every other error, and every output outside tolerance, is a failure.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/samples.h"

namespace tg::cli {

enum class CaseStatus { Pass, Fail, Skip };
const char* name_of(CaseStatus s);  // "pass", "fail", "skip"

struct ConformanceCase {
  std::string sample, target, dtype, shape;  // shape: the test shape in --set syntax
  std::string label;                         // the sample's name for the shape: "ragged 50x37x45"
  CaseStatus status = CaseStatus::Fail;
  std::optional<double> max_error;  // over every output, when the kernel ran
  std::string reason;               // why it failed or was skipped
  uint64_t seed = 0;                // its inputs: std::mt19937_64(seed) given to make_problem
  std::string fitted;               // the tiles it ran with where the shape's did not fit the
                                    // device's shared memory ("block_M=32,block_N=32"), else empty
};

/// One row of the matrix: a sample at one dtype and test shape.
struct ConformanceRow {
  const samples::Sample* sample = nullptr;
  DType dtype;
  samples::Params shape;    // the test shape as the sample lists it (defaults fill the rest)
  std::string shape_label;  // "ragged 50x37x45": the sample's label, else the parameters
  std::string label;        // "gemm f16 ragged 50x37x45" (the shape's label, else its parameters)
};

struct ConformanceOptions {
  std::vector<std::string> targets;  // empty: every available target
  std::vector<std::string> samples;  // empty: every sample
  std::vector<std::string> dtypes;   // empty: every dtype each sample supports
  uint64_t seed = 0;                 // master seed; each case derives its own from it
  int shard = 0, shards = 1;         // only rows whose index (in registry order) % shards == shard
};

/// The rows the options select, in registry order. Unknown names are UsageErrors.
std::vector<ConformanceRow> plan_rows(const ConformanceOptions& opt);
/// The targets the options select (validated), in the order given or in discovery order.
std::vector<std::string> plan_targets(const ConformanceOptions& opt);

/// Run every row on every target; `on_row` sees each row's cases (one per target) as it ends.
using RowCallback = std::function<void(const ConformanceRow&, const std::vector<ConformanceCase>&)>;
std::vector<ConformanceCase> run_conformance(const ConformanceOptions& opt,
                                             const std::vector<ConformanceRow>& rows,
                                             const std::vector<std::string>& targets,
                                             const RowCallback& on_row);

/// {"cases":[{"sample","target","dtype","shape","label","status","max_error","reason","seed"}]}
std::string conformance_json(const std::vector<ConformanceCase>& cases);

/// The seed of one case (from its sample, dtype, shape and target), stable under filtering: the same case
/// gets the same inputs whatever else runs with it.
uint64_t case_seed(uint64_t master, const ConformanceCase& c);

}  // namespace tg::cli
