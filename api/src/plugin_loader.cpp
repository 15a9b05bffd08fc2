// Finding and loading target plugins. Each libtilegen_<name>.so is opened once per process
// (RTLD_NOW | RTLD_LOCAL), checked for the entry symbol and the ABI version, and created inside
// try/catch: whatever goes wrong becomes a reason in tg::targets(), never a crash. The
// directories are rescanned at every call (a readdir each), so a TILEGEN_PLUGIN_PATH set after
// the first call is honoured; the libraries themselves are cached by path.
//
// Libraries are never dlclose'd: objects, vtables and exceptions from them may outlive any
// point where closing would be safe, and a failed library costs only its mapping.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "runtime_internal.h"

#ifndef TILEGEN_VERSION
#define TILEGEN_VERSION "unknown"
#endif
#ifndef TILEGEN_PLUGIN_INSTALL_DIR
#define TILEGEN_PLUGIN_INSTALL_DIR ""
#endif

namespace tg {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEntrySymbol = "tilegen_plugin_entry";
constexpr const char* kBuiltIn = "(built in)";

/// A library opened (or tried) once; `plugin` lives as long as the process.
struct LoadedPlugin {
  std::string name;
  std::string path;
  std::string identity;
  std::unique_ptr<TargetPlugin> plugin;
  std::string load_error;  // why `plugin` is null
  bool probed = false;
  ProbeResult probe;
};

/// Everything the loader keeps, guarded by one mutex. Leaked on purpose: plugins and their
/// devices must not be destroyed by static destructors running in an unknown order at exit.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<LoadedPlugin>> by_path;
  std::unique_ptr<LoadedPlugin> interp;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path;
  return path + ";" + std::to_string(st.st_size) + ";" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

/// dlopen, entry symbol, ABI check, create(). Fills load_error on failure.
void load_library(LoadedPlugin& lp) {
  const std::string file = fs::path(lp.path).filename().string();
  dlerror();
  void* handle = dlopen(lp.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    lp.load_error = "cannot load " + file + ": " + (err ? err : "unknown dlopen error");
    return;
  }
  using EntryFn = const TgPluginEntry* (*)();
  auto entry_fn = reinterpret_cast<EntryFn>(dlsym(handle, kEntrySymbol));
  if (!entry_fn) {
    lp.load_error = file + " does not export " + kEntrySymbol +
                    ": it is not a tilegen plugin, or its entry function is not extern \"C\"";
    return;
  }
  const TgPluginEntry* entry = nullptr;
  try {
    entry = entry_fn();
  } catch (...) {
    lp.load_error = std::string(kEntrySymbol) + "() threw: " + what_of(std::current_exception());
    return;
  }
  if (!entry || !entry->create) {
    lp.load_error = std::string(kEntrySymbol) + "() returned no entry or no create function";
    return;
  }
  if (entry->abi_version != kPluginAbiVersion) {
    lp.load_error = "ABI version " + std::to_string(entry->abi_version) + ", tilegen expects " +
                    std::to_string(kPluginAbiVersion) + ": rebuild the plugin against this tilegen";
    return;
  }
  try {
    lp.plugin.reset(entry->create());
  } catch (...) {
    lp.load_error = "create() failed: " + what_of(std::current_exception());
    return;
  }
  if (!lp.plugin) {
    lp.load_error = "create() returned null";
    return;
  }
  std::string self_name;
  try {
    self_name = lp.plugin->name();
  } catch (...) {
    self_name = "(name() threw: " + what_of(std::current_exception()) + ")";
  }
  if (self_name != lp.name) {
    lp.load_error =
        file + " calls itself '" + self_name + "': a plugin must be named libtilegen_<its name>.so";
    lp.plugin.reset();
  }
}

/// probe() once per plugin, inside try/catch; a plugin with no device counts as unavailable.
void probe_once(LoadedPlugin& lp) {
  if (lp.probed || !lp.plugin) return;
  lp.probed = true;
  try {
    lp.probe = lp.plugin->probe();
  } catch (...) {
    lp.probe = {};
    lp.probe.reason = "probe() failed: " + what_of(std::current_exception());
  }
  if (lp.probe.available && lp.probe.devices.empty()) {
    lp.probe.available = false;
    if (lp.probe.reason.empty()) lp.probe.reason = "the plugin reports no device";
  }
  if (!lp.probe.available && lp.probe.reason.empty()) lp.probe.reason = "the plugin gives no reason";
}

PluginRecord record_of(LoadedPlugin& lp) {
  probe_once(lp);
  PluginRecord r;
  r.status.name = lp.name;
  r.status.path = lp.path;
  r.identity = lp.identity;
  if (!lp.plugin) {
    r.status.reason = lp.load_error;
    return r;
  }
  r.plugin = lp.plugin.get();
  r.status.available = lp.probe.available;
  r.status.reason = lp.probe.available ? std::string() : lp.probe.reason;
  r.status.devices = lp.probe.devices;
  return r;
}

/// name → path of every libtilegen_<name>.so in the search directories; the first one wins.
std::vector<std::pair<std::string, std::string>> scan_dirs() {
  std::vector<std::pair<std::string, std::string>> found;
  const std::string prefix = "libtilegen_", suffix = ".so";
  for (const std::string& dir : plugin_search_dirs()) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      files.push_back(it->path());
    std::sort(files.begin(), files.end());  // readdir order is arbitrary; keep runs repeatable
    for (const fs::path& p : files) {
      std::string file = p.filename().string();
      if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      if (name.find('.') != std::string::npos || name == "interp") continue;  // interp is built in
      bool seen = std::any_of(found.begin(), found.end(), [&](auto& f) { return f.first == name; });
      if (seen) continue;
      std::error_code canon_ec;
      fs::path canonical = fs::weakly_canonical(p, canon_ec);  // one library reached by two paths loads once
      found.emplace_back(name, canon_ec || canonical.empty() ? p.string() : canonical.string());
    }
  }
  return found;
}

