// The on-disk kernel cache: compiled artifacts keyed by what produced them, so a second run of a
// program skips the target compiler (NVRTC, hiprtc, LLVM). Target::compile uses it for every
// artifact with a binary; an application may also use it directly.
//
//   tg::KernelCache cache;                       // TILEGEN_CACHE_DIR, $XDG_CACHE_HOME/tilegen,
//   ~/.cache/tilegen auto key = tg::KernelCache::key({ir, "cuda", "sm_90", options_text}); if (auto hit =
//   cache.load(key)) ...; else cache.store(key, entry);
//
// Entries are single files written atomically (a temporary file renamed over the final name), so
// a reader never sees half an entry. A corrupt or foreign entry — bad magic, other format
// version, truncated, checksum mismatch, or a key that is not the one asked for — reads as a
// miss and is replaced by the next store. Set TILEGEN_CACHE=0 to turn the cache off.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tg {

/// Everything a compiled artifact depends on. The tilegen version is added by key().
struct CacheKey {
  std::string ir;       // the lowered IR text handed to codegen
  std::string target;   // plugin name and identity (library, size, time)
  std::string arch;     // device architecture and the TargetInfo fields codegen reads
  std::string options;  // CompileOptions that reach codegen, as text
};

/// What a hit gives back: enough for DeviceContext::load.
struct CacheEntry {
  std::string source;
  std::string assembly;
  std::vector<uint8_t> binary;
  std::string entry;
  std::map<std::string, std::string> metadata;  // free-form: target, arch, tilegen version, ...
};

class KernelCache {
 public:
  /// The cache in `dir`, or in default_dir() when `dir` is empty. Nothing is created until store().
  explicit KernelCache(std::string dir = {});

  /// TILEGEN_CACHE_DIR, else $XDG_CACHE_HOME/tilegen, else $HOME/.cache/tilegen.
  static std::string default_dir();
  /// False when TILEGEN_CACHE=0 (or "off", "false").
  static bool enabled();

  /// A file-name-safe digest of the key fields plus the tilegen version. The full key is also
  /// stored in the entry and compared on load, so a digest collision is a miss, never a wrong hit.
  struct Key {
    std::string digest;
    std::string material;
  };
  static Key key(const CacheKey& k);

  const std::string& dir() const { return dir_; }
  /// The file an entry lives in.
  std::string path_of(const Key& k) const;

  /// The entry, or nullopt when absent, unreadable, corrupt or foreign.
  std::optional<CacheEntry> load(const Key& k) const;
  /// Write atomically. Returns false (and leaves no file behind) when the directory cannot be
  /// written: the cache is an optimisation, never a reason to fail a compile.
  bool store(const Key& k, const CacheEntry& e) const;

 private:
  std::string dir_;
};

}  // namespace tg
