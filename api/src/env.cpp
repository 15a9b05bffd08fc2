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

int64_t integer(const char* name, int64_t lo, int64_t hi, int64_t dflt) {
  std::optional<std::string> v = text(name);
  if (!v) return dflt;
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  bool digits = !v->empty();
  for (std::size_t i = 0; i < v->size(); ++i) {
    const char c = (*v)[i];
    digits = digits && (std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && c == '-' && v->size() > 1));
  }
  if (!digits) throw Error(std::string(name) + " is '" + *v + "'; it takes " + range);
  errno = 0;
  const long long n = std::strtoll(v->c_str(), nullptr, 10);
  if (errno == ERANGE || n < lo || n > hi)
    throw Error(std::string(name) + " is " + *v + ", outside its range; it takes " + range);
  return n;
}

bool switch_value(const std::optional<std::string>& param_value, const std::string& param_name,
                  const char* env_name, bool dflt) {
  if (param_value) return parse_flag(*param_value, "CompileOptions param \"" + param_name + "\"");
  return flag(env_name, dflt);
}

}  // namespace tg::env
