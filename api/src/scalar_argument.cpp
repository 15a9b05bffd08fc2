// Scalar launch arguments: a double or an int64_t from the host, checked against the dtype of the
// parameter it binds before it is converted (a silent 3.7 → 3 or 100000 → i8 -96 was a wrong answer).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime_internal.h"

namespace tg {

namespace {

std::string value_text(const KernelArg& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  double v = std::get<double>(a);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);  // 3.7, not 3.7000000000000002, where that is exact
  if (std::strtod(buf, nullptr) != v && !std::isnan(v)) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string float_misfit(double v, DType t);

/// Why t cannot hold the integer v, or empty. Floats take it rounded, unless it overflows.
std::string int_misfit(int64_t v, DType t) {
  if (t.is_float()) return float_misfit(double(v), t);
  if (t.is_bool()) return v == 0 || v == 1 ? "" : "a bool holds 0 or 1";
  return wrap_int_to(t, v) == v ? "" : "it is outside the type's range";
}

/// Why t cannot hold the double v, or empty.
std::string float_misfit(double v, DType t) {
  if (t.is_float()) {
    double largest = round_float_to(t, INFINITY);
    if (std::isinf(largest))  // a type with infinities: only finite values that round to one overflow
      return std::isfinite(v) && std::isinf(round_float_to(t, v)) ? "it would become infinity" : "";
    if (std::isnan(v)) return std::isnan(round_float_to(t, v)) ? "" : "the type has no NaN";
    return std::fabs(v) > largest ? "the type's largest value is " + value_text(largest) : "";
  }
  if (!std::isfinite(v) || std::trunc(v) != v) return "it is not a whole number";
  if (t.is_bool()) return v == 0 || v == 1 ? "" : "a bool holds 0 or 1";
  auto [lo, hi] = saturation_bounds(t);
  return v < lo || v > hi ? "it is outside the type's range" : "";
}

}  // namespace

Scalar scalar_argument(const KernelArg& a, DType t, const std::string& label, const SourceLoc& loc) {
  const int64_t* i = std::get_if<int64_t>(&a);
  std::string why = i ? int_misfit(*i, t) : float_misfit(std::get<double>(a), t);
  if (!why.empty())
    throw Error(label + ": the kernel's scalar is " + std::string(t.name()) + ", which cannot hold " +
                    value_text(a) + " (" + why + "); pass a value of that type",
                loc);
  if (i) return convert_scalar(i64, t, Scalar::of_int(*i));
  return convert_scalar(f64, t, Scalar::of_float(std::get<double>(a)));
}

}  // namespace tg
