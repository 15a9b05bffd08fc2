// The kernel fuzzer's loop, shared by `tilegen fuzz` and the ctest kernel_fuzz: generate
// programs from consecutive seeds, check each (kernel_check.h), shrink each new kind of failure
// (kernel_shrink.h) and write it as a case file; and the replay of saved case files.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "kernel_check.h"
#include "kernel_gen.h"

namespace tg::fuzz {

struct FuzzOptions {
  std::string target = "all";  // configs_for()'s argument
  uint64_t seed = 1;           // the first program's seed; program i has seed + i
  int count = 0;               // programs to run (0: until `seconds` run out)
  double seconds = 0;          // wall-clock budget (0: `count` programs)
  std::string out_dir;         // where shrunk failures go (empty: not written)
  bool shrink = true;
  int execute_every = 1;       // compile and launch for real only every n-th program (vulkan on
                               // lavapipe costs about a second a program; the lowered IR a few ms)
  bool verbose = false;        // a line per program
  /// Signatures of open bugs (known_signatures()): a failure whose detail contains one is
  /// counted as known, not shrunk, and does not count as failed.
  std::vector<std::string> known;
};

struct Finding {
  Outcome outcome;
  ProgramSpec program;  // shrunk
  std::string file;     // where it was written, if it was
  int repeats = 0;      // later programs failing the same way (not shrunk again)
};

struct FuzzReport {
  int programs = 0, passed = 0, invalid = 0, skipped = 0, failed = 0, known = 0;
  std::map<std::string, int> invalid_reasons;  // generator bugs and oracle rejections, by kind
  std::vector<Finding> findings;               // one per failure key
  std::map<std::string, double> seconds;       // time per configuration (and the oracle)
};

FuzzReport run_fuzz(const FuzzOptions& opt, std::ostream& log);

/// Checks every case file (*.tgir) under `dir` on `configs`; a file under a `known/`
/// subfolder must still fail (it documents an open bug: tests/fuzz/README.md), any other must
/// pass. Returns the number of files that did otherwise, each named on `log`.
/// The `# known: TEXT` lines of the case files under `dir`/known: the part of a failure's
/// message that identifies each open bug.
std::vector<std::string> known_signatures(const std::string& dir);

/// `dir` may be one file. With `show_lowered`, a failure's lowered IR is printed too.
int replay_cases(const std::string& dir, const std::vector<Config>& configs, std::ostream& log,
                 bool show_lowered = false);

}  // namespace tg::fuzz
