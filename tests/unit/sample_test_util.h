// Shared by the tests that run a sample's Problem (interpreted, lowered or on a device) and
// check its outputs against the float64 reference.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

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

}  // namespace tg::testing
