// NVRTC, opened with dlopen on first use (libnvrtc.so.13, then libnvrtc.so): CUDA C++ → PTX and
// cubin for one architecture. Compile errors become tg::Error with NVRTC's log attached.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg::cuda {

struct NvrtcOutput {
  std::string ptx;
  std::vector<uint8_t> cubin;
  std::string log;
};

/// Whether NVRTC can be loaded; `why` says why not.
bool nvrtc_available(std::string* why = nullptr);

/// Compile `source` (with the device-header library) for `arch` ("sm_80", "sm_90", "sm_90a").
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, const std::string& arch);

}  // namespace tg::cuda
