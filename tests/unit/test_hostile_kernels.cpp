// Kernels a hostile tester wrote to break tilegen (issue 11, /work/shared/repros/hostile): each
// was a crash or a silent wrong answer on some target and must now be a tg::Error, on interp,
// cpu and vulkan alike, or run correctly. Targets missing from this machine are skipped.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <iostream>

#include "tilegen/builder.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

/// interp, cpu and vulkan where they are available here.
std::vector<Target> hostile_targets() {
  std::vector<Target> out;
  for (const TargetStatus& s : targets()) {
    if (s.name != "interp" && s.name != "cpu" && s.name != "vulkan") continue;
    if (s.available)
      out.push_back(Target::get(s.name));
    else
      std::cerr << "hostile kernels: " << s.name << " skipped: " << s.reason << "\n";
  }
  return out;
}

/// f throws a tg::Error whose message contains every phrase.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& phrases) {
  try {
    f();
  } catch (const Error& e) {
    std::string what = e.what();
    INFO("what(): " << what);
    for (const std::string& p : phrases) CHECK(what.find(p) != std::string::npos);
    return;
  }
  FAIL("no tg::Error; expected one saying: " << phrases.front());
}

/// An IR text compiled and launched on t with zeroed f32[16] tensors X (and Y where declared).
void compile_and_launch_text(const Target& t, const std::string& text) {
  Function f = parse_function(text, "hostile.tgir");
  CompiledKernel ck = t.compile(Kernel(f));
  std::vector<float> x(1024, 0.0f);
  std::vector<KernelArg> args;
  for (const Param& p : f.params) args.push_back(HostTensor{x.data(), {*p.buffer->shape[0].as_int()}, f32});
  ck.launch(args);
}

std::string line_of(int line) { return "test_hostile_kernels.cpp:" + std::to_string(line) + ":"; }

}  // namespace

// ---- Element indices provably out of range

TEST_CASE("hostile: a constant index past a tensor's end is a build error naming the store") {
  KernelBuilder k("oob");
  auto Y = k.tensor("Y", {4}, f32);
  int line = 0;
  k.grid(1).threads(1).body([&](Expr) {
    // clang-format off
    line = __LINE__; Y(1000000) = 1.0f;
    // clang-format on
  });
  expect_error([&] { k.build(); }, {line_of(line), "store to global Y", "1000000", "outside 0 to 4 - 1"});
}

TEST_CASE("hostile: a loop that only reaches negative indices of a local is a build error") {
  KernelBuilder k("neg");
  auto Y = k.tensor("Y", {16}, f32);
  k.grid(1).threads(1).body([&](Expr) {
    auto l = k.local({4}, f32);
    k.serial(-10, -8, [&](Expr i) { l(i) = 1.0f; });
    Y(0) = l(0);
  });
  expect_error([&] { k.build(); }, {"store to local", "in [-10, -9]"});
}

TEST_CASE("hostile: accesses guarded into range, or in unreachable code, still build and run") {
  KernelBuilder k("guarded");
  auto Y = k.tensor("Y", {16}, f32);
  k.grid(1).threads(1).body([&](Expr) {
    auto l = k.local({4}, f32);
    k.serial(0, 8, [&](Expr i) { k.if_(i < 4, [&] { l(i) = cast(f32, i); }); });
    k.if_(Expr(3) > Expr(5), [&] { Y(100) = 1.0f; });  // never runs: not an error
    k.serial(4, [&](Expr i) { Y(i) = l(i); });
  });
  Kernel kern = k.build();
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    std::vector<float> y(16, -1.0f);
    t.compile(kern)(HostTensor{y.data(), {16}, f32});
    CHECK(y[0] == 0.0f);
    CHECK(y[3] == 3.0f);
    CHECK(y[4] == -1.0f);
  }
}

TEST_CASE("hostile: IR text with provably out-of-range indices is refused by every target") {
  const std::string constant = R"(func f(X: f32[16] global) {
  kernel grid(1) threads(1) -> (bx; tx) {
    X[100000000] = 1.0
  }
})";
  const std::string negative_parallel = R"(func f(X: f32[16] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    fragment x: f32[2, 16]
    for i in parallel(-10 +: 2) {
      for j in parallel(0 +: 16) {
        x[i, j] = 1.0
      }
    }
    copy x[0 +: 1, 0 +: 16] -> X[0 +: 16]
  }
})";
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    expect_error([&] { compile_and_launch_text(t, constant); }, {"store to global X", "100000000"});
    expect_error([&] { compile_and_launch_text(t, negative_parallel); }, {"fragment x", "in [-10, -9]"});
  }
}

// ---- Element counts and byte sizes that overflow

