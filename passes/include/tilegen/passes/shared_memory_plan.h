// Shared-memory planning for code generators: where each shared buffer of a kernel lives in the
// block's shared memory, with buffers whose lifetimes do not overlap placed on top of each other.
//
//   kernel ... {                          top-level statement
//     shared A: f32[1024]; shared B: f32[1024]
//     <uses of A>                        0
//     barrier                            1
//     <uses of B>                        2
//   }
//   → A at 0, B at 0, 4096 bytes in all (a barrier separates A's last use from B's first).
//
// Lifetimes are intervals of the kernel body's top-level statements (a loop counts as one
// statement, so everything used inside it lives across its iterations). Two buffers may share
// bytes only when a top-level barrier lies between the last use of one and the first use of the
// other, so no thread still reads the old contents when another writes the new. Placement is
// greedy, largest first, each at the lowest 16-byte-aligned offset free of its conflicts.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tilegen/ir/stmt.h"

namespace tg {

struct SharedMemoryPlan {
  std::vector<std::pair<Buffer, int64_t>> offsets;  // every Shared buffer of the kernel → byte offset
  int64_t bytes = 0;                                // total, a multiple of 16
};

/// `bytes_of` gives each buffer's size (a target may pad rows). Throws tg::Error at the kernel's
/// location when the total exceeds `limit`, naming the largest buffers to shrink.
SharedMemoryPlan plan_shared_memory(const ir::Kernel& k,
                                    const std::function<int64_t(const Buffer&)>& bytes_of, int64_t limit,
                                    const std::string& device_name = "the device");

}  // namespace tg
