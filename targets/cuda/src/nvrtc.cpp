#include "nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <mutex>

#include "device_header.h"
#include "tilegen/common/vendor_library.h"
#include "tilegen/ir/error.h"

namespace tg::cuda {

namespace {

struct Nvrtc {
  VendorLibrary lib{{"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13"},
                    "install the CUDA toolkit's NVRTC or add it to LD_LIBRARY_PATH"};
  std::string error;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;

  Nvrtc() {
    if (lib.ok()) load_builtins_beside();
    const char* advice = "use NVRTC from CUDA 11.1 or later";
    lib.bind(create, "nvrtcCreateProgram", advice), lib.bind(compile, "nvrtcCompileProgram", advice);
    lib.bind(log_size, "nvrtcGetProgramLogSize", advice), lib.bind(log, "nvrtcGetProgramLog", advice);
    lib.bind(ptx_size, "nvrtcGetPTXSize", advice), lib.bind(ptx, "nvrtcGetPTX", advice);
    lib.bind(cubin_size, "nvrtcGetCUBINSize", advice), lib.bind(cubin, "nvrtcGetCUBIN", advice);
    lib.bind(destroy, "nvrtcDestroyProgram", advice), lib.bind(error_string, "nvrtcGetErrorString", advice);
    error = lib.error();
  }
  // NVRTC dlopens libnvrtc-builtins.so.13.0 by name when it compiles; where the toolkit's lib64
  // is not on the library path (found through the fallback path above), that fails with
  // NVRTC_ERROR_BUILTIN_OPERATION_FAILURE. Loaded first from libnvrtc's own folder, the name
  // resolves to the loaded library.
  void load_builtins_beside() {
    if (void* b = dlopen("libnvrtc-builtins.so.13.0", RTLD_NOW | RTLD_LOCAL)) {
      builtins = b;
      return;
    }
    char origin[4096] = {};
    if (dlinfo(lib.handle(), RTLD_DI_ORIGIN, origin) != 0) return;
    const std::string path = std::string(origin) + "/libnvrtc-builtins.so.13.0";
    builtins = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  void* builtins = nullptr;  // kept loaded for the process's life, as lib is
};

Nvrtc& nvrtc() {
  static Nvrtc n;
  return n;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  Nvrtc& n = nvrtc();
  if (why) *why = n.error;
  return n.error.empty();
}

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, const std::string& arch) {
  Nvrtc& n = nvrtc();
  if (!n.error.empty()) throw Error("cuda: " + n.error);
  const char* header = device_header();
  const char* header_name = "tilegen_device.h";
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = n.create(&prog, source.c_str(), (name + ".cu").c_str(), 1, &header, &header_name);
      r != NVRTC_SUCCESS)
    throw Error(std::string("cuda: nvrtcCreateProgram failed: ") + n.error_string(r));
  std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "--std=c++17", "--fmad=false", "-default-device"};
  nvrtcResult r = n.compile(prog, 4, opts);
  NvrtcOutput out;
  std::size_t size = 0;
  n.log_size(prog, &size);
  out.log.resize(size);
  if (size) n.log(prog, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (r != NVRTC_SUCCESS) {
    n.destroy(&prog);
    throw Error("cuda: NVRTC could not compile " + name + " for " + arch + " (" + n.error_string(r) +
                "); this is a tilegen code-generation bug, please report it with the log:\n" + out.log);
  }
  n.ptx_size(prog, &size);
  out.ptx.resize(size);
  n.ptx(prog, out.ptx.data());
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  n.cubin_size(prog, &size);
  out.cubin.resize(size);
  if (size) n.cubin(prog, reinterpret_cast<char*>(out.cubin.data()));
  n.destroy(&prog);
  return out;
}

}  // namespace tg::cuda
