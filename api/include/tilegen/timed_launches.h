// Timing repeated launches between a start and a stop mark: the loop that DeviceContext's
// wall-clock default and the GPU plugins' device events share. A caller supplies the steps in
// its own terms; the loop, its order and the events' lifetime live here.
//
//   // a CUDA-style runtime (the CUDA driver, HIP): its event calls, as the plugin loaded them
//   EventCalls<hipEvent_t, hipStream_t, hipError_t> calls{rt.hipEventCreate, rt.hipEventRecord,
//       rt.hipEventSynchronize, rt.hipEventElapsedTime, rt.hipEventDestroy};
//   return time_with_events(calls, stream, check, [&] { launch(loaded, lowered, args); }, runs);
#pragma once
#include <functional>
#include <vector>

namespace tg {

/// The steps of one timed launch. Each throws tg::Error when the runtime fails.
struct LaunchTimer {
  std::function<void()> record_start;  // mark the start (on the launch stream)
  std::function<void()> launch;        // enqueue the kernel (every entry of it)
  std::function<void()> record_stop;   // mark the stop after it
  std::function<double()> elapsed_ms;  // wait for the stop mark; milliseconds from start to stop
};

/// Milliseconds of each of `runs` launches, in run order (none for runs ≤ 0). Each run is read
/// back before the next starts, so no run's time includes another's:
///   runs = 2:  start launch stop elapsed | start launch stop elapsed  → {t0, t1}
std::vector<double> timed_launches(const LaunchTimer& timer, int runs);

/// The event calls of a CUDA-style runtime, each returning the runtime's status.
template <class Event, class Stream, class Status>
struct EventCalls {
  std::function<Status(Event*)> create;  // a new event (CUDA: with its default flags)
  Status (*record)(Event, Stream);
  Status (*synchronize)(Event);
  Status (*elapsed_ms)(float*, Event start, Event stop);
  Status (*destroy)(Event);
};

/// timed_launches() with a start and a stop event recorded on `stream`, created once for all
/// runs and destroyed however the runs end. `check(status, call)` throws tg::Error for a failing
/// status; `call` is the call's name without the runtime's prefix ("EventRecord").
template <class Event, class Stream, class Status, class Check>
std::vector<double> time_with_events(const EventCalls<Event, Stream, Status>& calls, Stream stream,
                                     const Check& check, std::function<void()> launch, int runs) {
  Event start{}, stop{};
  auto destroy = [&] {
    for (Event e : {start, stop})
      if (e) calls.destroy(e);
  };
  LaunchTimer timer;
  timer.record_start = [&] { check(calls.record(start, stream), "EventRecord"); };
  timer.launch = std::move(launch);
  timer.record_stop = [&] { check(calls.record(stop, stream), "EventRecord"); };
  timer.elapsed_ms = [&] {
    float ms = 0;
    check(calls.synchronize(stop), "EventSynchronize");
    check(calls.elapsed_ms(&ms, start, stop), "EventElapsedTime");
    return double(ms);
  };
  std::vector<double> ms;
  try {
    check(calls.create(&start), "EventCreate");
    check(calls.create(&stop), "EventCreate");
    ms = timed_launches(timer, runs);
  } catch (...) {
    destroy();
    throw;
  }
  destroy();
  return ms;
}

}  // namespace tg
