// Lane shuffles (ir::Store with shuffle_xor): the text form reads back, the verifier keeps them
// per-warp exchanges of 32-bit registers, and the interpreter performs them exactly — every lane's
// value is taken before any lane stores, a divergent shuffle is an error (a GPU would hang or
// read garbage), and a butterfly over the lanes gives each lane its group's sum.
#include <doctest/doctest.h>

#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "gpu_pass_test_util.h"

using namespace tg;

namespace {

using test::kWarpButterfly;

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

struct Tensors {
  std::vector<float> x = std::vector<float>(64), o = std::vector<float>(64, -1.f), s = std::vector<float>(64, -1.f);
  std::vector<HostArg> args() {
    std::vector<HostArg> out(3);
    out[0].data = x.data(), out[0].shape = {64};
    out[1].data = o.data(), out[1].shape = {64};
    out[2].data = s.data(), out[2].shape = {64};
    return out;
  }
};

}  // namespace

TEST_CASE("shuffle_xor: printed, parsed back, every field kept") {
  Function f = parse_function(kWarpButterfly, "t.tgir");
  verify(f);
  const std::string printed = print(f);
  CHECK(printed.find("shuffle_xor(5 of 32) w[0] = v[0]") != std::string::npos);
  CHECK(printed.find("shuffle_xor(2 of 32) w[0] = v[0]") != std::string::npos);
  CHECK(print(parse_function(printed)) == printed);
  CHECK_THROWS_WITH_AS(parse_function(replaced(kWarpButterfly, "(5 of 32)", "(5, 32)"), "t.tgir"),
                       doctest::Contains("of"), Error);
}

TEST_CASE("shuffle_xor: the interpreter exchanges the lanes' values exactly") {
  Tensors t;
  for (int k = 0; k < 64; ++k) t.x[std::size_t(k)] = float(k * k % 97);
  interpret(parse_function(kWarpButterfly, "t.tgir"), t.args());
  for (int k = 0; k < 64; ++k) {
    CHECK(t.o[std::size_t(k)] == t.x[std::size_t(k ^ 5)]);
    float group = 0;
    for (int g = k & ~3; g < (k & ~3) + 4; ++g) group += t.x[std::size_t(g)];
    CHECK(t.s[std::size_t(k)] == group);
  }
  // Half a warp reaching a shuffle is an error naming the group.
  Tensors u;
  CHECK_THROWS_WITH_AS(interpret(parse_function(replaced(kWarpButterfly, "    shuffle_xor(5 of 32) w[0] = v[0]\n",
                                                         "    if (tx < 16) { shuffle_xor(5 of 32) w[0] = v[0] }\n"),
                                                "t.tgir"),
                                 u.args()),
                       doctest::Contains("reached by 16 of the 32 lanes of group 0"), Error);
  // A group of 64 lanes over a block of 96 threads does not divide it.
  Tensors w;
  CHECK_THROWS_WITH_AS(interpret(parse_function(replaced(replaced(replaced(kWarpButterfly, "(5 of 32)", "(5 of 64)"), "threads(64)",
                                                                  "threads(96)"),
                                                         "v[0] = X[tx]", "v[0] = 1.0"),
                                                "t.tgir"),
                                 w.args()),
                       doctest::Contains("multiple of 64"), Error);
}

TEST_CASE("shuffle_xor: the verifier keeps it a per-warp exchange of 32-bit registers") {
  auto rejects = [](const std::string& text, const std::string& message) {
    CHECK_THROWS_WITH_AS(verify(parse_function(text, "t.tgir")), doctest::Contains(message.c_str()), Error);
  };
  rejects(replaced(kWarpButterfly, "(5 of 32)", "(32 of 32)"), "the mask a lane number below it");
  rejects(replaced(kWarpButterfly, "(5 of 32)", "(1 of 24)"), "the group is 2, 4, ..., 64 lanes");
  rejects(replaced(replaced(kWarpButterfly, "local w: f32[1]", "local w: f32[1]\n    local h: f16[1]"),
                   "shuffle_xor(5 of 32) w[0] = v[0]", "shuffle_xor(5 of 32) h[0] = cast<f16>(v[0])"),
          "moves 32-bit values");
  rejects(replaced(kWarpButterfly, "shuffle_xor(5 of 32) w[0] = v[0]\n    O[tx] = w[0]", "shuffle_xor(5 of 32) O[tx] = v[0]"),
          "each lane's own registers");
}
