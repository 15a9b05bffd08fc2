// Plugin discovery and loading with the test plugins of tests/plugin/ (built into their own
// directory, found through TILEGEN_PLUGIN_PATH): a good out-of-tree plugin that runs kernels, a
// wrong-ABI one, one whose create() throws, and a library without the entry symbol.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "runtime_test_util.h"
#include "tilegen/kernel_cache.h"

using namespace tg;
using namespace tg::testing;

#ifndef TILEGEN_TEST_PLUGIN_DIR
#define TILEGEN_TEST_PLUGIN_DIR TILEGEN_BINARY_DIR "/test_plugins"
#endif

namespace {

const TargetStatus* find_status(const std::vector<TargetStatus>& all, const std::string& name) {
  auto it = std::find_if(all.begin(), all.end(), [&](const TargetStatus& s) { return s.name == name; });
  return it == all.end() ? nullptr : &*it;
}

/// The test plugins visible, the kernel cache in a scratch directory, TILEGEN_TARGET unset.
struct PluginEnv {
  ScratchDir cache_dir{"plugin_cache"};
  EnvGuard path{"TILEGEN_PLUGIN_PATH", std::string("/nonexistent/dir:") + TILEGEN_TEST_PLUGIN_DIR};
  EnvGuard cache{"TILEGEN_CACHE_DIR", cache_dir.str()};
  EnvGuard cache_on{"TILEGEN_CACHE", std::nullopt};
  EnvGuard target{"TILEGEN_TARGET", std::nullopt};
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<float> axpy_reference(const std::vector<float>& x, std::vector<float> y, float alpha) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = alpha * x[i] + y[i];
  return y;
}

}  // namespace

TEST_CASE("the test plugins are not found without TILEGEN_PLUGIN_PATH") {
  EnvGuard path("TILEGEN_PLUGIN_PATH", std::nullopt);
  for (const TargetStatus& s : targets()) CHECK(s.name.rfind("test", 0) != 0);
}

TEST_CASE("every test plugin is listed; each failure is a reason, never a crash") {
  PluginEnv env;
  std::vector<TargetStatus> all = targets();
  REQUIRE(!all.empty());
  CHECK(all.back().name == "interp");

  const TargetStatus* good = find_status(all, "testgood");
  REQUIRE(good);
  CHECK(good->available);
  CHECK(good->reason.empty());
  CHECK(good->path.find("test_plugins/libtilegen_testgood.so") != std::string::npos);
  REQUIRE(good->devices.size() == 1);
  CHECK(good->devices[0].device_name == "echo device");

  const TargetStatus* abi = find_status(all, "testabi");
  REQUIRE(abi);
  CHECK(!abi->available);
  CHECK(abi->reason == "ABI version " + std::to_string(kPluginAbiVersion + 1) + ", tilegen expects " + std::to_string(kPluginAbiVersion) +
                           ": rebuild the plugin against this tilegen");

  const TargetStatus* thrower = find_status(all, "testthrow");
  REQUIRE(thrower);
  CHECK(!thrower->available);
  CHECK(thrower->reason == "create() failed: testthrow: the device runtime is broken");

  const TargetStatus* nosym = find_status(all, "testnosym");
  REQUIRE(nosym);
  CHECK(!nosym->available);
  CHECK(nosym->reason.rfind("libtilegen_testnosym.so does not export tilegen_plugin_entry", 0) == 0);
}

TEST_CASE("an unavailable plugin is a tg::Error with its reason at the call site") {
  PluginEnv env;
  // clang-format off
  std::string m = error_of([] { Target::get("testabi"); }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m == here +
                 "target 'testabi' is unavailable: ABI version " + std::to_string(kPluginAbiVersion + 1) +
                 ", tilegen expects " + std::to_string(kPluginAbiVersion) + ": rebuild the plugin against this tilegen");
  m = error_of([] { Target::get("testthrow"); });
  CHECK(m.find("create() failed: testthrow: the device runtime is broken") != std::string::npos);
  std::string reason;
  CHECK(find_plugin("testnosym", &reason) == nullptr);
  CHECK(reason.find("does not export tilegen_plugin_entry") != std::string::npos);
  CHECK(find_plugin("nosuch", &reason) == nullptr);
  CHECK(reason.find("no plugin libtilegen_nosuch.so in /nonexistent/dir") == 0);
}

