// Which thread of a block touches which element of a block-visible buffer, found by running a
// lowered (per-thread) statement's index arithmetic for every thread: the element-level half of
// the barrier analysis (stmt_build.cpp). Internal to passes/.
//
//   for it in serial(0 +: 2) { let flat = it*128 + tx { let c0 = flat / 64 {
//     for v in vectorized(0 +: 4) { let c1 = flat % 64 * 4 + v { x[c0, c1] = X[...] } } } } }
//   for it in serial(0 +: 2) { ... same lets ... { acc[c0, c1] = max(acc[c0, c1], x[c0, c1]) } }
//
// Both statements give every element of x to the same thread, so nothing one thread writes is
// read by another: no barrier is needed between them. A footprint is exact only where every index
// of the buffer's accesses is a function of the thread index, constant loop bounds, lets and
// constants; anything else (a block index, a loaded value, a loop of unknown extent, a block-wide
// parallel loop, an async or shuffle store, a tile statement) makes it inexact for that buffer,
// and the analysis falls back to "the buffer is shared by all threads".
#pragma once
#include <cstdint>
#include <map>
#include <unordered_map>

#include "tilegen/ir/function.h"

namespace tg::lower {

/// The threads of a block: the kernel's thread variable and how many threads it has.
struct ThreadSpace {
  const ir::VarNode* tx = nullptr;
  int threads = 0;
};

/// One buffer's accesses: element (row-major flat index) → the only thread that accesses it, or
/// kMany. Inexact: unknown elements (every thread may access any element).
struct Footprint {
  static constexpr int32_t kMany = -1;
  bool exact = true;
  std::unordered_map<int64_t, int32_t> owner;
  void add(int64_t element, int32_t thread);
  void merge(const Footprint& o);
  /// Whether some element is accessed by one thread here and another thread (or several) there.
  bool crosses(const Footprint& o) const;
};

struct Footprints {
  std::map<const ir::BufferNode*, Footprint> reads, writes;
  void merge(const Footprints& o);
};

/// The footprints of s on every non-local buffer it reads or writes, over the threads of `space`.
/// When `space` has no thread variable, or the enumeration would exceed its budget, every
/// footprint is inexact.
Footprints thread_footprints(const Stmt& s, const ThreadSpace& space);

}  // namespace tg::lower
