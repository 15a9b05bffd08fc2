// simplify: canonicalise and simplify expressions and statements.
//
// Before (bx in [0, 4), i in [0, 128), threads(128) -> tx):
//   for i in [0, 128) parallel {
//     let base = 64
//     C[((bx * 128 + i) + 3) + 4 - 7, (tx * 4) * 8 % 32 + base] = select(i < 200, x, y)
//   }
//   for k in [0, 1) { S[k + 2] = 0 }
//   if (bx < 4) { Barrier } else { ... }
// After:
//   for i in [0, 128) parallel { C[bx * 128 + i, 64] = x }
//   S[2] = 0
//   Barrier
//
// What it does, soundly (integer Div/Mod are floor division; float arithmetic is never
// reassociated or otherwise changed, only folded where the constructors fold it):
// - integer sums as linear forms: constants reassociated ((x + 3) + 4 → x + 7, (x*4)*8 → x*32),
//   equal terms merged (x + y - x → y);
// - (i*128 + j) / 128 → i and (i*128 + j) % 128 → j when 0 ≤ j < 128 is proven, by interval
//   analysis over loop, block, thread and let variables (range_analysis.h) and the facts that
//   loop bounds and If conditions give;
// - min/max of provably ordered values, comparisons decided by the ranges, select of a decided
//   condition, !(a < b) → a >= b on integers, x && true → x, x || false → x;
// - If with a decided condition → the taken branch; loops of extent ≤ 0 removed, loops of extent
//   1 replaced by their body with the variable substituted (not Parallel ones: a Parallel loop is
//   collective and its body is element code, not SIMT code); empty Seqs removed, nested Seqs
//   flattened; Let of a constant or a variable substituted, unused Lets dropped.
// Index arithmetic is assumed not to overflow its type (as Halide assumes).
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// The pass.
Function simplify(const Function& f, const TargetInfo& info);

/// Simplify one expression, knowing what `ctx` knows (variable ranges and facts).
///   simplify_expr((i*128 + j) % 128, ctx with j in [0, 128))  →  j
Expr simplify_expr(const Expr& e, const RangeContext& ctx = {});

/// Simplify a statement outside any function (no size parameters known).
Stmt simplify_stmt(const Stmt& s, const RangeContext& ctx = {});

}  // namespace tg
