// The fuzz loop and the case replay (see kernel_fuzz.h).
#include "kernel_fuzz.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "kernel_shrink.h"

namespace tg::fuzz {

namespace {

namespace fs = std::filesystem;

Case case_of(const ProgramSpec& p) { return {build_program(p).function(), program_sizes(p)}; }

std::string file_name(const Outcome& o, uint64_t seed) {
  std::string c = o.config;
  for (char& ch : c)
    if (ch == ':') ch = '-';
  return o.category + "-" + c + "-" + std::to_string(seed) + ".tgir";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

void record(const FuzzOptions& opt, const std::vector<Config>& configs, const ProgramSpec& p,
            const Outcome& o, FuzzReport& r, std::ostream& log) {
  for (Finding& f : r.findings)
    if (f.outcome.key() == o.key()) {
      ++f.repeats;
      return;
    }
  log << "FAIL " << o.key() << ": " << describe(p) << "\n  " << first_line(o.detail) << std::endl;
  Finding f{o, p, {}, 0};
  if (opt.shrink) {
    f.program = shrink_program(p, [&](const ProgramSpec& q) {
      Outcome again = check_case(case_of(q), configs, o.config);
      bool same = again.verdict == Verdict::Fail && again.key() == o.key();
      if (same) f.outcome = again;
      return same;
    });
    log << "  shrunk: " << describe(f.program) << "\n  " << first_line(f.outcome.detail) << "\n";
  }
  if (!opt.out_dir.empty()) {
    fs::create_directories(opt.out_dir);
    f.file = (fs::path(opt.out_dir) / file_name(o, p.seed)).string();
    std::ofstream(f.file) << case_text(
        case_of(f.program),
        "kernel fuzz: " + o.key() + "\n" + describe(f.program) + "\n" + first_line(f.outcome.detail));
    log << "  written: " << f.file << "\n";
    log.flush();
  }
  r.findings.push_back(std::move(f));
}

/// The configuration a case file was found on, from its "# kernel fuzz: CONFIG/CATEGORY" line;
/// empty when the file has none (a hand-written case).
std::string recorded_config(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '#') break;
    const std::string tag = "# kernel fuzz: ";
    if (line.rfind(tag, 0) == 0) return line.substr(tag.size(), line.find('/') - tag.size());
  }
  return "";
}

/// What a case file expects the oracle to reject it for, from a "# expect invalid: TEXT" line (a
/// program the interpreter must refuse, such as a race it once missed); empty: it must pass.
std::string expected_rejection(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '#') break;
    const std::string tag = "# expect invalid: ";
    if (line.rfind(tag, 0) == 0) return line.substr(tag.size());
  }
  return "";
}

bool is_known(const FuzzOptions& opt, const Outcome& o) {
  for (const std::string& k : opt.known)
    if (o.detail.find(k) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<std::string> known_signatures(const std::string& dir) {
  std::vector<std::string> out;
  const fs::path known = fs::path(dir) / "known";
  if (!fs::is_directory(known)) return out;
  for (const auto& e : fs::directory_iterator(known)) {
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);)
      if (line.rfind("# known: ", 0) == 0) out.push_back(line.substr(9));
  }
  return out;
}

