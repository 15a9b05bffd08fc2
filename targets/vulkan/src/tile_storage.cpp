// The storage rules of tile_storage.h.
#include "tile_storage.h"

#include <algorithm>
#include <functional>

#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

constexpr int kGroup = 8;  // 16-bit elements in 16 bytes

// Indices of element v (lets substituted) contiguous in v from element 0, 16-byte aligned.
bool contiguous(const std::vector<Expr>& index, const Var& v, const ir::BufferNode& b) {
  auto last = b.shape.back().as_int();
  if (index.empty() || index.size() != b.shape.size() || !last || *last % kGroup != 0) return false;
  for (std::size_t d = 0; d < index.size(); ++d) {
    Expr at0 = simplify_expr(substitute(index[d], {{v, Expr(0)}}));
    for (int k = 1; k < kGroup; ++k) {
      Expr at = simplify_expr(substitute(index[d], {{v, Expr(k)}}));
      LinearForm diff = linear_difference(at, at0, d + 1 == index.size() ? -k : 0);
      if (!diff.is_constant() || diff.constant != 0) return false;
    }
    if (d + 1 == index.size() && !is_multiple_of(at0, kGroup)) return false;
  }
  return true;
}

}  // namespace

Expr through_lets(Expr e, const std::vector<std::pair<Var, Expr>>& lets) {
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) e = substitute(e, {{it->first, it->second}});
  return e;
}

std::optional<GroupCopy> match_group_copy(const ir::For& op) {
  if (op.for_kind != ForKind::Vectorized || !op.min.as_int() || *op.min.as_int() != 0 ||
      !op.extent.as_int() || *op.extent.as_int() != kGroup)
    return std::nullopt;
  std::vector<std::pair<Var, Expr>> lets;
  Stmt s = op.body;
  while (const auto* l = s.as<ir::Let>()) lets.push_back({l->var, l->value}), s = l->body;
  const auto* st = s.as<ir::Store>();
  const auto* ld = st ? st->value.as<ir::Load>() : nullptr;
  if (!ld || st->async || st->buffer->dtype != ld->buffer->dtype || st->buffer->dtype.bits() != 16 ||
      st->buffer->dtype.is_packed())
    return std::nullopt;
  const Scope from = ld->buffer->scope, to = st->buffer->scope;
  if (!((from == Scope::Global && (to == Scope::Shared || to == Scope::Local)) ||
        (from == Scope::Local && to == Scope::Shared)))
    return std::nullopt;
  for (const ir::BufferNode* b : {ld->buffer.get(), st->buffer.get()})
    if (b->scope == Scope::Local && b->shape.size() != 1) return std::nullopt;
  GroupCopy g{st->buffer.get(), ld->buffer.get(), {}, {}};
  std::vector<Expr> di, si;
  for (const Expr& e : st->indices) di.push_back(through_lets(e, lets));
  for (const Expr& e : ld->indices) si.push_back(through_lets(e, lets));
  if (!contiguous(di, op.var, *g.dst) || !contiguous(si, op.var, *g.src)) return std::nullopt;
  for (const Expr& e : di) g.dst_index.push_back(simplify_expr(substitute(e, {{op.var, Expr(0)}})));
  for (const Expr& e : si) g.src_index.push_back(simplify_expr(substitute(e, {{op.var, Expr(0)}})));
  return g;
}

int64_t row_pitch(const ir::BufferNode& b) {
  const int64_t last = b.shape.back().as_int().value_or(1);
  return last + (b.layout.kind == Layout::Kind::Padded && b.shape.size() >= 2 ? b.layout.param : 0);
}

std::vector<Expr> stored_strides(const ir::BufferNode& b) {
  const std::size_t rank = b.shape.size();
  std::vector<Expr> st(rank, Expr(1));
  if (rank < 2) return st;
  st[rank - 2] = Expr(row_pitch(b));
  for (std::size_t d = rank - 2; d-- > 0;) st[d] = st[d + 1] * b.shape[d + 1];
  return st;
}