TEST_CASE("hostile: shapes whose element count or byte size passes 64 bits are errors naming the shape") {
  const std::vector<int64_t> huge = {int64_t(1) << 21, int64_t(1) << 21, int64_t(1) << 22};  // 2^64 elements
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    expect_error([&] { t.alloc(huge, f32); }, {"alloc:", "[2097152, 2097152, 4194304]", "64 bits"});
  }
  {
    KernelBuilder k("ov");
    auto X = k.tensor("X", {huge[0], huge[1], huge[2]}, f32);
    k.grid(1).threads(1).body([&](Expr) { X(1000, 1000, 1000) = 1.0f; });
    expect_error([&] { k.build(); }, {"tensor X", "2097152x2097152x4194304", "64 bits"});
  }
  {
    KernelBuilder k("sw");  // f32[2^62 + 1]: 2^64 + 4 bytes, which wrapped to 4 on cpu
    auto Y = k.tensor("Y", {16}, f32);
    k.grid(1).threads(1).body([&](Expr) {
      auto s = k.shared({Expr((int64_t(1) << 62) + 1)}, f32, "S");
      s(0) = 1.0f;
      Y(0) = s(0);
    });
    expect_error([&] { k.build(); }, {"shared S", "4611686018427387905", "64 bits"});
  }
  KernelBuilder k("sym");  // a symbolic kernel launched with a host tensor of 2^64 elements
  Expr n = k.size("N"), m = k.size("M"), p = k.size("P");
  auto X = k.tensor("X", {n, m, p}, f32);
  k.grid(1).threads(1).body([&](Expr) { X(0, 0, 0) = 1.0f; });
  Kernel kern = k.build();
  float tiny[4];
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    expect_error([&] { t.compile(kern)(HostTensor{tiny, huge, f32}); }, {"argument 1 (X)", "64 bits"});
  }
}

// ---- Rank

TEST_CASE("hostile: buffers of more than 8 dimensions are refused (the interpreter indexes 8)") {
  std::string dims = "2, 2, 2, 2, 2, 2, 2, 2, 2", index = "1, 1, 1, 1, 1, 1, 1, 1, 1";
  const std::string rank9 = "func f(X: f32[" + dims +
                            "] global) {\n  kernel grid(1) threads(1) -> (bx; tx) {\n    X[" + index +
                            "] = X[" + index + "] + 1.0\n  }\n}\n";
  Function f = parse_function(rank9);
  expect_error([&] { verify(f); }, {"tensor X has 9 dimensions", "at most 8"});
  std::vector<float> x(512, 0.0f);
  std::vector<int64_t> shape(9, 2);
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    expect_error([&] { t.compile(Kernel(f))(HostTensor{x.data(), shape, f32}); }, {"9 dimensions"});
  }
  KernelBuilder k("r9");
  k.tensor("X", std::vector<Expr>(9, Expr(2)), f32);
  auto Y = k.tensor("Y", {1}, f32);
  k.grid(1).threads(1).body([&](Expr) { Y(0) = 1.0f; });
  expect_error([&] { k.build(); }, {"9 dimensions"});
}

// ---- Copy into a local

TEST_CASE("hostile: a copy into or out of a local is one build error, whatever the target") {
  KernelBuilder k("cl");
  auto X = k.tensor("X", {64}, f32);
  auto Y = k.tensor("Y", {64}, f32);
  k.grid(1).threads(4).body([&](Expr) {
    Expr tx = k.thread_index();
    auto l = k.local({16}, f32);
    k.copy(X.at(0), l);
    Y(tx) = l(tx);
  });
  expect_error([&] { k.build(); }, {"copy into local", "per thread", "fragment"});
  const std::string text = R"(func f(X: f32[64] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    local l: f32[16]
    copy X[0 +: 16] -> l
    X[tx] = l[tx]
  }
})";
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    expect_error([&] { compile_and_launch_text(t, text); }, {"copy into local l", "per thread"});
  }
}

// ---- Exceptions inside builder lambdas

TEST_CASE("hostile: an exception caught out of an if_ lambda leaves a builder that refuses build()") {
  KernelBuilder k("e");
  auto Y = k.tensor("Y", {16}, f32);
  bool caught = false;
  int line = 0;
  k.grid(1).threads(16).body([&](Expr) {
    Expr tx = k.thread_index();
    try {
      // clang-format off
      line = __LINE__; k.if_(tx < 4, [&] { Y(tx) = 1.0f; throw Error("inner"); });
      // clang-format on
    } catch (const Error&) {
      caught = true;
    }
    Y(tx) = 3.0f;  // the enclosing list is intact: recording goes on where the if_ was called
  });
  CHECK(caught);
  expect_error([&] { k.build(); }, {"the if_ body at " + line_of(line).substr(0, line_of(line).size() - 1),
                                    "(inner)", "new KernelBuilder"});
}

TEST_CASE("hostile: an exception out of a loop or the body lambda also makes build() refuse") {
  KernelBuilder k("e");
  auto Y = k.tensor("Y", {16}, f32);
  CHECK_THROWS_AS(k.grid(1).threads(1).body([&](Expr) {
    k.serial(4, [&](Expr i) {
      Y(i) = 1.0f;
      throw std::runtime_error("user code failed");
    });
  }),
                  std::runtime_error);
  expect_error([&] { k.build(); }, {"serial body", "user code failed"});
}

// ---- Block and thread index types in IR text

