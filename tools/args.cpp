#include "args.h"

#include <charconv>

namespace tg::cli {

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = flags.find(name);
  return it == flags.end() ? fallback : it->second;
}

int64_t Args::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? parse_int(get(name), "--" + name) : fallback;
}

uint64_t Args::get_u64(const std::string& name, uint64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw UsageError("--" + name + " needs a non-negative integer, got '" + text + "'");
  return v;
}

namespace {

const FlagSpec* find_flag(const std::vector<FlagSpec>& flags, const std::string& name) {
  for (const auto& f : flags)
    if (f.name == name) return &f;
  return nullptr;
}

// "-o" → "output" when a flag has that short name; unknown short options are errors.
std::string long_name(const std::vector<FlagSpec>& flags, const std::string& word) {
  for (const auto& f : flags)
    if (f.short_name == word[1]) return f.name;
  if (word == "-h") return "help";
  throw UsageError("unknown option '" + word + "'");
}

std::string known_flags(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> names;
  for (const auto& f : flags) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on chained literal + string.
    std::string name;
    if (f.short_name) {
      name += '-';
      name += f.short_name;
      name += '/';
    }
    name += "--";
    name += f.name;
    names.push_back(std::move(name));
  }
  return names.empty() ? "none" : join(names, ", ");
}

}  // namespace

Args parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags,
                std::size_t max_positional) {
  Args out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string word = argv[i];
    if (word.size() == 2 && word[0] == '-' && word[1] != '-') word = "--" + long_name(flags, word);
    if (word.size() < 2 || word.compare(0, 2, "--") != 0 || word == "--") {
      if (word.size() > 1 && word[0] == '-' && word != "-")
        throw UsageError("unknown option '" + word + "' (options are spelt --name)");
      out.positional.push_back(word);
      continue;
    }
    std::string name = word.substr(2), value;
    const auto eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "help") {
      out.flags["help"] = "";
      continue;
    }
    const FlagSpec* spec = find_flag(flags, name);
    if (!spec) throw UsageError("unknown option '--" + name + "'; this command takes " + known_flags(flags));
    if (spec->takes_value && !inline_value) {
      if (i + 1 >= argv.size()) throw UsageError("option '--" + name + "' needs a value");
      value = argv[++i];
    } else if (!spec->takes_value && inline_value) {
      throw UsageError("option '--" + name + "' takes no value");
    }
    auto [it, fresh] = out.flags.emplace(name, value);
    if (!fresh) {
      if (name != "set" && name != "param") throw UsageError("option '--" + name + "' given twice");
      it->second += "," + value;
    }
  }
  if (out.positional.size() > max_positional)
    throw UsageError("unexpected argument '" + out.positional[max_positional] + "'");
  return out;
}

int64_t parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* begin = text.data();
  if (!text.empty() && text[0] == '+') ++begin;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw UsageError(what + " needs an integer, got '" + text + "'");
  return v;
}

samples::Params parse_set(const std::string& text) {
  samples::Params out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set takes NAME=VALUE items separated by commas, got '" + item + "'");
    const std::string name = item.substr(0, eq);
    out[name] = parse_int(item.substr(eq + 1), "parameter " + name);
  }
  return out;
}

std::map<std::string, std::string> parse_param(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--param takes KEY=VALUE items separated by commas (check_bounds=all), got '" + item +
                       "'");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace tg::cli
