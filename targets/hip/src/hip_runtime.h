// The HIP runtime (libamdhip64), opened with dlopen at probe time: device enumeration and a
// DeviceContext (hipMalloc, copies, hipModuleLoadData, hipModuleLaunchKernel, events) through the
// plugin interface. Never run by this project's CI: no AMD GPU exists on its machines.
#pragma once
#include <memory>

#include "tilegen/plugin.h"

namespace tg::hip {

/// The devices, or unavailable with the reason ("libamdhip64.so not found", "no AMD GPU").
ProbeResult probe_runtime();

/// Open device `index`: hipSetDevice, a stream, events for timing.
std::unique_ptr<DeviceContext> open_device(int index);

}  // namespace tg::hip
