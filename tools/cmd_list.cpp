// `tilegen targets` and `tilegen samples`: what this machine can run, and what there is to run.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "cli.h"

namespace tg::cli {

namespace {

std::string device_flags(const TargetInfo& d) {
  std::vector<std::string> f;
  if (d.software) f.push_back("software");
  if (d.is_cpu) f.push_back("cpu");
  if (d.warp_size > 1) f.push_back("warp " + std::to_string(d.warp_size));
  if (!d.matrix_units.empty()) f.push_back("matrix units " + join(d.matrix_units, " "));
  return f.empty() ? std::string() : "  [" + join(f, ", ") + "]";
}

}  // namespace

// Example:
//   TARGET  STATUS       DETAIL
//   interp  available    (built in)
//                        device 0: host (interp)  [software]
//   cuda    unavailable  libcuda.so.1: cannot open shared object file
int cmd_targets(const std::vector<std::string>& argv) {
  Args a = parse_args(argv, {}, 0);
  if (a.has("help")) return print_usage("usage: tilegen targets\n");
  // Each plugin is tried in a child process first: a broken one is listed, not fatal.
  const auto all = targets_isolated();
  std::size_t width = 6;
  for (const auto& t : all) width = std::max(width, t.name.size());
  std::cout << std::left << std::setw(int(width + 2)) << "TARGET" << std::setw(13) << "STATUS"
            << "DETAIL\n";
  for (const auto& t : all) {
    std::cout << std::setw(int(width + 2)) << t.name << std::setw(13)
              << (t.available ? "available" : "unavailable") << (t.available ? t.path : t.reason) << "\n";
    for (std::size_t i = 0; i < t.devices.size(); ++i)
      std::cout << std::string(width + 15, ' ') << "device " << i << ": " << describe_device(t.devices[i])
                << device_flags(t.devices[i]) << "\n";
  }
  return 0;
}

// Example:
//   gemm: C = A·B, tiled over a 2-D grid ...
//     dtypes: f16 (default), bf16, f32
//     parameters: M=256  rows of A and C
//     test shapes: 5, bench shapes: 2 (first: M=4096,N=4096,K=4096)
int cmd_samples(const std::vector<std::string>& argv) {
  Args a = parse_args(argv, {{"names", false}}, 0);
  if (a.has("help")) return print_usage("usage: tilegen samples [--names]\n");
  for (const auto& s : samples::all()) {
    if (a.has("names")) {
      std::cout << s.name << "\n";
      continue;
    }
    std::cout << s.name << ": " << s.description << "\n  dtypes:";
    for (std::size_t i = 0; i < s.dtypes.size(); ++i)
      std::cout << (i ? ", " : " ") << s.dtypes[i].name() << (i == 0 ? " (default)" : "");
    std::cout << "\n  parameters:\n";
    std::size_t width = 4;
    for (const auto& p : s.params)
      width = std::max(width, p.name.size() + 1 + std::to_string(p.default_value).size());
    for (const auto& p : s.params)
      std::cout << "    " << std::setw(int(width + 2)) << std::left
                << (p.name + "=" + std::to_string(p.default_value)) << p.help << "\n";
    std::cout << "  test shapes: " << s.test_shapes.size() << ", bench shapes: " << s.bench_shapes.size();
    if (!s.bench_shapes.empty()) std::cout << " (first: " << format_params(s.bench_shapes.front()) << ")";
    std::cout << "\n\n";
  }
  return 0;
}

}  // namespace tg::cli
