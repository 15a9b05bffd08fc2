// The pass manager: runs the passes in order, timing each, keeping the IR text after each,
// verifying after each, and dumping where asked (the API's dump_after and TILEGEN_DUMP_AFTER).
#include "tilegen/passes/pass_manager.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <set>

#include "tilegen/ir/error.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/check_index_ranges.h"

namespace tg {

namespace {

// "simplify, bounds" → {"simplify", "bounds"}: comma-separated, blanks trimmed, empties dropped.
std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    auto first = name.find_first_not_of(" \t\n");
    auto last = name.find_last_not_of(" \t\n");
    if (first != std::string::npos) out.push_back(name.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

std::string pass_list(const std::vector<PassEntry>& passes) {
  std::string out;
  std::set<std::string> seen;
  for (auto& p : passes)
    if (seen.insert(p.name).second) out += (out.empty() ? "" : ", ") + p.name;
  return out.empty() ? "(none)" : out;
}

// What to dump after: a set of names, or everything. Unknown names are an error that lists the
// passes, so a typo in TILEGEN_DUMP_AFTER does not silently dump nothing.
struct DumpSelection {
  bool all = false;
  std::set<std::string> names;
  bool wants(const std::string& name) const { return all || names.count(name); }
};

DumpSelection select_dumps(const std::vector<PassEntry>& passes, const std::string& from_options) {
  DumpSelection sel;
  auto add = [&](const std::string& list, const std::string& origin) {
    for (auto& name : split_names(list)) {
      if (name == "all") {
        sel.all = true;
        continue;
      }
      bool known = name == "input";
      for (auto& p : passes) known = known || p.name == name;
      if (!known)
        throw Error(origin + " names '" + name + "', which is not a pass of this pipeline; the passes are " +
                    pass_list(passes) + " (or use 'input' or 'all')");
      sel.names.insert(name);
    }
  };
  add(from_options, "dump_after");
  if (const char* env = std::getenv("TILEGEN_DUMP_AFTER")) add(env, "TILEGEN_DUMP_AFTER");
  return sel;
}

}  // namespace

PassManager::PassManager(std::vector<PassEntry> passes) : passes_(std::move(passes)) {
  for (auto& p : passes_) {
    if (p.name.empty()) throw Error("a pass of the pipeline has no name; give every PassEntry a name");
    if (!p.run) throw Error("pass " + p.name + " has no function; give its PassEntry a function to run");
  }
}

Function PassManager::run(const Function& f, const TargetInfo& info, const PassManagerOptions& opt) {
  stages_.clear();
  timings_.clear();
  DumpSelection dumps = select_dumps(passes_, opt.dump_after);
  std::ostream& out = opt.dump_to ? *opt.dump_to : std::cerr;

  // Keep and dump the IR after a stage; printed once, only when someone wants it.
  auto record = [&](const std::string& name, const Function& g) {
    bool dump = dumps.wants(name);
    if (!opt.keep_stages && !dump) return;
    std::string text = print(g);
    if (dump)
      out << "# IR after " << name << "\n" << text << (text.ends_with('\n') ? "" : "\n") << std::flush;
    if (opt.keep_stages) stages_.emplace_back(name, std::move(text));
  };

  VerifyOptions vopt;
  vopt.max_threads = info.max_threads;
  record("input", f);
  if (opt.verify_each) {  // IR from text or a plugin never met build(); hold it to the same rules
    verify(f, vopt);
    check_index_ranges(f);
  }
  Function cur = f;
  for (auto& p : passes_) {
    auto start = std::chrono::steady_clock::now();
    cur = p.run(cur, info);
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    timings_.emplace_back(p.name, ms.count());
    // Recorded before verification, so a broken pass's output can still be read in stages().
    record(p.name, cur);
    if (!opt.verify_each) continue;
    // bind_sizes at the head of the list only puts values in for the sizes: what comes out is
    // still what the user wrote, under the input's rules, and its errors are the user's.
    if (p.name == kBindSizesPass && vopt.reject_empty_predicated_boxes) {
      verify(cur, vopt);
      check_index_ranges(cur);
      continue;
    }
    vopt.reject_empty_predicated_boxes = false;  // the rule is for what a user wrote
    try {
      verify(cur, vopt);
      check_index_ranges(cur);
    } catch (const Error& e) {
      throw Error("after pass " + p.name + ": " + e.message(), e.where());
    }
  }
  return cur;
}

}  // namespace tg
