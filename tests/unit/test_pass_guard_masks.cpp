// The pass guard_masks: a statement that masks with select(cond, ..) inside a loop over tiles runs
// only on the tiles cond can reach. IR in, IR out on a causal mask and a ragged edge; the
// interpreter gives the same output before and after; the conditions it cannot bound stay.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/guard_masks.h"
#include "tilegen/passes/target_info.h"

using namespace tg;

namespace {

// Block bx sums, over tiles ko ≤ bx, 64×64 tiles whose elements right of the diagonal (and past
// column N = 200 of a ragged edge) are masked to 0: a causal mask and a ragged one.
std::string kernel(const std::string& cond) {
  return "func t(Y: f32[256, 64] global) {\n  kernel grid(4) threads(128) -> (bx; tx) {\n"
         "    fragment s: f32[64, 64]\n    fragment acc: f32[64, 64]\n    fill acc = 0.0\n"
         "    for ko in serial(0 +: bx + 1) {\n      fill s = 1.0\n"
         "      for i in parallel(0 +: 64) {\n        for j in parallel(0 +: 64) {\n"
         "          s[i, j] = select(" +
         cond +
         ", 0.0, s[i, j])\n        }\n      }\n"
         "      for i in parallel(0 +: 64) {\n        for j in parallel(0 +: 64) {\n"
         "          acc[i, j] = acc[i, j] + s[i, j] * cast<f32>(ko + 1)\n        }\n      }\n    }\n"
         "    copy acc -> Y[bx*64 +: 64, 0 +: 64]\n  }\n}\n";
}

std::vector<float> run(const Function& f) {
  std::vector<float> y(256 * 64, -1.0f);
  HostArg a;
  a.data = y.data(), a.shape = {256, 64}, a.dtype = f32;
  interpret(f, {a});
  return y;
}

}  // namespace

TEST_CASE("guard_masks: a causal mask runs on the diagonal tile only, the same output") {
  const Function in = parse_function(kernel("ko*64 + j > bx*64 + i || ko*64 + j >= 200"), "t.tgir");
  const Function out = guard_masks(in, TargetInfo{});
  const std::string text = print(out);
  INFO(text);
  // ko*64 + j > bx*64 + i reaches some (i, j) in [0, 64)² from ko = bx on; ko*64 + j ≥ 200 from
  // ko = 3: min(bx, 3), which is bx (bx < 4).
  CHECK(text.find("      if ko >= bx {\n        for i in parallel(0 +: 64) {") != std::string::npos);
  CHECK(text.find("} else {") == std::string::npos);  // unmasked, the nest writes back what it reads
  CHECK(run(out) == run(in));
  CHECK(print(parse_function(text, "t.tgir")) == text);
}

TEST_CASE("guard_masks: a mask whose unmasked value is computed keeps it before the masked tiles") {
  std::string k = kernel("ko*64 + j >= 200");
  const std::string from = "0.0, s[i, j])", to = "0.0, s[i, j] * 2.0)";
  k.replace(k.find(from), from.size(), to);
  const Function in = parse_function(k, "t.tgir");
  const Function out = guard_masks(in, TargetInfo{});
  const std::string text = print(out);
  INFO(text);
  CHECK(text.find("if ko >= 3 {") != std::string::npos);
  CHECK(text.find("} else {\n        for i in parallel(0 +: 64) {\n          for j in parallel(0 +: 64) {\n"
                  "            s[i, j] = s[i, j] * 2.0") != std::string::npos);
  CHECK(run(out) == run(in));
}

TEST_CASE("guard_masks: conditions it cannot bound stay as they are") {
  // Masked before a tile, not after it (a negative coefficient), and a test of ko alone: the
  // pass has no tile range to give them; an equality is no bound either.
  for (const char* cond : {"ko*64 + j < bx*64 + i", "ko*64 + j == bx*64 + i", "(ko*64 + j) % 3 > 0"}) {
    CAPTURE(cond);
    const Function in = parse_function(kernel(cond), "t.tgir");
    const std::string text = print(guard_masks(in, TargetInfo{}));
    CHECK(text.find("if ko") == std::string::npos);
    CHECK(text.find("select(") != std::string::npos);
  }
}
