// The runtime facade on the built-in interp target: targets(), select/get, compile, launch with
// device buffers and host tensors, symbolic sizes, launch checks, profile, and the kernel cache.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <thread>

#include "runtime_test_util.h"
#include "tilegen/ir/printer.h"
#include "tilegen/kernel_cache.h"

using namespace tg;
using namespace tg::testing;

#define HERE at_line(__FILE__, __LINE__)

namespace {

std::vector<float> iota(std::size_t n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

HostTensor host(std::vector<float>& v, std::vector<int64_t> shape) {
  return {v.data(), std::move(shape), f32};
}

std::vector<float> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                                    int k) {
  std::vector<float> c(std::size_t(m * n), 0.f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int x = 0; x < k; ++x)
        c[std::size_t(i * n + j)] += a[std::size_t(i * k + x)] * b[std::size_t(x * n + j)];
  return c;
}

Target interp() { return Target::get("interp"); }

}  // namespace

TEST_CASE("targets() lists the built-in interp target last, available, with one software device") {
  std::vector<TargetStatus> all = targets();
  REQUIRE(!all.empty());
  const TargetStatus& t = all.back();
  CHECK(t.name == "interp");
  CHECK(t.available);
  CHECK(t.path == "(built in)");
  REQUIRE(t.devices.size() == 1);
  CHECK(t.devices[0].target == "interp");
  CHECK(t.devices[0].device_name == "reference interpreter");
  CHECK(t.devices[0].arch == "host");
  CHECK(t.devices[0].software);
}

TEST_CASE("a fixed-shape kernel compiles at once and runs on device buffers") {
  Target t = interp();
  CHECK(t.name() == "interp");
  CompiledKernel k = t.compile(axpy_kernel());
  CHECK(k.name() == "axpy");
  CHECK(k.binary().empty());
  CHECK(k.source() == print(k.lowered()));  // interp's "source" is the IR it runs
  REQUIRE(k.stages().size() >= 2);
  CHECK(k.stages().front().first == "input");
  CHECK(k.stages().back().first == "source");
  CHECK(k.stages().back().second == k.source());

  std::vector<float> x = iota(64), y = iota(64, 100, -1), out(64);
  DeviceBuffer bx = t.upload(host(x, {64}));
  DeviceBuffer by = t.upload(host(y, {64}));
  CHECK(bx.target() == "interp");
  CHECK(bx.bytes() == 64 * sizeof(float));
  k.launch({&bx, &by, 2.0});
  by.download(out.data(), out.size() * sizeof(float));
  for (std::size_t i = 0; i < 64; ++i) CHECK(out[i] == 2.f * x[i] + y[i]);
}

TEST_CASE("host tensors are copied in and back out around a launch; scalars convert to the param dtype") {
  Target t = interp();
  CompiledKernel k = t.compile(axpy_kernel());
  std::vector<float> x = iota(64), y(64, 1.f);
  k(host(x, {64}), host(y, {64}), 3);  // an int scalar for an f32 parameter
  for (std::size_t i = 0; i < 64; ++i) CHECK(y[i] == 3.f * x[i] + 1.f);
  CHECK(x == iota(64));  // inputs come back unchanged
  k(host(x, {64}), host(y, {64}), 0.5f);
  for (std::size_t i = 0; i < 64; ++i) CHECK(y[i] == 3.5f * x[i] + 1.f);
}

TEST_CASE("symbolic sizes are specialised at each new launch shape") {
  Target t = interp();
  CompiledKernel k = t.compile(matmul_kernel());
  std::string before = error_of([&] { (void)k.source(); });
  CHECK(before.find("symbolic sizes (M, N, K)") != std::string::npos);

  std::vector<float> a = iota(3 * 4, 1), b = iota(4 * 5, -2, 0.5f), c(3 * 5, -1.f);
  k.launch({host(a, {3, 4}), host(b, {4, 5}), host(c, {3, 5})});
  CHECK(c == reference_matmul(a, b, 3, 5, 4));
  std::string first = k.source();

  std::vector<float> a2 = iota(2 * 6, 3), b2 = iota(6 * 7, 1, 0.25f), c2(2 * 7, -1.f);
  k.launch({host(a2, {2, 6}), host(b2, {6, 7}), host(c2, {2, 7})});
  CHECK(c2 == reference_matmul(a2, b2, 2, 7, 6));
  CHECK(k.source() != first);  // a second variant, bound to the new sizes

  std::fill(c.begin(), c.end(), 0.f);
  k.launch({host(a, {3, 4}), host(b, {4, 5}), host(c, {3, 5})});  // the first variant again
  CHECK(c == reference_matmul(a, b, 3, 5, 4));
  CHECK(k.source() == first);
}

