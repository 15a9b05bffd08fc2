// allocate_host_memory: the host targets' tensor memory (cpu, interp) and benchmark peers' buffers.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tilegen/host_device_context.h"
#include "tilegen/tilegen.h"

using namespace tg;

namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The kB of p's mapping backed by transparent huge pages (/proc/self/smaps), or -1 where unknown.
long huge_kb_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-'))
      inside = address(p) >= lo && address(p) < hi;
    else if (inside && line.rfind("AnonHugePages:", 0) == 0)
      return std::stol(line.substr(14));
  }
  return -1;
}

}  // namespace

TEST_CASE("host memory: lines for small tensors, whole 2 MiB pages for large ones, writable to the end") {
  std::set<std::uintptr_t> seen;
  for (std::size_t bytes :
       {std::size_t(0), std::size_t(1), std::size_t(63), std::size_t(64), std::size_t(4097),
        (std::size_t(2) << 20) - 1, std::size_t(2) << 20, (std::size_t(5) << 20) + 3}) {
    INFO(bytes);
    void* p = allocate_host_memory(bytes);
    REQUIRE(p);
    CHECK(address(p) % 64 == 0);
    if (bytes >= (std::size_t(2) << 20)) CHECK(address(p) % (std::size_t(2) << 20) == 0);
    std::memset(p, 0x5a, bytes);            // every byte asked for is there (ASan checks the end)
    CHECK(seen.insert(address(p)).second);  // zero bytes too get a pointer of their own (all live)
  }
  for (std::uintptr_t p : seen) release_host_memory(reinterpret_cast<void*>(p));
  std::vector<float, HostAllocator<float>> v(3 << 20, 1.0f);  // 12 MiB through a container
  CHECK(address(v.data()) % (std::size_t(2) << 20) == 0);
  CHECK(v.back() == 1.0f);
}

TEST_CASE("host memory: a large cpu or interp tensor gets huge pages where the kernel grants them") {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  // "always [madvise] never": advice is taken in the first two modes only.
  if (mode.find("[never]") != std::string::npos || mode.empty()) {
    MESSAGE("transparent huge pages are off here: " << mode);
    return;
  }
  const std::size_t bytes = std::size_t(8) << 20;
  char* p = static_cast<char*>(allocate_host_memory(bytes));
  REQUIRE(p);
  for (std::size_t i = 0; i < bytes; i += 4096) p[i] = char(i);
  const long kb = huge_kb_at(p);
  // The kernel may still fall back to 4 KiB pages when it finds no free 2 MiB frame; what must
  // hold is that the advice reached it, which shows as huge pages on an unfragmented test host.
  if (kb == 0) MESSAGE("no huge page granted (memory fragmented?) for an 8 MiB block");
  CHECK(kb != -1);
  release_host_memory(p);
  DeviceBuffer t = Target::get("interp").alloc({1024, 1024, 4}, f32);  // 16 MiB, the interp target's
  CHECK(address(t.device_ptr()) % (std::size_t(2) << 20) == 0);
}
