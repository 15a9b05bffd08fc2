// Command-line parsing for the tilegen command: flags with values (`--target cuda`,
// `--target=cuda`), boolean switches, positionals, and the `--set K=V,...` parameter syntax.
// Every mistake is a UsageError, which main() turns into a message and exit status 2.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tilegen/samples.h"

namespace tg::cli {

/// The user asked for something that does not exist or cannot be parsed: exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One flag a command accepts: `--name VALUE` when takes_value, else a switch.
struct FlagSpec {
  std::string name;  // without the leading "--"
  bool takes_value = true;
  char short_name = 0;  // `-o FILE` as well as `--output FILE`, when set
};

struct Args {
  std::vector<std::string> positional;
  /// Flag name (without "--") → value ("" for switches). Repeated --set and --param values are
  /// joined by ",".
  std::map<std::string, std::string> flags;

  bool has(const std::string& name) const { return flags.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = {}) const;
  int64_t get_int(const std::string& name, int64_t fallback) const;
  uint64_t get_u64(const std::string& name, uint64_t fallback) const;
};

/// Parse `argv` (the words after the command name) against `flags`; at most `max_positional`
/// positionals. `--help` is always accepted as a switch.
Args parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags,
                std::size_t max_positional);

/// "M=128,N=64" → {M: 128, N: 64}. A malformed item or a non-integer value is a UsageError.
samples::Params parse_set(const std::string& text);

/// "check_bounds=all,fast_math=1" → CompileOptions::params; a malformed item is a UsageError.
std::map<std::string, std::string> parse_param(const std::string& text);

/// A whole decimal integer (sign allowed), or a UsageError naming `what`.
int64_t parse_int(const std::string& text, const std::string& what);

std::vector<std::string> split(const std::string& text, char sep);
std::string join(const std::vector<std::string>& items, const std::string& sep);

}  // namespace tg::cli
