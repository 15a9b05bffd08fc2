// The cuda plugin without a GPU: every sample's generated CUDA C++ compiles with NVRTC for sm_80
// and sm_90, the PTX of gemm-like samples uses mma.sync, and probe() explains a missing driver.
// Skipped, with the reason printed, where the plugin was not built or NVRTC is missing.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <iostream>

#include "gpu_pass_test_util.h"
#include "int_semantics_test_util.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
#include "cuda_plugin.h"
#endif

using namespace tg;
using namespace tg::samples;

namespace {

// The plugin object from tilegen_cuda_codegen (the plugin's code, linked), or null when this
// build has no cuda target (the message says so).
TargetPlugin* cuda_plugin() {
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
  static TargetPlugin* plugin = tg::cuda::make_plugin();
  return plugin;
#else
  std::cout << "skipped: this build has no cuda target\n";
  return nullptr;
#endif
}

bool nvrtc_present() {
  void* lib = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("/usr/local/cuda/lib64/libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) std::cout << "skipped: NVRTC (libnvrtc.so.13) not found\n";
  return lib != nullptr;
}

Function bound_sample(const Sample& s, size_t shape, DType t) {
  std::mt19937_64 rng(3);
  Params p = resolve(s, s.test_shapes[shape]);
  Function f = s.build(p, t).function();
  Problem pr = s.make_problem(p, t, rng);
  std::vector<std::vector<int64_t>> shapes;
  for (const Buffer& b : f.tensors())
    for (const HostArray& a : pr.args)
      if (a.name == b->name) shapes.push_back(a.shape);
  return bind_sizes(f, infer_sizes(f, shapes));
}

bool gemm_like(const std::string& name) {
  return name == "gemm" || name == "gemm_relu" || name == "flash_attention" || name == "dequant_gemm" ||
         name == "conv2d" || name == "gemm_softmax";
}

}  // namespace

TEST_CASE("cuda: every sample compiles with NVRTC for sm_80 and sm_90; gemm-like PTX uses mma.sync") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  for (const char* arch : {"sm_80", "sm_90"}) {
    TargetInfo info = plugin->info_for_arch(arch);
    for (const Sample& s : all())
      for (DType t : s.dtypes) {
        for (size_t i = 0; i < s.test_shapes.size(); ++i) {
          if (s.test_shape_info[i].conformance_only) continue;
          INFO(arch << " " << s.name << " " << t.name() << " [" << s.test_shape_info[i].label << "]");
          Artifact a;
          REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, info, bound_sample(s, i, t), CompileOptions{}));
          INFO(a.source);
          CHECK(a.source.find("extern \"C\" __global__") != std::string::npos);
          CHECK(!a.binary.empty());
          CHECK(a.assembly.find(".target " + std::string(arch)) != std::string::npos);
          bool tensor_cores = gemm_like(s.name) && (t == f16 || t == bf16);
          CHECK((a.assembly.find("mma.sync.aligned.m16n8k16") != std::string::npos) == tensor_cores);
          break;  // one shape per sample and dtype keeps NVRTC time down
        }
      }
  }
}

