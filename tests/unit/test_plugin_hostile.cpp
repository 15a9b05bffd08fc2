// Plugin loading under hostile libraries (tests/plugin/: test_plugins_bad/ and
// test_plugins_crash/), through the real loader: a FIFO named like a plugin, an entry symbol that
// is data, a wild entry pointer, an entry that names another plugin, a constructor that aborts,
// a probe() that dereferences null. None may hang or kill a program that does not ask for it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "runtime_test_util.h"

using namespace tg;
using namespace tg::testing;

#ifndef TILEGEN_TEST_PLUGIN_DIR
#define TILEGEN_TEST_PLUGIN_DIR TILEGEN_BINARY_DIR "/test_plugins"
#endif
#ifndef TILEGEN_BAD_PLUGIN_DIR
#define TILEGEN_BAD_PLUGIN_DIR TILEGEN_BINARY_DIR "/test_plugins_bad"
#endif
#ifndef TILEGEN_CRASH_PLUGIN_DIR
#define TILEGEN_CRASH_PLUGIN_DIR TILEGEN_BINARY_DIR "/test_plugins_crash"
#endif

namespace {

const TargetStatus* status_of(const std::vector<TargetStatus>& all, const std::string& name) {
  auto it = std::find_if(all.begin(), all.end(), [&](const TargetStatus& s) { return s.name == name; });
  return it == all.end() ? nullptr : &*it;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The plugin path set to `dirs`, the kernel cache off, TILEGEN_TARGET unset.
struct PathEnv {
  explicit PathEnv(const std::string& dirs) : path("TILEGEN_PLUGIN_PATH", dirs) {}
  EnvGuard path;
  EnvGuard cache{"TILEGEN_CACHE", "0"};
  EnvGuard target{"TILEGEN_TARGET", std::nullopt};
};

/// The interpreter runs axpy: what an interp-only program does.
void check_interp_runs() {
  Target t = Target::get("interp");
  std::vector<float> x(64, 1.f), y(64, 2.f);
  t.compile(axpy_kernel()).launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 3.0});
  CHECK(y == std::vector<float>(64, 5.f));
}

/// Opens the FIFO for writing after a while and closes it: a loader blocked reading it then
/// gets end-of-file and fails to parse it, so a hang shows up as a wrong reason, not a hung test.
class FifoUnblocker {
 public:
  explicit FifoUnblocker(std::string path)
      : thread_([this, p = std::move(path)] {
          auto start = std::chrono::steady_clock::now();
          while (!done_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) continue;
            int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) ::close(fd);
          }
        }) {}
  ~FifoUnblocker() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("plugins: a FIFO named like a plugin is reported, never opened") {
  ScratchDir dir("fifo_plugin");
  const std::string fifo = dir.str() + "/libtilegen_testfifo.so";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  PathEnv env(dir.str() + ":" + TILEGEN_TEST_PLUGIN_DIR);
  FifoUnblocker unblock(fifo);
  std::vector<TargetStatus> all = targets();
  const TargetStatus* s = status_of(all, "testfifo");
  REQUIRE(s);
  CHECK(!s->available);
  CHECK(s->reason == fifo + " is a FIFO, not a regular file: not loaded");
  REQUIRE(status_of(all, "testgood"));
  CHECK(status_of(all, "testgood")->available);
  CHECK(contains(error_of([] { Target::get("testfifo"); }), "is a FIFO, not a regular file"));
}

TEST_CASE("plugins: an entry that is data, a wild pointer, or another plugin's name is refused before use") {
  PathEnv env(TILEGEN_BAD_PLUGIN_DIR);
  std::vector<TargetStatus> all = targets();
  const TargetStatus* data = status_of(all, "testdata");
  const TargetStatus* wild = status_of(all, "testwild");
  const TargetStatus* misnamed = status_of(all, "testmisnamed");
  REQUIRE(data);
  REQUIRE(wild);
  REQUIRE(misnamed);
  CHECK(!data->available);
  CHECK(data->reason ==
        "libtilegen_testdata.so: tilegen_plugin_entry is not a function (it is a data object): export "
        "extern \"C\" const TgPluginEntry* tilegen_plugin_entry()");
  CHECK(!wild->available);
  CHECK(wild->reason ==
        "tilegen_plugin_entry() returned a pointer outside the plugin library (16): it must return the "
        "address of a static TgPluginEntry");
  CHECK(!misnamed->available);
  CHECK(misnamed->reason ==
        "the entry's name is not 'testmisnamed': a plugin must be named libtilegen_<its name>.so");
  // clang-format off
  std::string m = error_of([] { Target::get("testwild"); }); std::string here = at_line(__FILE__, __LINE__);
  // clang-format on
  CHECK(m == here + "target 'testwild' is unavailable: " + wild->reason);
  check_interp_runs();
}

TEST_CASE(
    "plugins: Target::get loads only the plugin asked for, so a crashing library beside it is harmless") {
  // Were testabort (its constructor aborts) or testsegv (probe() faults) loaded or probed here,
  // this test process would die.
  PathEnv env(std::string(TILEGEN_CRASH_PLUGIN_DIR) + ":" + TILEGEN_TEST_PLUGIN_DIR);
  check_interp_runs();
  Target good = Target::get("testgood");
  CHECK(good.info().device_name == "echo device");
  CHECK(find_plugin("testgood") != nullptr);
  std::vector<std::string> names = target_names();
  CHECK(std::count(names.begin(), names.end(), "testabort") == 1);
  CHECK(std::count(names.begin(), names.end(), "testsegv") == 1);
  CHECK(contains(error_of([] { Target::get("nosuch"); }), "the targets found are "));
}

TEST_CASE("plugins: targets_isolated lists a plugin that aborts or faults as broken, and lists the others") {
  PathEnv env(std::string(TILEGEN_CRASH_PLUGIN_DIR) + ":" + TILEGEN_TEST_PLUGIN_DIR);
  std::vector<TargetStatus> all = targets_isolated();
  const TargetStatus* abort_ctor = status_of(all, "testabort");
  const TargetStatus* segv_probe = status_of(all, "testsegv");
  REQUIRE(abort_ctor);
  REQUIRE(segv_probe);
  const std::string broken =
      " while it was loaded and probed in a child process: the plugin is broken; not loaded";
  CHECK(!abort_ctor->available);
  CHECK(abort_ctor->reason == "killed by SIGABRT (signal 6)" + broken);
  CHECK(!segv_probe->available);
#if defined(TILEGEN_SANITIZED)
  // UBSan may see the null store first (gcc's does), report it and end the child with status 1;
  // where it does not (clang's at -O1), the child dies of the fault itself.
  CHECK((segv_probe->reason == "the process exited with status 1" + broken ||
         segv_probe->reason == "killed by SIGSEGV (signal 11)" + broken));
#else
  CHECK(segv_probe->reason == "killed by SIGSEGV (signal 11)" + broken);
#endif
  REQUIRE(status_of(all, "testgood"));
  CHECK(status_of(all, "testgood")->available);
  REQUIRE(status_of(all, "interp"));
  CHECK(status_of(all, "interp")->available);
  // The verdict stands for the process: targets() and Target::get never load them here either.
  CHECK(status_of(targets(), "testsegv")->reason == segv_probe->reason);
  CHECK(contains(error_of([] { Target::get("testabort"); }), "killed by SIGABRT"));
}
