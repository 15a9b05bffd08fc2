// The kernel fuzzer's shrinker: cuts a failing ProgramSpec down while the failure reproduces.
//
// Steps, repeated until none applies: delete an op (at any depth), replace an if or a K loop by
// its body, drop an else branch, flatten element expressions to one leaf, shrink M, N, K (to the
// tile, then to 1), halve the tiles and the block, make sizes constant, use f32. A candidate the
// builder rejects is skipped; `still_fails` decides the rest.
#pragma once
#include <functional>

#include "kernel_gen.h"

namespace tg::fuzz {

/// The smallest program found for which still_fails holds (`p` itself if no step keeps it).
/// `budget`: at most this many calls of still_fails.
ProgramSpec shrink_program(const ProgramSpec& p, const std::function<bool(const ProgramSpec&)>& still_fails,
                           int budget = 400);

}  // namespace tg::fuzz
