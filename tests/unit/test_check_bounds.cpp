// --param check_bounds=all (the pass check_element_accesses and AccessCheck): the IR it makes,
// its text form, and the report of the first out-of-range access on interp, cpu and vulkan (run
// for real; vulkan skipped where unavailable). The GPU source targets' translation is tested in
// test_cuda_codegen.cpp and test_hip_codegen.cpp. Also: unknown CompileOptions params keys.
#include <doctest/doctest.h>

#include <iostream>
#include <vector>

#include "tilegen/ir/access_check.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/check_element_accesses.h"
#include "tilegen/plugin.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

CompileOptions checked() {
  CompileOptions o;
  o.params["check_bounds"] = "all";
  return o;
}

bool available(const std::string& name) {
  for (const TargetStatus& t : targets())
    if (t.name == name) {
      if (!t.available) std::cout << "skipped: " << name << " unavailable: " << t.reason << "\n";
      return t.available;
    }
  std::cout << "skipped: no " << name << " plugin in this build\n";
  return false;
}

// Y: f32[64] stored by 128 threads: threads 64..127 are out of range (the brief's heap
// corruption on cpu). The store is on line kStoreLine.
Kernel store_by_thread() {
  KernelBuilder k("oob_store");
  auto Y = k.tensor("Y", {64}, f32);
  k.grid(1).threads(128).body([&](Expr) { Y(k.thread_index()) = 1.0f; });  // kStoreLine
  return k.build();
}
constexpr int kStoreLine = __LINE__ - 3;

// Y[0] = X[I[0]]: the index is data.
Kernel load_by_data() {
  KernelBuilder k("oob_load");
  auto I = k.tensor("I", {1}, i32);
  auto X = k.tensor("X", {4}, f32);
  auto Y = k.tensor("Y", {4}, f32);
  k.grid(1).threads(1).body([&](Expr) { Y(0) = X(I(0)); });
  return k.build();
}

// b3.cpp oob_shared_store_runtime: a shared tile indexed by data.
Kernel shared_store_by_data() {
  KernelBuilder k("oobs");
  auto X = k.tensor("X", {1}, i32);
  auto Y = k.tensor("Y", {4}, f32);
  k.grid(1).threads(1).body([&](Expr) {
    auto s = k.shared({4}, f32);
    s(X(0)) = 1.0f;
    Y(0) = s(0);
  });
  return k.build();
}

// b3.cpp atomic_oob_runtime.
Kernel atomic_by_data() {
  KernelBuilder k("ooba");
  auto X = k.tensor("X", {1}, i32);
  auto Y = k.tensor("Y", {4}, f32);
  k.grid(1).threads(1).body([&](Expr) { k.atomic_add(Y(X(0)), 1.0f); });
  return k.build();
}

