// tilegen's environment variables, read strictly and in one place: a value that is not one the
// variable takes is a tg::Error naming the variable and what it takes, never a silent default.
// docs/environment.md lists every variable.
//
//   tg::env::flag("TILEGEN_CACHE", true)                      // unset → true; "0" → false; "x" → Error
//   tg::env::integer("TILEGEN_NUM_THREADS", 1, 4096, 0)       // "abc", "-5", "99999999999" → Error
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace tg::env {

/// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> text(const char* name);

/// A switch: 0, off, false → false; 1, on, true → true (any case); unset or empty → `dflt`.
bool flag(const char* name, bool dflt);

/// A whole number in [lo, hi] (decimal, nothing else around it); unset or empty → `dflt`.
int64_t integer(const char* name, int64_t lo, int64_t hi, int64_t dflt);

/// What flag() accepts, for values that come from elsewhere (a CompileOptions param): `origin`
/// names the value's source in the error ("CompileOptions param \"amx\"").
bool parse_flag(const std::string& value, const std::string& origin);

/// What integer() accepts, for values that come from elsewhere; `origin` as for parse_flag.
int64_t parse_integer(const std::string& value, const std::string& origin, int64_t lo, int64_t hi);

}  // namespace tg::env