// Issue 15's check without a GPU: on sm_90a every sample compiles, and the gemm the quickstart
// writes (unchanged) is wgmma on swizzled shared tiles, fenced (wgmma.fence, fence.proxy.async),
// committed and waited for, with ptxas's register count in bounds (no spill: checked by the
// cubin's existence and NVRTC's log staying silent).
TEST_CASE("cuda: sm_90a compiles every sample; the gemm's PTX is wgmma.mma_async with its fences and waits") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  TargetInfo info = plugin->info_for_arch("sm_90a");
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      for (size_t i = 0; i < s.test_shapes.size(); ++i) {
        if (s.test_shape_info[i].conformance_only) continue;
        INFO("sm_90a " << s.name << " " << t.name() << " [" << s.test_shape_info[i].label << "]");
        Artifact a;
        REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, info, bound_sample(s, i, t), CompileOptions{}));
        CHECK(!a.binary.empty());
        CHECK(a.assembly.find(".target sm_90a") != std::string::npos);
        break;
      }
    }
  const Sample& g = *find("gemm");
  for (DType t : {f16, bf16}) {
    Params p = resolve(g, {{"M", 512}, {"N", 512}, {"K", 256}});
    Function f = g.build(p, t).function();
    f = bind_sizes(f, infer_sizes(f, {{512, 256}, {256, 512}, {512, 512}}));
    CompileOptions cp_async;  // the tiles by cp.async, as before bulk copies became the default
    cp_async.params = {{"tma", "0"}};
    Artifact a = Target::codegen_for(*plugin, info, f, cp_async);
    INFO(a.source);
    const std::string ty = t == f16 ? "f16" : "bf16";
    CHECK(a.assembly.find("wgmma.mma_async.sync.aligned.m64n128k16.f32." + ty + "." + ty) !=
          std::string::npos);
    CHECK(a.assembly.find("mma.sync.aligned.m16n8k16") == std::string::npos);
    for (const char* want :
         {"wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
          "fence.proxy.async.shared::cta", "cp.async.cg.shared.global"})
      CHECK_MESSAGE(a.assembly.find(want) != std::string::npos, want);
    CHECK(a.source.find("extern __shared__ __align__(1024)") != std::string::npos);
    CHECK(a.source.find("tg_wgmma_desc(") != std::string::npos);
    // An sm_90 device gets the same by default; --param wgmma=0 keeps it on mma.sync, and an
    // architecture named with --arch is compiled as named.
    Artifact d = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90"), f, CompileOptions{});
    CHECK(d.assembly.find(".target sm_90a") != std::string::npos);
    CHECK(d.assembly.find("wgmma.mma_async") != std::string::npos);
    CompileOptions off;
    off.params["wgmma"] = "0";
    CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90"), f, off).assembly.find("wgmma") ==
          std::string::npos);
    CompileOptions named;
    named.arch = "sm_90";
    CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90"), f, named)
              .assembly.find("wgmma") == std::string::npos);
  }
}

TEST_CASE("cuda: with --param tma=1 the sm_90a gemm's tiles arrive by bulk tensor copies on mbarriers") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& g = *find("gemm");
  Function f = g.build(resolve(g, {{"M", 512}, {"N", 512}, {"K", 256}}), f16).function();
  f = bind_sizes(f, infer_sizes(f, {{512, 256}, {256, 512}, {512, 512}}));
  CompileOptions tma;
  tma.params["tma"] = "1";
  Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, tma);
  INFO(a.source);
  for (const char* want : {"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                           "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
                           "mbarrier.init.shared::cta.b64", "wgmma.mma_async"})
    CHECK_MESSAGE(a.assembly.find(want) != std::string::npos, want);
  CHECK(a.assembly.find("cp.async.cg.shared.global") == std::string::npos);  // no cp.async left
  // Two tensor maps, passed by value after the function's parameters: A's 128x32 box (64-byte
  // swizzle) and B's 32x64 strip (128-byte swizzle).
  CHECK(a.source.find("const __grid_constant__ tg_tensor_map tg_tmap0, const __grid_constant__ tg_tensor_map "
                      "tg_tmap1)") != std::string::npos);
  // The IR the source came from: A's 128x32 box in one copy, B's 256-byte rows in two strips.
  std::vector<std::pair<std::string, std::string>> stages;
  Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, tma, &stages);
  REQUIRE(stages.size() >= 2);
  const std::string& ir = stages[stages.size() - 2].second;  // after the last pass (then: source)
  CHECK(ir.find("bulk_copy A[by*128 +: 128, ko*32 + 64 +: 32]") != std::string::npos);
  CHECK(ir.find("bulk_copy B[ko*32 + 64 +: 32, bx*128 + 64 +: 64]") != std::string::npos);
  // On by default, off with tma=0, and never below sm_90.
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, CompileOptions{})
            .assembly.find("cp.async.bulk.tensor.2d") != std::string::npos);
  CompileOptions off;
  off.params = {{"tma", "0"}};
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, off).assembly.find("mbarrier") ==
        std::string::npos);
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, tma).assembly.find("mbarrier") ==
        std::string::npos);
}

