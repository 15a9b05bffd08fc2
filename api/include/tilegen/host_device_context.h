// A DeviceContext whose device memory is host memory: the interpreter target and the cpu plugin
// share it, and so can any target that runs on the host. A subclass adds load() and launch().
//
//   class MyCpuContext final : public tg::HostDeviceContext {
//     std::shared_ptr<void> load(const Artifact&, const Function&) override;
//     void launch(const std::shared_ptr<void>&, const Function&, const std::vector<LaunchArg>&) override;
//   };
#pragma once
#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "tilegen/plugin.h"

namespace tg {

/// Host memory as the host targets hand it out for tensors: 64-byte aligned, rounded up to whole
/// lines; from 2 MiB up, 2 MiB aligned, rounded up to whole 2 MiB and (Linux) marked for
/// transparent huge pages, so that a tile copy walking a large matrix's rows does not miss the
/// TLB at every row (TILEGEN_HUGE_PAGES=0: 4 KiB pages). Null when the host is out of memory.
/// Zero bytes still get a distinct pointer. Release with release_host_memory.
///   allocate_host_memory(16 << 20) → 2 MiB-aligned, madvise(MADV_HUGEPAGE) over 16 MiB
void* allocate_host_memory(std::size_t bytes);
void release_host_memory(void* p);

/// allocate_host_memory for standard containers: std::vector<float, HostAllocator<float>> holds
/// its elements in memory like a host target's tensors (benchmark peers use it, so both sides of
/// a comparison get the same pages).
template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = allocate_host_memory(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { release_host_memory(p); }
  template <class U>
  bool operator==(const HostAllocator<U>&) const {
    return true;
  }
};

class HostDeviceContext : public DeviceContext {
 public:
  /// `target` names the target in error messages ("cpu: out of host memory ...").
  explicit HostDeviceContext(std::string target) : target_(std::move(target)) {}

  /// allocate_host_memory: 64-byte aligned (a cache line, an AVX-512 vector), large tensors on
  /// huge pages. A zero-byte tensor still gets a distinct, non-null pointer.
  void* allocate(std::size_t bytes) override;
  void release(void* ptr) override;
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  /// Launches return when the work is done.
  void synchronize() override {}
  /// Host memory: a launch runs on HostTensor arguments in place, and any host pointer wraps.
  MemorySpace memory_space() const override { return MemorySpace::Host; }
  /// The compiled host kernels (cpu) load and store elements at their natural alignment only;
  /// vectors and AMX tiles are unaligned accesses. So the element's own size is all they need.
  std::size_t pointer_alignment() const override { return 1; }
  /// Any host pointer: the runtime cannot tell a valid range from a dangling one.
  void check_pointer(const void*, std::size_t) override {}
  /// Overwrites a buffer larger than the last-level cache, so a timed run reads its inputs from
  /// memory.
  void flush_l2() override;

 protected:
  /// Runs `f` on the reference interpreter over launch arguments whose device pointers are
  /// host pointers (this context's). The access record is left to the runtime, which reads it
  /// after copying host tensors back.
  ///   f = add(A: f32[64] global, B: f32[64] global), [{ptr, [64], f32}, {ptr, [64], f32}]
  ///   → tg::interpret(add, [HostArg{ptr, [64], f32}, HostArg{ptr, [64], f32}])
  static void interpret_launch(const Function& f, const std::vector<LaunchArg>& args);

 private:
  std::string target_;
};

}  // namespace tg
