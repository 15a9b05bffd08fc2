// Fits a matrix unit's slot table to a sum over the bits of (lane, reg) and rebuilds it as
// shifts written with floor division and modulo (exact here: lane and reg are non-negative).
#include "lane_layout.h"

#include "tilegen/ir/int_semantics.h"

namespace tg::lower {

namespace {

// Σ w[b]·bit_b(x) over `bits` bits, grouping runs of bits whose weights double: a run of k bits
// from b with weight w becomes (x / 2^b % 2^k) · w.
Expr bit_sum(const Expr& x, const std::vector<int64_t>& w) {
  Expr sum = 0;
  const int bits = int(w.size());
  for (int b = 0; b < bits;) {
    if (w[std::size_t(b)] == 0) {
      ++b;
      continue;
    }
    int k = 1;
    while (b + k < bits && w[std::size_t(b + k)] == w[std::size_t(b)] << k) ++k;
    Expr part = x;
    if (b > 0) part = part / Expr(int64_t(1) << b);
    if (b + k < bits) part = part % Expr(int64_t(1) << k);
    sum = sum + part * Expr(w[std::size_t(b)]);
    b += k;
  }
  return sum;
}

}  // namespace

std::optional<SlotExprs> slot_exprs(const std::vector<MatrixUnit::Slot>& layout, int group, int regs,
                                    const Expr& lane, const Expr& reg) {
  const int lane_bits = ir::log2_exact(group), reg_bits = ir::log2_exact(regs);
  if (lane_bits < 0 || reg_bits < 0 || layout.size() != std::size_t(group) * std::size_t(regs))
    return std::nullopt;
  auto at = [&](int l, int r) { return layout[std::size_t(l * regs + r)]; };
  const MatrixUnit::Slot base = at(0, 0);
  std::vector<int64_t> lane_row, lane_col, reg_row, reg_col;
  for (int b = 0; b < lane_bits; ++b) {
    lane_row.push_back(at(1 << b, 0).row - base.row);
    lane_col.push_back(at(1 << b, 0).col - base.col);
  }
  for (int b = 0; b < reg_bits; ++b) {
    reg_row.push_back(at(0, 1 << b).row - base.row);
    reg_col.push_back(at(0, 1 << b).col - base.col);
  }
  for (int l = 0; l < group; ++l)  // the fit must reproduce every slot
    for (int r = 0; r < regs; ++r) {
      int64_t row = base.row, col = base.col;
      for (int b = 0; b < lane_bits; ++b)
        if ((l >> b) & 1) row += lane_row[std::size_t(b)], col += lane_col[std::size_t(b)];
      for (int b = 0; b < reg_bits; ++b)
        if ((r >> b) & 1) row += reg_row[std::size_t(b)], col += reg_col[std::size_t(b)];
      if (row != at(l, r).row || col != at(l, r).col) return std::nullopt;
    }
  SlotExprs out;
  out.row = Expr(int64_t(base.row)) + bit_sum(lane, lane_row) + bit_sum(reg, reg_row);
  out.col = Expr(int64_t(base.col)) + bit_sum(lane, lane_col) + bit_sum(reg, reg_col);
  return out;
}

}  // namespace tg::lower