// With --param warp_roles=1 beside tma=1: the bulk copies are a producer warpgroup's, which gives
// its registers to the consumers (setmaxnreg: 40 and 216 around an entry count of 128, two blocks
// a multiprocessor), the consumers arrive on the slots' empty barriers, and ptxas does not spill
// the consumers' 154 registers (NVRTC's log stays silent, the cubin exists).
TEST_CASE("cuda: with --param tma=1,warp_roles=1 the sm_90a gemm's copies are a producer warpgroup's") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& g = *find("gemm");
  Function f = g.build(resolve(g, {{"M", 512}, {"N", 512}, {"K", 512}}), f16).function();
  f = bind_sizes(f, infer_sizes(f, {{512, 512}, {512, 512}, {512, 512}}));
  CompileOptions roles;
  roles.params = {{"tma", "1"}, {"warp_roles", "1"}};
  Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, roles);
  INFO(a.source);
  CHECK(!a.binary.empty());
  CHECK(a.source.find("__maxnreg__(128) gemm(") != std::string::npos);
  CHECK(a.source.find("__launch_bounds__") == std::string::npos);
  for (const char* want :
       {"setmaxnreg.inc.sync.aligned.u32 216", "setmaxnreg.dec.sync.aligned.u32 40",
        "mbarrier.arrive.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
        "cp.async.bulk.tensor.2d", "wgmma.mma_async", "mbarrier.try_wait.parity.shared::cta.b64"})
    CHECK_MESSAGE(a.assembly.find(want) != std::string::npos, want);
  CHECK(a.assembly.find("bar.sync") != std::string::npos);  // the one barrier, after the init
  // Off without tma (nothing to specialise) and by default.
  CompileOptions alone;
  alone.params = {{"warp_roles", "1"}, {"tma", "0"}};
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, alone)
            .source.find("__launch_bounds__(128)") != std::string::npos);
  const Artifact by_default =
      Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, CompileOptions{});
  CHECK(by_default.source.find("__launch_bounds__(128)") != std::string::npos);
  CHECK(by_default.assembly.find("setmaxnreg") == std::string::npos);
  // On sm_90 named as such the gemm is mma.sync, its slots read by ldmatrix: no roles (wrong on
  // an H100, TargetInfo::roles_async_reads_only), the block's 128 threads as without them.
  CompileOptions plain_sm90 = roles;
  plain_sm90.arch = "sm_90";
  Artifact b = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90"), f, plain_sm90);
  CHECK(b.source.find("__launch_bounds__(128)") != std::string::npos);
  CHECK(b.source.find("tg_mbarrier_arrive(") == std::string::npos);
  CHECK(b.assembly.find("setmaxnreg") == std::string::npos);
}

// With --param wgmma_trans_b=1 a gemm with B stored N×K runs on wgmma, B K-major (imm-trans-b 0,
// A's kind of descriptor), with cp.async or with bulk copies and warp roles.
TEST_CASE("cuda: with --param wgmma_trans_b=1 the sm_90a gemm with trans_B reads B K-major") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& g = *find("gemm");
  Function f = g.build(resolve(g, {{"M", 512}, {"N", 512}, {"K", 512}, {"trans_B", 1}}), f16).function();
  f = bind_sizes(f, infer_sizes(f, {{512, 512}, {512, 512}, {512, 512}}));
  for (const char* extra : {"", "tma"}) {
    CAPTURE(extra);
    CompileOptions opt;
    opt.params = {{"wgmma_trans_b", "1"}};
    if (*extra) opt.params.insert({{"tma", "1"}, {"warp_roles", "1"}});
    Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, opt);
    INFO(a.source);
    CHECK(!a.binary.empty());
    CHECK(a.source.find("tg_wgmma_m64n128k16_f16_f32<0, 0>(") != std::string::npos);
    CHECK(a.source.find("<0, 1>(") == std::string::npos);
    CHECK(a.assembly.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") != std::string::npos);
    CHECK(a.assembly.find("mma.sync.aligned") == std::string::npos);
  }
  // On by default; wgmma_trans_b=0 keeps the gemm on mma.sync.
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, CompileOptions{})
            .assembly.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") != std::string::npos);
  CompileOptions off;
  off.params = {{"wgmma_trans_b", "0"}};
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, off).assembly.find("wgmma") ==
        std::string::npos);
}

