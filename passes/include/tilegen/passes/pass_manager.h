// The pass manager: an ordered list of named passes (Triton's stage table), run with verification
// after each, dumps after a named pass or all of them, and a time per pass.
//
//   tg::PassManager pm({{"simplify", tg::simplify}, {"bind_sizes", bind}, {"bounds", tg::insert_bounds_checks}});
//   tg::Function lowered = pm.run(f, info);
//   for (auto& [name, text] : pm.stages()) ...
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/target_info.h"

namespace tg {

/// A pass as a pipeline lists it: name → function.
struct PassEntry {
  std::string name;
  std::function<Function(const Function&, const TargetInfo&)> run;
};

struct PassManagerOptions {
  bool verify_each = true;     // verify() the input and the IR after every pass (an error names the
                               // pass), with check_index_ranges()
  std::string dump_after;      // a pass name, "all", or empty; TILEGEN_DUMP_AFTER adds to it
  std::ostream* dump_to = nullptr;  // where dumps go (stderr when null)
  bool keep_stages = true;     // keep the IR text after each pass for stages()
};

class PassManager {
 public:
  explicit PassManager(std::vector<PassEntry> passes);
  Function run(const Function& f, const TargetInfo& info, const PassManagerOptions& opt = {});
  /// ("input", text) then (pass name, IR text after it), from the last run.
  const std::vector<std::pair<std::string, std::string>>& stages() const { return stages_; }
  /// (pass name, milliseconds), from the last run.
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }
  const std::vector<PassEntry>& passes() const { return passes_; }

 private:
  std::vector<PassEntry> passes_;
  std::vector<std::pair<std::string, std::string>> stages_;
  std::vector<std::pair<std::string, double>> timings_;
};

}  // namespace tg
