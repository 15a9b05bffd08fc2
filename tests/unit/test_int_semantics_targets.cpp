// int_semantics.h on every target that runs here: interp, cpu and vulkan (lavapipe) compute the
// same integer /, %, << and >> for the edge operands of int_cases() — MIN / -1, x / 0, x % 0,
// negative and too-wide shift counts — read from a tensor, with a constant right operand, and
// folded. Before, cpu trapped on MIN / -1 (SIGFPE), 7 / 0 gave 7 on cpu and 0 on vulkan, and
// shifts by >= width were whatever the hardware did.
#include <doctest/doctest.h>

#include <iostream>
#include <vector>

#include "int_semantics_test_util.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

// The element values of a host array of dtype t, as the interpreter holds them.
std::vector<int64_t> run_cases(const std::string& target, DType t, const std::vector<test::IntCase>& cases) {
  const std::size_t n = cases.size();
  std::vector<uint8_t> x(storage_bytes(t, int64_t(2 * n))), y(storage_bytes(t, int64_t(12 * n)));
  for (std::size_t i = 0; i < n; ++i) {
    store_element(t, x.data(), int64_t(i), Scalar::of_int(cases[i].a));
    store_element(t, x.data(), int64_t(n + i), Scalar::of_int(cases[i].b));
  }
  CompiledKernel ck = Target::get(target).compile(test::int_semantics_kernel(t, cases));
  ck(HostTensor{x.data(), {int64_t(2 * n)}, t}, HostTensor{y.data(), {int64_t(12 * n)}, t});
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < 12 * n; ++i) out.push_back(load_element(t, y.data(), int64_t(i)).i);
  return out;
}

std::vector<std::string> runnable_targets() {
  std::vector<std::string> names;
  for (const TargetStatus& s : targets()) {
    if (s.name != "interp" && s.name != "cpu" && s.name != "vulkan") continue;
    if (s.available)
      names.push_back(s.name);
    else
      std::cout << "skipped on " << s.name << ": " << s.reason << "\n";
  }
  return names;
}

}  // namespace

TEST_CASE("int semantics on interp, cpu and vulkan: tensor, constant-divisor and folded operands agree") {
  const char* ways[] = {"from a tensor", "right operand constant", "folded"};
  const char* ops[] = {"/", "%", "<<", ">>"};
  for (const std::string& target : runnable_targets())
    for (DType t : {i32, i64, u32, i8, i16, u8}) {
      std::vector<test::IntCase> cases = test::int_cases(t);
      std::vector<int64_t> got;
      INFO(target << " " << t.name());
      REQUIRE_NOTHROW(got = run_cases(target, t, cases));
      const std::size_t n = cases.size();
      for (std::size_t way = 0; way < 3; ++way)
        for (std::size_t i = 0; i < n; ++i) {
          std::vector<int64_t> want = test::int_expected(t, cases[i]);
          for (std::size_t op = 0; op < 4; ++op) {
            INFO(ways[way] << ": " << cases[i].a << " " << ops[op] << " " << cases[i].b);
            CHECK(got[(way * n + i) * 4 + op] == want[op]);
          }
        }
    }
}
