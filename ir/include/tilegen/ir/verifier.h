// Checks a function is well formed; every error names the offending node's call site and says
// what to change. Run by build(), and by the pass manager after each pass.
#pragma once
#include "tilegen/ir/function.h"

namespace tg {

struct VerifyOptions {
  int max_threads = 1024;        // per block
  bool allow_unbound_sizes = true;  // false after bind_sizes: every size must be a constant
  /// A bounds-checked (predicated) copy whose constant box has no element inside its global
  /// buffer is a user's mistake; after passes have specialised sizes and block indices it is a
  /// legal copy of nothing (reads of 0, no writes), so the pass manager turns this off.
  bool reject_empty_predicated_boxes = true;
};

/// Throws tg::Error on the first problem found.
void verify(const Function& f, const VerifyOptions& opt = {});

}  // namespace tg
