#include "tilegen/passes/vector_move.h"

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_layout.h"
#include "tilegen/passes/range_analysis.h"

namespace tg {

namespace {

Expr flat_index(const ir::BufferNode& b, const std::vector<Expr>& idx) {
  std::vector<int64_t> st = gpu::strides_of(b);
  Expr flat = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) flat = flat + idx[d] * Expr(st[d]);
  return flat;
}

bool uses_var(const Expr& e, const Var& v) { return vars_in(e).count(v.node()) > 0; }

// flat = v + (multiples of width): consecutive elements from an aligned start.
bool aligned_unit_step(const Expr& flat, const Var& v, int64_t width) {
  LinearForm f = linear_form(flat);
  if (f.constant % width != 0) return false;
  int64_t step = 0;
  for (auto& [term, coeff] : f.terms) {
    if (term.same_as(v))
      step += coeff;
    else if (coeff % width != 0 || uses_var(term, v))
      return false;
  }
  return step == 1;
}

}  // namespace

std::optional<VectorMove> match_vector_move(const ir::For& op) {
  if (op.for_kind != ForKind::Vectorized) return std::nullopt;
  auto width = op.extent.as_int();
  auto start = op.min.as_int();
  if (!width || !start || *start != 0) return std::nullopt;
  Stmt body = op.body;
  std::vector<std::pair<Var, Expr>> lets;
  while (const auto* let = body.as<ir::Let>()) {
    lets.emplace_back(let->var, substitute(let->value, lets));
    body = let->body;
  }
  const auto* st = body.as<ir::Store>();
  const auto* ld = st ? st->value.as<ir::Load>() : nullptr;
  if (!ld || ld->buffer->dtype != st->buffer->dtype) return std::nullopt;
  if (*width * st->buffer->dtype.bits() % 8 != 0) return std::nullopt;
  const int64_t bytes = *width * st->buffer->dtype.bits() / 8;
  if (bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) return std::nullopt;
  VectorMove m;
  m.store = st, m.load = ld, m.bytes = bytes;
  for (const Expr& e : st->indices) m.dst_index.push_back(substitute(e, lets));
  for (const Expr& e : ld->indices) m.src_index.push_back(substitute(e, lets));
  if (!aligned_unit_step(flat_index(*st->buffer.get(), m.dst_index), op.var, *width) ||
      !aligned_unit_step(flat_index(*ld->buffer, m.src_index), op.var, *width))
    return std::nullopt;
  std::vector<std::pair<Var, Expr>> at_zero = {{op.var, Expr(0)}};
  for (auto& e : m.dst_index) e = substitute(e, at_zero);
  for (auto& e : m.src_index) e = substitute(e, at_zero);
  return m;
}

}  // namespace tg
