// The cuda target's device-header library (see device_header.cpp).
#pragma once

namespace tg::cuda {

/// The text of "tilegen_device.h", handed to NVRTC with every generated source.
const char* device_header();

}  // namespace tg::cuda
