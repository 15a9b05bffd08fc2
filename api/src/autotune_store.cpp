// The store of tuned configs: one KernelCache entry a tuning problem, in its own directory beside
// the kernel cache, so it has the cache's rules — written atomically (temp + rename), private
// to the user, and an entry that is truncated, corrupt, foreign or another key's reads as a
// miss (the problem is tuned again and the entry replaced). The config is the entry's metadata:
//
//   format=tilegen-autotune-1  config.block_M=128  config.block_N=64  median_ms=0.412 ...
#include <cerrno>
#include <cstdlib>

#include "autotune_internal.h"
#include "tilegen/plugin.h"

namespace tg::autotune_detail {
namespace {

constexpr const char* kFormat = "tilegen-autotune-1";

std::optional<int64_t> whole(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end) return std::nullopt;
  return int64_t(v);
}

std::optional<double> real(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end || !(v >= 0) || v > 1e12) return std::nullopt;
  return v;
}

std::string space_text(const TuneSpace& space) {
  std::string out;
  for (const TuneParam& p : space.params) {
    out += p.name + "=";
    for (int64_t v : p.values) out += std::to_string(v) + ":";
    out += ";";
  }
  return out;
}

}  // namespace

Store make_store(const std::string& dir, const Target& target, const TuneSpace& space, const Kernel& first,
                 const Inputs& in, const TuneOptions& opt) {
  const TargetInfo& info = target.info();
  const CompileOptions resolved = resolve_compile_options(target.plugin(), opt.compile);
  std::string options = "space=" + space_text(space) + "|args=" + in.signature() + "|compile=";
  for (const auto& [k, v] : resolved.params) options += k + "=" + v + ";";
  if (opt.baseline) options += "|baseline=" + format_config(*opt.baseline);
  Store s{KernelCache(dir), {}};
  // The kernel is its name and the IR of the first config: a change to the kernel's code re-tunes.
  s.key = KernelCache::key(
      {first.ir(), "autotune;" + target.name() + ";" + info.device_name,
       info.arch + ";t" + std::to_string(info.max_threads) + ";s" + std::to_string(info.shared_mem_bytes),
       options});
  return s;
}

std::optional<TuneTrial> Store::load(const std::vector<std::string>& names) const {
  std::optional<CacheEntry> e = cache.load(key);
  if (!e) return std::nullopt;
  auto field = [&](const std::string& k) -> std::string {
    auto it = e->metadata.find(k);
    return it == e->metadata.end() ? std::string() : it->second;
  };
  if (field("format") != kFormat) return std::nullopt;
  TuneTrial t;
  for (const std::string& n : names) {
    auto v = whole(field("config." + n));
    if (!v) return std::nullopt;  // an entry from a space with other names: tune again
    t.config[n] = *v;
  }
  auto median = real(field("median_ms")), lo = real(field("min_ms")), hi = real(field("max_ms"));
  auto runs = whole(field("runs"));
  if (!median || !lo || !hi || !runs || *runs < 1) return std::nullopt;
  t.time.median_ms = *median;
  t.time.min_ms = *lo;
  t.time.max_ms = *hi;
  t.time.runs = int(*runs);
  t.status = TuneStatus::Ok;
  return t;
}

void Store::save(const TuneResult& r) const {
  if (!r.best_index) return;
  const TuneTrial& best = r.trials[*r.best_index];
  CacheEntry e;
  e.metadata["format"] = kFormat;
  for (const auto& [k, v] : best.config) e.metadata["config." + k] = std::to_string(v);
  e.metadata["median_ms"] = std::to_string(best.time.median_ms);
  e.metadata["min_ms"] = std::to_string(best.time.min_ms);
  e.metadata["max_ms"] = std::to_string(best.time.max_ms);
  e.metadata["runs"] = std::to_string(best.time.runs);
  e.metadata["trials"] = std::to_string(r.trials.size());
  // A readable record of the whole run, for whoever opens the file.
  for (const TuneTrial& t : r.trials)
    e.source += format_config(t.config) + " " + status_name(t.status) +
                (t.status == TuneStatus::Ok ? " " + std::to_string(t.time.median_ms) + " ms" : "") + "\n";
  cache.store(key, e);  // a store that cannot be written only costs the next run a tuning
}

}  // namespace tg::autotune_detail
