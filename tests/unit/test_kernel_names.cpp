// The one rule that lists a function's kernels and names them (tilegen/ir/kernel_names.h), and
// the GPU source plan that takes its names from it. (The cpu's symbols and vulkan's entry points
// are checked in test_cpu_*.cpp and test_vulkan_spirv.cpp against the same function.)
#include <doctest/doctest.h>

#include "tilegen/ir/error.h"
#include "tilegen/ir/kernel_names.h"
#include "tilegen/ir/parser.h"
#if defined(TILEGEN_HAVE_CUDA_CODEGEN) || defined(TILEGEN_HAVE_HIP_CODEGEN)
#include "tilegen/common/gpu_source.h"
#include "tilegen/passes/place_shared_memory.h"
#endif

using namespace tg;
using Names = std::vector<std::string>;

namespace {

const char* kOne = R"(func one() {
  kernel grid(1) threads(32) -> (bx; tx) {
    local C_l: f32[4]
    fill C_l = 1.0
  }
}
)";

const char* kTwo = R"(func "two-step"() {
  kernel grid(1) threads(32) -> (bx; tx) {
    local C_l: f32[4]
    fill C_l = 1.0
  }
  kernel grid(2) threads(32) -> (bx; tx) {
    local C_l: f32[4]
    fill C_l = 2.0
  }
}
)";

}  // namespace

TEST_CASE("kernel names: numbered, or after the function for a lone kernel where a target asks") {
  Function one = parse_function(kOne);
  CHECK(ir::kernels_of(one).size() == 1);
  CHECK(ir::kernel_entry_names(one) == Names{"one_k0"});
  CHECK(ir::kernel_entry_names(one, ir::LoneKernel::FunctionName) == Names{"one"});

  Function two = parse_function(kTwo);  // a name that is not an identifier: the stem is one
  CHECK(ir::kernel_stem(two) == "two_step");
  REQUIRE(ir::kernels_of(two).size() == 2);
  CHECK(ir::kernels_of(two)[1]->grid[0].as_int() == 2);  // in the order they run
  for (ir::LoneKernel lone : {ir::LoneKernel::Numbered, ir::LoneKernel::FunctionName})
    CHECK(ir::kernel_entry_names(two, lone) == Names{"two_step_k0", "two_step_k1"});

  Function unnamed = one;
  unnamed.name = "";
  CHECK(ir::kernel_entry_names(unnamed) == Names{"kernel_k0"});
}

TEST_CASE("kernel names: nested sequences are flattened; a statement outside a kernel is an error") {
  Function one = parse_function(kOne), two = parse_function(kTwo);
  Function nested = two;
  nested.body = make_seq({two.body, one.body});  // (k0; k1); k2
  CHECK(ir::kernels_of(nested).size() == 3);
  CHECK(ir::kernel_entry_names(nested) == Names{"two_step_k0", "two_step_k1", "two_step_k2"});

  Function loose = one;
  loose.body = make_seq({one.body, one.body.as<ir::Kernel>()->body});  // the fill outside a kernel
  CHECK_THROWS_WITH_AS(ir::kernels_of(loose),                          // at the statement
                       "<text>:4: function one has a statement outside its kernels; a function's body is a "
                       "sequence of kernels",
                       Error);
  Function empty = one;
  empty.body = Stmt();
  CHECK(ir::kernels_of(empty).empty());
}

#if defined(TILEGEN_HAVE_CUDA_CODEGEN) || defined(TILEGEN_HAVE_HIP_CODEGEN)
TEST_CASE("kernel names: the GPU source plan (cuda, hip) names kernels by the rule") {
  TargetInfo info;
  info.shared_mem_bytes = 48 * 1024;
  for (const char* text : {kOne, kTwo}) {
    Function f = place_shared_memory(parse_function(text), info);
    Names planned;
    for (const gpu::KernelPlan& p : gpu::plan_kernels(f, info)) planned.push_back(p.name);
    CHECK(planned == ir::kernel_entry_names(f, ir::LoneKernel::FunctionName));
  }
}
#endif
