// The host side under hostile input, on interp, cpu and vulkan (lavapipe): environment variables
// with garbage in them, errors that must carry the user's line (empty Expr, empty Tensor,
// source() too early, a buffer too large for vulkan), and inputs in read-only memory.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include "runtime_test_util.h"
#include "tilegen/env.h"

using namespace tg;
using namespace tg::testing;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Y = X + 1, one block of 64 threads over a 64-element tensor.
Kernel add_one_kernel(int64_t n = 64) {
  KernelBuilder k("add_one");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(1).threads(64).body([&](Expr) {
    Expr i = k.thread_index();
    Y(i) = X(i) + 1.0f;
  });
  return k.build();
}

}  // namespace

// ---- Environment variables

TEST_CASE(
    "env: switches and numbers are parsed strictly, and a bad value names the variable and its values") {
  {
    EnvGuard g("TILEGEN_TEST_SWITCH", std::nullopt);
    CHECK(env::flag("TILEGEN_TEST_SWITCH", true));
    CHECK(!env::flag("TILEGEN_TEST_SWITCH", false));
  }
  for (const char* on : {"1", "on", "true", "ON", "True"}) {
    EnvGuard g("TILEGEN_TEST_SWITCH", on);
    CHECK(env::flag("TILEGEN_TEST_SWITCH", false));
  }
  for (const char* off : {"0", "off", "false", "OFF", "FALSE"}) {
    EnvGuard g("TILEGEN_TEST_SWITCH", off);
    CHECK(!env::flag("TILEGEN_TEST_SWITCH", true));
  }
  for (const char* bad : {"2", "yes", "00", " 1", "abc"}) {
    EnvGuard g("TILEGEN_TEST_SWITCH", bad);
    CHECK_THROWS_WITH_AS(
        env::flag("TILEGEN_TEST_SWITCH", true),
        ("TILEGEN_TEST_SWITCH is '" + std::string(bad) + "'; it takes 0 or 1 (or off/on, false/true)")
            .c_str(),
        Error);
  }
  {
    EnvGuard g("TILEGEN_TEST_COUNT", "12");
    CHECK(env::integer("TILEGEN_TEST_COUNT", 1, 4096, 0) == 12);
  }
  for (const char* bad : {"abc", "-5", "99999999999", "0", "1e3", "12 ", "+3", "-"}) {
    INFO(bad);
    EnvGuard g("TILEGEN_TEST_COUNT", bad);
    CHECK_THROWS_WITH_AS(env::integer("TILEGEN_TEST_COUNT", 1, 4096, 0),
                         doctest::Contains("it takes a whole number from 1 to 4096"), Error);
  }
}

TEST_CASE("env: TILEGEN_CACHE with garbage is a tg::Error at the compile, on every target") {
  for (const Target& t : host_test_targets()) {
    INFO(t.name());
    EnvGuard g("TILEGEN_CACHE", "maybe");
    // clang-format off
    std::string m = error_of([&] { t.compile(add_one_kernel()); }); std::string here = at_line(__FILE__, __LINE__);
    // clang-format on
    CHECK(m == here + "TILEGEN_CACHE is 'maybe'; it takes 0 or 1 (or off/on, false/true)");
  }
}

TEST_CASE("env: TILEGEN_NUM_THREADS, TILEGEN_CPU_AMX (with or without AMX) and TILEGEN_CPU_BF16_DOT on cpu") {
  std::vector<Target> all = host_test_targets(false);
  for (const Target& t : all) {
    if (t.name() != "cpu") continue;
    EnvGuard no_cache("TILEGEN_CACHE", "0");
    for (const char* bad : {"abc", "-5", "99999999999", "0"}) {
      INFO(bad);
      EnvGuard g("TILEGEN_NUM_THREADS", bad);
      std::string m = error_of([&] { t.compile(add_one_kernel()); });
      CHECK(contains(m, "TILEGEN_NUM_THREADS is"));
      CHECK(contains(m, "it takes a whole number from 1 to 4096"));
      CHECK(contains(m, "test_host_hostile.cpp:"));
    }
    {
      EnvGuard g("TILEGEN_NUM_THREADS", "2");
      CHECK(error_of([&] { t.compile(add_one_kernel()); }) == "(no error)");
    }
    // Read on every CPU, so "abc" is an error here whether or not this CPU has AMX; the error
    // names the param the variable is the default of.
    for (auto [name, key] :
         {std::pair{"TILEGEN_CPU_AMX", "amx"}, std::pair{"TILEGEN_CPU_BF16_DOT", "bf16_dot"}}) {
      EnvGuard g(name, "abc");
      CHECK(contains(error_of([&] { t.compile(add_one_kernel()); }),
                     std::string(name) + " (the default of CompileOptions param \"" + key +
                         "\") is 'abc'; it takes 0 or 1"));
    }
  }
}

TEST_CASE("env: TILEGEN_VULKAN_COOPMAT and the vulkan codegen switches with garbage are errors naming them") {
  for (const Target& t : host_test_targets(false)) {
    if (t.name() != "vulkan") continue;
    EnvGuard no_cache("TILEGEN_CACHE", "0");
    for (auto [name, key] :
         {std::pair{"TILEGEN_VULKAN_COOPMAT", "coopmat"}, std::pair{"TILEGEN_VULKAN_VECTOR", "vector_copies"},
          std::pair{"TILEGEN_VULKAN_PAD", "pad_rows"}, std::pair{"TILEGEN_VULKAN_PREFETCH", "prefetch"},
          std::pair{"TILEGEN_VULKAN_DOUBLE", "double_buffer"}}) {
      INFO(name);
      EnvGuard g(name, "2");
      CHECK(contains(error_of([&] { t.compile(add_one_kernel()); }),
                     std::string(name) + " (the default of CompileOptions param \"" + key +
                         "\") is '2'; it takes 0 or 1 (or off/on, false/true)"));
    }
  }
}

