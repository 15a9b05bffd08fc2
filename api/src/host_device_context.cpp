#include "tilegen/host_device_context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tilegen/ir/interpreter.h"

namespace tg {

void* HostDeviceContext::allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
  if (!p) throw Error(target_ + ": out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void HostDeviceContext::release(void* ptr) { std::free(ptr); }

void HostDeviceContext::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void HostDeviceContext::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void HostDeviceContext::interpret_launch(const Function& f, const std::vector<LaunchArg>& args) {
  std::vector<HostArg> host;
  host.reserve(args.size());
  for (const LaunchArg& a : args) host.push_back({a.device_ptr, a.shape, a.dtype, a.scalar, a.is_tensor});
  InterpretOptions opt;
  opt.report_access_record = false;
  interpret(f, host, opt);
}

void HostDeviceContext::flush_l2() {
  // 64 MiB: more than the last-level cache of the hosts this runs on (a shared L3 slice).
  static std::vector<char> junk(std::size_t(64) << 20);
  static char v = 0;
  std::memset(junk.data(), ++v, junk.size());
}

}  // namespace tg
