// The kernel fuzzer in ctest (tools/fuzz/, see README.md):
//   tilegen_kernel_fuzz --count N --seed S [--known DIR]
//                                             N programs from seed S on every configuration here;
//                                             failures of DIR/known/'s open bugs do not count
//   tilegen_kernel_fuzz --replay DIR          the saved cases of DIR (kernels/): each must pass,
//                                             each under DIR/known/ must still fail
// Exit 1 on any failure (a shrunk case is printed; with --out DIR it is written there too).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz/kernel_fuzz.h"

int main(int argc, char** argv) {
  tg::fuzz::FuzzOptions opt;
  std::string replay;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--count")
      opt.count = std::atoi(value.c_str());
    else if (flag == "--seed")
      opt.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--target")
      opt.target = value;
    else if (flag == "--out")
      opt.out_dir = value;
    else if (flag == "--execute-every")
      opt.execute_every = std::atoi(value.c_str());
    else if (flag == "--replay")
      replay = value;
    else if (flag == "--known")
      opt.known = tg::fuzz::known_signatures(value);
    else {
      std::fprintf(stderr, "tilegen_kernel_fuzz: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  try {
    // A build without plugins (the sanitizer build of the core) has nothing to lower for: the
    // tests say so as skipped (ctest's SKIP_RETURN_CODE), never as passed or failed.
    std::vector<std::string> skipped;
    if (tg::fuzz::configs_for(opt.target, &skipped).empty()) {
      for (const std::string& s : skipped) std::cout << "not checked: " << s << "\n";
      std::cout << "skipped: no configuration of target '" << opt.target << "' can run here\n";
      return 77;
    }
    if (!replay.empty())
      return tg::fuzz::replay_cases(replay, tg::fuzz::configs_for(opt.target), std::cout) ? 1 : 0;
    if (opt.count <= 0) opt.count = 50;
    tg::fuzz::FuzzReport r = tg::fuzz::run_fuzz(opt, std::cout);
    // Programs the generator made that the builder or the oracle rejected are generator bugs
    // (races excepted: the generator leaves barriers to chance and the oracle drops the racy).
    int generator_bugs = 0;
    for (const auto& [why, n] : r.invalid_reasons)
      if (why.find("race") == std::string::npos) generator_bugs += n;
    if (generator_bugs) std::cout << generator_bugs << " programs were invalid: a generator bug\n";
    return r.failed || generator_bugs ? 1 : 0;
  } catch (const tg::Error& e) {
    std::cerr << "tilegen_kernel_fuzz: " << e.what() << "\n";
    return 1;
  }
}