std::string run_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Every case on one target: the report names the access, buffer, index, shape, thread and line.
void check_reports(const std::string& target, bool exact_thread) {
  Target t = Target::get(target);
  INFO("target " << target);
  {
    std::vector<float> y(64, 0.0f);
    CompiledKernel ck = t.compile(store_by_thread(), checked());
    std::string e = run_error([&] { ck(HostTensor{y.data(), {64}, f32}); });
    CHECK(e.find("test_check_bounds.cpp:" + std::to_string(kStoreLine) + ": out-of-range store to Y[") == 0);
    CHECK(e.find("] (shape {64}) by block 0 thread ") != std::string::npos);
    if (exact_thread) CHECK(e.find("Y[64] (shape {64}) by block 0 thread 64;") != std::string::npos);
    for (float v : y) CHECK(v == 1.0f);  // the in-range stores happened, nothing else did
  }
  {
    int32_t i = -100000000;
    float x[4] = {1, 2, 3, 4}, y[4] = {7, 7, 7, 7};
    CompiledKernel ck = t.compile(load_by_data(), checked());
    std::string e = run_error([&] {
      ck(HostTensor{&i, {1}, i32}, HostTensor{x, {4}, f32}, HostTensor{y, {4}, f32});
    });
    CHECK(e.find("out-of-range load from X[-100000000] (shape {4}) by block 0 thread 0") !=
          std::string::npos);
    i = 2;  // in range: the checked kernel computes what the plain one does
    CHECK(run_error([&] {
            ck(HostTensor{&i, {1}, i32}, HostTensor{x, {4}, f32}, HostTensor{y, {4}, f32});
          }) == "no error");
    CHECK(y[0] == 3.0f);
  }
  {
    int32_t i = 50000000;
    float y[4] = {};
    CompiledKernel ck = t.compile(shared_store_by_data(), checked());
    std::string e = run_error([&] { ck(HostTensor{&i, {1}, i32}, HostTensor{y, {4}, f32}); });
    CHECK(e.find("out-of-range store to shared") != std::string::npos);
    CHECK(e.find("[50000000] (shape {4})") != std::string::npos);
  }
  {
    int32_t i = -50000000;
    float y[4] = {};
    CompiledKernel ck = t.compile(atomic_by_data(), checked());
    std::string e = run_error([&] { ck(HostTensor{&i, {1}, i32}, HostTensor{y, {4}, f32}); });
    CHECK(e.find("out-of-range atomic on Y[-50000000] (shape {4})") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("check_element_accesses: unproven accesses get an AccessCheck, proven ones none; text round trip") {
  Function f = check_element_accesses(store_by_thread().function(), TargetInfo{});
  std::string text = print(f);
  INFO(text);
  CHECK(text.find("tg_access_record: u32[21] global") != std::string::npos);
  CHECK(text.find("if access_check(tx < 64, store \"Y\"[tx] of [64], (bx; tx), 0, \"") != std::string::npos);
  CHECK(text.find("test_check_bounds.cpp:" + std::to_string(kStoreLine) + "\")") != std::string::npos);
  CHECK_NOTHROW(verify(f));
  Function back = parse_function(text);
  CHECK(print(back) == text);
  // The call site survives the text form: the report of the parsed function names the builder line.
  const auto* check = [&] {
    struct Find : IRVisitor {
      const ir::AccessCheck* found = nullptr;
      using IRVisitor::visit;
      void visit(const ir::AccessCheck* op) override { found = op; }
    } find;
    find.visit_stmt(back.body);
    return find.found;
  }();
  REQUIRE(check);
  CHECK(check->loc.line == kStoreLine);

  // Y(k.thread_index() % 64): proven in range, nothing to check, no record.
  KernelBuilder k("in_range");
  auto Y = k.tensor("Y", {64}, f32);
  k.grid(1).threads(128).body([&](Expr) { Y(k.thread_index() % 64) = 1.0f; });
  Function g = check_element_accesses(k.build().function(), TargetInfo{});
  CHECK(print(g).find("access_check") == std::string::npos);
  CHECK(!find_access_record(g));
}

TEST_CASE(
    "check_element_accesses: the verifier wants the access record; a user parameter may not take its name") {
  Function f = check_element_accesses(store_by_thread().function(), TargetInfo{});
  f.params.pop_back();
  CHECK_THROWS_WITH_AS(verify(f), doctest::Contains("access_check needs the function's access record"),
                       Error);
  KernelBuilder k("clash");
  auto R = k.tensor(kAccessRecordName, {4}, f32);
  k.grid(1).threads(8).body([&](Expr) { R(k.thread_index()) = 1.0f; });
  CHECK_THROWS_WITH_AS(check_element_accesses(k.build().function(), TargetInfo{}),
                       doctest::Contains("rename it"), Error);
}

TEST_CASE("access record: the shared report reads the words every target writes") {
  Function f = check_element_accesses(load_by_data().function(), TargetInfo{});
  uint32_t words[kAccessRecordWords] = {};
  CHECK(!access_error(f, words));
  words[kAccessRecordSite] = 1;  // site 0
  words[kAccessRecordThread] = uint32_t(-1);
  words[kAccessRecordIndex] = uint32_t(int64_t(-5000000000LL));
  words[kAccessRecordIndex + 1] = uint32_t(uint64_t(int64_t(-5000000000LL)) >> 32);
  std::optional<Error> e = access_error(f, words);
  REQUIRE(e);
  CHECK(std::string(e->what()).find(
            "out-of-range load from X[-5000000000] (shape {4}) by block 0 in a parallel loop") !=
        std::string::npos);
  words[kAccessRecordSite] = 99;
  CHECK(std::string(access_error(f, words)->what()).find("the access record is corrupt") !=
        std::string::npos);
}

TEST_CASE("check_bounds=all on interp reports the first out-of-range access") {
  check_reports("interp", true);
}

TEST_CASE("check_bounds=all on cpu reports the first out-of-range access (no heap corruption)") {
  if (available("cpu")) check_reports("cpu", true);
}

TEST_CASE("check_bounds=all on vulkan reports the first out-of-range access") {
  // Invocations run concurrently: which of threads 64..127 claims the record first is the device's.
  if (available("vulkan")) check_reports("vulkan", false);
}

TEST_CASE("check_bounds: off by default; only all or none") {
  Target t = Target::get("interp");
  CHECK(print(t.compile(store_by_thread()).lowered()).find("access_check") == std::string::npos);
  CompileOptions bad;
  bad.params["check_bounds"] = "yes";
  CHECK_THROWS_WITH_AS(t.compile(store_by_thread(), bad), doctest::Contains("it takes all"), Error);
  bad.params["check_bounds"] = "none";
  CHECK_NOTHROW(t.compile(store_by_thread(), bad));
}

TEST_CASE("CompileOptions params: an unknown key is an error listing the keys the target knows") {
  CompileOptions o;
  o.params["fast_mth"] = "1";
  CHECK_THROWS_WITH_AS(
      Target::get("interp").compile(store_by_thread(), o),
      doctest::Contains("target 'interp' has no CompileOptions param 'fast_mth'; the params it "
                        "knows are check_bounds"),
      Error);
  if (available("cpu"))
    CHECK_THROWS_WITH_AS(
        Target::get("cpu").compile(store_by_thread(), o),
        doctest::Contains("the params it knows are amx, bf16_dot, check_bounds, fast_math, gemm, "
                          "gemm_panel_rows, num_threads, trim_edges, version_edges, widen_tiles"),
        Error);
  o.params = {{"fast_math", "1"}};
  if (available("cpu")) CHECK_NOTHROW(Target::get("cpu").compile(store_by_thread(), o));
}
