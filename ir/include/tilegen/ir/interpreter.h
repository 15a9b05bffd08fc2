// The reference interpreter: executes a function at any stage of lowering on host memory.
// Correctness over speed; it is the oracle of the conformance suite and the target `interp`.
#pragma once
#include <cstdint>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg {

/// One argument: a tensor (host pointer, its shape and dtype) or a scalar value.
struct HostArg {
  void* data = nullptr;           // tensors
  std::vector<int64_t> shape;     // tensors
  DType dtype = f32;
  Scalar scalar;                  // scalars
  bool is_tensor = true;
};

struct InterpretOptions {
  /// Check shared-memory races between barriers (a read and a write, or two writes, of one
  /// element by different threads in one barrier interval): a race is a tg::Error.
  bool detect_races = true;
  int num_threads = 0;  // host threads over grid blocks; 0 = hardware concurrency
  /// A function with checked accesses (check_bounds=all) records its first out-of-range access
  /// in its access record argument, as every target does; interpret() then throws the report
  /// (access_check.h) when the launch is over, unless the caller reads the record itself (the
  /// runtime, which copies host tensors back first).
  bool report_access_record = true;
};

/// Arguments in the order of f.params, sizes omitted (they are bound from tensor shapes).
/// Throws tg::Error on a mismatch, an out-of-bounds access, a race, or an unbound size.
void interpret(const Function& f, const std::vector<HostArg>& args, const InterpretOptions& opt = {});

}  // namespace tg
