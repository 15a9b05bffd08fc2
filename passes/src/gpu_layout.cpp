#include "tilegen/passes/gpu_layout.h"

#include "tilegen/ir/error.h"

namespace tg::gpu {

namespace {

// Elements from one row to the next: the row length, plus the padding a `layout=padded(P)` shared
// tile carries (the pass pad_shared_tiles writes it; nothing here decides it).
int64_t pitch_of(const ir::BufferNode& b) {
  auto cols = b.shape.back().as_int();
  if (!cols || b.scope != Scope::Shared || b.shape.size() < 2) return cols.value_or(0);
  return b.layout.kind == Layout::Kind::Padded ? *cols + b.layout.param : *cols;
}

}  // namespace

std::vector<int64_t> strides_of(const ir::BufferNode& b) {
  std::vector<int64_t> st(b.shape.size(), 1);
  for (std::size_t d = b.shape.size() - 1; d-- > 0;) {
    auto next = b.shape[d + 1].as_int();
    if (!next) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
    st[d] = st[d + 1] * (d + 1 == b.shape.size() - 1 ? pitch_of(b) : *next);
  }
  return st;
}

int64_t stored_elements(const ir::BufferNode& b) {
  auto first = b.shape.front().as_int();
  if (!first) throw Error("buffer " + b.name + " has a non-constant shape; bind the sizes first", b.loc);
  return b.shape.size() == 1 ? *first : strides_of(b)[0] * *first;
}

}  // namespace tg::gpu
