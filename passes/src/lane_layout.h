// Matrix-unit slot tables as index expressions. A description (matrix_unit.h) lists, for every
// (lane, register), the (row, col) of the operand tile it holds. Every built-in unit's table is
// linear in the bits of lane and register:
//   mma.sync m16n8k16, C:  row = lane/4 + 8·(reg/2),  col = 2·(lane%4) + reg%2
// so per-thread code can compute a slot's position from the lane and a loop variable over the
// registers instead of a lookup table.
#pragma once
#include <optional>
#include <vector>

#include "tilegen/ir/expr.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::lower {

struct SlotExprs {
  Expr row, col;
};

/// (row, col) of slot (lane, reg) of `layout` (group lanes × regs registers), as expressions of
/// `lane` and `reg`; nullopt when the table is not linear in their bits (or a count is not a power
/// of two), in which case the caller keeps the tile in shared memory.
std::optional<SlotExprs> slot_exprs(const std::vector<MatrixUnit::Slot>& layout, int group, int regs,
                                    const Expr& lane, const Expr& reg);

}  // namespace tg::lower
