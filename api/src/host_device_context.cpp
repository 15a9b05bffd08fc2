#include "tilegen/host_device_context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "tilegen/env.h"
#include "tilegen/ir/interpreter.h"

namespace tg {

void* allocate_host_memory(std::size_t bytes) {
  constexpr std::size_t kLine = 64, kHuge = std::size_t(2) << 20;
  if (bytes > std::size_t(-1) - kHuge) return nullptr;
  if (bytes < kHuge || !env::flag("TILEGEN_HUGE_PAGES", true))
    return std::aligned_alloc(kLine, (std::max<std::size_t>(bytes, 1) + kLine - 1) / kLine * kLine);
  const std::size_t whole = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, whole);
#ifdef __linux__
  // Advice only: where the kernel has transparent huge pages off ("never") it changes nothing.
  if (p) madvise(p, whole, MADV_HUGEPAGE);
#endif
  return p;
}

void release_host_memory(void* p) { std::free(p); }

void* HostDeviceContext::allocate(std::size_t bytes) {
  void* p = allocate_host_memory(bytes);
  if (!p) throw Error(target_ + ": out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void HostDeviceContext::release(void* ptr) { release_host_memory(ptr); }

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
