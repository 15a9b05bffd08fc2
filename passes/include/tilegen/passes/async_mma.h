// The shared-memory side of asynchronous matrix units (MatrixUnit::async: Hopper's wgmma), for
// the GPU source targets; the passes leave a function without async mmas unchanged.
//
// swizzle_shared_tiles: a shared tile an async mma reads as an operand gets the XOR-swizzled
// layout the unit's shared-memory descriptors read (`layout=swizzle(bits)`, Layout in buffer.h),
// replacing the padding pad_shared_tiles gave it. Its rows are cut into strips of W = 16·2^bits
// bytes (W = 128 where a row has 128 bytes or more, else the row), each strip stored apart:
//
//   shared A_s: f16[3, 128, 32] layout=padded(8)   →   shared A_s: f16[3, 128, 32] layout=swizzle(2)
//   shared B_s: f16[3, 32, 128] layout=padded(8)   →   shared B_s: f16[3, 32, 128] layout=swizzle(3)
//
// overlap_async_mma: a pipelined loop whose iteration fills a later slot, then issues async mmas
// on this one and waits for them (`mma_wait 0`) keeps one iteration's mmas in flight instead: the
// fills move after the wait and its barrier, the wait lets the newest group run on (`mma_wait 1`:
// the previous iteration's mmas, the last readers of the slot the fills overwrite, are complete,
// and the barrier after it makes that true of every warpgroup), the async copies' wait loses the
// group the fills no longer add before it, and `mma_wait 0` after the loop completes the last:
//
//   for k pipelined(stages=3) {            for k pipelined(stages=3) {
//     fills(k + 2 → slot (k + 2) % 3)        mma_fence; async_wait 1; barrier
//     mma_fence; async_wait 2; barrier  →    mmas(slot k % 3); mma_wait 1; barrier
//     mmas(slot k % 3); mma_wait 0           fills(k + 2 → slot (k + 2) % 3)
//     barrier                              }
//   }                                      mma_wait 0
//
// The tensor cores then run iteration k's mmas while the block waits for the barrier, issues the
// fills and waits for the next tile. Where the range is constant and the fills' guards (a later
// tile exists) hold for the first iterations and fail for the rest, the loop is split there: the
// first part fills unguarded, the last S − 1 iterations drain without fills or the barrier before
// them (a branch around code while wgmmas are in flight makes ptxas serialize them: C7514).
// The fills may be cp.async's or the copy engine's (bulk_copies: X is then the slot's
// mbarrier_wait and the mmas, without a barrier: each thread waits for the copies itself, and
// barrier thinning orders a bulk copy by that wait, stmt_build.h). Loops whose other statements
// write shared memory or touch the accumulators stay as they are.
//
// fence_async_proxy: a `proxy_fence` (ir::MmaSync) before each barrier that a thread's writes
// through the generic proxy may precede since its last fence, where the async proxy reads them
// next: its stores into a tile async mmas read (async copies count where an async_wait lands
// them), and mbarrier_init (the copy engine completes bulk copies on the barrier); bulk copies
// write through the async proxy themselves and need none:
//
//   async_wait 1; barrier            →   async_wait 1; proxy_fence; barrier
//   mma_wait 1; barrier; fills(k+2)  →   unchanged (nothing written since the fence before the mmas)
//
// The interpreter checks both ends: an async mma reading an element whose writer did not fence
// after writing it fails, naming the element and the statements.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// The swizzle (1, 2, 3: 32-, 64-, 128-byte strips) of a shared tile whose rows are `row_bytes`
/// long, rows a multiple of 8: 32 → 1, 64 → 2, a multiple of 128 → 3; 0 where none fits (the
/// tile cannot be an async mma's operand).
int swizzle_bits_for(int64_t row_bytes, int64_t rows);
/// The same for a shared tile's last two dimensions (0 for a packed dtype or a symbolic shape):
/// the swizzle swizzle_shared_tiles gives the tile where an async mma reads it.
int swizzle_bits_of(const ir::BufferNode& b);

Function swizzle_shared_tiles(const Function& f, const TargetInfo& info);
Function overlap_async_mma(const Function& f, const TargetInfo& info);
Function fence_async_proxy(const Function& f, const TargetInfo& info);

}  // namespace tg
