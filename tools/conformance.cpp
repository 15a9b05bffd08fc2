#include "conformance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "cli.h"

namespace tg::cli {

const char* name_of(CaseStatus s) {
  switch (s) {
    case CaseStatus::Pass: return "pass";
    case CaseStatus::Fail: return "fail";
    case CaseStatus::Skip: return "skip";
  }
  return "?";
}

namespace {

bool selected(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// A target as the runner holds it: opened once, or the reason it cannot run anything.
struct TargetSlot {
  std::string name;
  std::optional<Target> target;
  std::string unavailable;  // skip reason when the target is not available here
  std::string broken;       // failure reason when it claims to be available but does not open
};

TargetSlot open_slot(const std::string& name, const std::vector<TargetStatus>& all) {
  TargetSlot slot{name, std::nullopt, {}, {}};
  for (const auto& st : all) {
    if (st.name != name) continue;
    if (!st.available) {
      slot.unavailable = "target unavailable: " + st.reason;
      return slot;
    }
    try {
      slot.target = Target::get(name);
    } catch (const std::exception& e) {
      slot.broken = std::string("target reports available but does not open: ") + e.what();
    }
  }
  return slot;
}

bool is_unsupported(const Error& e) { return e.message().rfind("unsupported:", 0) == 0; }

// Compile, launch on fresh inputs, and compare: one cell of the matrix.
ConformanceCase run_case(const ConformanceRow& row, const samples::Params& params, const Kernel& kernel,
                         const TargetSlot& slot, ConformanceCase c) {
  auto finish = [&](CaseStatus s, std::string reason) {
    c.status = s;
    c.reason = std::move(reason);
    return c;
  };
  if (!slot.unavailable.empty()) return finish(CaseStatus::Skip, slot.unavailable);
  if (!slot.broken.empty()) return finish(CaseStatus::Fail, slot.broken);
  std::optional<CompiledKernel> compiled;
  try {
    compiled = slot.target->compile(kernel);
  } catch (const Error& e) {
    if (is_unsupported(e)) return finish(CaseStatus::Skip, e.message());
    return finish(CaseStatus::Fail, std::string("compile: ") + e.what());
  } catch (const std::exception& e) {
    return finish(CaseStatus::Fail, std::string("compile: internal error: ") + e.what());
  }
  try {
    std::mt19937_64 rng(c.seed);
    samples::Problem problem = row.sample->make_problem(params, row.dtype, rng);
    compiled->launch(samples::kernel_args(kernel.function(), problem));
    double max_error = 0;
    std::string mismatch;
    for (const auto& check : check_outputs(problem, row.sample->tolerance(params, row.dtype))) {
      const double e = check.cmp.max_abs_error;
      max_error = std::isnan(e) || std::isnan(max_error) ? NAN : std::max(max_error, e);
      if (check.cmp.mismatches > 0 && mismatch.empty()) mismatch = describe_mismatch(check);
    }
    c.max_error = max_error;
    if (!mismatch.empty()) return finish(CaseStatus::Fail, mismatch);
    return finish(CaseStatus::Pass, {});
  } catch (const std::exception& e) {
    return finish(CaseStatus::Fail, std::string("launch: ") + e.what());
  }
}

// One case at `fitted` tiles (the row's kernel where they are the row's own), naming the tiles
// that changed.
ConformanceCase run_fitted(const ConformanceRow& row, const samples::Params& params,
                           const samples::Params& fitted, const Kernel& kernel, const TargetSlot& slot,
                           ConformanceCase c) {
  if (fitted == params) return run_case(row, params, kernel, slot, c);
  samples::Params changed;
  for (const auto& [name, value] : fitted)
    if (params.at(name) != value) changed[name] = value;
  c.fitted = format_params(changed);
  return run_case(row, fitted, row.sample->build(fitted, row.dtype), slot, c);
}

// A skip because the tiles need more shared memory than the device has.
bool needs_room(const ConformanceCase& c) {
  return c.status == CaseStatus::Skip && c.reason.rfind("unsupported:", 0) == 0 &&
         (c.reason.find("Workgroup memory") != std::string::npos ||
          c.reason.find("shared memory") != std::string::npos);
}

// The row on one open target, its tiles fitted to the device's shared memory where they do not fit:
// the shape's tiles are the sample's choice, not a user's (its sizes stay).
ConformanceCase run_fitting(const ConformanceRow& row, const samples::Params& params, const Kernel& kernel,
                            const TargetSlot& slot, const ConformanceCase& c) {
  std::set<std::string> fixed;
  for (const auto& [name, value] : row.shape)
    if (!samples::is_tile_param(name)) fixed.insert(name);
  const TargetInfo& info = slot.target->info();
  TargetPlugin& plugin = slot.target->plugin();
  const std::vector<PassEntry> pipeline = plugin.pipeline(info, resolve_compile_options(plugin, {}));
  samples::Params fitted = samples::fit_to_device(*row.sample, params, row.dtype, info, pipeline, fixed);
  ConformanceCase done = run_fitted(row, params, fitted, kernel, slot, c);
  // The code generator may need more than the IR's buffers (vulkan's prefetch slots): while the
  // compile finds too little room, fit to an eighth less, three times at most.
  int64_t budget = info.shared_mem_bytes;
  for (int tries = 0; tries < 3 && needs_room(done); ++tries) {
    budget = budget * 7 / 8;
    samples::Params smaller =
        samples::fit_to_device(*row.sample, fitted, row.dtype, info, pipeline, fixed, budget);
    if (smaller == fitted) continue;
    fitted = smaller;
    done = run_fitted(row, params, fitted, kernel, slot, c);
  }
  return done;
}

// All targets of one row; a row whose kernel does not build fails on every target.
std::vector<ConformanceCase> run_row(const ConformanceOptions& opt, const ConformanceRow& row,
                                     const std::vector<TargetSlot>& slots) {
  std::vector<ConformanceCase> cases;
  std::optional<samples::Params> params;
  std::optional<Kernel> kernel;
  std::string build_error;
  try {
    params = samples::resolve(*row.sample, row.shape);
    kernel = row.sample->build(*params, row.dtype);
  } catch (const std::exception& e) {
    build_error = std::string("build: ") + e.what();
  }
  for (const auto& slot : slots) {
    ConformanceCase c;
    c.sample = row.sample->name;
    c.target = slot.name;
    c.dtype = std::string(row.dtype.name());
    c.shape = format_params(row.shape);
    c.label = row.shape_label;
    c.seed = case_seed(opt.seed, c);
    if (!build_error.empty()) {
      c.reason = build_error;
      cases.push_back(c);
      continue;
    }
    if (!slot.target) {
      cases.push_back(run_case(row, *params, *kernel, slot, c));
      continue;
    }
    cases.push_back(run_fitting(row, *params, *kernel, slot, c));
  }
  return cases;
}

void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += char(ch);
        }
    }
  }
  out += '"';
}

}  // namespace

