// The kernel fuzzer's differential check: the interpreter on the builder's IR is the oracle;
// each configuration must reproduce its outputs.
//
//   lowered configurations: the target plugin's whole pipeline for one architecture (verified
//     after every pass), then the lowered IR in the interpreter with race detection
//     (cuda sm_80 / sm_90a, hip gfx90a / gfx942, vulkan as lavapipe / with cooperative matrices,
//     cpu);
//   executed configurations: the program compiled and launched for real (cpu, vulkan).
//
// Outcome kinds: a generator bug (the builder or the oracle rejects the program: not a finding),
// a skip (the target says `unsupported:`), or a failure: a verifier error after a pass, any
// other error of a pass or a compile, a race or an error in the lowered IR, a mismatch.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg::fuzz {

struct Config {
  std::string name;    // "cuda:sm_80", "vulkan:run", ...
  std::string plugin;  // "cuda", "hip", "vulkan", "cpu"
  std::string arch;    // for lowered configurations; empty: the probed device's
  bool execute = false;  // compile and launch for real instead of interpreting the lowered IR
};

/// The configurations of `target` ("all", "cuda", "hip", "vulkan", "cpu") that this machine can
/// run; `skipped` gets a line for each it cannot (a plugin missing, no device).
std::vector<Config> configs_for(const std::string& target, std::vector<std::string>* skipped = nullptr);

enum class Verdict { Pass, Invalid, Skip, Fail };

struct Outcome {
  Outcome() = default;
  Outcome(Verdict v, std::string cfg, std::string cat, std::string what)
      : verdict(v), config(std::move(cfg)), category(std::move(cat)), detail(std::move(what)) {}
  Verdict verdict = Verdict::Pass;
  std::string config;    // the failing (or skipping) configuration
  std::string category;  // "verify", "pass-error", "race", "lowered-error", "mismatch", "compile", "launch"
  std::string detail;    // the error message or the first mismatching element
  std::string lowered;   // the lowered IR of a failing lowered configuration
  /// Failure identity for the shrinker: the same config and category.
  std::string key() const { return config + "/" + category; }
};

/// The case: a function (builder IR) and its symbolic sizes' values.
struct Case {
  Function fn;
  std::map<std::string, int64_t> sizes;
};

/// Runs the oracle, then each configuration, stopping at the first failure.
/// With `only`, runs just that configuration (the shrinker's fast path).
/// `seconds`, when given, accumulates the time spent per configuration (and "oracle");
/// `execute` false skips the executed configurations (unless `only` names one).
Outcome check_case(const Case& c, const std::vector<Config>& configs, const std::string& only = {},
                   std::map<std::string, double>* seconds = nullptr, bool execute = true);

/// A case file: `# sizes M=.. N=..` and comment lines, then the IR text.
std::string case_text(const Case& c, const std::string& comment);
Case parse_case(const std::string& text, const std::string& origin);

}  // namespace tg::fuzz
