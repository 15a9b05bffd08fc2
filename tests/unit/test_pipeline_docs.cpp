// docs/passes.md's "Each target's pipeline" block against the plugins' own pipeline(): every
// plugin present builds its list (with and without check_bounds=all) and must match its line, so
// the page and the code cannot drift apart. cuda, hip and vulkan load without their hardware.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tilegen/tilegen.h"

using namespace tg;

namespace {

/// One line of the block: `TARGET[@ARCH] pass → pass → [optional] ...`, continued on indented
/// lines. A pass in brackets runs only with check_bounds=all.
struct DocumentedPipeline {
  std::string target, arch;
  int line = 0;
  std::vector<std::string> plain, checked;
};

std::string read_doc() {
  std::ifstream in(std::string(TILEGEN_SOURCE_DIR) + "/docs/passes.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fenced block after the heading "## Each target's pipeline".
std::vector<DocumentedPipeline> parse_block(const std::string& doc) {
  std::vector<DocumentedPipeline> out;
  std::istringstream lines(doc);
  bool heading = false, inside = false;
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (!heading) {
      heading = line == "## Each target's pipeline";
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      if (inside) break;
      inside = true;
      continue;
    }
    if (!inside || line.empty()) continue;
    std::istringstream words(line);
    std::string word;
    if (line[0] != ' ') {
      words >> word;
      DocumentedPipeline p;
      p.line = n;
      const auto at = word.find('@');
      p.target = word.substr(0, at);
      if (at != std::string::npos) p.arch = word.substr(at + 1);
      out.push_back(p);
    }
    if (out.empty()) continue;
    while (words >> word) {
      if (word == "→") continue;
      const bool optional = word.front() == '[' && word.back() == ']';
      const std::string name = optional ? word.substr(1, word.size() - 2) : word;
      if (!optional) out.back().plain.push_back(name);
      out.back().checked.push_back(name);
    }
  }
  return out;
}

std::string arrows(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : " → ") + n;
  return s;
}

std::vector<std::string> names_of(const std::vector<PassEntry>& pipeline) {
  std::vector<std::string> out;
  for (const PassEntry& p : pipeline) out.push_back(p.name);
  return out;
}

/// Empty when they agree; else what a reader needs to fix the page or the code.
std::string drift(const DocumentedPipeline& d, const char* options,
                  const std::vector<std::string>& documented, const std::vector<std::string>& built) {
  if (documented == built) return {};
  return "docs/passes.md:" + std::to_string(d.line) + ": " + d.target + (d.arch.empty() ? "" : "@" + d.arch) +
         " " + options + "\n  the page says   " + arrows(documented) + "\n  pipeline() has  " + arrows(built);
}

/// The devices to build the list for: the architecture the line names, else each probed device
/// (a TargetInfo naming only the target where there is none: the lists do not read the device).
std::vector<TargetInfo> infos_for(TargetPlugin& plugin, const DocumentedPipeline& d) {
  if (!d.arch.empty()) return {plugin.info_for_arch(d.arch)};
  std::vector<TargetInfo> infos = plugin.probe().devices;
  if (infos.empty()) {
    TargetInfo bare;
    bare.target = d.target;
    infos.push_back(bare);
  }
  return infos;
}

}  // namespace

TEST_CASE("docs/passes.md: the block parses as one line a target") {
  const auto documented = parse_block(read_doc());
  REQUIRE(documented.size() >= 5);  // interp, cpu, cuda, hip, vulkan at least
  for (const auto& d : documented) {
    INFO("docs/passes.md:", d.line, " ", d.target);
    REQUIRE(!d.plain.empty());
    CHECK(d.plain.front() == "bind_sizes");
    CHECK(d.checked.size() >= d.plain.size());
  }
  // A drifted list is reported with both versions.
  const DocumentedPipeline& first = documented.front();
  std::vector<std::string> other = first.plain;
  other.push_back("extra_pass");
  const std::string d = drift(first, "(no params)", first.plain, other);
  CHECK(d.find("the page says   bind_sizes → ") != std::string::npos);
  CHECK(d.find(" → extra_pass") != std::string::npos);
}

TEST_CASE("docs/passes.md: each target's pipeline is the one its plugin builds") {
  const auto documented = parse_block(read_doc());
  REQUIRE(!documented.empty());
  CompileOptions plain, checked;
  checked.params["check_bounds"] = "all";
  for (const DocumentedPipeline& d : documented) {
    std::string why;
    TargetPlugin* plugin = find_plugin(d.target, &why);
    if (!plugin) {
      MESSAGE("skipped ", d.target, ": ", why);
      continue;
    }
    for (const TargetInfo& info : infos_for(*plugin, d)) {
      INFO(d.target, " for ", info.arch);
      const std::string a = drift(d, "(no params)", d.plain, names_of(plugin->pipeline(info, plain)));
      CHECK_MESSAGE(a.empty(), a);
      const std::string b =
          drift(d, "(check_bounds=all)", d.checked, names_of(plugin->pipeline(info, checked)));
      CHECK_MESSAGE(b.empty(), b);
    }
  }
  // Every plugin of this build has a line (the test plugins live elsewhere).
  for (const std::string& name : target_names()) {
    bool found = false;
    for (const DocumentedPipeline& d : documented) found = found || d.target == name;
    CHECK_MESSAGE(found, "target ", name,
                  " has no line in docs/passes.md's \"Each target's pipeline\" block");
  }
}
