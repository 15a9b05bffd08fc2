// The sample registry: every sample, dtype and (interpreter-sized) test shape is built, run by
// the reference interpreter on poisoned outputs and compared with its float64 reference; the
// checker itself is shown to fail on a perturbed reference and on an unwritten output.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

std::string describe(const Sample& s, size_t shape, DType t) {
  std::string out = s.name + " [" + s.test_shape_info[shape].label + "] " + std::string(t.name()) + ":";
  for (auto& [k, v] : s.test_shapes[shape]) out += " " + k + "=" + std::to_string(v);
  return out;
}

// Every output the kernel must write holds the poison (NaN, or 0x7F bytes for integers).
bool poisoned(const HostArray& a) {
  if (!a.is_output || a.accumulates) return true;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (a.dtype.is_float() ? !std::isnan(a.get(i)) : a.get(i) != a.get(0)) return false;
  }
  if (!a.dtype.is_float())
    for (uint8_t b : a.bytes)
      if (b != 0x7F) return false;
  return true;
}

// A reference moved just outside the tolerance at one element.
std::vector<double> perturbed(std::vector<double> want, Tolerance tol, size_t at) {
  double& w = want[at];
  w += 2 * (tol.abs + tol.rel * std::fabs(w)) + 1e-3;
  return want;
}

void run_sample(const std::string& name) {
  const Sample* s = find(name);
  REQUIRE(s != nullptr);
  REQUIRE(s->test_shapes.size() == s->test_shape_info.size());
  std::mt19937_64 rng(1234);
  int ran = 0;
  for (size_t i = 0; i < s->test_shapes.size(); ++i) {
    if (s->test_shape_info[i].conformance_only) continue;
    for (DType t : s->dtypes) {
      INFO(describe(*s, i, t));
      Params p = resolve(*s, s->test_shapes[i]);
      Kernel k = s->build(p, t);
      Problem pr = s->make_problem(p, t, rng);
      Tolerance tol = s->tolerance(p, t);
      for (const HostArray& a : pr.args)
        CHECK_MESSAGE(poisoned(a), a.name << " is not poisoned before the launch");
      interpret(k.function(), host_args(k.function(), pr));
      size_t out = 0;
      for (const HostArray& a : pr.args) {
        if (!a.is_output) continue;
        REQUIRE(out < pr.expected.size());
        Comparison c = compare(a, pr.expected[out], tol);
        INFO("output " << a.name << ": max |error| " << c.max_abs_error << ", first mismatch at "
                       << c.first_mismatch << " (got "
                       << (c.first_mismatch >= 0 ? a.get(c.first_mismatch) : 0.0) << ", want "
                       << (c.first_mismatch >= 0 ? pr.expected[out][size_t(c.first_mismatch)] : 0.0) << ")");
        CHECK(c.mismatches == 0);
        // The checker can fail: one element moved past the tolerance is caught.
        size_t at = size_t(a.numel() / 2);
        CHECK(compare(a, perturbed(pr.expected[out], tol, at), tol).mismatches == 1);
        ++out;
      }
      CHECK(out == pr.expected.size());
      ++ran;
    }
  }
  CHECK(ran > 0);
}

}  // namespace

TEST_CASE("samples: the registry lists the ten samples in order") {
  std::vector<std::string> names;
  for (const Sample& s : all()) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"gemm", "gemm_relu", "softmax", "rmsnorm", "flash_attention",
                                          "dequant_gemm", "conv2d", "block_reduce", "gemm_softmax",
                                          "fp8_gemm"});
  CHECK(find("gemm") == &all()[0]);
  CHECK(find("nope") == nullptr);
  for (const Sample& s : all()) {
    INFO(s.name);
    CHECK(!s.dtypes.empty());
    CHECK(s.test_shapes.size() == s.test_shape_info.size());
    CHECK(!s.bench_shapes.empty());
    bool has_ragged = false, has_quick = false;
    for (auto& info : s.test_shape_info) {
      has_ragged |= info.label.find("ragged") != std::string::npos;
      has_quick |= !info.conformance_only;
    }
    CHECK(has_ragged);
    CHECK(has_quick);
  }
}

