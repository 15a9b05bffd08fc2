// prefetch_tiles and double_buffer_tiles: the K loop of a gemm, its next tiles' global loads
// issued into registers before this step's compute, then its tiles in two shared slots so one
// barrier a step suffices. Both passes rewrite IR the interpreter runs exactly (the race
// detector checks the barriers they keep and drop); the emitter moves each group copy as one
// uvec4 (tile_storage.h).
//
// prefetch_tiles: a serial loop that begins with group copies of tensor tiles into vector tiles,
// fenced by barriers (what partition_threads writes for `copy A[..ko..] -> A_shared`),
//   for ko in serial(0 +: n) {
//     barrier
//     for it in serial(0 +: 4) { let flat = it*128 + tx  for v in vectorized(0 +: 8) { A_shared[..] = A[.. ko
//     ..] } } barrier <compute on the tiles>
//   }
// gets a Local register buffer per copy nest (8 elements an iteration, ≤ 16 iterations), the
// copy nests unrolled, the loads of tile ko + 1 issued after the second barrier, so their
// latency overlaps the compute, and those of tile 0 before the loop:
//   for v in vectorized(0 +: 8) { A_shared_prefetch[0*8 + v] = A[.. ko = 0 ..] }       (each it)
//   for ko in serial(0 +: n) {
//     barrier
//     for v in vectorized(0 +: 8) { A_shared[.. it ..] = A_shared_prefetch[it*8 + v] }  (each it)
//     barrier
//     let ko_next: i32 = min(ko + 1, n - 1)
//     for v in vectorized(0 +: 8) { A_shared_prefetch[it*8 + v] = A[.. ko_next ..] }   (each it)
//     <compute>
//   }
// The tensors read are never written by the function, so reading them earlier reads the same
// values (the last step reloads tile n - 1, in range).
//
// double_buffer_tiles: such a prefetched loop whose body ends with a barrier, its tiles used
// nowhere else, gets them in two slots (a leading dimension of 2): step ko reads slot
// (ko - min) % 2 and fills the other one, so the leading barrier and the one after the stores go:
//   for v ... { A_shared[0, ..] = A_shared_prefetch[..] }       slot 0 ← tile 0
//   for v ... { A_shared_prefetch[..] = A[.. min(1, n - 1) ..] }  registers ← tile 1
//   barrier
//   for ko in serial(0 +: n) {
//     for v ... { A_shared[(ko + 1) % 2, ..] = A_shared_prefetch[..] }
//     let ko_next: i32 = min(ko + 2, n - 1)
//     for v ... { A_shared_prefetch[..] = A[.. ko_next ..] }
//     <compute reading A_shared[ko % 2, ..]>   (ends with a barrier)
//   }
// Every such loop of a kernel is doubled, or none where the slots would not fit the device's
// Workgroup memory.
#pragma once
#include "spirv_codegen.h"
#include "tilegen/ir/function.h"

namespace tg::vulkan {

Function prefetch_tiles(const Function& f, const Features& device);
Function double_buffer_tiles(const Function& f, const Features& device);

}  // namespace tg::vulkan
