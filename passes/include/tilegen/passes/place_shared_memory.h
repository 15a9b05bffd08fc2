// place_shared_memory: the GPU source targets' plan of each kernel's shared memory, written into
// the IR (the last pass of cuda and hip). Every shared buffer gets the byte range it occupies in
// the block's one shared allocation, padding included (gpu_layout.h); buffers whose lifetimes a
// barrier separates share bytes (shared_memory_plan.h says how lifetimes are found):
//
//   shared K_s: f16[64, 64]                 shared K_s: f16[64, 64] placed 0 +: 9216
//   shared P_s: f16[64, 64]          →      shared P_s: f16[64, 64] placed 9216 +: 9216
//   shared stats: f32[64]                   shared stats: f32[64] placed 0 +: 256
//
// The emitter only declares each buffer at its offset. The interpreter checks the plan: a read
// of an element after another buffer wrote bytes they share is an error, so a lifetime the plan
// got wrong fails the lowered-IR checks instead of giving wrong answers on a GPU. A kernel whose
// buffers do not fit the target's shared memory is a tg::Error naming the largest buffers.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

Function place_shared_memory(const Function& f, const TargetInfo& info);

}  // namespace tg