std::vector<ConformanceRow> plan_rows(const ConformanceOptions& opt) {
  for (const auto& name : opt.samples) find_sample(name);  // unknown names are usage errors
  for (const auto& name : opt.dtypes)
    if (!DType::from_name(name)) throw UsageError("unknown dtype '" + name + "'");
  if (opt.shards < 1 || opt.shard < 0 || opt.shard >= opt.shards)
    throw UsageError("--shard " + std::to_string(opt.shard) + "/" + std::to_string(opt.shards) +
                     " is out of range; give I/N with 0 <= I < N");
  std::vector<ConformanceRow> rows;
  std::size_t index = 0;
  for (const auto& s : samples::all()) {
    if (!selected(opt.samples, s.name)) continue;
    for (DType t : s.dtypes) {
      if (!selected(opt.dtypes, std::string(t.name()))) continue;
      for (std::size_t i = 0; i < s.test_shapes.size(); ++i) {
        if (index++ % std::size_t(opt.shards) != std::size_t(opt.shard)) continue;
        const samples::Params& shape = s.test_shapes[i];
        std::string shape_text = shape.empty() ? "defaults" : format_params(shape);
        if (i < s.test_shape_info.size() && !s.test_shape_info[i].label.empty())
          shape_text = s.test_shape_info[i].label;
        rows.push_back({&s, t, shape, shape_text, s.name + " " + std::string(t.name()) + " " + shape_text});
      }
    }
  }
  return rows;
}

std::vector<std::string> plan_targets(const ConformanceOptions& opt) {
  const auto all = targets();
  std::vector<std::string> names;
  if (opt.targets.empty()) {
    for (const auto& t : all)
      if (t.available) names.push_back(t.name);
    return names;
  }
  for (const auto& name : opt.targets) {
    const bool known =
        std::any_of(all.begin(), all.end(), [&](const TargetStatus& t) { return t.name == name; });
    if (!known) {
      std::vector<std::string> listed;
      for (const auto& t : all) listed.push_back(t.name);
      throw UsageError("unknown target '" + name + "'; targets are " + join(listed, ", "));
    }
    names.push_back(name);
  }
  return names;
}

std::vector<ConformanceCase> run_conformance(const ConformanceOptions& opt,
                                             const std::vector<ConformanceRow>& rows,
                                             const std::vector<std::string>& target_names,
                                             const RowCallback& on_row) {
  const auto all = targets();
  std::vector<TargetSlot> slots;
  for (const auto& name : target_names) slots.push_back(open_slot(name, all));
  std::vector<ConformanceCase> cases;
  for (const auto& row : rows) {
    auto row_cases = run_row(opt, row, slots);
    if (on_row) on_row(row, row_cases);
    cases.insert(cases.end(), row_cases.begin(), row_cases.end());
  }
  return cases;
}

std::string conformance_json(const std::vector<ConformanceCase>& cases) {
  std::string out = "{\"cases\":[";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    out += i ? ",\n  {" : "\n  {";
    const std::pair<const char*, const std::string*> fields[] = {
        {"sample", &c.sample}, {"target", &c.target}, {"dtype", &c.dtype},
        {"shape", &c.shape},   {"label", &c.label},   {"fitted", &c.fitted}};
    for (const auto& [key, value] : fields) {
      json_string(out, key);
      out += ':';
      json_string(out, *value);
      out += ',';
    }
    out += "\"status\":";
    json_string(out, name_of(c.status));
    out += ",\"max_error\":";
    if (c.max_error && std::isfinite(*c.max_error)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", *c.max_error);
      out += buf;
    } else {
      out += "null";  // not run, or NaN/inf, which JSON cannot hold
    }
    out += ",\"reason\":";
    json_string(out, c.reason);
    out += ",\"seed\":" + std::to_string(c.seed) + "}";
  }
  out += "\n]}\n";
  return out;
}

uint64_t case_seed(uint64_t master, const ConformanceCase& c) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the case's identity
  for (unsigned char ch : c.sample + "/" + c.dtype + "/" + c.shape + "@" + c.target)
    h = (h ^ ch) * 1099511628211ull;
  uint64_t z = master + h + 0x9E3779B97F4A7C15ull;  // one splitmix64 step mixes in the master seed
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace tg::cli