TEST_CASE("hostile: block and thread indices must be integers wide enough for their count") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"kernel grid(2) threads(1) -> (bx: f32; tx) {\n    X[0] = bx\n", "block index bx has type f32"},
      {"kernel grid(2) threads(2) -> (bx; tx: bool) {\n    X[0] = cast<f32>(tx)\n",
       "thread index tx has type bool"},
      {"kernel grid(1) threads(1024) -> (bx; tx: i8) {\n    X[cast<i32>(tx) + 128] = 1.0\n",
       "cannot hold 1023"},
  };
  for (auto& [kernel, phrase] : cases) {
    const std::string text = "func f(X: f32[1024] global) {\n  " + kernel + "  }\n}\n";
    CAPTURE(text);
    Function f = parse_function(text);
    expect_error([&] { verify(f); }, {phrase});
    for (const Target& t : hostile_targets()) {
      CAPTURE(t.name());
      expect_error([&] { compile_and_launch_text(t, text); }, {phrase});
    }
  }
}

// ---- Scalar launch arguments

namespace {
Kernel scalar_kernel(DType st) {
  KernelBuilder k("sc");
  auto s = k.scalar("s", st);
  auto Y = k.tensor("Y", {4}, f64);
  k.grid(1).threads(1).body([&](Expr) { Y(0) = cast(f64, s); });
  return k.build();
}
}  // namespace

TEST_CASE("hostile: a scalar argument its parameter's dtype cannot hold is an error, not a conversion") {
  struct Case {
    DType type;
    KernelArg value;
    std::string phrase;
  };
  const std::vector<Case> bad = {
      {i32, 3.7, "i32, which cannot hold 3.7"},     {i32, 1e300, "outside the type's range"},
      {i32, std::nan(""), "not a whole number"},    {i8, int64_t(100000), "i8, which cannot hold 100000"},
      {boolean, int64_t(7), "a bool holds 0 or 1"}, {f16, int64_t(100000), "would become infinity"},
      {u32, -5.0, "outside the type's range"},      {f32, 1e39, "would become infinity"},
  };
  const std::vector<std::pair<Case, double>> good = {
      {{i32, 3.0, ""}, 3.0},
      {{i8, int64_t(-128), ""}, -128.0},
      {{boolean, int64_t(1), ""}, 1.0},
      {{f16, 0.1, ""}, 0.0999755859375},
      {{u32, int64_t(4294967295LL), ""}, 4294967295.0},
  };
  for (const Target& t : hostile_targets()) {
    CAPTURE(t.name());
    for (const Case& c : bad) {
      CAPTURE(c.phrase);
      CompiledKernel ck = t.compile(scalar_kernel(c.type));
      double y[4] = {0};
      expect_error([&] { ck.launch({c.value, HostTensor{y, {4}, f64}}); }, {"argument 1 (s)", c.phrase});
    }
    for (auto& [c, want] : good) {
      CompiledKernel ck = t.compile(scalar_kernel(c.type));
      double y[4] = {0};
      ck.launch({c.value, HostTensor{y, {4}, f64}});
      CHECK(y[0] == want);
    }
  }
}

TEST_CASE("hostile: a saturating float scalar (e4m3) refuses values past its largest, on interp") {
  CompiledKernel ck = Target::get("interp").compile(scalar_kernel(fp8_e4m3));
  double y[4] = {0};
  expect_error([&] { ck.launch({1000.0, HostTensor{y, {4}, f64}}); }, {"e4m3", "largest value is 448"});
  ck.launch({448.0, HostTensor{y, {4}, f64}});
  CHECK(y[0] == 448.0);
}

// ---- Vulkan compile-time limits

TEST_CASE("hostile: vulkan refuses huge locals and unrolled loops instead of hanging its driver") {
  std::optional<Target> vk;
  for (Target& t : hostile_targets())
    if (t.name() == "vulkan") vk = t;
  if (!vk) return;
  KernelBuilder a("lh");
  auto X = a.tensor("X", {16}, i32);
  auto Y = a.tensor("Y", {16}, f32);
  a.grid(1).threads(1).body([&](Expr) {
    auto s = a.local({Expr(int64_t(1) << 30)}, f32, "S");
    s(X(0)) = 1.0f;
    Y(0) = s(X(1));
  });
  expect_error([&] { vk->compile(a.build()); }, {"local buffers need", "S (1073741824 elements)"});
  auto unrolled = [](int n) {
    KernelBuilder k("uh");
    auto Y = k.tensor("Y", {16}, f32);
    k.grid(1).threads(1).body([&](Expr) {
      auto acc = k.local({1}, f32, "acc");
      acc(0) = 0.0f;
      k.unrolled(n, [&](Expr) { acc(0) += 1.0f; });
      Y(0) = acc(0);
    });
    return k.build();
  };
  expect_error([&] { vk->compile(unrolled(1000000)); },
               {"unrolled loop over u with 1000000 iterations", "serial"});
  std::vector<float> y(16, 0.0f);
  vk->compile(unrolled(64))(HostTensor{y.data(), {16}, f32});
  CHECK(y[0] == 64.0f);
}