// ---- Errors at the user's line

TEST_CASE("errors: an operator on an empty Expr names the user's line and what to do") {
  Expr empty;
  // clang-format off
  std::string m = error_of([&] { Expr e = empty + 1; }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m == here +
                 "operator + on an empty expression: a default-constructed tg::Expr has no value; assign it "
                 "one before using it");
  CHECK(contains(error_of([&] { Expr e = 2 * empty; }), "test_host_hostile.cpp:"));
  CHECK(contains(error_of([&] { Expr e = -empty; }), "operator - on an empty expression"));
  CHECK(contains(error_of([&] { Expr e = empty < Expr(3); }), "operator < on an empty expression"));
  // Operands that are not Expr yet still work as before.
  KernelBuilder k("ops");
  auto X = k.tensor("X", {4}, f32);
  k.grid(1).threads(4).body([&](Expr) {
    Expr i = k.thread_index();
    X(i) = X(i) + X(i) * 2.0f - 1;
  });
  CHECK_NOTHROW(k.build());
}

TEST_CASE("errors: shape() of an empty Tensor or past its rank names the user's line") {
  Tensor none;
  // clang-format off
  std::string m = error_of([&] { none.shape(0); }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m == here +
                 "shape(0) of an empty Tensor: a default-constructed tg::Tensor has no buffer; make it with "
                 "KernelBuilder::tensor, shared, fragment or local");
  KernelBuilder k("b");
  auto A = k.tensor("A", {4}, f32);
  // clang-format off
  m = error_of([&] { A.shape(5); }); here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m.rfind(here + "shape(5) of ", 0) == 0);
  CHECK(contains(m, "which has 1 dimension: ask for a dimension below 1"));
  CHECK(A.shape(0).as_int() == 4);
}

TEST_CASE("errors: source() of a symbolic kernel before its first launch names the user's line") {
  for (const Target& t : host_test_targets()) {
    INFO(t.name());
    CompiledKernel mm = t.compile(matmul_kernel());
    // clang-format off
    std::string m = error_of([&] { (void)mm.source(); }); std::string here = at_line(__FILE__, __LINE__);
    // clang-format on
    CHECK(m.rfind(here + "kernel 'mm' has symbolic sizes (M, N, K): it is compiled at its first launch", 0) ==
          0);
    CHECK(contains(m, "launch it before asking for its source()"));
    CHECK(contains(error_of([&] { (void)mm.lowered(); }), "asking for its lowered()"));
  }
}

TEST_CASE("errors: vulkan's too-large storage buffer names the argument and the launch's line") {
  for (const Target& t : host_test_targets(false)) {
    if (t.name() != "vulkan") continue;
    KernelBuilder k("head");
    Expr n = k.size("n");
    auto X = k.tensor("X", {n}, f32);
    auto Y = k.tensor("Y", {Expr(32)}, f32);
    k.grid(1).threads(32).body([&](Expr) { Y(k.thread_index()) = X(k.thread_index()); });
    CompiledKernel ck = t.compile(k.build());
    // lavapipe binds at most 128 MiB; a real GPU more. Past 1 GiB the test would cost too much.
    DeviceBuffer y = t.alloc({32}, f32);
    for (int64_t elems : {int64_t(1) << 25, int64_t(1) << 28}) {
      DeviceBuffer x = t.alloc({elems + 1}, f32);
      // clang-format off
      std::string m = error_of([&] { ck.launch({&x, &y}); }); std::string here = at_line(__FILE__, __LINE__);
      // clang-format on
      if (m == "(no error)") continue;  // the device binds buffers this large: try the next size
      CHECK(m.rfind(here + "vulkan: argument X is " + std::to_string((elems + 1) * 4) + " bytes; device ",
                    0) == 0);
      CHECK(contains(m, "use smaller tensors"));
      break;
    }
  }
}

// ---- Read-only inputs

TEST_CASE("host tensors: an input in read-only memory is read, never written back (every target)") {
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  auto* x = static_cast<float*>(page);
  for (int i = 0; i < 64; ++i) x[i] = float(i);
  REQUIRE(::mprotect(page, 4096, PROT_READ) == 0);  // as mmap'd weights are
  for (const Target& t : host_test_targets()) {
    INFO(t.name());
    std::vector<float> y(64, 0.f);
    t.compile(add_one_kernel()).launch({HostTensor{page, {64}, f32}, HostTensor{y.data(), {64}, f32}});
    for (int i = 0; i < 64; ++i) CHECK(y[std::size_t(i)] == float(i) + 1.f);
    // An in-place kernel still gets its tensor back.
    std::vector<float> z(64, 1.f);
    t.compile(axpy_kernel()).launch({HostTensor{y.data(), {64}, f32}, HostTensor{z.data(), {64}, f32}, 2.0});
    CHECK(z[10] == 2.f * 11.f + 1.f);
  }
  ::munmap(page, 4096);
}