// With --param wgmma_rows=1 gemm_softmax's product runs on wgmma, its rows' max and sum by warp
// shuffles beside the accumulator registers; on by default.
TEST_CASE("cuda: with --param wgmma_rows=1 the sm_90a gemm_softmax is wgmma with shuffled row statistics") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& g = *find("gemm_softmax");
  Function f = g.build(resolve(g, {{"M", 1024}, {"N", 128}, {"K", 512}}), f16).function();
  f = bind_sizes(f, infer_sizes(f, {{1024, 512}, {512, 128}, {1024, 128}}));
  CompileOptions rows;
  rows.params = {{"wgmma_rows", "1"}};
  Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, rows);
  INFO(a.source);
  CHECK(!a.binary.empty());
  CHECK(a.assembly.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") != std::string::npos);
  CHECK(a.assembly.find("shfl.sync.bfly") != std::string::npos);
  CHECK(a.assembly.find("mma.sync.aligned") == std::string::npos);
  // On by default; wgmma_rows=0 keeps the gemm on mma.sync.
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, CompileOptions{})
            .assembly.find("wgmma.mma_async") != std::string::npos);
  CompileOptions off;
  off.params = {{"wgmma_rows", "0"}};
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, off).assembly.find("wgmma") ==
        std::string::npos);
}

// With --param wgmma_trans_b=1,wgmma_rows=1 flash_attention runs on wgmma throughout: Q·Kᵀ with
// K K-major, P·V in the RS form, A (P) from four 32-bit registers a K step; no mma.sync, no
// ldmatrix (P never goes through shared memory).
TEST_CASE("cuda: sm_90a flash_attention with wgmma_trans_b and wgmma_rows reads P from registers") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& s = *find("flash_attention");
  for (DType t : {f16, bf16}) {
    const std::string tn(t.name());
    CAPTURE(tn);
    Function f = s.build(resolve(s, {{"B", 1}, {"H", 2}, {"HKV", 2}, {"S", 1024}, {"D", 128}}), t).function();
    f = bind_sizes(
        f, infer_sizes(f, {{1, 2, 1024, 128}, {1, 2, 1024, 128}, {1, 2, 1024, 128}, {1, 2, 1024, 128}}));
    CompileOptions on;
    on.params = {{"wgmma_trans_b", "1"}, {"wgmma_rows", "1"}};
    Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, on);
    INFO(a.source);
    CHECK(!a.binary.empty());
    CHECK(a.source.find("_rs<1>(&O_local[0], &P[") != std::string::npos);
    CHECK(a.assembly.find("wgmma.mma_async.sync.aligned.m64n128k16.f32." + tn + "." + tn + " {") !=
          std::string::npos);
    CHECK(a.assembly.find("mma.sync.aligned") == std::string::npos);
    CHECK(a.assembly.find("ldmatrix") == std::string::npos);
    CHECK(a.assembly.find("shfl.sync.bfly") != std::string::npos);
  }
  // With TMA, warp roles and issue_ahead: the next tile's Q·Kᵀ issued before this tile's softmax.
  Function f = s.build(resolve(s, {{"B", 1}, {"H", 2}, {"HKV", 2}, {"S", 1024}, {"D", 128}}), f16).function();
  f = bind_sizes(
      f, infer_sizes(f, {{1, 2, 1024, 128}, {1, 2, 1024, 128}, {1, 2, 1024, 128}, {1, 2, 1024, 128}}));
  CompileOptions all;
  all.params = {
      {"wgmma_trans_b", "1"}, {"wgmma_rows", "1"}, {"tma", "1"}, {"warp_roles", "1"}, {"issue_ahead", "1"}};
  Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90a"), f, all);
  INFO(a.source);
  CHECK(!a.binary.empty());
  CHECK(a.source.find("(&scores_next[0], ") != std::string::npos);
  CHECK(a.assembly.find("cp.async.bulk.tensor") != std::string::npos);
  CHECK(a.assembly.find("setmaxnreg") != std::string::npos);
}

