// Checks of single tile operations, shared by the verifier's walk (verifier.cpp). Each throws
// tg::Error at the node's call site with a sentence saying what to change.
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/stmt.h"

namespace tg::verify_detail {

/// "shared As", "global A": how messages name a buffer.
std::string describe(const Buffer& b);
/// "64x32", symbolic dimensions by name, other expressions as "?".
std::string dims_str(const std::vector<Expr>& dims);

/// Counts match the rank, offsets and extents are integers, constant extents are positive, and a
/// constant box lies inside a constant shape. A `predicated` box (a bounds-checked copy of a
/// global tensor) may overhang the edge but must hold at least one element (`reject_empty`; not
/// after specialisation, where an empty one is legal).
void check_region(const Region& r, const std::string& op, const std::string& role, const SourceLoc& at,
                  bool predicated = false, bool reject_empty = true);
/// One index per dimension, each an integer.
void check_indices(const Buffer& b, const std::vector<Expr>& idx, const std::string& what,
                   const SourceLoc& at);
/// A value of `value`'s dtype may be stored into `target` (numeric to numeric, bool to bool/int).
void check_value_type(DType target, const Expr& value, const std::string& what, const SourceLoc& at);

void check_copy(const ir::Copy& op, bool reject_empty_boxes);
void check_fill(const ir::Fill& op);
void check_gemm(const ir::Gemm& op);
void check_reduce(const ir::Reduce& op);
void check_atomic(const ir::Atomic& op);
void check_mma(const ir::Mma& op);

}  // namespace tg::verify_detail
