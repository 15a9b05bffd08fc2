// The hip plugin without an AMD GPU: every sample's generated HIP C++ compiles to a code object
// for gfx90a and gfx942 (clang's HIP device compilation, or hiprtc where ROCm is installed); the
// disassembly of the matrix samples holds v_mfma instructions, and no kernel spills to scratch.
// Skipped, with the reason printed, where the plugin was not built or clang-19/lld are missing.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "gpu_pass_test_util.h"
#include "hip_test_util.h"
#include "int_semantics_test_util.h"
#include "sample_test_util.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"
#ifdef TILEGEN_HAVE_HIP_CODEGEN
#include "hip_plugin.h"
#endif

using namespace tg;
using namespace tg::samples;

namespace {

// The plugin object from tilegen_hip_codegen (the plugin's code, linked), or null when this
// build has no hip target (the message says so).
TargetPlugin* hip_plugin() {
#ifdef TILEGEN_HAVE_HIP_CODEGEN
  static TargetPlugin* plugin = tg::hip::make_plugin();
  return plugin;
#else
  std::cout << "skipped: this build has no hip target\n";
  return nullptr;
#endif
}

// clang 19 (or $TILEGEN_HIP_CLANG) and lld, which the plugin needs to compile without ROCm.
bool hip_compiler_present() {
  static const bool present = [] {
    const char* clang = std::getenv("TILEGEN_HIP_CLANG");
    std::string cmd = std::string(clang && *clang ? clang : "clang-19") + " --version >/dev/null 2>&1";
    bool ok = std::system(cmd.c_str()) == 0 && (std::system("command -v ld.lld-19 >/dev/null 2>&1") == 0 ||
                                                std::system("command -v ld.lld >/dev/null 2>&1") == 0);
    if (!ok) std::cout << "skipped: clang-19 and lld-19 are needed to compile HIP without ROCm\n";
    return ok;
  }();
  return present;
}

// The sample at `overrides` (its defaults when empty), sizes bound from its inputs.
Function bound_sample(const Sample& s, const Params& overrides, DType t) {
  std::mt19937_64 rng(3);
  Params p = resolve(s, overrides);
  Function f = s.build(p, t).function();
  Problem pr = s.make_inputs ? s.make_inputs(p, t, rng) : s.make_problem(p, t, rng);
  return bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr)));
}

// flash_attention's default tiles at D=128 need 78 KiB of shared memory, more than the 64 KiB
// of LDS a workgroup has on gfx90a/gfx942 (a tg::Error names the buffers); at D=64 they fit.
Params lds_fitting_attention() {
  const Sample& s = *find("flash_attention");
  for (std::size_t i = 0; i < s.test_shapes.size(); ++i)
    if (s.test_shape_info[i].label == "ragged S=129 D=64, default tiles") return s.test_shapes[i];
  FAIL("flash_attention lost its D=64 default-tile shape");
  return {};
}

bool mfma_sample(const std::string& name) {
  return name == "gemm" || name == "gemm_relu" || name == "flash_attention" || name == "dequant_gemm";
}

// Rows of the stats table: kernel, vgprs, agprs, sgprs, lds, scratch, vgpr spills, sgpr spills.
struct Row {
  std::string kernel;
  long long vgprs = 0, agprs = 0, sgprs = 0, lds = 0, scratch = 0, vspill = 0, sspill = 0;
};
std::vector<Row> stats_rows(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    Row r;
    std::istringstream l(line);
    if (l >> r.kernel >> r.vgprs >> r.agprs >> r.sgprs >> r.lds >> r.scratch >> r.vspill >> r.sspill)
      rows.push_back(r);
  }
  return rows;
}

