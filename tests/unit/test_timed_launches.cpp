// timed_launches: the loop the GPU plugins time kernels with, driven by fake steps that log
// their order; time_with_events over a fake CUDA-style runtime; and DeviceContext's wall-clock
// default, which runs on timed_launches.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tilegen/host_device_context.h"
#include "tilegen/ir/error.h"
#include "tilegen/timed_launches.h"

using namespace tg;

namespace {

// Steps that append to `log` and report elapsed times 10, 20, 30, ... in run order.
LaunchTimer logging_timer(std::string& log, int& launches) {
  LaunchTimer t;
  t.record_start = [&log] { log += "start "; };
  t.launch = [&log, &launches] { log += "launch ", ++launches; };
  t.record_stop = [&log] { log += "stop "; };
  t.elapsed_ms = [&log, &launches] {
    log += "elapsed | ";
    return 10.0 * launches;
  };
  return t;
}

}  // namespace

TEST_CASE("timed_launches: each run is started, launched, stopped and read back before the next") {
  std::string log;
  int launches = 0;
  std::vector<double> ms = timed_launches(logging_timer(log, launches), 3);
  CHECK(ms == std::vector<double>{10, 20, 30});  // one time a run, in run order
  CHECK(launches == 3);
  CHECK(log == "start launch stop elapsed | start launch stop elapsed | start launch stop elapsed | ");
}

TEST_CASE("timed_launches: no runs launch nothing; a failing step stops the loop with its error") {
  std::string log;
  int launches = 0;
  CHECK(timed_launches(logging_timer(log, launches), 0).empty());
  CHECK(timed_launches(logging_timer(log, launches), -1).empty());
  CHECK(log.empty());

  LaunchTimer t = logging_timer(log, launches);
  t.launch = [&] {
    if (++launches == 2) throw Error("launch failed");
  };
  CHECK_THROWS_WITH_AS(timed_launches(t, 5), doctest::Contains("launch failed"), Error);
  CHECK(launches == 2);
  CHECK(log == "start stop elapsed | start ");  // the second run never reached its stop
}

namespace {

// A fake CUDA-style runtime: two event slots, calls that log, and a call that fails on demand.
struct FakeRuntime {
  static inline std::string log;
  static inline int events[2], created = 0, fail_at = -1, calls = 0;
  static const char* name(int* e) { return e == &events[0] ? "start" : "stop"; }
  static int status() { return calls++ == fail_at ? 7 : 0; }
  static int create(int** e) {
    log += "create ";
    if (int s = status()) return s;
    *e = &events[created++];
    return 0;
  }
  static int record(int* e, int stream) {
    log += std::string("record(") + name(e) + ", stream " + std::to_string(stream) + ") ";
    return status();
  }
  static int synchronize(int* e) {
    log += std::string("sync(") + name(e) + ") ";
    return status();
  }
  static int elapsed(float* ms, int* a, int* b) {
    log += std::string("elapsed(") + name(a) + ", " + name(b) + ") | ";
    *ms = 1.5f * float(calls);
    return status();
  }
  static int destroy(int* e) {
    log += std::string("destroy(") + name(e) + ") ";
    return 0;
  }
  static void reset(int fail) { log.clear(), created = 0, calls = 0, fail_at = fail; }
};

std::vector<double> time_on_fake(int runs, int fail_at) {
  FakeRuntime::reset(fail_at);
  EventCalls<int*, int, int> calls{FakeRuntime::create, FakeRuntime::record, FakeRuntime::synchronize,
                                   FakeRuntime::elapsed, FakeRuntime::destroy};
  auto check = [](int status, const char* call) {
    if (status) throw Error(std::string("fake") + call + " failed");
  };
  return time_with_events(
      calls, 3, check, [] { FakeRuntime::log += "launch "; }, runs);
}

}  // namespace

TEST_CASE("time_with_events: two events for all runs, recorded around each launch, destroyed at the end") {
  std::vector<double> ms = time_on_fake(2, -1);
  // elapsed reports 1.5 × the calls before it: creates 0, 1; run 1: records 2, 3, sync 4,
  // elapsed 5; run 2: elapsed 9.
  CHECK(ms == std::vector<double>{1.5 * 5, 1.5 * 9});
  CHECK(FakeRuntime::log ==
        "create create "
        "record(start, stream 3) launch record(stop, stream 3) sync(stop) elapsed(start, stop) | "
        "record(start, stream 3) launch record(stop, stream 3) sync(stop) elapsed(start, stop) | "
        "destroy(start) destroy(stop) ");
}

TEST_CASE("time_with_events: a failing call is an error naming it; the events are still destroyed") {
  CHECK_THROWS_WITH_AS(time_on_fake(2, 4), doctest::Contains("fakeEventSynchronize failed"), Error);
  CHECK(FakeRuntime::log ==
        "create create record(start, stream 3) launch record(stop, stream 3) sync(stop) "
        "destroy(start) destroy(stop) ");
  // The stop event is never made: only the start event is destroyed.
  CHECK_THROWS_WITH_AS(time_on_fake(2, 1), doctest::Contains("fakeEventCreate failed"), Error);
  CHECK(FakeRuntime::log == "create create destroy(start) ");
  // No runs: the events are made and destroyed, nothing is launched.
  CHECK(time_on_fake(0, -1).empty());
  CHECK(FakeRuntime::log == "create create destroy(start) destroy(stop) ");
}

namespace {

// A host context whose kernel sleeps 2 ms and logs; synchronize logs too.
struct SleepyContext final : HostDeviceContext {
  std::string log;
  SleepyContext() : HostDeviceContext("sleepy") {}
  std::shared_ptr<void> load(const Artifact&, const Function&) override { return nullptr; }
  void launch(const std::shared_ptr<void>&, const Function&, const std::vector<LaunchArg>&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    log += "launch ";
  }
  void synchronize() override { log += "sync "; }
};

}  // namespace

TEST_CASE("DeviceContext::time_launches: wall clock around launch and synchronize, a time a run") {
  SleepyContext ctx;
  Function f;
  std::vector<double> ms = ctx.time_launches(nullptr, f, {}, 3);
  REQUIRE(ms.size() == 3);
  for (double t : ms) CHECK(t >= 2.0);  // the kernel's sleep is inside the timed span
  CHECK(ctx.log == "launch sync launch sync launch sync ");
}
