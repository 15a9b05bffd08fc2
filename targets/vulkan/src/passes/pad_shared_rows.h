// pad_shared_rows: the rows of vector tiles (Shared tiles written only by 16-byte group copies,
// tile_storage.h) that are a multiple of 64 bytes long get 16 bytes of padding, a
// `layout=padded(8)`, so the rows a cooperative-matrix load or a warp's column slice reads
// together start in different banks. It pads every such tile of a kernel, or none where the
// padded tiles would not fit the device's Workgroup memory (tile_storage.h counts the bytes as
// the emitter declares them). The interpreter indexes logically, so the padding changes no
// value; the emitter lays rows row_pitch() apart.
//
//   shared A_shared: f16[128, 32]      →   shared A_shared: f16[128, 32] layout=padded(8)
#pragma once
#include "spirv_codegen.h"
#include "tilegen/ir/function.h"

namespace tg::vulkan {

Function pad_shared_rows(const Function& f, const Features& device);

}  // namespace tg::vulkan
