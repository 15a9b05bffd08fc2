#include "text_syntax.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace tg::text {

namespace {
// Words that would make a statement or an expression ambiguous if they named a variable or a
// buffer: statement keywords, flags that may follow a statement (`unchecked`, `else`, `layout`),
// scope words, and the names read as literals or calls. Words used only at fixed places inside
// a statement (axis, clear, sum, serial, stages, ...) stay free for names. A builder name equal
// to one of these, or to a dtype name, gets a trailing '_'.
constexpr std::array kReserved = {
    "_", "atomic", "barrier", "cast", "copy", "else", "false", "fill", "for", "fragment", "gemm", "global",
    "if", "inf", "kernel", "layout", "let", "local", "max", "min", "mma", "nan", "reduce", "select", "shared",
    "true", "unchecked", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "tanh", "sin", "cos", "floor",
    "ceil", "round", "erf", "sigmoid", "pow", "fma",
    // clang-format off
    "access_check", "from_fragment", "async", "async_wait", "mma_fence", "proxy_fence", "mma_wait", "shuffle_xor", "ldmatrix", "placed", "prefetch", "interleave", "hold",
    "mbarrier_init", "mbarrier_arrive", "mbarrier_expect_tx", "mbarrier_wait", "bulk_copy", "set_max_registers",
    // clang-format on
};
}  // namespace

bool is_reserved(std::string_view word) {
  for (const char* r : kReserved)
    if (word == r) return true;
  // Spellings DType::from_name accepts beyond the list above are reserved too.
  return DType::from_name(word).has_value();
}

bool is_identifier(std::string_view word) {
  if (word.empty() || !is_ident_start(word[0])) return false;
  for (char c : word)
    if (!is_ident_char(c)) return false;
  return true;
}

std::string sanitize_name(std::string_view raw) {
  std::string s;
  for (char c : raw) s += is_ident_char(c) ? c : '_';
  if (s.empty()) s = "v";
  if (!is_ident_start(s[0])) s = "_" + s;
  if (is_reserved(s)) s += '_';
  return s;
}

namespace {
bool same_value(double a, double b) {
  return a == b ? std::signbit(a) == std::signbit(b) : std::isnan(a) && std::isnan(b);
}

std::string to_text(double v, int precision) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
  return std::string(buf, r.ptr);
}
}  // namespace

bool parse_float_literal(std::string_view spelling, DType t, double& out) {
  double v = 0;
  auto r = std::from_chars(spelling.data(), spelling.data() + spelling.size(), v, std::chars_format::general);
  if (r.ec != std::errc() || r.ptr != spelling.data() + spelling.size() || !std::isfinite(v)) return false;
  out = round_float_to(t, v);
  return true;
}

std::string format_float(double v, DType t) {
  double r = round_float_to(t, v);
  if (std::isnan(r)) return "nan";
  if (std::isinf(r)) return r > 0 ? "inf" : "-inf";
  // Whole numbers read best as "128.0"; below 2^53 every one is exact in fixed notation.
  if (r == std::floor(r) && std::fabs(r) < 1e15) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::fixed, 1);
    return std::string(buf, res.ptr);
  }
  for (int p = 1; p <= 17; ++p) {
    std::string s = to_text(r, p);
    double back = 0;
    if (parse_float_literal(s, t, back) && same_value(back, r)) {
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
  }
  return to_text(r, 17);  // unreachable: 17 significant digits round-trip every double
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

}  // namespace tg::text