TEST_CASE("stages() begin with the kernel as compiled, then bind_sizes with the launch's sizes") {
  Target t = interp();
  CompiledKernel k = t.compile(matmul_kernel());
  std::vector<float> a = iota(3 * 4, 1), b = iota(4 * 5), c(3 * 5);
  k.launch({host(a, {3, 4}), host(b, {4, 5}), host(c, {3, 5})});
  const auto& stages = k.stages();
  REQUIRE(stages.size() >= 3);
  CHECK(stages[0].first == "input");
  CHECK(stages[0].second.find("M: size") != std::string::npos);  // still symbolic
  CHECK(stages[1].first == "bind_sizes");
  CHECK(stages[1].second.find("M: size") == std::string::npos);
  CHECK(stages[1].second.find("f32[3, 4]") != std::string::npos);
  std::vector<std::string> names;
  for (const auto& [name, text] : stages) names.push_back(name);
  std::vector<std::string> want{"input"};
  for (const PassEntry& p : t.plugin().pipeline(t.info(), {})) want.push_back(p.name);
  want.push_back("source");
  CHECK(names == want);
}

TEST_CASE("sizes reach the pipeline through CompileOptions::sizes only where the caller has them") {
  Target t = interp();
  CompileOptions opt;
  opt.sizes = {{"M", 3}};
  std::string m = error_of([&] { (void)t.compile(matmul_kernel(), opt); });
  CHECK(m.find("CompileOptions::sizes is for Target::codegen_for") != std::string::npos);
  opt.sizes = {{"M", 3}, {"N", 5}, {"K", 4}};
  Artifact art = Target::codegen_for(t.plugin(), t.info(), matmul_kernel().function(), opt);
  CHECK(art.source.find("f32[3, 4]") != std::string::npos);
  CHECK(art.source.find(": size") == std::string::npos);
}

TEST_CASE("a plugin whose pipeline does not begin with bind_sizes is refused") {
  struct NoBinding : TargetPlugin {
    std::string name() const override { return "nobind"; }
    ProbeResult probe() override { return {}; }
    std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions&) override {
      return {{"rename", [](const Function& f, const TargetInfo&) { return f; }}};
    }
    Artifact codegen(const Function&, const TargetInfo&, const CompileOptions&) override { return {}; }
    std::unique_ptr<DeviceContext> open(int) override { return nullptr; }
  } plugin;
  std::string m =
      error_of([&] { (void)Target::codegen_for(plugin, TargetInfo{}, axpy_kernel().function(), {}); });
  CHECK(m.find("target 'nobind': its pipeline() begins with 'rename'; a pipeline must begin with "
               "bind_sizes_pass(opt.sizes)") != std::string::npos);
}

