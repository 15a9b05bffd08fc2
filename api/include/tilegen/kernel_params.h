// The parameter array of a CUDA-style kernel launch (cuLaunchKernel, hipModuleLaunchKernel),
// which reads each argument through a pointer: one slot of storage per argument, holding it in
// the C type the generated kernel declares for it.
//   tensor → its device pointer   f64 → double   other floats → float   i64 → long long   else → int
//
//   KernelParams params(args);
//   cuLaunchKernel(fn, gx, gy, gz, threads, 1, 1, shared, stream, params.data(), nullptr);
#pragma once
#include <vector>

#include "tilegen/plugin.h"

namespace tg {

class KernelParams {
 public:
  explicit KernelParams(const std::vector<LaunchArg>& args);
  // data() points into the slots: a copy would point into the original's.
  KernelParams(const KernelParams&) = delete;
  KernelParams& operator=(const KernelParams&) = delete;

  /// One pointer per argument, in order, to its slot.
  void** data() { return pointers_.data(); }

 private:
  union Slot {
    void* ptr;
    double f64;
    float f32;
    long long i64;
    int i32;
  };
  std::vector<Slot> slots_;
  std::vector<void*> pointers_;
};

}  // namespace tg
