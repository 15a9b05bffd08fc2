// What the IR's integer `/`, `%`, `<<` and `>>` compute, defined once (docs/language.md,
// "Integer arithmetic", states it for users). For every integer dtype t (i4, u4, i8, u8, i16,
// i32, u32, i64; values are t's, wrapped to its width), with w = t's width in bits:
//
//   a / b   floor(a / b), rounded toward -inf        7 / -2 = -4     MIN / -1 = MIN (wraps)
//   a % b   a - b·(a / b): zero or the sign of b     7 % -2 = -1     MIN % -1 = 0
//   a / 0   0                                        a % 0   = a     (so a = b·(a/b) + a%b always)
//   a << n  a·2^n wrapped to t, for 0 <= n < w; 0 for any other n (negative or >= w)
//   a >> n  floor(a / 2^n) for 0 <= n < w (arithmetic for signed t, logical for unsigned);
//           for any other n every bit is shifted out: -1 for negative a, else 0
//
// Nothing traps, nothing is undefined: division by zero and MIN / -1 are values. Unsigned
// types have no -1 and never overflow a division, so only the zero divisor is special there.
//
// The definition is a recipe in a handful of operations that every target has (truncating
// division by a divisor that is never 0 or -1, compares, selects). The interpreter and constant
// folding run it on host integers (int_div and friends below); the cpu (LLVM), vulkan (SPIR-V)
// and cuda/hip (C++ source) code generators run it with their instruction builders, so all of
// them compute the same thing by construction. An `Ops` supplies, for values of one dtype:
//
//   Value imm(int64_t)                the constant, in the operand type
//   Value add(a, b), sub, mul         wrapping arithmetic
//   Value div_trunc(a, b)             quotient rounded toward zero; b is never 0 or -1
//   Value bit_and(a, b), bit_xor
//   Value shl(a, n), shr(a, n)        0 <= n < w; shr arithmetic when signed, logical when not
//   Value eq(a, b), ne(a, b), lt(a, b) bool values; lt compares in the operand's signedness
//   Value both(p, q), either(p, q)    logical and / or of bools
//   Value select(c, x, y)
//
// `known` is the divisor or count when it is a constant: the recipe then emits no guard.
#pragma once
#include <bit>
#include <cstdint>
#include <optional>

#include "tilegen/ir/dtype.h"

