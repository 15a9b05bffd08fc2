// The shared loop of event-timed launches (see timed_launches.h).
#include "tilegen/timed_launches.h"

namespace tg {

std::vector<double> timed_launches(const LaunchTimer& timer, int runs) {
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    timer.record_start();
    timer.launch();
    timer.record_stop();
    ms.push_back(timer.elapsed_ms());
  }
  return ms;
}

}  // namespace tg
