// The on-disk kernel cache. One file per entry:
//
//   "TGKCACHE" | u32 format | u32 0 | material | source | assembly | binary | entry |
//   u64 metadata count, (key, value)... | u64 FNV-1a checksum of everything before it
//
// each string a u64 length and its bytes, little-endian as the host writes it (a foreign host's
// file fails the magic or the checksum and reads as a miss).
#include "tilegen/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tilegen/env.h"
#include "tilegen/ir/error.h"

#ifndef TILEGEN_VERSION
#define TILEGEN_VERSION "unknown"
#endif

namespace tg {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'T', 'G', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormat = 1;

uint64_t fnv1a(const void* data, std::size_t n, uint64_t h = 1469598103934665603ull) {
  auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_bytes(std::string& out, const void* p, std::size_t n) {
  put_u64(out, n);
  out.append(static_cast<const char*>(p), n);
}
void put_str(std::string& out, const std::string& s) { put_bytes(out, s.data(), s.size()); }

/// Reads fields with bounds checks; any overrun marks the reader failed.
struct Reader {
  const std::string& buf;
  std::size_t pos = 0;
  bool ok = true;
  uint64_t u64() {
    uint64_t v = 0;
    if (!ok || buf.size() - pos < sizeof v) return ok = false, 0;
    std::memcpy(&v, buf.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || buf.size() - pos < n) return ok = false, std::string();
    std::string s = buf.substr(pos, n);
    pos += n;
    return s;
  }
};

std::string encode(const KernelCache::Key& k, const CacheEntry& e) {
  std::string out(kMagic, sizeof kMagic);
  uint32_t header[2] = {kFormat, 0};
  out.append(reinterpret_cast<const char*>(header), sizeof header);
  put_str(out, k.material);
  put_str(out, e.source);
  put_str(out, e.assembly);
  put_bytes(out, e.binary.data(), e.binary.size());
  put_str(out, e.entry);
  put_u64(out, e.metadata.size());
  for (auto& [key, value] : e.metadata) {
    put_str(out, key);
    put_str(out, value);
  }
  put_u64(out, fnv1a(out.data(), out.size()));
  return out;
}

std::optional<CacheEntry> decode(const std::string& buf, const KernelCache::Key& k) {
  constexpr std::size_t header = sizeof kMagic + 2 * sizeof(uint32_t);
  if (buf.size() < header + sizeof(uint64_t) || std::memcmp(buf.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  uint32_t format = 0;
  std::memcpy(&format, buf.data() + sizeof kMagic, sizeof format);
  if (format != kFormat) return std::nullopt;
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, buf.data() + buf.size() - sizeof stored_sum, sizeof stored_sum);
  if (fnv1a(buf.data(), buf.size() - sizeof stored_sum) != stored_sum) return std::nullopt;

  Reader r{buf, header};
  if (r.str() != k.material) return std::nullopt;  // a digest collision or a foreign entry
  CacheEntry e;
  e.source = r.str();
  e.assembly = r.str();
  std::string bin = r.str();
  e.binary.assign(bin.begin(), bin.end());
  e.entry = r.str();
  uint64_t count = r.u64();
  for (uint64_t i = 0; r.ok && i < count; ++i) {
    std::string key = r.str();
    e.metadata[key] = r.str();
  }
  if (!r.ok || r.pos != buf.size() - sizeof stored_sum) return std::nullopt;
  return e;
}

/// Write all of `data` to a new file, readable by its owner alone; false on any failure (the
/// file is then removed).
bool write_new_file(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += std::size_t(n);
  }
  bool ok = done == data.size();
  ok = (::close(fd) == 0) && ok;
  if (!ok) ::unlink(path.c_str());
  return ok;
}

/// The whole of a regular file of at most `cap` bytes, or nullopt. Opened without following a
/// symbolic link and without blocking (a FIFO must not hang the run); the size comes from the
/// file's metadata before anything is read, so a huge entry costs one fstat.
std::optional<std::string> read_capped(const std::string& path, uint64_t cap) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      uint64_t(st.st_size) <= cap) {
    std::string buf(std::size_t(st.st_size), '\0');
    std::size_t done = 0;
    while (done < buf.size()) {
      ssize_t n = ::read(fd, buf.data() + done, buf.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += std::size_t(n);
    }
    if (done == buf.size()) out = std::move(buf);
  }
  ::close(fd);
  return out;
}

/// mkdir -p with mode 0700 for every directory it makes.
bool make_private_dirs(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return true;
  if (dir.has_parent_path() && dir.parent_path() != dir && !make_private_dirs(dir.parent_path()))
    return false;
  return ::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

}  // namespace

KernelCache::KernelCache(std::string dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {}

std::string KernelCache::default_dir() {
  if (auto d = env::text("TILEGEN_CACHE_DIR")) return *d;
  if (auto x = env::text("XDG_CACHE_HOME")) return *x + "/tilegen";
  if (auto h = env::text("HOME")) return *h + "/.cache/tilegen";
  // Per user: another user's directory of this name would be refused (check_trusted).
  return (fs::temp_directory_path() / ("tilegen-cache-" + std::to_string(::geteuid()))).string();
}

bool KernelCache::enabled() { return env::flag("TILEGEN_CACHE", true); }

KernelCache::Key KernelCache::key(const CacheKey& k) {
  Key out;
  put_str(out.material, TILEGEN_VERSION);
  put_str(out.material, k.target);
  put_str(out.material, k.arch);
  put_str(out.material, k.options);
  put_str(out.material, k.ir);
  // Two differently seeded hashes: 128 bits of file name. Collisions are caught by `material`.
  uint64_t a = fnv1a(out.material.data(), out.material.size());
  uint64_t b = fnv1a(out.material.data(), out.material.size(), 0x9e3779b97f4a7c15ull);
  out.digest = hex64(a) + hex64(b);
  return out;
}

std::string KernelCache::path_of(const Key& k) const { return dir_ + "/" + k.digest + ".tgk"; }

bool KernelCache::check_trusted() const {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) return false;  // nothing there yet: store() makes it, 0700
  std::string why;
  if (!S_ISDIR(st.st_mode))
    why = "is not a directory";
  else if (st.st_uid != ::geteuid())
    why = "belongs to user id " + std::to_string(st.st_uid) + ", not to you (" + std::to_string(::geteuid()) +
          ")";
  else if (st.st_mode & S_IWOTH)
    why = "is writable by other users (mode " + octal_mode(st.st_mode) + ")";
  if (why.empty()) return true;
  throw Error("the kernel cache directory " + dir_ + " " + why +
              ": tilegen refuses it, since the cache holds code this process runs. Make it yours and "
              "writable by you alone (chown, chmod 700), point TILEGEN_CACHE_DIR at a directory of your "
              "own, or set TILEGEN_CACHE=0");
}

std::optional<std::string> KernelCache::read_file(const std::string& name) const {
  if (!check_trusted()) return std::nullopt;
  return read_capped(dir_ + "/" + name, kMaxEntryBytes);
}

bool KernelCache::write_file(const std::string& name, const std::string& data) const {
  if (data.size() > kMaxEntryBytes || !check_trusted()) return false;
  // Unique per process and call, and never the final name: readers only ever see whole files.
  static std::atomic<uint64_t> counter{0};
  const std::string final_path = dir_ + "/" + name;
  const std::string temp =
      final_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  if (!write_new_file(temp, data)) return false;
  if (std::rename(temp.c_str(), final_path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

std::optional<CacheEntry> KernelCache::load(const Key& k) const {
  std::optional<std::string> bytes = read_file(k.digest + ".tgk");
  if (!bytes) return std::nullopt;
  return decode(*bytes, k);
}

bool KernelCache::store(const Key& k, const CacheEntry& e) const {
  return make_private_dirs(dir_) && write_file(k.digest + ".tgk", encode(k, e));
}

void KernelCache::evict(const Key& k) const { ::unlink(path_of(k).c_str()); }

}  // namespace tg
