// Buffers and regions. A buffer is identified by its node (two buffers may share a name only
// until the verifier sees them); its scope says where it lives:
//   Global   — a kernel parameter in device memory
//   Shared   — one copy per block, visible to all its threads
//   Fragment — one tile per block, distributed over the threads' registers by layout inference
//   Local    — one copy per thread (registers or stack)
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/ir/expr.h"

namespace tg {

enum class Scope : uint8_t { Global, Shared, Fragment, Local };
const char* name_of(Scope s);

/// The most dimensions a buffer may have. The verifier enforces it; the interpreter keeps one
/// index per dimension in fixed arrays of this size.
inline constexpr std::size_t kMaxBufferRank = 8;

/// How a Shared buffer's logical (row, col) maps to storage, and how a Fragment is spread.
/// RowMajor is the default. Swizzle (bits 1, 2, 3) is the XOR-swizzled layout of Hopper's matrix
/// descriptors and tensor copies: rows are cut into strips of W = 16·2^bits bytes, each strip of
/// the R×C tile stored apart as R rows of W bytes, and byte offset o within the tile becomes
/// o ^ (((o >> 7) & (2^bits − 1)) << 4) (CuTe's Swizzle<bits, 4, 3>; with 128-byte rows the 16-byte
/// chunk of row r moves to chunk ^ (r mod 8)). Padded adds `pad` elements to every row.
/// A Fragment's per-thread layout is derived by layout inference and named by `matrix_unit`.
struct Layout {
  enum class Kind : uint8_t { RowMajor, Swizzle, Padded, MatrixUnit } kind = Kind::RowMajor;
  int param = 0;            // Swizzle: bits; Padded: pad elements
  std::string matrix_unit;  // MatrixUnit: name of the description, e.g. "mma_m16n8k16_f16"
  bool operator==(const Layout&) const = default;
  bool is_default() const { return kind == Kind::RowMajor; }
};

namespace ir {
struct BufferNode {
  std::string name;
  std::vector<Expr> shape;  // one Expr a dimension, row-major
  DType dtype;
  Scope scope;
  Layout layout;
  SourceLoc loc;
  /// A Shared tile that was a fragment the layout passes could not spread over registers
  /// (partition_threads moves those to shared memory): said in messages about shared memory.
  /// Text form: `shared Cf: f32[64, 64] from_fragment`.
  bool from_fragment = false;
  /// Where a Shared buffer lives in the block's shared memory once the pass place_shared_memory
  /// has planned it (GPU source targets): `placed_bytes` bytes from byte `placed_offset`, -1 while
  /// unplaced. Buffers whose ranges overlap must have lifetimes a barrier separates; the
  /// interpreter reports a read of a buffer after another wrote the bytes they share.
  /// Text form: `shared A: f16[64, 64] placed 0 +: 9216`.
  int64_t placed_offset = -1;
  int64_t placed_bytes = 0;
  bool placed() const { return placed_offset >= 0; }
};
}  // namespace ir

/// A handle to a buffer node.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::shared_ptr<const ir::BufferNode> n) : node_(std::move(n)) {}
  static Buffer make(std::string name, std::vector<Expr> shape, DType t, Scope s, Layout layout = {},
                     SourceLoc loc = {});
  const ir::BufferNode* operator->() const { return node_.get(); }
  const ir::BufferNode* get() const { return node_.get(); }
  const std::shared_ptr<const ir::BufferNode>& ptr() const { return node_; }
  explicit operator bool() const { return bool(node_); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  std::size_t rank() const { return node_->shape.size(); }
  /// The product of the shape, when every dimension is constant and the product fits in int64.
  std::optional<int64_t> const_numel() const;
  Expr load(std::vector<Expr> indices) const;

 private:
  std::shared_ptr<const ir::BufferNode> node_;
};

/// A box of a buffer: offsets and extents per dimension. What copy, fill and gemm operate on.
/// Copies match regions by their extents with unit dimensions dropped, so a {1, 1, 64, 128}
/// box of a 4-D tensor copies into a 64×128 shared tile.
struct Region {
  Buffer buffer;
  std::vector<Expr> offsets;
  std::vector<Expr> extents;
  /// The whole buffer.
  static Region full(const Buffer& b);
  /// Extents with unit (constant 1) dimensions removed.
  std::vector<Expr> squeezed_extents() const;
};

}  // namespace tg
