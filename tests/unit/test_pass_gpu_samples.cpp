// Every sample, lowered by the shared GPU pipeline for an NVIDIA sm_80 TargetInfo (mma.sync
// m16n8k16, 32-lane warps), executed by the interpreter with its race detection: the per-thread
// code, the barriers and the matrix-unit layouts must reproduce the float64 reference.
#include <doctest/doctest.h>

#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

void check_sample(const Sample& s, DType t) {
  std::mt19937_64 rng(7);
  PassManager pm(gpu_pipeline());
  for (size_t i = 0; i < s.test_shapes.size(); ++i) {
    if (s.test_shape_info[i].conformance_only) continue;
    INFO(s.name << " [" << s.test_shape_info[i].label << "] " << t.name());
    Params p = resolve(s, s.test_shapes[i]);
    Function f = s.build(p, t).function();
    Problem pr = s.make_problem(p, t, rng);
    Function lowered = pm.run(bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr))), nvidia_target_info(80));
    INFO(print(lowered));
    interpret(lowered, host_args(lowered, pr));
    testing::check_outputs(pr, s.tolerance(p, t));
  }
}

}  // namespace

TEST_CASE("gpu pipeline on every sample and dtype: the interpreter reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE((s.name + " " + std::string(t.name())).c_str()) { check_sample(s, t); }
    }
}
