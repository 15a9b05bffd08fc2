// Strict parsing of environment variables (env.h).
#include "tilegen/env.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "tilegen/ir/error.h"

namespace tg::env {

std::optional<std::string> text(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool parse_flag(const std::string& value, const std::string& origin) {
  std::string s;
  for (char c : value) s += char(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "on" || s == "true") return true;
  if (s == "0" || s == "off" || s == "false") return false;
  throw Error(origin + " is '" + value + "'; it takes 0 or 1 (or off/on, false/true)");
}

bool flag(const char* name, bool dflt) {
  std::optional<std::string> v = text(name);
  return v ? parse_flag(*v, name) : dflt;
}

int64_t parse_integer(const std::string& value, const std::string& origin, int64_t lo, int64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  bool digits = !value.empty();
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    digits =
        digits && (std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && c == '-' && value.size() > 1));
  }
  if (!digits) throw Error(origin + " is '" + value + "'; it takes " + range);
  errno = 0;
  const long long n = std::strtoll(value.c_str(), nullptr, 10);
  if (errno == ERANGE || n < lo || n > hi)
    throw Error(origin + " is " + value + ", outside its range; it takes " + range);
  return n;
}

int64_t integer(const char* name, int64_t lo, int64_t hi, int64_t dflt) {
  std::optional<std::string> v = text(name);
  return v ? parse_integer(*v, name, lo, hi) : dflt;
}

}  // namespace tg::env
