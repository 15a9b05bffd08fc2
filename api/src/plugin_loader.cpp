// Finding and loading target plugins. Each libtilegen_<name>.so is opened once per process
// (RTLD_NOW | RTLD_LOCAL), and only when asked for: Target::get(name) and find_plugin(name) load
// that one plugin, select() and targets() load them all. Before anything of a library is used,
// its file must be a regular file (a FIFO would hang dlopen), its entry symbol a function, the
// entry it returns a TgPluginEntry inside the library with this ABI version and the file's name,
// and create() non-null; whatever goes wrong becomes a reason in tg::targets(), never a crash.
// What cannot be checked in-process — a constructor that aborts, a probe() that faults — is
// caught by targets_isolated(), which tries each plugin in a child process first.
//
// The directories are rescanned at every call (a readdir each), so a TILEGEN_PLUGIN_PATH set
// after the first call is honoured; the libraries themselves are cached by path. Libraries are
// never dlclose'd: objects, vtables and exceptions from them may outlive any point where closing
// would be safe, and a failed library costs only its mapping.
#include <dlfcn.h>
#include <link.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "runtime_internal.h"

#ifndef TILEGEN_VERSION
#define TILEGEN_VERSION "unknown"
#endif
// The install's plugin directory, relative to the directory libtilegen.so is in (lib/tilegen/
// beside lib/libtilegen.so): found from where the library is at run time, not from the install
// prefix at build time, so an installed tree moved elsewhere still finds its own plugins, and a
// build tree never loads those of an install.
#ifndef TILEGEN_PLUGIN_SUBDIR
#define TILEGEN_PLUGIN_SUBDIR "tilegen"
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
  bool loaded = false;     // load_library ran (or a child process showed it must not)
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

/// Whether [p, p + n) lies inside one loaded segment of the object that `base` starts.
bool inside_object(const void* p, std::size_t n, const void* base) {
  Dl_info first{}, last{};
  if (!p || !dladdr(p, &first) || !dladdr(static_cast<const char*>(p) + n - 1, &last)) return false;
  return first.dli_fbase == base && last.dli_fbase == base;
}

/// Why `lp.path` may not be dlopen'ed, or "": only a regular file (after symbolic links) is.
std::string file_problem(const LoadedPlugin& lp) {
  struct stat st {};
  if (::stat(lp.path.c_str(), &st) != 0) return "cannot read " + lp.path + ": " + std::strerror(errno);
  if (S_ISREG(st.st_mode)) return "";
  const char* kind = S_ISFIFO(st.st_mode)                         ? "a FIFO"
                     : S_ISDIR(st.st_mode)                        ? "a directory"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                  : "not a file";
  return lp.path + " is " + kind + ", not a regular file: not loaded";
}

/// Whether the C string at `p` is `want`, read byte by byte and only inside the object.
bool names(const char* p, const std::string& want, const void* base) {
  for (std::size_t i = 0; i <= want.size(); ++i)
    if (!inside_object(p + i, 1, base) || p[i] != want.c_str()[i]) return false;
  return true;
}

using EntryFn = const TgPluginEntry* (*)();

/// The entry function, checked to be one: a data symbol of that name would be "called" into.
EntryFn entry_function(void* handle, const std::string& file, std::string* why) {
  void* sym = dlsym(handle, kEntrySymbol);
  if (!sym) {
    *why = file + " does not export " + kEntrySymbol +
           ": it is not a tilegen plugin, or its entry function is not extern \"C\"";
    return nullptr;
  }
  Dl_info info{};
  void* symbol_entry = nullptr;
  if (!dladdr1(sym, &info, &symbol_entry, RTLD_DL_SYMENT) || !symbol_entry) {
    *why = file + ": the loader cannot tell what " + kEntrySymbol + " is";
    return nullptr;
  }
  const int type = ELF64_ST_TYPE(static_cast<const ElfW(Sym)*>(symbol_entry)->st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC) {
    *why = file + ": " + kEntrySymbol + " is not a function (it is a data object): export " +
           "extern \"C\" const TgPluginEntry* " + kEntrySymbol + "()";
    return nullptr;
  }
  return reinterpret_cast<EntryFn>(sym);
}

