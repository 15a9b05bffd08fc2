// The cpu target's passes without its code generator: every sample at every dtype and test shape
// (ragged and conformance-only ones included), lowered by the cpu plugin's whole pipeline for
// this host, then executed by the interpreter (races detected), must match the float64
// reference — so a wrong rewrite in the pipeline (insert_prefetches, fuse_parallel_loops, ...)
// fails here, apart from what the LLVM code generator makes of it. Skipped, saying why, where
// the build has no cpu plugin (the sanitizer build).
#include <doctest/doctest.h>

#include <random>

#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

void check_sample(const Sample& s) {
  std::string why;
  TargetPlugin* cpu = find_plugin("cpu", &why);
  if (!cpu) {
    MESSAGE("skipped: no cpu plugin (", why, ")");
    return;
  }
  ProbeResult probe = cpu->probe();
  if (!probe.available || probe.devices.empty()) {
    MESSAGE("skipped: the cpu target is unavailable: ", probe.reason);
    return;
  }
  const TargetInfo& info = probe.devices.front();
  PassManager pm(cpu->pipeline(info, {}));
  std::mt19937_64 rng(17);
  for (DType t : s.dtypes)
    for (std::size_t i = 0; i < s.test_shapes.size(); ++i) testing::check_lowered_sample(s, t, i, pm, info, rng);
}

}  // namespace

TEST_CASE("cpu pipeline on every sample and dtype: the interpreter reproduces the references") {
  for (const Sample& s : all())
    SUBCASE(s.name.c_str()) { check_sample(s); }
}
