// CompileOptions checked and resolved once for every target (plugin.h): the params keys each
// target declares, the values each key takes, and the environment variables that give defaults.
#include <algorithm>

#include "tilegen/env.h"
#include "tilegen/plugin.h"

namespace tg {

namespace {

std::string joined(const std::vector<std::string>& words, const char* last_sep = ", ") {
  std::string s;
  for (std::size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? last_sep : ", ") + words[i];
  return s;
}

std::string param_origin(const ParamKey& key) { return "CompileOptions param \"" + key.name + "\""; }

const ParamKey* find_key(const std::vector<ParamKey>& keys, const std::string& name) {
  for (const ParamKey& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

/// The key `name` of `plugin`, or a tg::Error listing the keys it knows.
const ParamKey& known_key(const TargetPlugin& plugin, const std::vector<ParamKey>& keys,
                          const std::string& name, const SourceLoc& where) {
  if (const ParamKey* k = find_key(keys, name)) return *k;
  std::vector<std::string> names;
  for (const ParamKey& k : keys) names.push_back(k.name);
  std::sort(names.begin(), names.end());
  throw Error("compile: target '" + plugin.name() + "' has no CompileOptions param '" + name +
                  "'; the params it knows are " + joined(names),
              where);
}

/// key.canonical(value), its error at `where`.
std::string canonical_at(const ParamKey& key, const std::string& value, const std::string& origin,
                         const SourceLoc& where) {
  try {
    return key.canonical(value, origin);
  } catch (const Error& e) {
    throw Error("compile: " + e.message(), where);
  }
}

}  // namespace

ParamKey ParamKey::on_off(std::string name, bool dflt, std::string env, std::string help) {
  ParamKey k;
  k.name = std::move(name);
  k.kind = Kind::Switch;
  k.default_value = dflt ? "1" : "0";
  k.env = std::move(env);
  k.help = std::move(help);
  return k;
}

ParamKey ParamKey::one_of(std::string name, std::vector<std::string> choices, std::string dflt,
                          std::string env, std::string help) {
  ParamKey k;
  k.name = std::move(name);
  k.kind = Kind::Choice;
  k.choices = std::move(choices);
  k.default_value = std::move(dflt);
  k.env = std::move(env);
  k.help = std::move(help);
  return k;
}

ParamKey ParamKey::count(std::string name, int64_t min, int64_t max, int64_t dflt, std::string env,
                         std::string help) {
  ParamKey k;
  k.name = std::move(name);
  k.kind = Kind::Count;
  k.min = min;
  k.max = max;
  k.default_value = std::to_string(dflt);
  k.env = std::move(env);
  k.help = std::move(help);
  return k;
}

std::string ParamKey::takes() const {
  switch (kind) {
    case Kind::Switch: return "0 or 1 (or off/on, false/true)";
    case Kind::Choice: return joined(choices, " or ");
    case Kind::Count: return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  }
  return {};
}

std::string ParamKey::canonical(const std::string& value, const std::string& origin) const {
  switch (kind) {
    case Kind::Switch: return env::parse_flag(value, origin) ? "1" : "0";
    case Kind::Count: return std::to_string(env::parse_integer(value, origin, min, max));
    case Kind::Choice:
      if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
      throw Error(origin + " is '" + value + "'; it takes " + takes());
  }
  return value;
}

const std::vector<ParamKey>& common_param_keys() {
  static const std::vector<ParamKey> keys = {
      ParamKey::one_of("check_bounds", {"all", "none"}, "none", "",
                       "all: check every element access at run time (the pass check_element_accesses)")};
  return keys;
}

std::vector<ParamKey> known_param_keys(const TargetPlugin& plugin) {
  std::vector<ParamKey> keys = common_param_keys();
  for (ParamKey& k : plugin.param_keys()) keys.push_back(std::move(k));
  return keys;
}

void check_compile_options(const TargetPlugin& plugin, const CompileOptions& opt, const SourceLoc& where) {
  const std::vector<ParamKey> keys = known_param_keys(plugin);
  for (const auto& [name, value] : opt.params) {
    const ParamKey& key = known_key(plugin, keys, name, where);
    canonical_at(key, value, param_origin(key), where);
  }
}

CompileOptions resolve_compile_options(const TargetPlugin& plugin, CompileOptions opt,
                                       const SourceLoc& where) {
  const std::vector<ParamKey> keys = known_param_keys(plugin);
  for (auto& [name, value] : opt.params) {
    const ParamKey& key = known_key(plugin, keys, name, where);
    value = canonical_at(key, value, param_origin(key), where);
  }
  // Then every key has its value: a default given explicitly is the same key as one left out.
  for (const ParamKey& key : keys) {
    if (opt.params.count(key.name)) continue;
    std::optional<std::string> v = key.env.empty() ? std::nullopt : env::text(key.env.c_str());
    opt.params[key.name] =
        v ? canonical_at(key, *v, key.env + " (the default of " + param_origin(key) + ")", where)
          : key.default_value;
  }
  return opt;
}

std::string param_text(const CompileOptions& opt, const ParamKey& key) {
  auto it = opt.params.find(key.name);
  return it == opt.params.end() ? key.default_value : key.canonical(it->second, param_origin(key));
}

bool param_on(const CompileOptions& opt, const ParamKey& key) { return param_text(opt, key) == "1"; }

int64_t param_count(const CompileOptions& opt, const ParamKey& key) {
  return std::stoll(param_text(opt, key));
}

bool checks_accesses(const CompileOptions& opt) {
  auto it = opt.params.find("check_bounds");
  return it != opt.params.end() && it->second == "all";
}

}  // namespace tg
