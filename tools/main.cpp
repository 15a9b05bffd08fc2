// tilegen: the command-line face of the library. Lists targets and samples, shows the IR after
// any pass and the generated code, runs a sample against its float64 reference, runs the
// conformance suite, and benchmarks against peers. See docs/cli.md.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

namespace {

constexpr const char* kUsage = R"(usage: tilegen COMMAND [ARGS]

commands:
  targets                      every target plugin: available or not (why), its devices
  samples [--names]            every sample: description, dtypes, parameters and defaults
  ir SAMPLE|FILE.tgir [--target T] [--arch A] [--after PASS|all] [--set K=V,...] [--dtype D]
                               the IR as built, or after a pass of T's pipeline (default interp)
  source SAMPLE|FILE.tgir --target T [--arch A] [--set K=V,...] [--dtype D] [--emit source|asm|binary]
               [-o FILE]       the generated code, without running it (no device needed with --arch)
  run SAMPLE|FILE.tgir [--target T] [--device N] [--set K=V,...] [--dtype D] [--seed N] [--runs N]
                               run once, compare with the float64 reference (a FILE: with the
                               interpreter on the same inputs), time it; exit 0 on PASS
  conformance [--target T[,T...]] [--sample S[,S...]] [--dtype D[,D...]] [--json FILE] [--seed N] [--shard I/N]
                               every sample x dtype x test shape on each target: pass/FAIL/skip
  bench SAMPLE [--target T] [--device N] [--set K=V,...] [--dtype D] [--vs PEER] [--csv FILE]
               [--runs N] [--warmup N] [--check] [--seed N]
                               median time and TFLOP/s or GB/s at the sample's bench shape
  tune SAMPLE [--target T] [--set K=V,...] [--dtype D] [--space K=V:V...,...] [--jobs N] [--retune]
                               every config of the sample's tuning space at its bench shape:
                               checked, timed, the best kept (docs/autotune.md)
  fuzz [--target T|all] [--seconds N | --count N] [--seed S] [--out DIR] | --replay DIR
                               random tile programs vs the interpreter; failures shrunk to DIR

A FILE.tgir (a positional ending in .tgir or holding a '/') is a kernel in the IR text form;
--set gives its sizes (and for run its scalars). Without --target, run and bench use the best
available target (TILEGEN_TARGET overrides).
Exit status: 0 success, 1 failure (a FAIL, a compile or launch error), 2 a usage error.
)";

int dispatch(const std::string& command, const std::vector<std::string>& rest) {
  using namespace tg::cli;
  if (command == "targets") return cmd_targets(rest);
  if (command == "samples") return cmd_samples(rest);
  if (command == "ir") return cmd_ir(rest);
  if (command == "source") return cmd_source(rest);
  if (command == "run") return cmd_run(rest);
  if (command == "conformance") return cmd_conformance(rest);
  if (command == "bench") return cmd_bench(rest);
  if (command == "tune") return cmd_tune(rest);
  if (command == "fuzz") return cmd_fuzz(rest);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  throw UsageError("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::vector<std::string> rest(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], rest);
  } catch (const tg::cli::UsageError& e) {
    std::cout.flush();
    std::cerr << "tilegen: " << e.what() << "\n(run 'tilegen help' for usage)\n";
    return 2;
  } catch (const tg::Error& e) {
    std::cout.flush();
    std::cerr << "tilegen: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "tilegen: internal error: " << e.what() << "\n";
    return 1;
  }
}