// A misuse and the line it must be reported at share one line: no reformatting here.
// clang-format off
TEST_CASE("launch misuse is a tg::Error at the launch line naming the parameter") {
  Target t = interp();
  CompiledKernel axpy = t.compile(axpy_kernel());
  CompiledKernel mm = t.compile(matmul_kernel());
  DeviceBuffer x = t.alloc({64}, f32), y = t.alloc({64}, f32), short_y = t.alloc({63}, f32);
  DeviceBuffer half_y = t.alloc({64}, f16);
  std::vector<float> a(4 * 8), b(6 * 5), c(4 * 5);
  std::string m;

  SUBCASE("wrong shape") {
    m = error_of([&] { axpy.launch({&x, &short_y, 1.0}); }); std::string here = HERE;
    CHECK(m == here + "argument 2 (Y): shape [63] does not match the kernel's [64]");
  }
  SUBCASE("wrong shape against symbolic dimensions") {
    std::vector<float> b2(64 * 32);
    std::vector<float> a2(16 * 32);
    m = error_of([&] { mm.launch({host(a2, {16, 32}), host(b2, {64, 32}), host(c, {16, 64})}); });
    CHECK(m.find("argument 2 (B): shape [64, 32] does not match the kernel's [K, N] = [32, 32]") !=
          std::string::npos);
  }
  SUBCASE("size mismatch between tensors") {
    m = error_of([&] { mm.launch({host(a, {4, 8}), host(b, {6, 5}), host(c, {4, 5})}); }); std::string here = HERE;
    CHECK(m == here + "argument 2 (B): shape [6, 5] does not match the kernel's [K, N] = [8, 5]");
  }
  SUBCASE("a size bound to zero") {
    std::vector<float> none(1);
    m = error_of([&] { mm.launch({host(none, {0, 8}), host(b, {8, 5}), host(c, {0, 5})}); }); std::string here = HERE;
    CHECK(
        m ==
        here +
            "argument 1 (A): dimension 0 is 0, which binds size 'M': a size must be positive and fit in i32");
  }
  SUBCASE("wrong dtype") {
    m = error_of([&] { axpy.launch({&x, &half_y, 1.0}); }); std::string here = HERE;
    CHECK(m == here + "argument 2 (Y): dtype f16 does not match the kernel's f32");
  }
  SUBCASE("the call operator reports at the caller's line too") {
    std::vector<float> xs(64), ys(32);
    m = error_of([&] { axpy(HostTensor{xs.data(), {64}, f32}, HostTensor{ys.data(), {32}, f32}, 1.0); }); std::string here = HERE;
    CHECK(m == here + "argument 2 (Y): shape [32] does not match the kernel's [64]");
    m = error_of([&] { axpy(); }); here = HERE;
    CHECK(m.rfind(here + "kernel 'axpy' takes 3 argument(s)", 0) == 0);
  }
  SUBCASE("wrong argument count") {
    m = error_of([&] { axpy.launch({&x, &y}); }); std::string here = HERE;
    CHECK(m.rfind(here + "kernel 'axpy' takes 3 argument(s) (X, Y, alpha", 0) == 0);
    CHECK(m.find("got 2") != std::string::npos);
  }
  SUBCASE("a scalar where a tensor goes, and a tensor where a scalar goes") {
    m = error_of([&] { axpy.launch({&x, 1.0, 1.0}); }); std::string here = HERE;
    CHECK(m == here + "argument 2 (Y): the kernel expects a tensor f32, got a scalar");
    m = error_of([&] { axpy.launch({&x, &y, &y}); }); here = HERE;
    CHECK(m == here + "argument 3 (alpha): the kernel expects a scalar f32, got a tensor");
  }
  SUBCASE("buffer too small for an upload, or for the kernel") {
    std::vector<float> few(10);
    m = error_of([&] { y.upload(few.data(), few.size() * sizeof(float)); }); std::string here = HERE;
    CHECK(m.rfind(here + "upload of 40 bytes into a buffer of 256 bytes (f32[64])", 0) == 0);
    m = error_of([&] { y.download(few.data(), few.size() * sizeof(float)); }); here = HERE;
    CHECK(m.rfind(here + "download of 256 bytes (f32[64]) into 40 bytes", 0) == 0);
    m = error_of([&] { axpy.launch({&short_y, &y, 1.0}); }); here = HERE;
    CHECK(m == here + "argument 1 (X): shape [63] does not match the kernel's [64]");
  }
  SUBCASE("null host data and empty buffers") {
    m = error_of([&] { axpy.launch({HostTensor{nullptr, {64}, f32}, &y, 1.0}); }); std::string here = HERE;
    CHECK(m == here + "argument 1 (X): the host tensor's data is null");
    DeviceBuffer empty;
    m = error_of([&] { axpy.launch({&x, &empty, 1.0}); }); here = HERE;
    CHECK(m.rfind(here + "argument 2 (Y): the DeviceBuffer is empty", 0) == 0);
  }
  SUBCASE("a written tensor sharing memory with another argument") {
    m = error_of([&] { axpy.launch({&y, &y, 1.0}); }); std::string here = HERE;
    CHECK(m.rfind(here + "argument 1 (X) and argument 2 (Y) share memory, and the kernel writes argument 2 (Y)", 0) == 0);
    DeviceBuffer same_y = y;  // a second handle on the same allocation
    m = error_of([&] { axpy.launch({&same_y, &y, 1.0}); }); here = HERE;
    CHECK(m.rfind(here + "argument 1 (X) and argument 2 (Y) share memory", 0) == 0);
    // Host tensors in one array: A is one[8, 24), C is one[0, 20); they overlap in [8, 20).
    std::vector<float> one(4 * 4 + 8);
    m = error_of([&] { mm.launch({HostTensor{one.data() + 8, {4, 4}, f32}, host(b, {4, 5}), host(c, {4, 5})}); });
    CHECK(m == "(no error)");  // separate arrays: fine
    HostTensor a_rows{one.data() + 8, {4, 4}, f32}, c_rows{one.data(), {4, 5}, f32};
    m = error_of([&] { mm.launch({a_rows, host(b, {4, 5}), c_rows}); }); here = HERE;
    CHECK(m.rfind(here + "argument 1 (A) and argument 3 (C) share memory, and the kernel writes argument 3 (C)", 0) == 0);
    // Adjacent, not overlapping: fine.
    m = error_of([&] { mm.launch({HostTensor{one.data() + 20, {1, 4}, f32}, host(b, {4, 5}),
                                  HostTensor{one.data() + 15, {1, 5}, f32}}); });
    CHECK(m == "(no error)");
  }
  SUBCASE("reading one buffer twice is fine, and computes A·A") {
    std::vector<float> sq = iota(16, 1), out(16, -1.f);
    mm.launch({host(sq, {4, 4}), host(sq, {4, 4}), host(out, {4, 4})});
    CHECK(out == reference_matmul(sq, sq, 4, 4, 4));
  }
  SUBCASE("a size no tensor binds") {
    KernelBuilder kb("unbound");
    Expr P = kb.size("P");
    auto O = kb.tensor("O", {4}, f32);
    kb.grid(P).threads(1).body([&](Expr bx) { O(bx) = 1.0f; });
    CompiledKernel k = t.compile(kb.build());
    std::vector<float> o(4);
    m = error_of([&] { k.launch({host(o, {4})}); }); std::string here = HERE;
    CHECK(m.rfind(here + "kernel 'unbound': size 'P' is not a dimension of any tensor parameter", 0) == 0);
  }
}
// clang-format on

