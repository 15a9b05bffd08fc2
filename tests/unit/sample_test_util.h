// Shared by the tests that run a sample's Problem (interpreted, lowered or on a device) and
// check its outputs against the float64 reference.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/samples.h"

namespace tg::testing {

/// The shapes of f's tensor parameters in p, in parameter order: what infer_sizes takes.
inline std::vector<std::vector<int64_t>> tensor_shapes(const Function& f, const samples::Problem& p) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Buffer& t : f.tensors())
    for (const samples::HostArray& a : p.args)
      if (a.name == t->name) shapes.push_back(a.shape);
  return shapes;
}

/// Each output of p against its expected values: a failed CHECK per output with a mismatch,
/// naming the output, its largest error and its first mismatch (with the values there).
/// Returns how many outputs were compared.
inline std::size_t check_outputs(const samples::Problem& p, samples::Tolerance tol) {
  std::size_t out = 0;
  for (const samples::HostArray& a : p.args) {
    if (!a.is_output) continue;
    REQUIRE(out < p.expected.size());
    const std::vector<double>& want = p.expected[out++];
    samples::Comparison c = samples::compare(a, want, tol);
    bool at = c.first_mismatch >= 0;
    INFO("output " << a.name << ": max |error| " << c.max_abs_error << ", first mismatch at "
                   << c.first_mismatch << " (got " << (at ? a.get(c.first_mismatch) : 0.0) << ", want "
                   << (at ? want[std::size_t(c.first_mismatch)] : 0.0) << ")");
    CHECK(c.mismatches == 0);
  }
  return out;
}

/// Sample s at dtype t with the parameters `overrides` (the rest its defaults), lowered by `pm`
/// for `info` and run by the interpreter (races detected) on fresh inputs, outputs checked against
/// the float64 reference. Returns the lowered IR's text.
inline std::string check_lowered_params(const samples::Sample& s, DType t, const samples::Params& overrides,
                                        PassManager& pm, const TargetInfo& info, std::mt19937_64& rng) {
  samples::Params p = samples::resolve(s, overrides);
  Function f = s.build(p, t).function();
  samples::Problem pr = s.make_problem(p, t, rng);
  Function lowered = pm.run(bind_sizes(f, infer_sizes(f, tensor_shapes(f, pr))), info);
  const std::string text = print(lowered);
  INFO(text);
  interpret(lowered, samples::host_args(lowered, pr));
  check_outputs(pr, s.tolerance(p, t));
  return text;
}

/// Sample s at dtype t and its test shape `shape` (check_lowered_params).
inline std::string check_lowered_sample(const samples::Sample& s, DType t, std::size_t shape, PassManager& pm,
                                        const TargetInfo& info, std::mt19937_64& rng) {
  INFO(s.name << " [" << s.test_shape_info[shape].label << "] " << t.name() << " on " << info.arch);
  return check_lowered_params(s, t, s.test_shapes[shape], pm, info, rng);
}

}  // namespace tg::testing
