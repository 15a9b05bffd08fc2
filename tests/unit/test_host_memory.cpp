// allocate_host_memory: the host targets' tensor memory (cpu, interp) and benchmark peers' buffers.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

// The VmFlags of the mapping holding p (/proc/self/smaps), or "?" where there is none.
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-'))
      inside = address(p) >= lo && address(p) < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line.substr(8) + " ";
  }
  return "?";
}

// TILEGEN_HUGE_PAGES at its default (unset) inside the scope, restored after.
struct DefaultHugePages {
  std::string old;
  bool had = false;
  DefaultHugePages() {
    if (const char* v = std::getenv("TILEGEN_HUGE_PAGES")) old = v, had = true;
    ::unsetenv("TILEGEN_HUGE_PAGES");
  }
  ~DefaultHugePages() {
    if (had) ::setenv("TILEGEN_HUGE_PAGES", old.c_str(), 1);
  }
};

}  // namespace

TEST_CASE("host memory: lines for small tensors, whole 2 MiB pages for large ones, writable to the end") {
  DefaultHugePages defaults;
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

TEST_CASE("host memory: a large tensor is advised onto huge pages, unless TILEGEN_HUGE_PAGES=0") {
  DefaultHugePages defaults;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  if (mode.empty()) {
    MESSAGE("no transparent huge pages in this kernel");
    return;
  }
  const std::size_t bytes = std::size_t(8) << 20;
  // The advice shows as the mapping's "hg" flag (MADV_HUGEPAGE) whatever the kernel then grants.
  void* p = allocate_host_memory(bytes);
  REQUIRE(p);
  CHECK(vm_flags_at(p).find(" hg ") != std::string::npos);
  ::setenv("TILEGEN_HUGE_PAGES", "0", 1);
  void* q = allocate_host_memory(bytes);
  ::unsetenv("TILEGEN_HUGE_PAGES");  // the default again (the destructor restores the caller's)
  REQUIRE(q);
  CHECK(vm_flags_at(q).find(" hg ") == std::string::npos);
  CHECK(vm_flags_at(q) != "?");
  release_host_memory(p);
  release_host_memory(q);
  DeviceBuffer t = Target::get("interp").alloc({1024, 1024, 4}, f32);  // 16 MiB, the interp target's
  CHECK(address(t.device_ptr()) % (std::size_t(2) << 20) == 0);
  CHECK(vm_flags_at(t.device_ptr()).find(" hg ") != std::string::npos);
}
