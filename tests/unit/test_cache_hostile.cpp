// The kernel cache under hostile entries, through Target::compile on the targets that cache
// binaries (cpu, vulkan; interp has none) and through KernelCache itself: an entry that loads
// badly, a huge one, a FIFO, a symbolic link, another kernel's entry under this key, and cache
// directories that others may write or that belong to someone else.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "runtime_test_util.h"
#include "tilegen/kernel_cache.h"

using namespace tg;
using namespace tg::testing;

namespace {

namespace fs = std::filesystem;

/// The kernel cache in a fresh directory of its own, on.
struct CacheEnv {
  ScratchDir dir{"hostile_cache"};
  EnvGuard where{"TILEGEN_CACHE_DIR", dir.str()};
  EnvGuard on{"TILEGEN_CACHE", std::nullopt};

  /// The one entry (.tgk) in the directory.
  std::string entry() const {
    std::vector<std::string> found;
    for (auto& e : fs::directory_iterator(dir.path()))
      if (e.path().extension() == ".tgk") found.push_back(e.path().string());
    REQUIRE(found.size() == 1);
    return found[0];
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& data) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << data;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// An entry file (format 1, kernel_cache.cpp) as its fields: material, source, assembly,
/// binary, entry, then the metadata strings; re-encoded with a valid checksum, as a forger would.
struct EntryFile {
  std::vector<std::string> fields;  // material, source, assembly, binary, entry
  std::vector<std::string> metadata;

