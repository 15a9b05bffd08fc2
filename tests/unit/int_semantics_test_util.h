// The integer division, modulo and shift cases every target must answer as int_semantics.h
// defines them: edge operands (MIN, MAX, -1, 0, negative and too-wide shift counts), computed
// three ways in one kernel: both operands read from a tensor, the right one a constant, both
// constants (folded by the builder).
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "tilegen/builder.h"
#include "tilegen/ir/int_semantics.h"

namespace tg::test {

struct IntCase {
  int64_t a, b;
};

/// a × b over the interesting values of t (values held as the interpreter holds them).
inline std::vector<IntCase> int_cases(DType t) {
  const int64_t lo = t == i64 ? std::numeric_limits<int64_t>::min() : int64_t(saturation_bounds(t).first);
  const int64_t hi = t == i64 ? std::numeric_limits<int64_t>::max() : int64_t(saturation_bounds(t).second);
  const int64_t w = t.bits();
  std::vector<int64_t> as = {7, 0, lo, hi}, bs = {2, 3, 0, 1, w - 1, w, w + 8, hi};
  if (t.is_signed_int()) {
    as.push_back(-7);
    for (int64_t b : {int64_t(-1), int64_t(-2), lo}) bs.push_back(b);
  }
  std::vector<IntCase> cases;
  for (int64_t a : as)
    for (int64_t b : bs) cases.push_back({a, b});
  return cases;
}

/// The four results of a case in the order the kernel stores them: a / b, a % b, a << b, a >> b.
inline std::vector<int64_t> int_expected(DType t, const IntCase& c) {
  return {ir::int_div(t, c.a, c.b), ir::int_mod(t, c.a, c.b), ir::int_shl(t, c.a, c.b),
          ir::int_shr(t, c.a, c.b)};
}

/// X: t[2·n] holds the cases' a then b; Y: t[12·n] gets, for each way k (0: both from X, 1: b a
/// constant, 2: both constants) and case i, the four results at Y[(k·n + i)·4 ...].
inline Kernel int_semantics_kernel(DType t, const std::vector<IntCase>& cases) {
  const int64_t n = int64_t(cases.size());
  KernelBuilder k("int_semantics");
  auto X = k.tensor("X", {2 * n}, t);
  auto Y = k.tensor("Y", {12 * n}, t);
  auto put = [&](int64_t slot, Expr a, Expr b) {
    Y(slot * 4 + 0) = a / b;
    Y(slot * 4 + 1) = a % b;
    Y(slot * 4 + 2) = a << b;
    Y(slot * 4 + 3) = a >> b;
  };
  k.grid(1).threads(1).body([&](Expr) {
    for (int64_t i = 0; i < n; ++i) {
      Expr ca = cast(t, Expr(cases[std::size_t(i)].a)), cb = cast(t, Expr(cases[std::size_t(i)].b));
      put(i, X(i), X(n + i));
      put(n + i, X(i), cb);
      put(2 * n + i, ca, cb);
    }
  });
  return k.build();
}

}  // namespace tg::test