void check_artifact(const Artifact& a, const Sample& s, DType t, const std::string& arch) {
  INFO(a.source);
  CHECK(a.source.find("extern \"C\" __global__") != std::string::npos);
  CHECK(!a.binary.empty());
  CHECK(a.assembly.find("elf64-amdgpu") != std::string::npos);
  if (mfma_sample(s.name) && (t == f16 || t == bf16))
    CHECK(a.assembly.find("v_mfma_f32_") != std::string::npos);
  std::vector<Row> rows = stats_rows(a.stats);
  INFO(a.stats);
  CHECK(!rows.empty());
  CHECK(rows.size() == std::size_t(std::count(a.entry.begin(), a.entry.end(), ',') + 1));
  for (const Row& r : rows) {
    CHECK(("," + a.entry + ",").find("," + r.kernel + ",") != std::string::npos);  // a kernel's own name
    CHECK(r.scratch == 0);
    CHECK(r.vspill == 0);
    CHECK(r.sspill == 0);
    CHECK(r.vgprs > 0);
    CHECK(r.lds <= 64 * 1024);
  }
  (void)arch;
}

// Every sample, dtype and shape for one architecture: a test case each, so that the unit shards
// (tests/unit_shard.cmake) spread these external compiles, the suite's longest case otherwise.
void every_sample_builds_for(const char* arch) {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin || !hip_compiler_present()) return;
  TargetInfo info = plugin->info_for_arch(arch);
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      // The first test shape (small tiles, ragged edges where listed) and the defaults (the
      // tile sizes a user gets, where register pressure is highest).
      for (Params shape : {s.test_shapes.front(), Params{}}) {
        if (s.name == "flash_attention" && shape.empty()) shape = lds_fitting_attention();
        const std::string what = std::string(arch) + " " + s.name + " " + std::string(t.name()) +
                                 (shape.empty() ? " [defaults]" : " [test shape]");
        INFO(what);
        Artifact a;
        REQUIRE_NOTHROW(
            a = Target::codegen_for(*plugin, info, bound_sample(s, shape, t), CompileOptions{}));
        check_artifact(a, s, t, arch);
      }
    }
}

}  // namespace

TEST_CASE("hip: every sample builds a code object for gfx90a; matrix samples use v_mfma; no spills") {
  every_sample_builds_for("gfx90a");
}

TEST_CASE("hip: every sample builds a code object for gfx942; matrix samples use v_mfma; no spills") {
  every_sample_builds_for("gfx942");
}

TEST_CASE("hip: the plugin runs the shared gpu pipeline and says why it cannot run here") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin) return;
  TargetInfo info = plugin->info_for_arch("gfx942");
  CHECK(info.warp_size == 64);
  CHECK_THROWS_WITH_AS(plugin->info_for_arch("sm_80"), doctest::Contains("gfx942"), Error);
  std::vector<PassEntry> mine = plugin->pipeline(info, {}), shared = gpu_pipeline();
  // then fma contraction, the padding, the async-mma passes (no-ops here: no async unit), warp
  // roles (a no-op: no bulk copies), issue_ahead (a no-op: no async mma), the plan
  REQUIRE(mine.size() == shared.size() + 8);
  for (size_t i = 0; i < shared.size(); ++i) CHECK(mine[i].name == shared[i].name);
  CHECK(mine[shared.size()].name == "contract_fma");
  CHECK(mine[shared.size() + 1].name == "pad_shared_tiles");
  CHECK(mine[shared.size() + 2].name == "swizzle_shared_tiles");
  CHECK(mine[shared.size() + 3].name == "overlap_async_mma");
  CHECK(mine[shared.size() + 4].name == "fence_async_proxy");
  CHECK(mine[shared.size() + 5].name == "warp_roles");
  CHECK(mine[shared.size() + 6].name == "issue_ahead");
  CHECK(mine.back().name == "place_shared_memory");
  if (!dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL)) {
    ProbeResult r = plugin->probe();
    CHECK_FALSE(r.available);
    CHECK(r.reason.find("libamdhip64.so not found") != std::string::npos);
  }
}