TEST_CASE("cuda: the plugin runs the shared gpu pipeline and names a missing driver") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin) return;
  TargetInfo info = plugin->info_for_arch("sm_80");
  CHECK(info.warp_size == 32);
  CHECK_THROWS_WITH_AS(plugin->info_for_arch("sm_70"), doctest::Contains("sm_80 or later"), Error);
  // The shared list, fma contraction, the padding, then cp.async and ldmatrix (each left out by
  // its switch), then the shared-memory plan.
  std::vector<PassEntry> mine = plugin->pipeline(info, {}), shared = gpu_pipeline();
  REQUIRE(mine.size() == shared.size() + 8);
  for (size_t i = 0; i < shared.size(); ++i) CHECK(mine[i].name == shared[i].name);
  CHECK(mine[shared.size()].name == "contract_fma");
  CHECK(mine[shared.size() + 1].name == "pad_shared_tiles");
  CHECK(mine[shared.size() + 2].name == "swizzle_shared_tiles");
  CHECK(mine[shared.size() + 3].name == "async_copies");
  CHECK(mine[shared.size() + 4].name == "use_ldmatrix");
  CHECK(mine[shared.size() + 5].name == "overlap_async_mma");
  CHECK(mine[shared.size() + 6].name == "fence_async_proxy");
  CHECK(mine.back().name == "place_shared_memory");
  CompileOptions plain;
  plain.params = {{"cp_async", "0"}, {"ldmatrix", "0"}};
  CHECK(plugin->pipeline(info, plain).size() == shared.size() + 6);
  CompileOptions roles;  // warp_roles only where its switch is on (off until it has run on a GPU)
  roles.params = {{"warp_roles", "1"}};
  std::vector<PassEntry> with_roles = plugin->pipeline(info, roles);
  REQUIRE(with_roles.size() == shared.size() + 9);
  CHECK(with_roles[shared.size() + 7].name == "warp_roles");
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ProbeResult r = plugin->probe();
    CHECK_FALSE(r.available);
    CHECK(r.reason.find("libcuda.so.1 not found") != std::string::npos);
  }
}

TEST_CASE("cuda: a kernel needing more shared memory than the device has names its buffers") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& s = *find("gemm");
  Params p =
      resolve(s, {{"M", 512}, {"N", 512}, {"K", 512}, {"block_M", 256}, {"block_N", 256}, {"block_K", 256}});
  Function f = s.build(p, f16).function();
  f = bind_sizes(f, infer_sizes(f, {{512, 512}, {512, 512}, {512, 512}}));
  CHECK_THROWS_WITH_AS(Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, {}),
                       doctest::Contains("A_shared"), Error);
}

TEST_CASE("cuda: pipelined gemm tiles are filled by cp.async, committed and waited for") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  const Sample& s = *find("gemm");
  Function f = s.build(resolve(s, {{"M", 256}, {"N", 256}, {"K", 256}}), f16).function();
  f = bind_sizes(f, infer_sizes(f, {{256, 256}, {256, 256}, {256, 256}}));
  Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, {});
  INFO(a.source);
  CHECK(a.source.find("tg_cp_async_s<16>(tg_smem_base + ") != std::string::npos);
  // stages = 3, the loop's one barrier after its reads: the next tile complete, one more in flight
  CHECK(a.source.find("tg_cp_async_wait<1>()") != std::string::npos);
  CHECK(a.assembly.find("cp.async.cg.shared.global") != std::string::npos);
  CHECK(a.assembly.find("cp.async.wait_group 1") != std::string::npos);
  // Operands through ldmatrix: A (row-major) directly, B (row-major K×N) transposed, two n8 tiles
  // a load.
  CHECK(a.assembly.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16") != std::string::npos);
  CHECK(a.assembly.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") != std::string::npos);
  CHECK(a.assembly.find("ldmatrix.sync.aligned.m8n8.x2.") == std::string::npos);
  CompileOptions plain;
  plain.params["ldmatrix"] = "0";
  plain.params["cp_async"] = "0";
  std::string ptx = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, plain).assembly;
  CHECK(ptx.find("ldmatrix") == std::string::npos);
  CHECK(ptx.find("cp.async") == std::string::npos);
}

