// insert_prefetches: software pipelining of tile copies on the cpu, as IR. While a pipelined
// loop's gemm computes iteration ko, its micro-kernel prefetches the Global lines that iteration
// ko + 1 copies into Shared tiles, a few lines before each of its whole micro-tiles (its steps,
// micro_kernel.h), so that the next copies find them in the caches. A GPU overlaps the same
// copies with cp.async and stages; the cpu copies synchronously, and a tile's rows (192 rows of
// 256 bytes at an 8 KiB stride) defeat the hardware prefetchers: every row is a new stream and a
// new page. Prefetches never fault and change no value. It runs last in the cpu pipeline, on the
// loops the code generator sees (after fuse_parallel_loops):
//
//   for ko in pipelined(0 +: 32, stages=3) {
//     for c0 in parallel(0 +: 128) { for c1 in parallel(0 +: 32) {
//       A_shared[c0, c1] = A[by*128 + c0, ko*32 + c1] } }              (f16: 1 line a row)
//     for c0 in parallel(0 +: 32) { for c1 in parallel(0 +: 128) {
//       B_shared[c0, c1] = B[ko*32 + c0, bx*128 + c1] } }              (4 lines a row)
//     gemm(A_shared, B_shared -> C_local)                            (42 whole micro-tiles)
//   }
// → the gemm gets, for each such copy, q = ceil(lines / steps) prefetches a step: step t takes
//   lines l = t·q .. t·q + q - 1, line l being row l / lines_per_row and column
//   l % lines_per_row · (64 bytes / element bytes) of the copy, in iteration ko + 1:
//     gemm(A_shared, B_shared -> C_local) interleave t in steps(42) {
//       prefetch read A[by*128 + t*4, (ko + 1)*32] locality=3
//       ... (4 lines of A, then 4 of B)
//       prefetch read B[(ko + 1)*32 + (t*4 + 3) / 4, bx*128 + (t*4 + 3) % 4*32] locality=3
//     }
// A copy counts when it is a parallel nest of two loops with constant extents around one store
// into a Shared buffer whose value loads a Global buffer (not packed), directly in the pipelined
// loop's body beside a gemm (or ifs choosing among gemms: trim_edge_tiles); every micro-kernel
// gemm the loop runs (nested loops included, a nested pipelined loop with copies of its own
// excepted) gets the hints. Gemms in AMX tiles have no
// steps and get none; with gemm=plain no gemm is left to get any. The last iteration prefetches
// past the tensors' ends, and the last steps past the tiles' rows: harmless for a prefetch.
#pragma once
#include "micro_kernel.h"
#include "tilegen/ir/function.h"

namespace tg::cpu {

Function insert_prefetches(const Function& f, const EmitOptions& opt);

}  // namespace tg::cpu
