// The cpu target on every sample: each dtype and test shape (ragged ones included, and the
// conformance-only ones, which are fast on cpu) against the float64 reference — what
// `tilegen conformance --target cpu` runs. Skipped, saying why, where the cpu plugin is unavailable.
#include <doctest/doctest.h>

#include <iostream>
#include <random>

#include "cpu_test_util.h"
#include "sample_test_util.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

void run_sample_on_cpu(const std::string& name) {
  std::optional<Target> cpu = testing::cpu_target_or_skip();
  if (!cpu) return;
  const Sample* s = find(name);
  REQUIRE(s != nullptr);
  std::mt19937_64 rng(4321);
  int ran = 0;
  for (size_t i = 0; i < s->test_shapes.size(); ++i) {
    for (DType t : s->dtypes) {
      INFO(name << " [" << s->test_shape_info[i].label << "] " << t.name());
      Params p = resolve(*s, s->test_shapes[i]);
      Kernel k = s->build(p, t);
      testing::NoKernelCache no_cache;
      CompiledKernel ck = cpu->compile(k);
      Problem pr = s->make_problem(p, t, rng);
      ck.launch(kernel_args(k.function(), pr));
      testing::check_outputs(pr, s->tolerance(p, t));
      ++ran;
    }
  }
  CHECK(ran > 0);
}

}  // namespace

TEST_CASE("cpu samples: gemm") { run_sample_on_cpu("gemm"); }
TEST_CASE("cpu samples: gemm_relu") { run_sample_on_cpu("gemm_relu"); }
TEST_CASE("cpu samples: softmax") { run_sample_on_cpu("softmax"); }
TEST_CASE("cpu samples: rmsnorm") { run_sample_on_cpu("rmsnorm"); }
TEST_CASE("cpu samples: flash_attention") { run_sample_on_cpu("flash_attention"); }
TEST_CASE("cpu samples: dequant_gemm") { run_sample_on_cpu("dequant_gemm"); }
TEST_CASE("cpu samples: conv2d") { run_sample_on_cpu("conv2d"); }
TEST_CASE("cpu samples: block_reduce") { run_sample_on_cpu("block_reduce"); }
