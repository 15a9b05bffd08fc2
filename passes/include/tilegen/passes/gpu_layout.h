// Where the elements of a buffer lie in the storage the GPU source targets (cuda, hip) give it:
// row-major, rows of a `layout=padded(P)` shared tile P elements longer (the pass
// pad_shared_tiles decides which tiles: pad_shared_tiles.h). Passes that prove facts about addresses
// (vector_move.h, use_ldmatrix.h) and the emitter that writes them (targets/common) both read it.
#pragma once
#include <cstdint>
#include <vector>

#include "tilegen/ir/buffer.h"

namespace tg::gpu {

/// Element strides of each dimension in storage.
std::vector<int64_t> strides_of(const ir::BufferNode& b);
/// Elements of storage a buffer occupies (padding included).
int64_t stored_elements(const ir::BufferNode& b);

}  // namespace tg::gpu
