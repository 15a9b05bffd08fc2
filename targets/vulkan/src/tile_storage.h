// How the vulkan target stores Shared tiles, as the passes that plan Workgroup memory
// (pad_shared_rows, double_buffer_tiles) and the code generator that declares it
// (spirv/kernel_statements.cpp) all need it: one rule in one place, so a pass never decides on
// bytes the emitter counts otherwise.
//
// A group copy is partition_threads' innermost copy loop of 8 16-bit elements, contiguous and
// 16-byte aligned on both sides, which the emitter moves as one uvec4, from a tensor to a
// Shared tile, or through a thread's Local registers (as the pass prefetch_tiles writes them):
//   for v in vectorized(0 +: 8) { let c1: i32 = flat % 4 * 8 + v  A_shared[c0, c1] = A[r, ko*32 + c1] }
//   for v in vectorized(0 +: 8) { A_shared_prefetch[8 + v] = A[r, ko*32 + c + v] }    tensor → registers
//   for v in vectorized(0 +: 8) { A_shared[c0, c + v] = A_shared_prefetch[8 + v] }    registers → tile
// A Shared tile written by group copies only is a vector tile, held as uvec4s (8 elements each);
// its rows are `row_pitch` elements apart: the row length, plus the pad of a `layout=padded(p)`.
// Local registers that only group copies touch are held as uvec4s too.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "spirv_codegen.h"
#include "tilegen/ir/stmt.h"

namespace tg::vulkan {

/// A vectorized loop of 8 elements copying 16-bit elements bit for bit, tensor → Shared, tensor
/// → Local or Local → Shared (Local buffers 1-D), both sides contiguous and 16-byte aligned; the
/// indices are those of element 0 (lets inside the loop substituted).
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
/// The Local buffers of a kernel body that only group copies read and write.
std::set<const ir::BufferNode*> vector_registers(const Stmt& kernel_body);

/// Bytes of Workgroup memory the kernel's Shared buffers take as emit_spirv declares them:
/// vector tiles as uvec4s, 16- and 8-bit formats at their width where shared_at_width(f), other
/// formats as 32 or 64-bit values; plus the per-subgroup staging tiles of cooperative matrices
/// on a device that has them.
int64_t workgroup_bytes(const ir::Kernel& k, const Features& f,
                        const std::set<const ir::BufferNode*>& vector_tiles);

}  // namespace tg::vulkan