namespace {

// The body of the first loop over `var` in the generated source (up to its closing brace).
std::string loop_body(const std::string& src, const std::string& var) {
  size_t at = src.find("for (int " + var + " = ");
  if (at == std::string::npos) return "";
  size_t line_start = src.rfind('\n', at) + 1;
  std::string close = "\n" + std::string(at - line_start, ' ') + "}";
  size_t open = src.find('\n', at), end = src.find(close, open);
  return src.substr(open, end == std::string::npos ? std::string::npos : end - open);
}

// The first line of `body` that reads a shared tile of `src`: an ldmatrix, an mma, or an element
// of a shared buffer right of an assignment's " = " and not taken by address (cp.async operands).
size_t first_tile_read(const std::string& src, const std::string& body) {
  size_t r = std::min(body.find("tg_ldmatrix"), body.find("tg_mma"));
  const std::string decl = " = reinterpret_cast<";
  for (size_t at = src.find(decl); at != std::string::npos; at = src.find(decl, at + 1)) {
    if (src.compare(src.find('(', at) + 1, 7, "tg_smem") != 0) continue;
    size_t name_start = src.rfind(' ', at - 1) + 1;
    std::string use = src.substr(name_start, at - name_start) + "[";
    for (size_t u = body.find(use); u != std::string::npos; u = body.find(use, u + 1))
      if (u > 0 && body[u - 1] != '&' && body.find(" = ", body.rfind('\n', u)) < u) r = std::min(r, u);
  }
  return r == std::string::npos ? r : body.rfind('\n', r);
}

}  // namespace

// On the H200, gemm_relu 64×64×32 with 32×32×16 tiles read its tiles before they landed: two
// iterations and three stages leave the main loop with no fill (its guard ko + 2 < 2 folds to
// false), so the commit/wait that the emitter places after the fills ended up after the reads.
TEST_CASE("cuda: a pipelined loop waits for its tiles and syncs before reading them, fills or not") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  struct Case {
    const char* sample;
    int64_t K;
  };
  for (Case c : {Case{"gemm_relu", 32}, Case{"gemm_relu", 16}, Case{"gemm", 64}})
    for (DType t : {f16, f32})
      for (const char* cp_async : {"1", "0"}) {
        const Sample& s = *find(c.sample);
        Params p =
            resolve(s, {{"M", 64}, {"N", 64}, {"K", c.K}, {"block_M", 32}, {"block_N", 32}, {"block_K", 16}});
        Function f = s.build(p, t).function();
        f = bind_sizes(f, infer_sizes(f, {{64, c.K}, {c.K, 64}, {64, 64}}));
        CompileOptions opt;
        opt.params["cp_async"] = cp_async;
        opt.params["tma"] = "0";  // the cp.async fills (bulk copies: test_mbarrier.cpp, the tma cases here)
        Artifact a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_90"), f, opt);
        INFO(std::string(c.sample) << " K=" << c.K << " " << t.name() << " cp_async=" << std::string(cp_async)
                                   << "\n"
                                   << a.source);
        // One iteration (K = 16) leaves no loop: the body is the kernel's straight-line code.
        std::string body = loop_body(a.source, "ko");
        if (body.empty()) body = a.source;
        size_t read = first_tile_read(a.source, body);
        REQUIRE(read != std::string::npos);
        std::string before = body.substr(0, read);
        const bool async = a.source.find("tg_cp_async_s<") != std::string::npos;
        if (!async) CHECK((std::string(cp_async) == "0" || c.K == 16));
        size_t sync = before.rfind("__syncthreads();");
        if (sync == std::string::npos && body != a.source) {
          // Barrier thinning left the loop one barrier, after this iteration's reads: it waits
          // for and syncs the next iteration's tile (stages - 2 = 1 group left in flight), and
          // the first tile is synced before the loop.
          std::string after = body.substr(read);
          size_t end_sync = after.rfind("__syncthreads();");
          REQUIRE(end_sync != std::string::npos);
          CHECK(after.find("tg_ldmatrix", end_sync) == std::string::npos);
          CHECK(a.source.substr(0, a.source.find("for (int ko = ")).rfind("__syncthreads();") !=
                std::string::npos);
          if (!async) continue;
          size_t wait = after.rfind("tg_cp_async_wait<1>();");
          REQUIRE(wait != std::string::npos);
          CHECK(wait < end_sync);
          CHECK(after.rfind("tg_cp_async_commit();") < wait);
          continue;
        }
        CHECK(sync != std::string::npos);
        if (!async) continue;
        size_t wait = before.rfind("tg_cp_async_wait<2>();");
        REQUIRE(wait != std::string::npos);
        CHECK(wait < sync);
        CHECK(before.rfind("tg_cp_async_commit();") < wait);
      }
}