/// The entry's fields, checked before any is trusted: it must lie in the library (a static
/// object, as TILEGEN_PLUGIN_EXPORT's example has it), carry this ABI version, name the file's
/// plugin and give a create function of the library.
std::string entry_problem(const TgPluginEntry* entry, const void* base, const std::string& name) {
  if (!entry) return std::string(kEntrySymbol) + "() returned no entry";
  if (!inside_object(entry, sizeof *entry, base))
    return std::string(kEntrySymbol) + "() returned a pointer outside the plugin library (" +
           std::to_string(reinterpret_cast<uintptr_t>(entry)) +
           "): it must return the address of a static TgPluginEntry";
  if (entry->abi_version != kPluginAbiVersion)
    return "ABI version " + std::to_string(entry->abi_version) + ", tilegen expects " +
           std::to_string(kPluginAbiVersion) + ": rebuild the plugin against this tilegen";
  if (!names(entry->name, name, base))
    return "the entry's name is not '" + name + "': a plugin must be named libtilegen_<its name>.so";
  if (!entry->create || !inside_object(reinterpret_cast<const void*>(entry->create), 1, base))
    return std::string(kEntrySymbol) + "() returned no create function, or one outside the library";
  return "";
}

/// create() and the plugin's own name() (which must agree with the file's).
void create_plugin(LoadedPlugin& lp, const TgPluginEntry& entry, const std::string& file) {
  try {
    lp.plugin.reset(entry.create());
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

/// dlopen, entry symbol, entry checks, create(). Fills load_error on failure.
void load_library(LoadedPlugin& lp) {
  lp.loaded = true;
  const std::string file = fs::path(lp.path).filename().string();
  if (std::string why = file_problem(lp); !why.empty()) {
    lp.load_error = why;
    return;
  }
  dlerror();
  void* handle = dlopen(lp.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    lp.load_error = "cannot load " + file + ": " + (err ? err : "unknown dlopen error");
    return;
  }
  EntryFn entry_fn = entry_function(handle, file, &lp.load_error);
  if (!entry_fn) return;
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(entry_fn), &self);
  const TgPluginEntry* entry = nullptr;
  try {
    entry = entry_fn();
  } catch (...) {
    lp.load_error = std::string(kEntrySymbol) + "() threw: " + what_of(std::current_exception());
    return;
  }
  if (std::string why = entry_problem(entry, self.dli_fbase, lp.name); !why.empty()) {
    lp.load_error = why;
    return;
  }
  create_plugin(lp, *entry, file);
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
/// This is the discovery order: directory by directory, file names sorted in each. No plugin is
/// preferred by name; Target::select() ranks devices by their TargetInfo (device_ranking.cpp).
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
  // Where libtilegen.so itself is (dladdr on one of the library's own functions, symbolic links
  // resolved): its TILEGEN_PLUGIN_SUBDIR (the install's plugin directory), then that directory
  // itself (the build tree's lib/, where the plugins sit beside libtilegen).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_search_dirs), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    if (!lib.parent_path().empty()) {
      add((lib.parent_path() / TILEGEN_PLUGIN_SUBDIR).string());
      add(lib.parent_path().string());
    }
  }
  return dirs;
}

