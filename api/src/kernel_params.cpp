// The parameter array of a CUDA-style launch (see kernel_params.h).
#include "tilegen/kernel_params.h"

namespace tg {

KernelParams::KernelParams(const std::vector<LaunchArg>& args) : slots_(args.size()) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    Slot& s = slots_[i];
    if (a.is_tensor)
      s.ptr = a.device_ptr, pointers_.push_back(&s.ptr);
    else if (a.dtype == f64)
      s.f64 = a.scalar.f, pointers_.push_back(&s.f64);
    else if (a.dtype.is_float())
      s.f32 = float(a.scalar.f), pointers_.push_back(&s.f32);
    else if (a.dtype == i64)
      s.i64 = a.scalar.i, pointers_.push_back(&s.i64);
    else
      s.i32 = int(a.scalar.i), pointers_.push_back(&s.i32);
  }
}

}  // namespace tg