  static EntryFile parse(const std::string& b) {
    EntryFile e;
    std::size_t pos = 16;
    auto str = [&] {
      uint64_t n = 0;
      std::memcpy(&n, b.data() + pos, 8);
      std::string v = b.substr(pos + 8, n);
      pos += 8 + n;
      return v;
    };
    for (int i = 0; i < 5; ++i) e.fields.push_back(str());
    uint64_t count = 0;
    std::memcpy(&count, b.data() + pos, 8);
    pos += 8;
    for (uint64_t i = 0; i < 2 * count; ++i) e.metadata.push_back(str());
    return e;
  }
  std::string encode() const {
    std::string o = b_header();
    auto put = [&](const std::string& v) {
      uint64_t n = v.size();
      o.append(reinterpret_cast<const char*>(&n), 8);
      o += v;
    };
    for (const std::string& f : fields) put(f);
    uint64_t count = metadata.size() / 2;
    o.append(reinterpret_cast<const char*>(&count), 8);
    for (const std::string& m : metadata) put(m);
    uint64_t sum = fnv1a(o);
    o.append(reinterpret_cast<const char*>(&sum), 8);
    return o;
  }
  static std::string b_header() {
    std::string h = "TGKCACHE";
    uint32_t words[2] = {1, 0};
    h.append(reinterpret_cast<const char*>(words), sizeof words);
    return h;
  }
};

/// Y[i] = X[i] * 2 for i < n (symbolic n): small, and checkable on every target.
Kernel twice_kernel() {
  KernelBuilder k("twice");
  Expr n = k.size("n");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(1).threads(32).body([&](Expr) {
    Expr i = k.thread_index();
    k.if_(i < n, [&] { Y(i) = X(i) * 2.0f; });
  });
  return k.build();
}

/// Compiles axpy afresh and checks one launch: what each test expects after a bad entry.
void check_axpy_runs(const Target& t) {
  std::vector<float> x(64, 1.f), y(64, 2.f);
  t.compile(axpy_kernel()).launch({HostTensor{x.data(), {64}, f32}, HostTensor{y.data(), {64}, f32}, 3.0});
  CHECK(y == std::vector<float>(64, 5.f));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("kernel cache: a hit that fails to load is evicted and rebuilt (cpu, vulkan)") {
  for (const Target& t : host_test_targets(false)) {
    INFO(t.name());
    CacheEnv env;
    check_axpy_runs(t);
    const std::string path = env.entry();
    // The object cut to three bytes, the checksum recomputed: the entry reads back, the device
    // refuses it.
    EntryFile e = EntryFile::parse(read_all(path));
    e.fields[3] = "abc";
    write_all(path, e.encode());
    REQUIRE(KernelCache().load(KernelCache::Key{fs::path(path).stem().string(), e.fields[0]}));
    check_axpy_runs(t);
    CHECK(EntryFile::parse(read_all(env.entry())).fields[3].size() > 3);  // replaced by the rebuild
    check_axpy_runs(t);  // and the rebuilt entry is a good hit
  }
}

TEST_CASE("kernel cache: another kernel's entry under this key's name is a miss: the whole key is compared") {
  for (const Target& t : host_test_targets(false)) {
    INFO(t.name());
    CacheEnv env;
    check_axpy_runs(t);
    const std::string axpy_path = env.entry();
    const std::string axpy_material = EntryFile::parse(read_all(axpy_path)).fields[0];
    fs::remove(axpy_path);
    std::vector<float> x(8, 1.f), y(8);
    t.compile(twice_kernel()).launch({HostTensor{x.data(), {8}, f32}, HostTensor{y.data(), {8}, f32}});
    CHECK(y == std::vector<float>(8, 2.f));
    const std::string twice_path = env.entry();
    // twice's file copied under axpy's name, and the same with one byte of its stored key
    // changed (checksum recomputed): both foreign, so misses and rebuilds.
    fs::copy_file(twice_path, axpy_path);
    check_axpy_runs(t);
    EntryFile near = EntryFile::parse(read_all(twice_path));
    near.fields[0] = axpy_material;
    near.fields[0].back() ^= 1;
    write_all(axpy_path, near.encode());
    check_axpy_runs(t);
    // (An entry that carries axpy's whole key with twice's object cannot be told from a real one:
    // whoever can write the directory can run code as the user. That is the trust model: the
    // directory must be the user's alone, checked below.)
  }
}

TEST_CASE("kernel cache: an entry over the size cap is ignored without being read") {
  for (const Target& t : host_test_targets(false)) {
    INFO(t.name());
    CacheEnv env;
    check_axpy_runs(t);
    const std::string path = env.entry();
    // 3 GiB, sparse: reading it whole took 30 s and 6.4 GB; the cap is judged from fstat.
    fs::resize_file(path, uint64_t(3) << 30);
    auto start = std::chrono::steady_clock::now();
    check_axpy_runs(t);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(fs::file_size(env.entry()) < KernelCache::kMaxEntryBytes);  // the rebuild replaced it
  }
  ScratchDir dir("cap");
  KernelCache cache(dir.str());
  CHECK(!cache.write_file("big.bin", std::string(std::size_t(KernelCache::kMaxEntryBytes) + 1, 'x')));
  CHECK(!fs::exists(dir.path() / "big.bin"));
}

TEST_CASE("kernel cache: a FIFO, a symbolic link or a directory as an entry is a miss, never a hang") {
  for (const Target& t : host_test_targets(false)) {
    INFO(t.name());
    CacheEnv env;
    check_axpy_runs(t);
    const std::string path = env.entry();
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    auto start = std::chrono::steady_clock::now();
    check_axpy_runs(t);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    fs::remove(path);
    fs::create_symlink("/dev/zero", path);
    check_axpy_runs(t);
    fs::remove(path);
    fs::create_directory(path);
    check_axpy_runs(t);  // cannot be replaced, so a compile each time: still right
  }
}

TEST_CASE("kernel cache: directories are made 0700 and entries 0600") {
  ScratchDir dir("modes");
  const fs::path nested = dir.path() / "a" / "b";
  KernelCache cache(nested.string());
  auto key = KernelCache::key({"ir", "cpu", "x", ""});
  REQUIRE(cache.store(key, CacheEntry{"s", "a", {1, 2, 3}, "e", {}}));
  auto perms = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  CHECK(perms(dir.path() / "a") == fs::perms::owner_all);
  CHECK(perms(nested) == fs::perms::owner_all);
  CHECK(perms(cache.path_of(key)) == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("kernel cache: a directory others may write, or another user's, is refused with a message") {
  CacheEnv env;
  Kernel k = axpy_kernel();
  std::vector<Target> targets = host_test_targets();  // interp too: every compile asks the cache
  fs::permissions(env.dir.path(), fs::perms::all);
  for (const Target& t : targets) {
    INFO(t.name());
    // clang-format off
    std::string m = error_of([&] { t.compile(k); }); std::string here = at_line(__FILE__, __LINE__);
    // clang-format on
    CHECK(m == here + "the kernel cache directory " + env.dir.str() +
                   " is writable by other users (mode 0777): tilegen refuses it, since the cache holds code "
                   "this process runs. Make it yours and writable by you alone (chown, chmod 700), point "
                   "TILEGEN_CACHE_DIR at a directory of your own, or set TILEGEN_CACHE=0");
  }
  KernelCache cache;
  auto key = KernelCache::key({"ir", "cpu", "x", ""});
  CHECK_THROWS_WITH_AS(cache.load(key), doctest::Contains("is writable by other users"), Error);
  CHECK_THROWS_WITH_AS(cache.store(key, CacheEntry{}), doctest::Contains("is writable by other users"),
                       Error);
  {
    EnvGuard off("TILEGEN_CACHE", "0");  // the way out the message offers
    for (const Target& t : targets) check_axpy_runs(t);
  }
  fs::permissions(env.dir.path(), fs::perms::owner_all);
  for (const Target& t : targets) check_axpy_runs(t);

  // Another user's directory (only root can make one to test with).
  if (::chown(env.dir.str().c_str(), 12345, 12345) == 0) {
    CHECK(contains(error_of([&] { cache.check_trusted(); }), " belongs to user id 12345, not to you"));
    for (const Target& t : targets)
      CHECK(contains(error_of([&] { t.compile(k); }), "belongs to user id 12345"));
    REQUIRE(::chown(env.dir.str().c_str(), ::geteuid(), ::getegid()) == 0);
  } else {
    MESSAGE("not root: the other-owner case is not exercised");
  }
}

TEST_CASE("kernel cache: an entry file that is not the user's is a miss") {
  if (::geteuid() != 0) return;  // only root can give a file away
  for (const Target& t : host_test_targets(false)) {
    INFO(t.name());
    CacheEnv env;
    check_axpy_runs(t);
    const std::string path = env.entry();
    REQUIRE(::chown(path.c_str(), 12345, 12345) == 0);
    CHECK(!KernelCache().read_file(fs::path(path).filename().string()));
    check_axpy_runs(t);
    struct stat st {};
    REQUIRE(::stat(env.entry().c_str(), &st) == 0);
    CHECK(st.st_uid == ::geteuid());  // replaced by the rebuild
  }
}
