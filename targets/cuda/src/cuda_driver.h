// The CUDA driver API, opened with dlopen("libcuda.so.1") at probe time: device enumeration and
// a DeviceContext (memory, copies, module load, launch, events) through the plugin interface.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tilegen/plugin.h"

namespace tg::cuda {

/// The devices, or unavailable with the reason ("libcuda.so.1 not found", "no CUDA device").
ProbeResult probe_driver();

/// Open device `index`: its primary context, a stream, and events for timing.
std::unique_ptr<DeviceContext> open_device(int index);

}  // namespace tg::cuda