TEST_CASE("profile runs warm-up and timed launches and leaves the results in place") {
  Target t = interp();
  CompiledKernel k = t.compile(axpy_kernel());
  std::vector<float> x = iota(64), y(64, 0.f);
  ProfileOptions opt;
  opt.warmup = 2;
  opt.runs = 5;
  ProfileResult r = k.profile({host(x, {64}), host(y, {64}), 1.0}, opt);
  CHECK(r.runs == 5);
  CHECK(r.min_ms > 0);
  CHECK(r.min_ms <= r.median_ms);
  CHECK(r.median_ms <= r.max_ms);
  // 2 warm-up + 5 timed launches of y += x on the device copy of y.
  for (std::size_t i = 0; i < 64; ++i) CHECK(y[i] == 7.f * x[i]);
  opt.runs = 0;
  // clang-format off
  std::string m = error_of([&] { k.profile({host(x, {64}), host(y, {64}), 1.0}, opt); }); std::string here = HERE;
  // clang-format on
  CHECK(m.rfind(here + "profile: runs must be at least 1", 0) == 0);
}

TEST_CASE("select() honours TILEGEN_TARGET and rejects an unknown one with the list") {
  {
    EnvGuard env("TILEGEN_TARGET", "interp");
    CHECK(Target::select().name() == "interp");
  }
  {
    EnvGuard env("TILEGEN_TARGET", "interp:0");
    CHECK(Target::select().name() == "interp");
  }
  {
    EnvGuard env("TILEGEN_TARGET", "nosuch");
    // clang-format off
    std::string m = error_of([] { Target::select(); }); std::string here = HERE;
    // clang-format on
    CHECK(m.rfind(here + "TILEGEN_TARGET=nosuch: unknown target 'nosuch'; the targets found are ", 0) == 0);
    CHECK(m.find("interp (`tilegen targets` says which are available here)") != std::string::npos);
  }
  {
    EnvGuard env("TILEGEN_TARGET", "interp:3");
    std::string m = error_of([] { Target::select(); });
    CHECK(m.find("target 'interp' has 1 device(s), numbered from 0; device 3 does not exist") !=
          std::string::npos);
  }
  {
    EnvGuard env("TILEGEN_TARGET", "interp:x");
    CHECK(error_of([] { Target::select(); }).find("must be a number") != std::string::npos);
  }
  EnvGuard env("TILEGEN_TARGET", std::nullopt);
  Target best = Target::select();
  bool found = false;
  for (const TargetStatus& s : targets()) found |= s.available && s.name == best.name();
  CHECK(found);
}