namespace tg::ir {

/// log2(v) when v is a power of two (v >= 1), else -1.
constexpr int log2_exact(int64_t v) {
  return v > 0 && std::has_single_bit(uint64_t(v)) ? std::countr_zero(uint64_t(v)) : -1;
}

/// The IR's a / b (div = true) or a % b for operands of dtype t; see the table above.
template <typename Ops>
typename Ops::Value lower_int_div(Ops& g, bool div, typename Ops::Value a, typename Ops::Value b, DType t,
                                  std::optional<int64_t> known = std::nullopt) {
  using V = typename Ops::Value;
  const bool is_signed = t.is_signed_int();
  if (known && *known == 0) return div ? g.imm(0) : a;
  if (known && *known == -1 && is_signed) return div ? g.sub(g.imm(0), a) : g.imm(0);
  if (known && log2_exact(*known) >= 0) {  // floor division by 2^k is a shift, modulo a mask
    int k = log2_exact(*known);
    return div ? g.shr(a, g.imm(k)) : g.bit_and(a, g.imm(*known - 1));
  }
  V zero = g.imm(0), one = g.imm(1);
  V by_zero = known ? V{} : g.eq(b, zero);
  V by_minus_one = known || !is_signed ? V{} : g.eq(b, g.imm(-1));
  V d = b;  // a divisor that can neither trap nor overflow the hardware's division
  if (!known) d = g.select(is_signed ? g.either(by_zero, by_minus_one) : by_zero, one, b);
  V q = g.div_trunc(a, d);
  V r = is_signed || !div ? g.sub(a, g.mul(q, d)) : V{};  // only what the result needs is emitted
  if (is_signed) {  // toward -inf: when the remainder is nonzero and its sign differs from d's
    V down = g.both(g.ne(r, zero), g.lt(g.bit_xor(r, d), zero));
    if (div) q = g.sub(q, g.select(down, one, zero));
    if (div && !known) q = g.select(by_minus_one, g.sub(zero, a), q);  // d was 1 there: r is 0 already
    if (!div) r = g.select(down, g.add(r, d), r);
  }
  if (known) return div ? q : r;
  return div ? g.select(by_zero, zero, q) : g.select(by_zero, a, r);
}

/// The IR's a << n (left = true) or a >> n for operands of dtype t; see the table above.
template <typename Ops>
typename Ops::Value lower_int_shift(Ops& g, bool left, typename Ops::Value a, typename Ops::Value n, DType t,
                                    std::optional<int64_t> known = std::nullopt) {
  using V = typename Ops::Value;
  const int w = t.bits();
  const bool is_signed = t.is_signed_int();
  if (known) {
    bool in_range = *known >= 0 && *known < w;
    if (left) return in_range ? g.shl(a, n) : g.imm(0);
    if (in_range) return g.shr(a, n);
    return is_signed ? g.shr(a, g.imm(w - 1)) : g.imm(0);
  }
  V in_range = g.lt(n, g.imm(w));
  if (is_signed) in_range = g.both(g.lt(g.imm(-1), n), in_range);
  if (left) return g.select(in_range, g.shl(a, g.select(in_range, n, g.imm(0))), g.imm(0));
  if (is_signed) return g.shr(a, g.select(in_range, n, g.imm(w - 1)));  // sign fill when out of range
  return g.select(in_range, g.shr(a, g.select(in_range, n, g.imm(0))), g.imm(0));
}

/// The Ops of the recipes on host integers: values of t held in int64 (unsigned ones
/// non-negative), as the interpreter and constant folding hold them.
struct HostIntOps {
  using Value = int64_t;
  DType t;
  int64_t wrap(uint64_t v) const { return wrap_int_to(t, int64_t(v)); }
  int64_t imm(int64_t v) const { return wrap(uint64_t(v)); }
  int64_t add(int64_t a, int64_t b) const { return wrap(uint64_t(a) + uint64_t(b)); }
  int64_t sub(int64_t a, int64_t b) const { return wrap(uint64_t(a) - uint64_t(b)); }
  int64_t mul(int64_t a, int64_t b) const { return wrap(uint64_t(a) * uint64_t(b)); }
  int64_t div_trunc(int64_t a, int64_t b) const { return wrap(uint64_t(a / b)); }  // b ∉ {0, -1}
  int64_t bit_and(int64_t a, int64_t b) const { return a & b; }
  int64_t bit_xor(int64_t a, int64_t b) const { return a ^ b; }
  int64_t shl(int64_t a, int64_t n) const { return wrap(uint64_t(a) << n); }
  int64_t shr(int64_t a, int64_t n) const { return a >> n; }  // logical for non-negative values
  int64_t eq(int64_t a, int64_t b) const { return a == b; }
  int64_t ne(int64_t a, int64_t b) const { return a != b; }
  int64_t lt(int64_t a, int64_t b) const { return a < b; }
  int64_t both(int64_t p, int64_t q) const { return p && q; }
  int64_t either(int64_t p, int64_t q) const { return p || q; }
  int64_t select(int64_t c, int64_t x, int64_t y) const { return c ? x : y; }
};

/// The recipes run on HostIntOps. Never trap.
int64_t int_div(DType t, int64_t a, int64_t b);
int64_t int_mod(DType t, int64_t a, int64_t b);
int64_t int_shl(DType t, int64_t a, int64_t n);
int64_t int_shr(DType t, int64_t a, int64_t n);

/// floor(a / b) and a - b·floor(a / b) on int64, for index arithmetic (simplify, ranges).
inline int64_t floor_div(int64_t a, int64_t b) { return int_div(i64, a, b); }
inline int64_t floor_mod(int64_t a, int64_t b) { return int_mod(i64, a, b); }

}  // namespace tg::ir