TEST_CASE("hip: a kernel needing more LDS than 64 KiB names its buffers") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin) return;
  CHECK_THROWS_WITH_AS(
      Target::codegen_for(*plugin, plugin->info_for_arch("gfx90a"),
                          bound_sample(*find("flash_attention"), {{"S", 256}, {"block_N", 128}}, f16), {}),
      doctest::Contains("Q_shared"), Error);  // K and V tiles of 32 KiB each
  const Sample& s = *find("gemm");
  Params p =
      resolve(s, {{"M", 512}, {"N", 512}, {"K", 512}, {"block_M", 128}, {"block_N", 128}, {"block_K", 128}});
  Function f = s.build(p, f16).function();
  f = bind_sizes(f, infer_sizes(f, {{512, 512}, {512, 512}, {512, 512}}));
  CHECK_THROWS_WITH_AS(Target::codegen_for(*plugin, plugin->info_for_arch("gfx942"), f, {}),
                       doctest::Contains("A_shared"), Error);
}

TEST_CASE("hip: an fp8 gemm on gfx942 lowers to the 16x16x32 fp8 unit and compiles to f16 MFMAs") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin || !hip_compiler_present()) return;
  Artifact a =
      Target::codegen_for(*plugin, plugin->info_for_arch("gfx942"), test::fp8_gemm_kernel().function(), {});
  CHECK(a.source.find("tg_mfma_f32_16x16x32_fp8(") != std::string::npos);
  CHECK(a.assembly.find("v_mfma_f32_16x16x16_f16") != std::string::npos);
}

TEST_CASE("hip: integer / % << >> build for gfx90a through the device header's guarded helpers") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin || !hip_compiler_present()) return;
  using ir::BinOp;
  for (DType t : {i32, i64, u32, i8}) {
    INFO(t.name());
    Artifact a;
    REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch("gfx90a"),
                                            test::int_semantics_kernel(t, test::int_cases(t)).function(),
                                            {}));
    CHECK(!a.binary.empty());
    for (BinOp op : {BinOp::Div, BinOp::Mod, BinOp::Shl, BinOp::Shr})
      CHECK(a.source.find(gpu::gpu_int_helper(op, t) + "(") != std::string::npos);
    CHECK(a.source.find(" / ") == std::string::npos);  // no unguarded division
  }
}

TEST_CASE("hip: check_bounds=all guards a thread-indexed store with the record and compiles for gfx90a") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin || !hip_compiler_present()) return;
  KernelBuilder k("oob_store");
  auto Y = k.tensor("Y", {64}, f32);
  k.grid(2).threads(128).body([&](Expr) { Y(k.thread_index()) = 1.0f; });
  CompileOptions opt;
  opt.params["check_bounds"] = "all";
  Artifact a;
  REQUIRE_NOTHROW(
      a = Target::codegen_for(*plugin, plugin->info_for_arch("gfx90a"), k.build().function(), opt));
  INFO(a.source);
  CHECK(a.source.find("tg_u32* __restrict__ tg_access_record") != std::string::npos);
  CHECK(a.source.find("(tx < 64) || tg_access_failed(tg_access_record, 0, bx, 0, 0, tx, (tg_i64)(tx)") !=
        std::string::npos);
  CHECK(!a.binary.empty());
  CHECK(a.assembly.find("cmpswap") != std::string::npos);
}

TEST_CASE("hip: a lane shuffle (shuffle_xor) is a ds_bpermute on gfx90a and gfx942") {
  TargetPlugin* plugin = hip_plugin();
  if (!plugin || !hip_compiler_present()) return;
  for (const char* arch : {"gfx90a", "gfx942"}) {
    INFO(arch);
    Artifact a;
    REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch(arch),
                                            parse_function(test::kWarpButterfly, "butterfly.tgir"), {}));
    CHECK(a.source.find("tg_shfl_xor((float)(v[0]), 2, 32)") != std::string::npos);
    CHECK(!a.binary.empty());
    CHECK(a.assembly.find("ds_bpermute_b32") != std::string::npos);
  }
}