TEST_CASE("the good out-of-tree plugin loads once and runs kernels") {
  PluginEnv env;
  TargetPlugin* p = find_plugin("testgood");
  REQUIRE(p);
  CHECK(find_plugin("testgood") == p);  // cached, not loaded again

  Target t = Target::get("testgood");
  CHECK(t.name() == "testgood");
  CHECK(t.info().arch == "echo-1");
  CompiledKernel k = t.compile(axpy_kernel());
  CHECK(k.lowered().name == "axpy_echo");  // the plugin's own pass ran
  CHECK(k.source().rfind("// testgood\n", 0) == 0);
  CHECK(std::string(k.binary().begin(), k.binary().end()) == k.source());
  auto names = k.stages();
  REQUIRE(names.size() == 4);
  CHECK(names[0].first == "input");
  CHECK(names[1].first == "bind_sizes");
  CHECK(names[2].first == "echo_rename");
  CHECK(names[3].first == "source");

  std::vector<float> x(64), y(64, 2.f);
  for (std::size_t i = 0; i < 64; ++i) x[i] = float(i);
  DeviceBuffer bx = t.upload({x.data(), {64}, f32});
  std::vector<float> want = axpy_reference(x, y, 0.5f);
  k.launch({&bx, HostTensor{y.data(), {64}, f32}, 0.5});
  CHECK(y == want);

  // Symbolic sizes through the plugin too.
  CompiledKernel mm = t.compile(matmul_kernel());
  std::vector<float> a{1, 2, 3, 4, 5, 6}, b{1, 0, 0, 1, 1, 1}, c(4);
  mm.launch({HostTensor{a.data(), {2, 3}, f32}, HostTensor{b.data(), {3, 2}, f32},
             HostTensor{c.data(), {2, 2}, f32}});
  CHECK(c == std::vector<float>{4, 5, 10, 11});
}

TEST_CASE("a buffer of one target is refused by a kernel of another") {
  PluginEnv env;
  Target echo = Target::get("testgood"), interp = Target::get("interp");
  DeviceBuffer x = echo.alloc({64}, f32), y = interp.alloc({64}, f32);
  CompiledKernel k = interp.compile(axpy_kernel());
  // clang-format off
  std::string m = error_of([&] { k.launch({&x, &y, 1.0}); }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m ==
        here +
            "argument 1 (X): the buffer lives on target 'testgood' device 0, the kernel runs on 'interp' "
            "device 0: allocate it with the kernel's target");
}

TEST_CASE("select() ranks a software device above the interpreter") {
  PluginEnv env;
  bool hardware = false;
  for (const TargetStatus& s : targets())
    for (const TargetInfo& d : s.devices) hardware |= s.available && (!d.software || d.is_cpu);
  Target best = Target::select();
  // Without hardware, software devices (testgood here; lavapipe where the vulkan plugin is
  // built) must all come before the interpreter.
  if (hardware)
    CHECK(!best.info().software);
  else
    CHECK((best.info().software && best.name() != "interp"));
  EnvGuard pick("TILEGEN_TARGET", "testgood:0");
  CHECK(Target::select().name() == "testgood");
}

TEST_CASE("compile keeps artifacts with a binary in the kernel cache") {
  PluginEnv env;
  Target t = Target::get("testgood");
  std::string first = t.compile(axpy_kernel()).assembly();  // "codegen call N"
  std::vector<std::filesystem::path> entries;
  for (auto& e : std::filesystem::directory_iterator(env.cache_dir.path())) entries.push_back(e.path());
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].extension() == ".tgk");

  CompiledKernel again = t.compile(axpy_kernel());
  CHECK(again.assembly() == first);  // a hit: codegen was not called
  std::vector<float> x(64, 1.f), y(64, 1.f);
  again.launch(
      {HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 2.0});  // loads the cached binary
  CHECK(y == std::vector<float>(64, 3.f));

  {
    EnvGuard off("TILEGEN_CACHE", "0");
    CHECK(t.compile(axpy_kernel()).assembly() != first);
  }
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "TGKCACHE garbage";
  std::string rebuilt = t.compile(axpy_kernel()).assembly();
  CHECK(rebuilt != first);
  CHECK(t.compile(axpy_kernel()).assembly() == rebuilt);  // the corrupt entry was replaced
  {
    // A plugin's param, set by its environment variable: a new key.
    EnvGuard knob("TILEGEN_TESTGOOD_SWITCH", "1");
    std::string switched = t.compile(axpy_kernel()).assembly();
    CHECK(switched != rebuilt);
    CHECK(t.compile(axpy_kernel()).assembly() == switched);
  }
  CHECK(t.compile(axpy_kernel()).assembly() == rebuilt);
}