TEST_CASE("Target::get reports unknown names with the names found") {
  // clang-format off
  std::string m = error_of([] { Target::get("nosuch"); }); std::string here = HERE;
  // clang-format on
  CHECK(m.rfind(here + "unknown target 'nosuch'; the targets found are ", 0) == 0);
  CHECK(m.find("interp") != std::string::npos);
  Target a = Target::get("interp"), b = Target::get("interp");
  DeviceBuffer buf = a.alloc({64}, f32);
  std::vector<float> x = iota(64);
  buf.upload(x.data(), 64 * sizeof(float));
  std::vector<float> y(64, 0.f);
  b.compile(axpy_kernel()).launch({&buf, host(y, {64}), 1.0});  // one device, shared by both Targets
  CHECK(y == x);
}

TEST_CASE("codegen_for runs the pipeline and codegen without a device") {
  TargetPlugin* p = find_plugin("interp");
  REQUIRE(p);
  std::vector<std::pair<std::string, std::string>> stages;
  Artifact a = Target::codegen_for(*p, p->info_for_arch("host"), axpy_kernel().function(), {}, &stages);
  CHECK(a.entry == "axpy");
  CHECK(a.source.find("axpy") != std::string::npos);
  REQUIRE(!stages.empty());
  CHECK(stages.back() == std::make_pair(std::string("source"), a.source));
  CHECK_THROWS_AS(p->info_for_arch("sm_90"), Error);
}

// ---- Kernel cache

namespace {
CacheEntry sample_entry(std::size_t bytes = 1000, uint8_t fill = 7) {
  CacheEntry e;
  e.source = "__global__ void k() {}";
  e.assembly = "ret;";
  e.binary.assign(bytes, fill);
  e.entry = "k";
  e.metadata = {{"arch", "sm_90"}, {"target", "cuda"}};
  return e;
}
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_all(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}
bool same(const CacheEntry& a, const CacheEntry& b) {
  return a.source == b.source && a.assembly == b.assembly && a.binary == b.binary && a.entry == b.entry &&
         a.metadata == b.metadata;
}
}  // namespace

TEST_CASE("kernel cache: store and load, and every key field matters") {
  ScratchDir dir("cache");
  KernelCache cache(dir.str());
  auto key = KernelCache::key({"func k() {}", "cuda", "sm_90", "arch="});
  CHECK(!cache.load(key));
  REQUIRE(cache.store(key, sample_entry()));
  auto hit = cache.load(key);
  REQUIRE(hit);
  CHECK(same(*hit, sample_entry()));
  CHECK(KernelCache::key({"func k() {}", "cuda", "sm_80", "arch="}).digest != key.digest);
  CHECK(KernelCache::key({"func k() { }", "cuda", "sm_90", "arch="}).digest != key.digest);
  CHECK(KernelCache::key({"func k() {}", "hip", "sm_90", "arch="}).digest != key.digest);
  CHECK(KernelCache::key({"func k() {}", "cuda", "sm_90", "arch=;fast_math=1"}).digest != key.digest);
  CHECK(!cache.load(KernelCache::key({"func k() {}", "cuda", "sm_80", "arch="})));
}

