// The hip target's device-header library (see device_header.cpp).
#pragma once

namespace tg::hip {

/// The text of "tilegen_device.h", compiled with every generated source (by hiprtc, or by
/// clang's HIP device compilation with -DTG_HIP_STANDALONE, where no ROCm headers exist).
const char* device_header();

}  // namespace tg::hip