TEST_CASE("params: an environment default is the param itself, for the artifact and the cache key") {
  PluginEnv env;
  Target t = Target::get("testgood");
  auto with = [](const char* value) {
    CompileOptions o;
    o.params["switch"] = value;
    return o;
  };
  auto entries = [&] {
    auto it = std::filesystem::directory_iterator(env.cache_dir.path());
    return std::distance(begin(it), end(it));
  };
  {  // The same artifact from either source.
    EnvGuard off("TILEGEN_CACHE", "0");
    std::string from_param = t.compile(axpy_kernel(), with("1")).source();
    CHECK(from_param.find("// switch on") != std::string::npos);
    EnvGuard knob("TILEGEN_TESTGOOD_SWITCH", "1");
    CHECK(t.compile(axpy_kernel()).source() == from_param);
  }
  std::string off = t.compile(axpy_kernel()).assembly();  // "codegen call N": a compile
  std::string on;
  {
    EnvGuard knob("TILEGEN_TESTGOOD_SWITCH", "on");
    on = t.compile(axpy_kernel()).assembly();
    CHECK(on != off);  // another value: another key, a compile
    // A param wins over the environment: switch=0 is the first entry again.
    CHECK(t.compile(axpy_kernel(), with("false")).assembly() == off);
  }
  // The value as a param, spelt either way, finds the entry the environment's made: one key.
  CHECK(t.compile(axpy_kernel(), with("1")).assembly() == on);
  CHECK(t.compile(axpy_kernel(), with("TRUE")).assembly() == on);
  CHECK(t.compile(axpy_kernel(), with("0")).assembly() == off);
  CHECK(entries() == 2);
  // The environment is read once, at compile(): a kernel with symbolic sizes compiled while the
  // variable was set keeps that value for the specialisations its launches compile later.
  CompiledKernel mm = [&] {
    EnvGuard knob("TILEGEN_TESTGOOD_SWITCH", "1");
    return t.compile(matmul_kernel());
  }();
  std::vector<float> a(6, 1.f), b(6, 1.f), c(4, 0.f);
  mm.launch({HostTensor{a.data(), {2, 3}, f32}, HostTensor{b.data(), {3, 2}, f32},
             HostTensor{c.data(), {2, 2}, f32}});
  CHECK(c == std::vector<float>(4, 3.f));
  CHECK(mm.source().find("// switch on") != std::string::npos);
}

TEST_CASE("params: a value its key does not take is an error naming the key, from either source") {
  PluginEnv env;
  Target t = Target::get("testgood");
  CompileOptions bad;
  bad.params["switch"] = "maybe";
  // clang-format off
  std::string m = error_of([&] { t.compile(axpy_kernel(), bad); }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m ==
        here +
            "compile: CompileOptions param \"switch\" is 'maybe'; it takes 0 or 1 (or off/on, false/true)");
  {
    EnvGuard knob("TILEGEN_TESTGOOD_SWITCH", "2");
    CHECK(has(error_of([&] { t.compile(axpy_kernel()); }),
              "compile: TILEGEN_TESTGOOD_SWITCH (the default of CompileOptions param \"switch\") is '2'; it "
              "takes 0 or 1"));
    // The param given, the variable is not read.
    CompileOptions given;
    given.params["switch"] = "1";
    CHECK(error_of([&] { t.compile(axpy_kernel(), given); }) == "(no error)");
  }
  bad.params = {{"swtich", "1"}};
  CHECK(has(error_of([&] { t.compile(axpy_kernel(), bad); }),
            "target 'testgood' has no CompileOptions param 'swtich'; the params it knows are check_bounds, "
            "switch"));
}

TEST_CASE("targets() from many threads at once") {
  PluginEnv env;
  std::vector<std::size_t> counts(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < counts.size(); ++i)
    threads.emplace_back([&counts, i] { counts[i] = targets().size(); });
  for (auto& th : threads) th.join();
  for (std::size_t c : counts) CHECK(c == counts[0]);
  CHECK(counts[0] >= 5);  // four test plugins and interp
}
