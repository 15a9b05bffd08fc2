// On a machine with an NVIDIA GPU: every sample, every dtype, every interpreter-sized test
// shape, compiled by the cuda target and run on the device, matches the float64 reference.
// Skipped, with the reason printed, where the cuda target is unavailable (no driver, no GPU).
#include <doctest/doctest.h>

#include <iostream>

#include "sample_test_util.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

TEST_CASE("cuda device: every sample matches its reference on the GPU") {
  bool available = false;
  for (const TargetStatus& t : targets())
    if (t.name == "cuda") {
      available = t.available;
      if (!available) std::cout << "skipped: cuda target unavailable: " << t.reason << "\n";
    }
  if (!available) return;
  Target gpu = Target::get("cuda");
  std::mt19937_64 rng(11);
  for (const Sample& s : all())
    for (DType t : s.dtypes)
      for (size_t i = 0; i < s.test_shapes.size(); ++i) {
        INFO(s.name << " " << t.name() << " [" << s.test_shape_info[i].label << "]");
        Params p = resolve(s, s.test_shapes[i]);
        Kernel k = s.build(p, t);
        Problem pr = s.make_problem(p, t, rng);
        CompiledKernel ck = gpu.compile(k);
        REQUIRE_NOTHROW(ck.launch(kernel_args(k.function(), pr)));
        testing::check_outputs(pr, s.tolerance(p, t));
      }
}