TEST_CASE("samples: resolve fills defaults and rejects unknown or out-of-range parameters") {
  const Sample& gemm = *find("gemm");
  Params p = resolve(gemm, {{"M", 77}});
  CHECK(p.at("M") == 77);
  CHECK(p.at("N") == 1024);
  CHECK(p.at("trans_A") == 0);
  try {
    resolve(gemm, {{"foo", 1}});
    FAIL("an unknown parameter was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(
              "unknown parameter 'foo' for sample gemm; parameters: M, N, K, block_M") != std::string::npos);
  }
  CHECK_THROWS_AS(resolve(gemm, {{"M", 0}}), Error);
  CHECK_THROWS_AS(resolve(gemm, {{"K", -4}}), Error);
  CHECK_THROWS_AS(resolve(gemm, {{"trans_B", 2}}), Error);
  CHECK_NOTHROW(resolve(gemm, {{"trans_B", 1}}));
  CHECK_NOTHROW(resolve(*find("conv2d"), {{"pad", 0}}));
}

TEST_CASE("samples: resolve_for gives the cpu its tiles, under the user's own settings") {
  const Sample& gemm = *find("gemm");
  TargetInfo cpu;
  cpu.target = "cpu";
  cpu.is_cpu = true;
  auto tiles = [](const Params& p) {
    return std::to_string(p.at("block_M")) + "x" + std::to_string(p.at("block_N")) + "x" +
           std::to_string(p.at("block_K"));
  };
  CHECK(tiles(resolve_for(gemm, {{"M", 2048}, {"N", 2048}, {"K", 2048}}, cpu, f32)) == "192x256x64");
  CHECK(tiles(resolve_for(gemm, {{"M", 1000}, {"N", 3000}}, cpu, f32)) == "96x128x128");
  CHECK(tiles(resolve_for(*find("gemm_relu"), {}, cpu, f16)) == "96x128x128");
  // The user's settings win, one by one.
  Params mine = resolve_for(gemm, {{"M", 4096}, {"N", 4096}, {"block_K", 32}}, cpu, f32);
  CHECK(tiles(mine) == "192x256x32");
  CHECK(mine.at("M") == 4096);
  // A GPU (and a sample without tuning) keeps the defaults.
  TargetInfo gpu;
  gpu.target = "cuda";
  CHECK(tiles(resolve_for(gemm, {{"M", 4096}, {"N", 4096}}, gpu, f16)) == "128x128x32");
  CHECK(resolve_for(*find("softmax"), {}, cpu, f32) == resolve(*find("softmax"), {}));
  // A GPU with lane shuffles gives softmax and rmsnorm whole rows in one tile, N/16 threads.
  TargetInfo h200 = gpu;
  h200.warp_size = 32, h200.lane_shuffle = true;
  for (const char* name : {"softmax", "rmsnorm"}) {
    INFO(name);
    Params row = resolve_for(*find(name), {{"M", 8192}, {"N", 8192}}, h200, f16);
    CHECK(row.at("block_M") == 1);
    CHECK(row.at("block_N") == 8192);
    CHECK(row.at("threads") == 512);
    CHECK(resolve_for(*find(name), {{"N", 1000}}, h200, f16).at("block_N") == 1024);
    CHECK(resolve_for(*find(name), {{"N", 40}}, h200, f16).at("threads") == 32);  // a warp at least
    // Past 16384 columns (a vocabulary row), and on software devices, the defaults stay.
    CHECK(resolve_for(*find(name), {{"N", 32000}}, h200, f16) == resolve(*find(name), {{"N", 32000}}));
    TargetInfo lavapipe = h200;
    lavapipe.software = true;
    CHECK(resolve_for(*find(name), {}, lavapipe, f32) == resolve(*find(name), {}));
    CHECK(resolve_for(*find(name), {{"block_N", 256}}, h200, f16).at("block_N") == 256);  // the user's win
    // Its tuning space on that GPU has the whole row among its widths.
    TuneSpace space = find(name)->tune_space(resolve(*find(name), {{"M", 8192}, {"N", 8192}}), f16, h200);
    REQUIRE(space.params.size() >= 2);
    CHECK(space.params[1].name == "block_N");
    CHECK(space.params[1].values.back() == 8192);
  }
  // A CPU with an AMX-family bf16 unit takes K tiles of 256 for bf16 only.
  MatrixUnit u;
  u.name = "test_amx_family_bf16";
  u.family = "amx";
  u.m = 1, u.n = 1, u.k = 2, u.group_size = 1;
  u.a_type = bf16, u.b_type = bf16, u.c_type = f32;
  u.a_layout = {{0, 0}, {0, 1}}, u.b_layout = {{0, 0}, {1, 0}}, u.c_layout = {{0, 0}};
  if (!find_matrix_unit(u.name)) register_matrix_unit(u);
  cpu.matrix_units = {u.name};
  CHECK(tiles(resolve_for(gemm, {{"M", 2048}, {"N", 2048}}, cpu, bf16)) == "192x256x256");
  CHECK(tiles(resolve_for(gemm, {{"M", 2048}, {"N", 2048}}, cpu, f16)) == "192x256x64");
  // Misspelt parameters are still errors.
  CHECK_THROWS_AS(resolve_for(gemm, {{"blockK", 4}}, cpu, f32), Error);
}