TEST_CASE("kernel cache: corrupt or foreign entries read as misses and are rebuilt") {
  ScratchDir dir("cache");
  KernelCache cache(dir.str());
  auto key = KernelCache::key({"ir", "cuda", "sm_90", ""});
  REQUIRE(cache.store(key, sample_entry()));
  const std::string path = cache.path_of(key), good = read_all(path);

  auto check_miss = [&](const std::string& bytes) {
    write_all(path, bytes);
    CHECK(!cache.load(key));
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;
  check_miss(flipped);                          // checksum mismatch
  check_miss(good.substr(0, good.size() - 9));  // truncated
  check_miss(good.substr(0, 10));               // truncated inside the header
  check_miss("");                               // empty
  std::string magic = good;
  magic[0] = 'X';
  check_miss(magic);  // bad magic
  std::string version = good;
  version[8] = char(99);
  check_miss(version);  // another format version

  // A well-formed entry of another key copied under this key's name: foreign.
  auto other = KernelCache::key({"other ir", "cuda", "sm_90", ""});
  REQUIRE(cache.store(other, sample_entry()));
  check_miss(read_all(cache.path_of(other)));

  // The next store replaces the bad file.
  REQUIRE(cache.store(key, sample_entry(10, 1)));
  auto hit = cache.load(key);
  REQUIRE(hit);
  CHECK(same(*hit, sample_entry(10, 1)));
}

TEST_CASE("kernel cache: a reader never sees a partly written entry, and no temp file stays") {
  ScratchDir dir("cache");
  KernelCache cache(dir.str());
  auto key = KernelCache::key({"ir", "cuda", "sm_90", ""});
  const CacheEntry a = sample_entry(4 << 20, 1), b = sample_entry(3 << 20, 2);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 12; ++i) cache.store(key, i % 2 ? a : b);
    done = true;
  });
  int seen = 0, bad = 0;
  while (!done) {
    if (!std::filesystem::exists(cache.path_of(key))) continue;
    auto hit = cache.load(key);
    ++seen;
    if (!hit || !(same(*hit, a) || same(*hit, b))) ++bad;
  }
  writer.join();
  CHECK(seen > 0);
  CHECK(bad == 0);
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    CHECK(e.path().extension() == ".tgk");
  }
  CHECK(files == 1);
}

TEST_CASE("kernel cache: a write that fails midway leaves the previous entry whole and no file behind") {
  ScratchDir dir("cache");
  KernelCache cache(dir.str());
  auto key = KernelCache::key({"ir", "cuda", "sm_90", ""});
  REQUIRE(cache.store(key, sample_entry(1000, 1)));
  // Files may not grow past 64 KiB for a moment: the 1 MiB entry's write fails with EFBIG.
  struct rlimit old {};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct rlimit small = old;
  small.rlim_cur = std::min<rlim_t>(64 * 1024, old.rlim_max);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  bool stored = cache.store(key, sample_entry(1 << 20, 2));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK(!stored);
  auto hit = cache.load(key);
  REQUIRE(hit);
  CHECK(same(*hit, sample_entry(1000, 1)));
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("kernel cache: directory and switch from the environment") {
  {
    EnvGuard d("TILEGEN_CACHE_DIR", "/tmp/tg-explicit");
    CHECK(KernelCache::default_dir() == "/tmp/tg-explicit");
    CHECK(KernelCache().dir() == "/tmp/tg-explicit");
  }
  {
    EnvGuard d("TILEGEN_CACHE_DIR", std::nullopt);
    EnvGuard x("XDG_CACHE_HOME", "/tmp/xdg");
    CHECK(KernelCache::default_dir() == "/tmp/xdg/tilegen");
  }
  {
    EnvGuard d("TILEGEN_CACHE_DIR", std::nullopt);
    EnvGuard x("XDG_CACHE_HOME", std::nullopt);
    EnvGuard h("HOME", "/home/someone");
    CHECK(KernelCache::default_dir() == "/home/someone/.cache/tilegen");
  }
  {
    EnvGuard off("TILEGEN_CACHE", "0");
    CHECK(!KernelCache::enabled());
  }
  EnvGuard on("TILEGEN_CACHE", std::nullopt);
  CHECK(KernelCache::enabled());
}
