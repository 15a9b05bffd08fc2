// The integer recipes of int_semantics.h run on host integers: the interpreter's and constant
// folding's arithmetic. Values are t's, held in int64 (unsigned ones non-negative).
#include "tilegen/ir/int_semantics.h"

namespace tg::ir {

namespace {

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

}  // namespace

int64_t int_div(DType t, int64_t a, int64_t b) {
  HostIntOps g{t};
  return lower_int_div(g, true, a, b, t);
}

int64_t int_mod(DType t, int64_t a, int64_t b) {
  HostIntOps g{t};
  return lower_int_div(g, false, a, b, t);
}

int64_t int_shl(DType t, int64_t a, int64_t n) {
  HostIntOps g{t};
  return lower_int_shift(g, true, a, n, t);
}

int64_t int_shr(DType t, int64_t a, int64_t n) {
  HostIntOps g{t};
  return lower_int_shift(g, false, a, n, t);
}

}  // namespace tg::ir
