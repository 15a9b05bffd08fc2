// contract_fma: a product added to (or subtracted from) a value becomes one fused multiply-add,
// rounded once, where the target's arithmetic units have one (every GPU's do).
//
// Before (f32):
//   S[i, c] = exp2(S[i, c] * 0.1275 - m_scaled[i])
//   l[i] = l[i] * rescale[i] + tile_sum[i]
//   y[i] = b[i] - x[i] * w[i]
// After:
//   S[i, c] = exp2(fma(S[i, c], 0.1275, -m_scaled[i]))
//   l[i] = fma(l[i], rescale[i], tile_sum[i])
//   y[i] = fma(-x[i], w[i], b[i])
//
// What it does: in f32 and f64 expressions, a + b*c, b*c + a, b*c - a and a - b*c, where the
// product and the sum have the same type, become fma(...) (the product's left operand negated for
// a - b*c, the addend negated for b*c - a: negation is exact). Where both sides of a sum are
// products, the right one is fused (x*y + z*w → fma(z, w, x*y)). Narrower floats (f16, bf16:
// each operation rounded to its type) and integers are left alone. The interpreter computes
// fma rounded once (std::fmaf for f32), so the lowered IR says exactly what the GPU computes —
// the GPU compilers' own contraction is off (NVRTC --fmad=false, hip -ffp-contract=off), so
// nothing else fuses.
#pragma once
#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// The pass.
Function contract_fma(const Function& f, const TargetInfo& info);

/// One expression's contraction (the pass applies it to every expression).
///   contract_fma_expr(a * b + c)  →  fma(a, b, c)
Expr contract_fma_expr(const Expr& e);

}  // namespace tg
