// The on-disk kernel cache: compiled artifacts keyed by what produced them, so a second run of a
// program skips the target compiler (NVRTC, hiprtc, LLVM). Target::compile uses it for every
// artifact with a binary; an application may also use it directly.
//
//   tg::KernelCache cache;  // TILEGEN_CACHE_DIR, $XDG_CACHE_HOME/tilegen, ~/.cache/tilegen
//   auto key = tg::KernelCache::key({ir, "cuda", "sm_90", options_text});
//   if (auto hit = cache.load(key)) ...; else cache.store(key, entry);
//
// Entries are single files written atomically (a temporary file renamed over the final name), so
// a reader never sees half an entry. A corrupt or foreign entry — bad magic, other format
// version, truncated, checksum mismatch, or a key that is not the one asked for — reads as a
// miss and is replaced by the next store; so does anything that is not a regular file of yours
// (a FIFO, a symbolic link, a device) and any file over kMaxEntryBytes, judged by its metadata
// before a byte is read. Set TILEGEN_CACHE=0 to turn the cache off.
//
// Trust: the cache holds code this process runs, so it is exactly as trusted as the user's own
// files. Directories it makes are 0700 and entries 0600; a directory that belongs to another
// user or that other users may write is refused with a tg::Error (check_trusted). A checksum
// guards against accidents, not against someone who can write the directory (docs/kernel_cache.md).
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
  /// The largest file read (an entry, or a plugin's own cache file such as vulkan's pipeline
  /// cache): bigger ones read as misses and are never written.
  static constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;

  /// The cache in `dir`, or in default_dir() when `dir` is empty. Nothing is created until store().
  explicit KernelCache(std::string dir = {});

  /// TILEGEN_CACHE_DIR, else $XDG_CACHE_HOME/tilegen, else $HOME/.cache/tilegen, else
  /// tilegen-cache-<uid> in the temp directory.
  static std::string default_dir();
  /// False when TILEGEN_CACHE=0 (or off, false); a value that is not a switch is a tg::Error.
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

  /// The entry, or nullopt when absent, unreadable, corrupt or foreign. Throws tg::Error when
  /// the directory is not trusted (check_trusted).
  std::optional<CacheEntry> load(const Key& k) const;
  /// Write atomically, making the directory (0700) when missing. Returns false (and leaves no file behind)
  /// when the directory cannot be written: the cache is an optimisation, never a reason to fail a compile.
  /// Throws tg::Error when the directory is not trusted.
  bool store(const Key& k, const CacheEntry& e) const;
  /// Remove an entry that turned out not to load (a hit the target could not use).
  void evict(const Key& k) const;

  /// False when the directory does not exist yet; true when it is the user's own and no other
  /// user may write it; otherwise a tg::Error that says why and what to do.
  bool check_trusted() const;
  /// A file of the cache directory other than an entry (vulkan's pipeline cache), under the same
  /// rules: a regular file of the user's of at most kMaxEntryBytes, in a trusted directory.
  std::optional<std::string> read_file(const std::string& name) const;
  /// Written atomically, mode 0600, into the directory, which store() makes (0700); false on
  /// failure, and when the directory does not exist.
  bool write_file(const std::string& name, const std::string& data) const;

 private:
  std::string dir_;
};

}  // namespace tg