namespace {

/// The registry's slot for one found library, made (not loaded) on first sight.
LoadedPlugin& slot_for(Registry& reg, const std::string& name, const std::string& path) {
  auto& slot = reg.by_path[path];
  if (!slot) {
    slot = std::make_unique<LoadedPlugin>();
    slot->name = name;
    slot->path = path;
    slot->identity = file_identity(path);
  }
  return *slot;
}

LoadedPlugin& interp_slot(Registry& reg) {
  if (!reg.interp) {
    reg.interp = std::make_unique<LoadedPlugin>();
    reg.interp->name = "interp";
    reg.interp->path = kBuiltIn;
    reg.interp->identity = std::string(kBuiltIn) + ";" + TILEGEN_VERSION;
    reg.interp->plugin = make_interp_plugin();
    reg.interp->loaded = true;
  }
  return *reg.interp;
}

/// "SIGABRT (signal 6)"
std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return (abbrev ? std::string("SIG") + abbrev + " (signal " : "(signal ") + std::to_string(sig) + ")";
}

/// Load and probe `lp` in a child process first; "" when the child came through, else what
/// happened to it. A child that takes longer than a minute is killed and counts as hung.
std::string trial_in_child(const LoadedPlugin& lp) {
  const pid_t pid = ::fork();
  if (pid < 0) return "";  // no child to be had: load it here, as targets() would
  if (pid == 0) {
    // The host's crash handlers (a test framework's, say) are not for the trial, nor a core file.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
    struct rlimit no_core {};
    ::setrlimit(RLIMIT_CORE, &no_core);
    LoadedPlugin trial;
    trial.name = lp.name;
    trial.path = lp.path;
    load_library(trial);
    probe_once(trial);
    ::_exit(0);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return "";
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "loading and probing it did not finish within 60 s (tried in a child process): not loaded";
    }
    ::usleep(2000);
  }
  const std::string what =
      " while it was loaded and probed in a child process: the plugin is broken; not loaded";
  if (WIFSIGNALED(status)) return "killed by " + signal_text(WTERMSIG(status)) + what;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return "the process exited with status " + std::to_string(WEXITSTATUS(status)) + what;
  return "";
}

/// Every plugin found, loaded and probed (each library once per process), interp last.
std::vector<PluginRecord> discover_all(bool isolated) {
  auto found = scan_dirs();
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::vector<PluginRecord> out;
  for (auto& [name, path] : found) {
    LoadedPlugin& lp = slot_for(reg, name, path);
    if (!lp.loaded && isolated && file_problem(lp).empty()) {
      lp.load_error = trial_in_child(lp);
      lp.loaded = !lp.load_error.empty();  // a broken plugin is never loaded here
    }
    if (!lp.loaded) load_library(lp);
    out.push_back(record_of(lp));
  }
  out.push_back(record_of(interp_slot(reg)));
  return out;
}

}  // namespace

std::vector<PluginRecord> discover_plugins() { return discover_all(false); }

std::optional<PluginRecord> discover_plugin(const std::string& name) {
  Registry& reg = registry();
  if (name == "interp") {
    std::lock_guard<std::mutex> lock(reg.mu);
    return record_of(interp_slot(reg));
  }
  for (auto& [found, path] : scan_dirs()) {
    if (found != name) continue;
    std::lock_guard<std::mutex> lock(reg.mu);
    LoadedPlugin& lp = slot_for(reg, found, path);
    if (!lp.loaded) load_library(lp);
    return record_of(lp);
  }
  return std::nullopt;
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (auto& f : scan_dirs()) out.push_back(f.first);
  out.push_back("interp");
  return out;
}

std::vector<TargetStatus> targets() {
  std::vector<TargetStatus> out;
  for (PluginRecord& r : discover_all(false)) out.push_back(std::move(r.status));
  return out;
}

std::vector<TargetStatus> targets_isolated() {
  std::vector<TargetStatus> out;
  for (PluginRecord& r : discover_all(true)) out.push_back(std::move(r.status));
  return out;
}

TargetPlugin* find_plugin(const std::string& name, std::string* reason) {
  if (std::optional<PluginRecord> r = discover_plugin(name)) {
    if (!r->plugin && reason) *reason = r->status.reason;
    return r->plugin;
  }
  if (reason) {
    std::string dirs;
    for (const std::string& d : plugin_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    *reason = "no plugin libtilegen_" + name + ".so in " + dirs;
  }
  return nullptr;
}

}  // namespace tg
