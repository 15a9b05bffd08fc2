// A DeviceContext whose device memory is host memory: the interpreter target and the cpu plugin
// share it, and so can any target that runs on the host. A subclass adds load() and launch().
//
//   class MyCpuContext final : public tg::HostDeviceContext {
//     std::shared_ptr<void> load(const Artifact&, const Function&) override;
//     void launch(const std::shared_ptr<void>&, const Function&, const std::vector<LaunchArg>&) override;
//   };
#pragma once
#include <string>
#include <vector>

#include "tilegen/plugin.h"

namespace tg {

class HostDeviceContext : public DeviceContext {
 public:
  /// `target` names the target in error messages ("cpu: out of host memory ...").
  explicit HostDeviceContext(std::string target) : target_(std::move(target)) {}

  /// 64-byte aligned (a cache line, an AVX-512 vector), rounded up to whole lines. A zero-byte
  /// tensor still gets a distinct, non-null pointer.
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
