// The kernel fuzzer's parts (tools/fuzz/): the generator makes valid, reproducible programs; the
// shrinker keeps what the failure needs and nothing else; case files read back as written; the
// check tells a racy program (dropped) from a passing one.
#include <doctest/doctest.h>

#include "fuzz/kernel_check.h"
#include "fuzz/kernel_gen.h"
#include "fuzz/kernel_shrink.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"

using namespace tg;
using namespace tg::fuzz;

namespace {

int count_kind(const std::vector<OpSpec>& ops, OpKind k) {
  int n = 0;
  for (const OpSpec& o : ops) n += (o.kind == k) + count_kind(o.body, k) + count_kind(o.else_body, k);
  return n;
}

}  // namespace

TEST_CASE("kernel fuzz: generated programs build, and a seed gives the same program") {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    ProgramSpec p = generate_program(seed);
    INFO(describe(p));
    Kernel k;
    REQUIRE_NOTHROW(k = build_program(p));
    CHECK(print(k.function()) == print(build_program(generate_program(seed)).function()));
  }
  CHECK(describe(generate_program(1)) != describe(generate_program(2)));
}

TEST_CASE("kernel fuzz: the shrinker keeps what the failure needs and shrinks the rest") {
  // Find a program with a K loop, and "fail" whenever one is left.
  ProgramSpec p;
  for (uint64_t seed = 1;; ++seed) {
    p = generate_program(seed);
    if (count_kind(p.ops, OpKind::KLoop) > 0 && p.ops.size() > 2 && p.M > 4) break;
  }
  int calls = 0;
  ProgramSpec s = shrink_program(p, [&](const ProgramSpec& q) {
    ++calls;
    return count_kind(q.ops, OpKind::KLoop) > 0;
  });
  INFO(describe(p) << "\n -> " << describe(s));
  CHECK(calls > 0);
  REQUIRE(s.ops.size() == 1);
  CHECK(s.ops[0].kind == OpKind::KLoop);
  CHECK(s.ops[0].body.empty());
  CHECK(s.M == 1);
  CHECK(s.N == 1);
  CHECK(s.bm == 4);
  CHECK(s.threads == 32);
  CHECK_FALSE(s.symbolic);
}

TEST_CASE("kernel fuzz: a case file reads back with its sizes and IR") {
  ProgramSpec p;
  for (uint64_t seed = 1;; ++seed)
    if ((p = generate_program(seed)).symbolic) break;
  Case c{build_program(p).function(), program_sizes(p)};
  const std::string text = case_text(c, "what failed\nand where");
  CHECK(text.rfind("# what failed\n# and where\n# sizes K=", 0) == 0);
  Case back = parse_case(text, "case.tgir");
  CHECK(back.sizes == c.sizes);
  CHECK(print(back.fn) == print(c.fn));
  CHECK_THROWS_WITH_AS(parse_case("# sizes M\n" + print(c.fn), "bad.tgir"), doctest::Contains("NAME=VALUE"),
                       Error);
}

TEST_CASE("kernel fuzz: the oracle drops a racy program; a race-free one passes its lowered IR") {
  const char* racy = R"(func racy(Y: f32[64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f32[64]
    S[tx] = 1.0
    Y[tx] = S[(tx + 1) % 64]
  }
}
)";
  std::vector<Config> lowered = {{"cuda:sm_80", "cuda", "sm_80", false}};
  Outcome o = check_case({parse_function(racy), {}}, lowered);
  CHECK(o.verdict == Verdict::Invalid);
  CHECK(o.detail.find("race on shared buffer S") != std::string::npos);

  std::string fixed = racy;
  fixed.replace(fixed.find("    Y[tx]"), 0, "    barrier\n");
  o = check_case({parse_function(fixed), {}}, lowered);
  INFO(o.key() << ": " << o.detail);
  CHECK((o.verdict == Verdict::Pass || o.verdict == Verdict::Skip));
}
