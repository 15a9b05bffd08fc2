// A check (not a rewrite): element accesses that are out of bounds on every execution that
// reaches them, found by the range analysis (range_analysis.h) and reported as a tg::Error at the
// access's call site. build() runs it after the verifier, and the pass manager runs it on its
// input and after every pass, so lowered IR is held to it too.
//
//   Y: f32[4];  Y[1000000] = 1.0                         → error: index 1000000, Y has 4
//   local l: f32[4];  for i in serial(-10 +: 2) { l[i] = 1.0 }  → error: i in [-10, -9]
//   for i in serial(0 +: 8) { if (i < 4) { l[i] = 1.0 } }       → fine: i in [0, 3] there
//
// Only what is certain is rejected: an index whose whole range lies outside its dimension.
// Code that the analysis proves unreachable (an if whose condition is decided false, a loop
// whose extent is at most 0) is not checked. Indices that may or may not be in range are left
// to the run-time checks.
#pragma once
#include "tilegen/ir/function.h"

namespace tg {

/// Throws tg::Error at the first access of f that is out of bounds wherever it runs.
void check_index_ranges(const Function& f);

}  // namespace tg