FuzzReport run_fuzz(const FuzzOptions& opt, std::ostream& log) {
  std::vector<std::string> skipped;
  const std::vector<Config> configs = configs_for(opt.target, &skipped);
  for (const std::string& s : skipped) log << "not checked: " << s << "\n";
  if (configs.empty()) throw Error("fuzz: no configuration of target '" + opt.target + "' can run here");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  FuzzReport r;
  for (uint64_t i = 0;; ++i) {
    if (opt.count > 0 && r.programs >= opt.count) break;
    if (opt.seconds > 0 && elapsed() >= opt.seconds) break;
    if (opt.count <= 0 && opt.seconds <= 0) break;
    ProgramSpec p = generate_program(opt.seed + i);
    ++r.programs;
    Outcome o;
    try {
      const bool execute = opt.execute_every <= 1 || i % uint64_t(opt.execute_every) == 0;
      o = check_case(case_of(p), configs, {}, &r.seconds, execute);
    } catch (const Error& e) {  // the builder rejected it: a generator bug
      o = {Verdict::Invalid, "builder", "builder", e.what()};
    }
    if (opt.verbose) log << describe(p) << " -> " << (o.verdict == Verdict::Pass ? "pass" : o.key()) << "\n";
    switch (o.verdict) {
      case Verdict::Pass: ++r.passed; break;
      case Verdict::Skip: ++r.skipped; break;
      case Verdict::Invalid: {
        ++r.invalid;
        std::string why = o.category + ": " + first_line(o.detail);
        bool race = why.find("race on") != std::string::npos;
        ++r.invalid_reasons[race ? "oracle: race (program dropped)" : why.substr(0, 160)];
        break;
      }
      case Verdict::Fail:
        if (is_known(opt, o)) {
          ++r.known;
          break;
        }
        ++r.failed;
        record(opt, configs, p, o, r, log);
        break;
    }
  }
  log << r.programs << " programs: " << r.passed << " passed, " << r.failed << " failed, " << r.known
      << " known failures, " << r.skipped << " skipped, " << r.invalid << " dropped (" << elapsed()
      << " s)\n";
  log << "  time:";
  for (const auto& [what, s] : r.seconds) log << " " << what << " " << s << " s";
  log << "\n";
  for (const auto& [why, n] : r.invalid_reasons) log << "  dropped " << n << ": " << why << "\n";
  for (const Finding& f : r.findings)
    log << "  finding " << f.outcome.key() << " (+" << f.repeats << " more)"
        << (f.file.empty() ? "" : ": " + f.file) << "\n";
  return r;
}

int replay_cases(const std::string& dir, const std::vector<Config>& configs, std::ostream& log,
                 bool show_lowered) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(dir))
    files.push_back(dir);
  else if (!fs::is_directory(dir))
    throw Error("fuzz: no case file or folder " + dir);
  else
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".tgir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int bad = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    const bool known = f.parent_path().filename() == "known";
    Outcome o;
    try {
      o = check_case(parse_case(text.str(), f.string()), configs);
    } catch (const Error& e) {
      o = {Verdict::Invalid, "parse", "parse", e.what()};
    }
    // A known failure shows on the configuration that found it; where that one is not here (no
    // plugin in this build, or another --target), its passing elsewhere proves nothing.
    const std::string found_on = recorded_config(text.str());
    const bool found_here =
        found_on.empty() || std::any_of(configs.begin(), configs.end(),
                                        [&](const Config& c) { return c.name == found_on; });
    if (known && !found_here && o.verdict != Verdict::Fail) {
      log << "skip " << f.filename().string() << ": found on " << found_on
          << ", which is not checked here\n";
      continue;
    }
    const std::string rejection = expected_rejection(text.str());
    const bool failed = o.verdict == Verdict::Fail,
               ok = known               ? o.verdict != Verdict::Pass
                    : !rejection.empty() ? o.verdict == Verdict::Invalid && o.detail.find(rejection) != std::string::npos
                                         : o.verdict == Verdict::Pass || o.verdict == Verdict::Skip;
    log << (ok ? "ok   " : "BAD  ") << f.filename().string() << ": "
        << (o.verdict == Verdict::Pass ? std::string("pass") : o.key() + ": " + first_line(o.detail)) << "\n";
    if (show_lowered && !o.lowered.empty()) log << "--- lowered for " << o.config << ":\n" << o.lowered;
    if (!ok && known && !failed)
      log << "     it passes now: move it out of known/ and its entry in tests/fuzz/README.md\n";
    bad += ok ? 0 : 1;
  }
  log << "replayed " << files.size() << " kernel cases, " << bad << " unexpected\n";
  return bad;
}

}  // namespace tg::fuzz