TEST_CASE("samples: every bench shape and test shape resolves and builds") {
  for (const Sample& s : all())
    for (const auto* shapes : {&s.test_shapes, &s.bench_shapes})
      for (const Params& shape : *shapes) {
        INFO(s.name);
        Params p = resolve(s, shape);
        CHECK_NOTHROW(s.build(p, s.dtypes.front()));
        CHECK(s.bytes(p, s.dtypes.front()) > 0);
        CHECK(s.flops(p, s.dtypes.front()) >= 0);
      }
}

TEST_CASE("samples: parameter combinations a kernel cannot run are errors, not wrong answers") {
  CHECK_THROWS_AS(
      find("flash_attention")->build(resolve(*find("flash_attention"), {{"H", 6}, {"HKV", 4}}), f16), Error);
  CHECK_THROWS_AS(find("dequant_gemm")->build(resolve(*find("dequant_gemm"), {{"K", 100}}), f16), Error);
  CHECK_THROWS_AS(find("block_reduce")->build(resolve(*find("block_reduce"), {{"threads", 96}}), f32), Error);
  CHECK_THROWS_AS(find("gemm")->build(resolve(*find("gemm"), {}), i32), Error);
}

TEST_CASE("samples: make_inputs gives the problem without its reference") {
  const Sample& s = *find("gemm");
  std::mt19937_64 a(7), b(7);
  Params p = resolve(s, {{"M", 5}, {"N", 6}, {"K", 7}});
  Problem with = s.make_problem(p, f16, a), without = s.make_inputs(p, f16, b);
  CHECK(with.expected.size() == 1);
  CHECK(without.expected.empty());
  REQUIRE(without.args.size() == 3);
  CHECK(with.args[0].bytes == without.args[0].bytes);
}

TEST_CASE("samples: host arrays round to their dtype and pack int4") {
  HostArray h{"h", {3}, f16, std::vector<uint8_t>(6)};
  h.set(0, 1.0 + 1.0 / 4096);  // below half an f16 ulp at 1
  CHECK(h.get(0) == 1.0);
  h.set(1, -2.5);
  CHECK(h.get(1) == -2.5);
  HostArray q{"q", {3}, int4, std::vector<uint8_t>(2)};
  q.set(0, -8);
  q.set(1, 7);
  q.set(2, -1);
  CHECK(q.get(0) == -8);
  CHECK(q.get(1) == 7);
  CHECK(q.get(2) == -1);
  CHECK(q.bytes[0] == 0x78);
  CHECK(q.view().shape == std::vector<int64_t>{3});
  CHECK(q.view().data == q.bytes.data());
}

TEST_CASE("samples: compare counts NaN and out-of-tolerance elements") {
  HostArray a{"a", {4}, f32, std::vector<uint8_t>(16)};
  for (int i = 0; i < 4; ++i) a.set(i, i);
  CHECK(compare(a, {0, 1, 2, 3}, {}).mismatches == 0);
  Comparison c = compare(a, {0, 1.1, 2, 3.05}, {0.01, 0.01});
  CHECK(c.mismatches == 2);
  CHECK(c.first_mismatch == 1);
  CHECK(c.max_abs_error == doctest::Approx(0.1));
  CHECK(compare(a, {0, 1.1, 2, 3.05}, {0.2, 0}).mismatches == 0);
  a.set(2, std::nan(""));
  c = compare(a, {0, 1, 2, 3}, {1e9, 1e9});
  CHECK(c.mismatches == 1);
  CHECK(std::isinf(c.max_abs_error));
  CHECK_THROWS_AS(compare(a, {0, 1}, {}), Error);
}

