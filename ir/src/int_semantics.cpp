// The integer recipes of int_semantics.h run on host integers (HostIntOps): the interpreter's
// and constant folding's arithmetic.
#include "tilegen/ir/int_semantics.h"

namespace tg::ir {

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
