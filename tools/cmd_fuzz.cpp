// `tilegen fuzz`: the kernel fuzzer (tools/fuzz/) for a while, on one target or all. Random
// valid tile programs run on the interpreter (the oracle) and on the target's lowered IR (the
// interpreter with race detection) or for real; each new kind of failure is shrunk and written
// as a case file. Exit 1 when anything failed.
#include <iostream>

#include "cli.h"
#include "fuzz/kernel_fuzz.h"

namespace tg::cli {

int cmd_fuzz(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen fuzz [--target T|all] [--seconds N | --count N] [--seed S] [--out DIR] [--no-shrink] "
      "[--execute-every N] [--known DIR] [--verbose]\n"
      "       tilegen fuzz --replay DIR|FILE [--target T|all] [--verbose]\n";
  Args a = parse_args(argv,
                      {{"target"}, {"seconds"}, {"count"}, {"seed"}, {"out"}, {"replay"}, {"execute-every"}, {"known"}, {"no-shrink", false},
                       {"verbose", false}},
                      0);
  if (a.has("help")) return print_usage(usage);
  const std::string target = a.get("target", "all");
  if (target != "all" && target != "cuda" && target != "hip" && target != "vulkan" && target != "cpu")
    throw UsageError("fuzz: --target must be all, cuda, hip, vulkan or cpu, not '" + target + "'");
  if (a.has("replay")) {
    std::vector<std::string> skipped;
    auto configs = fuzz::configs_for(target, &skipped);
    for (const std::string& s : skipped) std::cout << "not checked: " << s << "\n";
    return fuzz::replay_cases(a.get("replay"), configs, std::cout, a.has("verbose")) == 0 ? 0 : 1;
  }
  fuzz::FuzzOptions opt;
  opt.target = target;
  opt.seconds = double(a.get_int("seconds", 0));
  opt.count = int(a.get_int("count", 0));
  if (opt.seconds < 0 || opt.count < 0) throw UsageError("fuzz: --seconds and --count must not be negative");
  if (opt.seconds == 0 && opt.count == 0) opt.seconds = 60;
  opt.seed = a.get_u64("seed", fresh_seed());
  opt.out_dir = a.get("out", "fuzz-cases");
  opt.shrink = !a.has("no-shrink");
  opt.verbose = a.has("verbose");
  opt.execute_every = int(a.get_int("execute-every", 1));
  if (a.has("known")) opt.known = fuzz::known_signatures(a.get("known"));
  std::cout << "fuzz: target " << target << ", seed " << opt.seed << "\n";
  std::cout.flush();
  const fuzz::FuzzReport r = fuzz::run_fuzz(opt, std::cout);
  return r.failed == 0 ? 0 : 1;
}

}  // namespace tg::cli
