// `tilegen conformance`: the matrix of samples × dtypes × shapes against targets, printed a row
// at a time as it runs, then the reason for every skip and failure and the totals.
//
//   seed 8412 (each case derives its own; a failure prints the command that repeats it)
//   SAMPLE DTYPE SHAPE          interp  cpu
//   gemm f16 ragged 50x37x45    pass    pass
//   gemm f32 ragged 50x37x45    pass    FAIL
//   ...
//   2 passed, 1 failed, 0 skipped
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli.h"
#include "conformance.h"

namespace tg::cli {

namespace {

std::vector<std::string> list_flag(const Args& a, const std::string& name) {
  std::vector<std::string> out;
  if (!a.has(name)) return out;
  for (auto& item : split(a.get(name), ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw UsageError("--" + name + " needs at least one name");
  return out;
}

const char* cell(CaseStatus s) {
  switch (s) {
    case CaseStatus::Pass: return "pass";
    case CaseStatus::Fail: return "FAIL";
    case CaseStatus::Skip: return "skip";
  }
  return "?";
}

// Cases whose shape's tiles were halved to fit the device's shared memory, one line each.
void print_fitted(const std::vector<ConformanceCase>& cases) {
  for (const auto& c : cases)
    if (!c.fitted.empty())
      std::cout << "fitted: " << c.target << " " << c.sample << " " << c.dtype << " [" << c.label
                << "] ran with " << c.fitted
                << " (the shape's tiles need more shared memory than the device has)\n";
}

// Skips repeat (a target that lacks a dtype skips every row of it): one line per target and reason.
void print_skips(const std::vector<ConformanceCase>& cases) {
  std::map<std::pair<std::string, std::string>, std::vector<const ConformanceCase*>> groups;
  for (const auto& c : cases)
    if (c.status == CaseStatus::Skip) groups[{c.target, c.reason}].push_back(&c);
  if (groups.empty()) return;
  std::cout << "\nskipped:\n";
  for (const auto& [key, list] : groups) {
    std::cout << "  " << key.first << ", " << list.size() << " case(s): " << key.second << "\n";
    for (std::size_t i = 0; i < list.size() && i < 4; ++i)
      std::cout << "      " << list[i]->sample << " " << list[i]->dtype << " " << list[i]->label << "\n";
    if (list.size() > 4) std::cout << "      ... and " << list.size() - 4 << " more\n";
  }
}

void print_failures(const std::vector<ConformanceCase>& cases) {
  bool any = false;
  for (const auto& c : cases) {
    if (c.status != CaseStatus::Fail) continue;
    if (!any) std::cout << "\nfailed:\n";
    any = true;
    std::cout << "  " << c.sample << " " << c.dtype << " " << c.shape << " on " << c.target << ": "
              << c.reason << "\n    repeat: tilegen run " << c.sample << " --target " << c.target
              << " --dtype " << c.dtype << (c.shape.empty() ? "" : " --set " + c.shape) << " --seed "
              << c.seed << "\n";
  }
}

}  // namespace

int cmd_conformance(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen conformance [--target T[,T...]] [--sample S[,S...]] [--dtype D[,D...]] [--json FILE] "
      "[--seed N] [--shard I/N]\n"
      "  --shard I/N: only every N-th case, from the I-th (0-based), so N processes split the suite\n";
  Args a = parse_args(argv, {{"target"}, {"sample"}, {"dtype"}, {"json"}, {"seed"}, {"shard"}}, 0);
  if (a.has("help")) return print_usage(usage);
  ConformanceOptions opt;
  opt.targets = list_flag(a, "target");
  opt.samples = list_flag(a, "sample");
  opt.dtypes = list_flag(a, "dtype");
  opt.seed = a.get_u64("seed", fresh_seed());
  if (a.has("shard")) {
    const std::string v = a.get("shard");
    const auto slash = v.find('/');
    auto number = [&](const std::string& t) {
      if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("--shard '" + v + "': give I/N, two numbers, e.g. --shard 0/4");
      return std::stoi(t);
    };
    if (slash == std::string::npos) number("");
    opt.shard = number(v.substr(0, slash));
    opt.shards = number(v.substr(slash + 1));
  }
  const auto rows = plan_rows(opt);
  const auto target_names = plan_targets(opt);
  if (rows.empty()) throw UsageError("no sample, dtype and test shape matches the filters");
  if (target_names.empty()) throw UsageError("no target is available; see 'tilegen targets'");
  std::ofstream json;
  if (a.has("json")) {
    json.open(a.get("json"), std::ios::trunc);
    if (!json) throw UsageError("cannot open '" + a.get("json") + "' for writing");
  }

  std::size_t label_width = 18;
  for (const auto& r : rows) label_width = std::max(label_width, r.label.size());
  std::cout << "seed " << opt.seed
            << " (each case derives its own; a failure prints the command that repeats it)\n"
            << std::left << std::setw(int(label_width + 2)) << "SAMPLE DTYPE SHAPE";
  for (const auto& t : target_names) std::cout << std::setw(int(std::max<std::size_t>(t.size(), 4) + 2)) << t;
  std::cout << std::endl;
  auto on_row = [&](const ConformanceRow& row, const std::vector<ConformanceCase>& cases) {
    std::cout << std::setw(int(label_width + 2)) << row.label;
    for (std::size_t i = 0; i < cases.size(); ++i)
      std::cout << std::setw(int(std::max<std::size_t>(target_names[i].size(), 4) + 2))
                << cell(cases[i].status);
    std::cout << std::endl;  // a row at a time: the suite can take a while
  };
  const auto cases = run_conformance(opt, rows, target_names, on_row);

  print_skips(cases);
  print_fitted(cases);
  print_failures(cases);
  if (json.is_open()) {
    json << conformance_json(cases);
    if (!json.flush()) throw Error("writing '" + a.get("json") + "' failed");
  }
  const auto count = [&](CaseStatus s) {
    return std::count_if(cases.begin(), cases.end(), [&](const ConformanceCase& c) { return c.status == s; });
  };
  const auto failed = count(CaseStatus::Fail);
  std::cout << "\n"
            << count(CaseStatus::Pass) << " passed, " << failed << " failed, " << count(CaseStatus::Skip)
            << " skipped\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace tg::cli
