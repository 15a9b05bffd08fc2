// unroll_hints: the loop controls the SPIR-V emitter writes, decided here as IR.
//  - A serial loop whose body holds a workgroup barrier and no matrix-unit mma gets the `rolled`
//    hint (ir::For::rolled), emitted as the loop control DontUnroll. Device compilers otherwise
//    unroll short constant loops whole; around barriers that buys a memory-bound loop nothing
//    (the barrier orders its steps anyway) and costs compile time, steeply on drivers that split
//    a shader at every barrier (Mesa's lavapipe turns each into a coroutine suspend point:
//    21 s → 6 s for softmax's default tiles).
//  - A serial loop of at most kMaxUnrolledMmaSteps constant iterations around mmas (the K steps
//    of a tile) becomes `unrolled`, emitted as the loop control Unroll: the driver then schedules
//    the next step's matrix loads beside this step's MulAdds.
//
//   for i in serial(0 +: 4) { barrier; x[..] = X[..]; barrier; Y[..] = x[..] }
//     →  for i in serial(0 +: 4, rolled) { ... }
//   for kk in serial(0 +: 2) { ... mma "coopmat_16x16x16_f16_f32" ... }
//     →  for kk in unrolled(0 +: 2) { ... }
//
// Hints only: the interpreter, and every other target, run the loops as before.
#pragma once
#include <cstdint>

#include "tilegen/ir/function.h"

namespace tg::vulkan {

inline constexpr int64_t kMaxUnrolledMmaSteps = 8;

Function unroll_hints(const Function& f);

}  // namespace tg::vulkan
