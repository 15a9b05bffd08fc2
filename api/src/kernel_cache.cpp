// The on-disk kernel cache. One file per entry:
//
//   "TGKCACHE" | u32 format | u32 0 | material | source | assembly | binary | entry |
//   u64 metadata count, (key, value)... | u64 FNV-1a checksum of everything before it
//
// each string a u64 length and its bytes, little-endian as the host writes it (a foreign host's
// file fails the magic or the checksum and reads as a miss).
#include "tilegen/kernel_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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

/// Write all of `data` to a new file; false on any failure (the file is then removed).
bool write_file(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
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

}  // namespace

KernelCache::KernelCache(std::string dir) : dir_(dir.empty() ? default_dir() : std::move(dir)) {}

std::string KernelCache::default_dir() {
  if (const char* d = std::getenv("TILEGEN_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tilegen";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tilegen";
  return (fs::temp_directory_path() / "tilegen-cache").string();
}

bool KernelCache::enabled() {
  const char* v = std::getenv("TILEGEN_CACHE");
  if (!v) return true;
  std::string s = v;
  return !(s == "0" || s == "off" || s == "false" || s == "OFF" || s == "FALSE");
}

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

std::optional<CacheEntry> KernelCache::load(const Key& k) const {
  std::ifstream in(path_of(k), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return decode(ss.str(), k);
}

bool KernelCache::store(const Key& k, const CacheEntry& e) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return false;
  // Unique per process and call, and never the final name: readers only ever see whole entries.
  static std::atomic<uint64_t> counter{0};
  std::string final_path = path_of(k);
  std::string temp = final_path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  if (!write_file(temp, encode(k, e))) return false;
  if (std::rename(temp.c_str(), final_path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace tg