TEST_CASE("samples: an output the kernel never writes fails the comparison") {
  const Sample& s = *find("softmax");
  std::mt19937_64 rng(3);
  Params p = resolve(s, {{"M", 3}, {"N", 5}});
  Problem pr = s.make_problem(p, f32, rng);
  CHECK(compare(pr.args[1], pr.expected[0], s.tolerance(p, f32)).mismatches == 15);
}

TEST_CASE("samples: host_args follow the kernel's parameters by name") {
  const Sample& s = *find("dequant_gemm");
  std::mt19937_64 rng(5);
  Params p = resolve(s, {{"M", 2}, {"N", 8}, {"K", 64}, {"group", 32}, {"block_K", 32}});
  Kernel k = s.build(p, f16);
  Problem pr = s.make_problem(p, f16, rng);
  std::vector<HostArg> args = host_args(k.function(), pr);
  REQUIRE(args.size() == 4);
  CHECK(args[1].dtype == int4);
  CHECK(args[1].data == pr.args[1].bytes.data());
  CHECK(args[2].shape == std::vector<int64_t>{8, 2});
  CHECK(kernel_args(k.function(), pr).size() == 4);
  pr.args[3].name = "renamed";
  CHECK_THROWS_AS(host_args(k.function(), pr), Error);
}

TEST_CASE("sample gemm matches its reference in the interpreter") { run_sample("gemm"); }
TEST_CASE("sample gemm_relu matches its reference in the interpreter") { run_sample("gemm_relu"); }
TEST_CASE("sample softmax matches its reference in the interpreter") { run_sample("softmax"); }
TEST_CASE("sample rmsnorm matches its reference in the interpreter") { run_sample("rmsnorm"); }
TEST_CASE("sample flash_attention matches its reference in the interpreter") {
  run_sample("flash_attention");
}
TEST_CASE("sample dequant_gemm matches its reference in the interpreter") { run_sample("dequant_gemm"); }
TEST_CASE("sample conv2d matches its reference in the interpreter") { run_sample("conv2d"); }
TEST_CASE("sample block_reduce matches its reference in the interpreter") { run_sample("block_reduce"); }

namespace {
// Runs `s` built with `kernel_overrides` on the problem made with `problem_overrides` (same tensor
// shapes, different meaning) and returns the mismatches of the first output.
int64_t mismatches_of_wrong_kernel(const std::string& name, const Params& problem_overrides,
                                   const Params& kernel_overrides, DType t) {
  const Sample& s = *find(name);
  std::mt19937_64 rng(11);
  Params pp = resolve(s, problem_overrides), kp = resolve(s, kernel_overrides);
  Problem pr = s.make_problem(pp, t, rng);
  Kernel k = s.build(kp, t);
  interpret(k.function(), host_args(k.function(), pr));
  for (const HostArray& a : pr.args)
    if (a.is_output) return compare(a, pr.expected[0], s.tolerance(pp, t)).mismatches;
  return -1;
}
}  // namespace

TEST_CASE("samples: a kernel computing the wrong thing fails its comparison") {
  Params square = {{"M", 32}, {"N", 32}, {"K", 32}, {"block_M", 16}, {"block_N", 16}, {"block_K", 16}};
  Params transposed = square;
  transposed["trans_B"] = 1;
  CHECK(mismatches_of_wrong_kernel("gemm", square, transposed, f16) > 500);
  Params attention = {{"B", 1}, {"H", 1}, {"HKV", 1}, {"S", 32}, {"D", 64}, {"block_M", 16}, {"block_N", 16}};
  Params causal = attention;
  causal["causal"] = 1;
  CHECK(mismatches_of_wrong_kernel("flash_attention", attention, causal, f16) > 500);
  Params eps_small = {{"M", 4}, {"N", 8}, {"block_M", 4}, {"block_N", 8}};
  Params eps_big = eps_small;
  eps_big["eps_e6"] = 1000000;
  CHECK(mismatches_of_wrong_kernel("rmsnorm", eps_small, eps_big, f32) > 16);
}
