// KernelParams: the parameter array the cuda and hip plugins launch with. Each argument sits in
// its own slot, in the C type the generated kernel declares for it.
#include <doctest/doctest.h>

#include "tilegen/kernel_params.h"

using namespace tg;

namespace {

LaunchArg scalar(DType t, Scalar v) {
  LaunchArg a;
  a.is_tensor = false, a.dtype = t, a.scalar = v;
  return a;
}

}  // namespace

TEST_CASE("KernelParams: tensors as pointers, f64 as double, other floats as float, i64 as long long, else int") {
  int device_memory = 0;
  LaunchArg tensor;
  tensor.device_ptr = &device_memory, tensor.dtype = f16;
  std::vector<LaunchArg> args = {tensor,
                                 scalar(f64, Scalar::of_float(0.1)),
                                 scalar(f32, Scalar::of_float(0.1)),
                                 scalar(f16, Scalar::of_float(2.5)),
                                 scalar(i64, Scalar::of_int(int64_t(1) << 40)),
                                 scalar(i32, Scalar::of_int(-3)),
                                 scalar(u32, Scalar::of_int(7))};
  KernelParams params(args);
  void** p = params.data();
  CHECK(*static_cast<void**>(p[0]) == &device_memory);
  CHECK(*static_cast<double*>(p[1]) == 0.1);
  CHECK(*static_cast<float*>(p[2]) == 0.1f);  // rounded to float: what the kernel reads
  CHECK(*static_cast<float*>(p[3]) == 2.5f);
  CHECK(*static_cast<long long*>(p[4]) == (1ll << 40));
  CHECK(*static_cast<int*>(p[5]) == -3);
  CHECK(*static_cast<int*>(p[6]) == 7);
  // A slot each: writing one argument's slot leaves the others alone.
  for (std::size_t i = 0; i < args.size(); ++i)
    for (std::size_t j = i + 1; j < args.size(); ++j) CHECK(p[i] != p[j]);
}