TEST_CASE("cuda: integer / % << >> compile with NVRTC through the device header's guarded helpers") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  using ir::BinOp;
  for (DType t : {i32, i64, u32, i8}) {
    INFO(t.name());
    Artifact a;
    REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"),
                                            test::int_semantics_kernel(t, test::int_cases(t)).function(),
                                            {}));
    CHECK(!a.binary.empty());
    // Operands from the tensor and constant divisors or counts that are not powers of two go
    // through the helpers test_int_semantics.cpp runs on the host; a power of two is a shift.
    for (BinOp op : {BinOp::Div, BinOp::Mod, BinOp::Shl, BinOp::Shr})
      CHECK(a.source.find(gpu::gpu_int_helper(op, t) + "(") != std::string::npos);
    CHECK(a.source.find(" >> 1)") != std::string::npos);
    CHECK(a.source.find(" / ") == std::string::npos);  // no unguarded division
  }
}

// Casts to fp8/fp4 and stores of them (test_small_float_stores.cpp checks the same rounding on the
// targets that run here): through the shared header's encoders, a value already rounded stored as
// its bits, no decode/encode round trip left behind.
TEST_CASE("cuda: casts to e4m3/e5m2/e2m1 and their stores compile with NVRTC through the encoders") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  KernelBuilder k("small_floats");
  auto X = k.tensor("X", {64}, f32);
  auto Y = k.tensor("Y", {64}, fp8_e4m3);
  auto Z = k.tensor("Z", {64}, fp8_e5m2);
  auto W = k.tensor("W", {64}, fp4_e2m1);
  k.grid(1).threads(64).body([&](Expr) {
    Expr i = k.thread_index();
    Y(i) = cast(fp8_e4m3, X(i) * 2.0f);
    Z(i) = cast(fp8_e5m2, cast(f32, cast(fp8_e4m3, X(i))) + 1.0f);
    W(i) = cast(fp4_e2m1, X(i));
  });
  const Function f = k.build().function();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    Artifact a;
    REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch(arch), f, {}));
    CHECK(!a.binary.empty());
    CHECK(a.source.find("Y[tx] = tg_f32_to_e4m3((float)(") != std::string::npos);
    CHECK(a.source.find("tg_e4m3_to_f32(tg_f32_to_e4m3(") != std::string::npos);  // the inner cast, rounded
    CHECK(a.source.find("tg_f32_to_e2m1(") != std::string::npos);
    CHECK(a.source.find("tg_e5m2_to_f32(tg_f32_to_e5m2(") == std::string::npos);  // stored as its bits
  }
}

TEST_CASE("cuda: check_bounds=all guards a thread-indexed store with the record and NVRTC compiles it") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  KernelBuilder k("oob_store");
  auto Y = k.tensor("Y", {64}, f32);
  auto X = k.tensor("X", {64}, i32);
  k.grid(2).threads(128).body([&](Expr) { Y(k.thread_index()) = cast(f32, X(k.thread_index() / 2)) + 1.0f; });
  const Function f = k.build().function();
  CompileOptions opt;
  opt.params["check_bounds"] = "all";
  Artifact a;
  REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, opt));
  INFO(a.source);
  CHECK(a.source.find("tg_u32* __restrict__ tg_access_record") != std::string::npos);
  // The store's guard; the load X[tx / 2] is proven in range and has none.
  CHECK(
      a.source.find("(tx < 64) || tg_access_failed(tg_access_record, 0, bx, 0, 0, tx, (tg_i64)(tx), 0, 0") !=
      std::string::npos);
  CHECK(a.source.find("tg_access_failed(tg_access_record, 1") == std::string::npos);
  CHECK(!a.binary.empty());
  CHECK(a.assembly.find("atom.global.cas") != std::string::npos);
  CompileOptions plain;
  CHECK(Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, plain).source.find("tg_access") ==
        std::string::npos);
}

TEST_CASE("cuda: a lane shuffle (shuffle_xor) is one shfl.sync.bfly over the full warp") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin || !nvrtc_present()) return;
  Artifact a;
  REQUIRE_NOTHROW(a = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"),
                                          parse_function(test::kWarpButterfly, "butterfly.tgir"), {}));
  INFO(a.source);
  CHECK(a.source.find("tg_shfl_xor((float)(v[0]), 5, 32)") != std::string::npos);
  CHECK(!a.binary.empty());
  CHECK(a.assembly.find("shfl.sync.bfly.b32") != std::string::npos);
}
