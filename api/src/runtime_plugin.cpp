// The out-of-line defaults of the plugin interface (plugin.h).
#include <chrono>

#include "tilegen/ir/error.h"
#include "tilegen/plugin.h"
#include "tilegen/timed_launches.h"

namespace tg {

// Wall clock around launch + synchronize, one run at a time. Targets with device timers (CUDA
// events, Vulkan timestamps) override this to leave out the host's launch overhead.
std::vector<double> DeviceContext::time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                                 const std::vector<LaunchArg>& args, int runs) {
  std::chrono::steady_clock::time_point start, stop;
  LaunchTimer timer;
  timer.record_start = [&] { start = std::chrono::steady_clock::now(); };
  timer.launch = [&] { launch(loaded, lowered, args); };
  timer.record_stop = [&] {
    synchronize();
    stop = std::chrono::steady_clock::now();
  };
  timer.elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(stop - start).count(); };
  return timed_launches(timer, runs);
}

void DeviceContext::check_pointer(const void*, std::size_t) {
  throw Error("its buffers are handles it makes itself, not addresses: it cannot take memory it did not "
              "allocate; allocate with Target::alloc and copy in instead");
}

void DeviceContext::use_stream(const std::optional<Stream>& stream) {
  if (stream)
    throw Error(
        "it has no streams, queues or command buffers of the application's to launch on; launch "
        "without a stream");
}

std::unique_ptr<DeviceContext> TargetPlugin::adopt_vulkan(const VulkanDevice&, TargetInfo&) {
  throw Error("target '" + name() +
              "' does not run on an application's Vulkan device; that is the vulkan target");
}

TargetInfo TargetPlugin::info_for_arch(const std::string& arch) {
  throw Error("target '" + name() + "' cannot generate code for architecture '" + arch +
              "' without a device: it knows no architecture by name; run on a machine with the device");
}

}  // namespace tg
