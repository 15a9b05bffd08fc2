// The cuda plugin without a GPU: every sample's generated CUDA C++ compiles with NVRTC for sm_80
// and sm_90, the PTX of gemm-like samples uses mma.sync, and probe() explains a missing driver.
// Skipped, with the reason printed, where the plugin was not built or NVRTC is missing.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <iostream>

#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

// The plugin object from build/lib/libtilegen_cuda.so, or null (with the reason printed).
TargetPlugin* cuda_plugin() {
  static TargetPlugin* plugin = []() -> TargetPlugin* {
    std::string path = std::string(TILEGEN_BINARY_DIR) + "/lib/libtilegen_cuda.so";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::cout << "skipped: the cuda plugin was not built (" << dlerror() << ")\n";
      return nullptr;
    }
    using EntryFn = const TgPluginEntry* (*)();
    auto entry = reinterpret_cast<EntryFn>(dlsym(lib, "tilegen_plugin_entry"));
    return entry ? entry()->create() : nullptr;
  }();
  return plugin;
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
         name == "conv2d";
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

TEST_CASE("cuda: the plugin runs the shared gpu pipeline and names a missing driver") {
  TargetPlugin* plugin = cuda_plugin();
  if (!plugin) return;
  TargetInfo info = plugin->info_for_arch("sm_80");
  CHECK(info.warp_size == 32);
  CHECK_THROWS_WITH_AS(plugin->info_for_arch("sm_70"), doctest::Contains("sm_80 or later"), Error);
  std::vector<PassEntry> mine = plugin->pipeline(info, {}), shared = gpu_pipeline();
  REQUIRE(mine.size() == shared.size());
  for (size_t i = 0; i < mine.size(); ++i) CHECK(mine[i].name == shared[i].name);
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
  CHECK(a.source.find("tg_cp_async<16>") != std::string::npos);
  CHECK(a.source.find("tg_cp_async_wait<2>()") != std::string::npos);  // stages = 3
  CHECK(a.assembly.find("cp.async.cg.shared.global") != std::string::npos);
  CHECK(a.assembly.find("cp.async.wait_group 2") != std::string::npos);
  // Operands through ldmatrix: A (row-major) directly, B (row-major K×N) transposed.
  CHECK(a.assembly.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16") != std::string::npos);
  CHECK(a.assembly.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") != std::string::npos);
  CompileOptions plain;
  plain.params["ldmatrix"] = "0";
  plain.params["cp_async"] = "0";
  std::string ptx = Target::codegen_for(*plugin, plugin->info_for_arch("sm_80"), f, plain).assembly;
  CHECK(ptx.find("ldmatrix") == std::string::npos);
  CHECK(ptx.find("cp.async") == std::string::npos);
}
