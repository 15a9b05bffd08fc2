// Every sample kernel, at each interpreter-sized test shape (ragged ones included), specialised by
// infer_sizes + bind_sizes and lowered by the default pipeline with verification after each
// pass, must still compute its float64 reference in the interpreter.
#include <doctest/doctest.h>

#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

void run_lowered(const Sample& s) {
  std::mt19937_64 rng(99);
  PassManager pm(default_pipeline());
  int ran = 0;
  for (size_t i = 0; i < s.test_shapes.size(); ++i) {
    if (s.test_shape_info[i].conformance_only) continue;
    DType t = s.dtypes.front();
    INFO(s.name << " [" << s.test_shape_info[i].label << "] " << t.name());
    Params p = resolve(s, s.test_shapes[i]);
    Function f = s.build(p, t).function();
    Problem pr = s.make_problem(p, t, rng);
    Function bound = bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr)));
    Function lowered = pm.run(bound, TargetInfo{});
    INFO(print(lowered));
    interpret(lowered, host_args(lowered, pr));
    testing::check_outputs(pr, s.tolerance(p, t));
    ++ran;
  }
  CHECK(ran > 0);
}

}  // namespace

TEST_CASE("pipeline on every sample: lowered kernels compute their references") {
  for (const Sample& s : all()) {
    SUBCASE(s.name.c_str()) { run_lowered(s); }
  }
}
