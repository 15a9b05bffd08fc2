// How the vulkan target stores Shared tiles, as the passes that plan Workgroup memory
// (pad_shared_rows) and the code generator that declares it (spirv/kernel_statements.cpp) both
// need it: one rule in one place, so a pass never decides on bytes the emitter counts otherwise.
//
// A group copy is partition_threads' innermost copy loop of 8 16-bit elements, contiguous and
// 16-byte aligned on both sides, which the emitter moves as one uvec4:
//   for v in vectorized(0 +: 8) { let c1 = flat % 4 * 8 + v { A_shared[c0, c1] = A[by*128 + c0, ko*32 + c1] }
//   }
// A Shared tile written by group copies only is a vector tile, held as uvec4s (8 elements each);
// its rows are `row_pitch` elements apart: the row length, plus the pad of a `layout=padded(p)`.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "spirv_codegen.h"
#include "tilegen/ir/stmt.h"

namespace tg::vulkan {

/// A vectorized loop of 8 elements copying a Global 16-bit tensor to a Shared tile bit for bit,
/// both sides contiguous and 16-byte aligned; the indices are those of element 0 (lets inside
/// the loop substituted).
struct GroupCopy {
  const ir::BufferNode* dst = nullptr;
  const ir::BufferNode* src = nullptr;
  std::vector<Expr> dst_index, src_index;
};
std::optional<GroupCopy> match_group_copy(const ir::For& op);
/// e with the lets substituted, innermost first (a let's value may use the ones outside it).
Expr through_lets(Expr e, const std::vector<std::pair<Var, Expr>>& lets);

/// Elements from one row of b to the next in storage: the last dimension, plus the pad of a
/// Padded layout.
int64_t row_pitch(const ir::BufferNode& b);
/// Element strides of a kernel buffer (constant shape) in storage, row-major with row_pitch.
std::vector<Expr> stored_strides(const ir::BufferNode& b);
/// Elements of storage b occupies, padding included.
int64_t stored_elements(const ir::BufferNode& b);

/// The Shared tiles of a kernel body that only group copies write and whose rows start 16-byte
/// aligned (row_pitch a multiple of 8): the emitter holds them as uvec4s.
std::set<const ir::BufferNode*> vector_tiles(const Stmt& kernel_body);

/// Bytes of Workgroup memory the kernel's Shared buffers take as emit_spirv declares them:
/// vector tiles as uvec4s (twice over for those in `two_slots`), 16- and 8-bit formats at
/// their width where shared_at_width(f), other formats as 32 or 64-bit values; plus the
/// per-subgroup staging tiles of cooperative matrices on a device that has them.
int64_t workgroup_bytes(const ir::Kernel& k, const Features& f,
                        const std::set<const ir::BufferNode*>& vector_tiles,
                        const std::set<const ir::BufferNode*>& two_slots = {});

}  // namespace tg::vulkan
