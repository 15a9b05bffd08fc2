// keep_loops_rolled: a serial loop whose body holds a workgroup barrier and no matrix-unit mma
// gets the `rolled` hint (ir::For::rolled), which the emitter translates as the SPIR-V loop
// control DontUnroll. Device compilers otherwise unroll short constant loops whole; around
// barriers that buys a memory-bound loop nothing (the barrier orders its steps anyway) and costs
// compile time, steeply on drivers that split a shader at every barrier (Mesa's lavapipe turns
// each into a coroutine suspend point: 21 s → 6 s for softmax's default tiles). Loops around
// mmas (the K steps of a tile) are left to the driver, which schedules them best unrolled.
//
//   for i in serial(0 +: 4) { barrier; x[..] = X[..]; barrier; Y[..] = x[..] }
//     →  for i in serial(0 +: 4, rolled) { ... }
//
// A hint only: the interpreter, and every other target, run the loop as before.
#pragma once
#include "tilegen/ir/function.h"

namespace tg::vulkan {

Function keep_loops_rolled(const Function& f);

}  // namespace tg::vulkan
