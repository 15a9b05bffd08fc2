// CompileOptions checked once for every target (plugin.h): the params keys each target declares,
// and the values of the keys every target shares.
#include <algorithm>

#include "tilegen/plugin.h"

namespace tg {

namespace {

std::string joined(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

void check_compile_options(const TargetPlugin& plugin, const CompileOptions& opt, const SourceLoc& where) {
  std::vector<std::string> known = kCommonParamKeys;
  for (const std::string& k : plugin.param_keys()) known.push_back(k);
  std::sort(known.begin(), known.end());
  for (const auto& [key, value] : opt.params)
    if (!std::binary_search(known.begin(), known.end(), key))
      throw Error("compile: target '" + plugin.name() + "' has no CompileOptions param '" + key +
                      "'; the params it knows are " + joined(known),
                  where);
  if (auto it = opt.params.find("check_bounds");
      it != opt.params.end() && it->second != "all" && it->second != "none")
    throw Error("compile: CompileOptions param check_bounds is '" + it->second +
                    "'; it takes all (check every element access at run time) or none",
                where);
}

bool checks_accesses(const CompileOptions& opt) {
  auto it = opt.params.find("check_bounds");
  return it != opt.params.end() && it->second == "all";
}

}  // namespace tg