int known_rank(const std::string& name) {
  static const char* known[] = {"cuda", "hip", "vulkan", "cpu"};
  for (int i = 0; i < 4; ++i)
    if (name == known[i]) return i;
  return 4;
}

}  // namespace

std::vector<std::string> plugin_search_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  if (const char* env = std::getenv("TILEGEN_PLUGIN_PATH")) {
    std::string s = env;
    for (std::size_t start = 0; start <= s.size();) {
      std::size_t colon = s.find(':', start);
      if (colon == std::string::npos) colon = s.size();
      add(s.substr(start, colon - start));
      start = colon + 1;
    }
  }
  add(TILEGEN_PLUGIN_INSTALL_DIR);
  // Beside libtilegen.so itself: dladdr on one of the library's own functions.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_search_dirs), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    add(lib.parent_path().string());
  }
  return dirs;
}

std::vector<PluginRecord> discover_plugins() {
  auto found = scan_dirs();
  std::stable_sort(found.begin(), found.end(),
                   [](auto& a, auto& b) { return known_rank(a.first) < known_rank(b.first); });
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::vector<PluginRecord> out;
  for (auto& [name, path] : found) {
    auto& slot = reg.by_path[path];
    if (!slot) {
      slot = std::make_unique<LoadedPlugin>();
      slot->name = name;
      slot->path = path;
      slot->identity = file_identity(path);
      load_library(*slot);
    }
    out.push_back(record_of(*slot));
  }
  if (!reg.interp) {
    reg.interp = std::make_unique<LoadedPlugin>();
    reg.interp->name = "interp";
    reg.interp->path = kBuiltIn;
    reg.interp->identity = std::string(kBuiltIn) + ";" + TILEGEN_VERSION;
    reg.interp->plugin = make_interp_plugin();
  }
  out.push_back(record_of(*reg.interp));
  return out;
}

std::vector<TargetStatus> targets() {
  std::vector<TargetStatus> out;
  for (PluginRecord& r : discover_plugins()) out.push_back(std::move(r.status));
  return out;
}

TargetPlugin* find_plugin(const std::string& name, std::string* reason) {
  std::vector<PluginRecord> all = discover_plugins();
  for (PluginRecord& r : all) {
    if (r.status.name != name) continue;
    if (!r.plugin && reason) *reason = r.status.reason;
    return r.plugin;
  }
  if (reason) {
    std::string dirs;
    for (const std::string& d : plugin_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    *reason = "no plugin libtilegen_" + name + ".so in " + dirs;
  }
  return nullptr;
}

}  // namespace tg