int64_t stored_elements(const ir::BufferNode& b) {
  int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < b.shape.size(); ++d) rows *= b.shape[d].as_int().value_or(1);
  return rows * row_pitch(b);
}

namespace {

// Calls f on every group copy of s (not looking inside them).
void for_each_group_copy(const Stmt& s, const std::function<void(const GroupCopy&)>& f) {
  struct Walk : IRVisitor {
    const std::function<void(const GroupCopy&)>* f = nullptr;
    void visit(const ir::For* op) override {
      if (auto g = match_group_copy(*op)) return (*f)(*g);
      IRVisitor::visit(op);
    }
  } walk;
  walk.f = &f;
  walk.visit_stmt(s);
}

// The buffers group copies name (Shared destinations, or Local sides), without those accessed
// any other way (written, for tiles; at all, for Locals).
std::set<const ir::BufferNode*> only_grouped(const Stmt& s, Scope scope) {
  struct Scan : BufferAccessVisitor {
    Scope scope = Scope::Shared;
    std::set<const ir::BufferNode*> grouped, other;
    using BufferAccessVisitor::visit;
    void visit(const ir::For* op) override {
      std::optional<GroupCopy> g = match_group_copy(*op);
      if (!g) return BufferAccessVisitor::visit(op);
      if (g->dst->scope == scope) grouped.insert(g->dst);
      if (g->src->scope == scope && scope == Scope::Local) grouped.insert(g->src);
    }
    void access(const Buffer& b, BufferAccess how) override {
      if (scope == Scope::Local || is_write(how)) other.insert(b.get());
    }
  } scan;
  scan.scope = scope;
  scan.visit_stmt(s);
  std::set<const ir::BufferNode*> out;
  for (const ir::BufferNode* b : scan.grouped)
    if (!scan.other.count(b)) out.insert(b);
  return out;
}

}  // namespace

std::set<const ir::BufferNode*> vector_tiles(const Stmt& kernel_body) {
  // a tile filled from registers the emitter cannot hold as uvec4s is stored element by element
  const std::set<const ir::BufferNode*> locals = only_grouped(kernel_body, Scope::Local);
  std::set<const ir::BufferNode*> fed_otherwise;
  for_each_group_copy(kernel_body, [&](const GroupCopy& g) {
    if (g.src->scope == Scope::Local && !locals.count(g.src)) fed_otherwise.insert(g.dst);
  });
  std::set<const ir::BufferNode*> out;
  for (const ir::BufferNode* b : only_grouped(kernel_body, Scope::Shared))
    if (row_pitch(*b) % kGroup == 0 && !fed_otherwise.count(b)) out.insert(b);
  return out;
}

std::set<const ir::BufferNode*> vector_registers(const Stmt& kernel_body) {
  // registers copied into a tile held otherwise would be read element by element: not uvec4s
  const std::set<const ir::BufferNode*> tiles = vector_tiles(kernel_body);
  std::set<const ir::BufferNode*> out = only_grouped(kernel_body, Scope::Local);
  for_each_group_copy(kernel_body, [&](const GroupCopy& g) {
    if (g.src->scope == Scope::Local && !tiles.count(g.dst)) out.erase(g.src);
  });
  return out;
}

int64_t workgroup_bytes(const ir::Kernel& k, const Features& f,
                        const std::set<const ir::BufferNode*>& vector_tiles) {
  int64_t total = 0;
  for (const Buffer& b : k.buffers) {
    if (b->scope != Scope::Shared) continue;
    const int64_t elements = stored_elements(*b.get());
    if (vector_tiles.count(b.get())) {
      total += elements * 2;
      continue;
    }
    const bool narrow = b->dtype.bits() < 32 && shared_at_width(f);
    total += elements * (narrow ? std::max(1, b->dtype.bits() / 8) : b->dtype.bits() > 32 ? 8 : 4);
  }
  if (!f.coopmat_units.empty()) total += k.threads / 32 * 256 * 4;  // coopmat_lowering.cpp's staging tiles
  return total;
}

}  // namespace tg::vulkan
