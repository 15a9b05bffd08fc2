// ir::Prefetch and a gemm's interleaved hints (Gemm::each_step): the text form reads back, the
// verifier keeps hints hints, and the interpreter evaluates a prefetch's indices and nothing
// else — any address is a legal prefetch, an error inside an index is still an error.
#include <doctest/doctest.h>

#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"

using namespace tg;

namespace {

// A pipelined gemm with hints, and a prefetch far outside its tensor.
const std::string kText =
    "func f(A: f32[16, 16] global, B: f32[16, 16] global, C: f32[16, 16] global, I: i32[3] global) {\n"
    "  kernel grid(1) threads(4) -> (bx; tx) {\n"
    "    shared As: f32[16, 16]\n"
    "    shared Bs: f32[16, 16]\n"
    "    fragment Cf: f32[16, 16]\n"
    "    fill Cf = 0.0\n"
    "    for ko in pipelined(0 +: 2, stages=2) {\n"
    "      copy A -> As\n"
    "      copy B -> Bs\n"
    "      gemm(As, Bs -> Cf) interleave t in steps(3) {\n"
    "        prefetch read A[t*4 + 1000, (ko + 1) * 16] locality=3\n"
    "        let r: i32 = I[t]\n"
    "        prefetch write B[r, -7] locality=0\n"
    "      }\n"
    "    }\n"
    "    prefetch read C[tx - 100000, tx*1000] locality=1\n"
    "    copy Cf -> C\n"
    "  }\n"
    "}\n";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// kText with a step index of dtype `type` over `steps`.
std::string with_step_type(const std::string& text, const std::string& type, const std::string& steps) {
  std::string s = replaced(text, "interleave t in steps(3)", "interleave t: " + type + " in " + steps);
  s = replaced(s, "A[t*4 + 1000", "A[cast<i32>(t)*4 + 1000");
  return replaced(s, "I[t]", "I[cast<i32>(t)]");
}

/// Every prefetch of C with its last index dropped: an arity the parser would not let through.
struct DropIndex : IRMutator {
  Stmt visit(const ir::Prefetch* op, const Stmt& self) override {
    if (op->buffer->name != "C") return self;
    auto p = std::make_shared<ir::Prefetch>(*op);
    p->indices.pop_back();
    return Stmt(std::move(p));
  }
};

struct Tensors {
  std::vector<float> a = std::vector<float>(256), b = std::vector<float>(256), c = std::vector<float>(256);
  std::vector<int32_t> i{0, 1, 2};
  std::vector<HostArg> args() {
    std::vector<HostArg> out(4);
    out[0].data = a.data(), out[0].shape = {16, 16};
    out[1].data = b.data(), out[1].shape = {16, 16};
    out[2].data = c.data(), out[2].shape = {16, 16};
    out[3].data = i.data(), out[3].shape = {3}, out[3].dtype = i32;
    return out;
  }
};

}  // namespace

TEST_CASE("prefetch and gemm hints: printed, parsed back, every field kept") {
  Function f = parse_function(kText, "t.tgir");
  verify(f);
  const std::string printed = print(f);
  CHECK(printed.find("gemm(As, Bs -> Cf) interleave t in steps(3) {") != std::string::npos);
  CHECK(printed.find("prefetch read A[t*4 + 1000, (ko + 1) * 16] locality=3") != std::string::npos);
  CHECK(printed.find("prefetch write B[r, -7] locality=0") != std::string::npos);
  CHECK(printed.find("prefetch read C[tx - 100000, tx*1000] locality=1") != std::string::npos);
  CHECK(print(parse_function(printed)) == printed);
  // A step index of another dtype is written, and read back.
  Function w = parse_function(with_step_type(kText, "i64", "steps(3)"), "t.tgir");
  verify(w);
  CHECK(print(w).find("interleave t: i64 in steps(3)") != std::string::npos);
  CHECK(print(parse_function(print(w))) == print(w));
  // The words are reserved where a statement could start with them.
  CHECK_THROWS_WITH_AS(parse_function(replaced(kText, "prefetch read A", "prefetch A"), "t.tgir"),
                       doctest::Contains("expected read or write after prefetch"), Error);
  CHECK_THROWS_WITH_AS(parse_function(replaced(kText, "] locality=3", "]"), "t.tgir"),
                       doctest::Contains("locality"), Error);
  CHECK_THROWS_WITH_AS(parse_function(replaced(kText, "in steps(3)", "in (3)"), "t.tgir"),
                       doctest::Contains("steps"), Error);
}

TEST_CASE("prefetch: the interpreter evaluates its indices and does nothing else") {
  Tensors t;
  for (int k = 0; k < 256; ++k) t.a[std::size_t(k)] = float(k % 7), t.b[std::size_t(k)] = float(k % 5);
  std::vector<float> a0 = t.a, b0 = t.b;
  // Every prefetch here is far outside its tensor, and one is a write hint: no error, no change.
  interpret(parse_function(kText, "t.tgir"), t.args());
  CHECK(t.a == a0);
  CHECK(t.b == b0);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      double want = 0;
      for (int k = 0; k < 16; ++k) want += 2.0 * a0[std::size_t(16 * r + k)] * b0[std::size_t(16 * k + c)];
      CHECK(t.c[std::size_t(16 * r + c)] == doctest::Approx(want));
    }
  // The hints run once per step: step 3 of 4 loads I[3], outside I, which is an error.
  Tensors u;
  CHECK_THROWS_WITH_AS(interpret(parse_function(replaced(kText, "steps(3)", "steps(4)"), "t.tgir"), u.args()),
                       doctest::Contains("out of bounds"), Error);
  // An error inside an index is one: here a load out of range in the prefetch's own index.
  Tensors v;
  CHECK_THROWS_WITH_AS(
      interpret(parse_function(replaced(kText, "C[tx - 100000,", "C[I[tx + 2],"), "t.tgir"), v.args()),
      doctest::Contains("out of bounds"), Error);
}

TEST_CASE("prefetch and gemm hints: the verifier rejects what is not a hint") {
  auto rejects = [](const std::string& from, const std::string& to, const std::string& message) {
    INFO(from, " -> ", to);
    CHECK_THROWS_WITH_AS(verify(parse_function(replaced(kText, from, to), "t.tgir")),
                         doctest::Contains(message.c_str()), Error);
  };
  rejects("prefetch read C[tx - 100000, tx*1000]", "prefetch read As[tx, 0]",
          "prefetches move lines of global tensors");
  rejects("prefetch read C[tx - 100000, tx*1000]", "prefetch read C[tx, 1.5]", "indices must be integers");
  rejects("locality=1", "locality=4", "the locality is 0 (none) to 3");
  rejects("let r: i32 = I[t]\n", "let r: i32 = I[t]\n        C[0, 0] = 1.0\n", "hold a store");
  rejects("let r: i32 = I[t]\n", "let r: i32 = I[t] + tx\n", "reads the thread index (tx)");
  rejects("steps(3)", "steps(0)", "runs in at least 1 step");
  CHECK_THROWS_WITH_AS(verify(parse_function(with_step_type(kText, "u8", "steps(300)"), "t.tgir")),
                       doctest::Contains("cannot hold 299"), Error);
  CHECK_THROWS_WITH_AS(verify(DropIndex().mutate_function(parse_function(kText, "t.tgir"))),
                       doctest::Contains("has 2 dimensions but 1 index"), Error);
}
