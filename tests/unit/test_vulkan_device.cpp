// The vulkan target on a real Vulkan device (lavapipe in CI, the H200 under device_check.sh):
// the device context driven directly with a hand-written SPIR-V module, its error messages, and
// every sample × dtype × test shape compiled by the target against the float64 reference.
// Skipped, with the reason printed, where the vulkan target is unavailable (no loader, no device).
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tilegen/plugin.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"

using namespace tg;

namespace {

// The validation layer is switched on for this test binary before any plugin is probed (the
// instance is created once per process); the runtime enables it only where it is installed and
// turns its messages into errors, so a validation complaint fails the test that caused it.
const int kValidation = setenv("TILEGEN_VULKAN_VALIDATION", "1", 0);

bool vulkan_available() {
  (void)kValidation;
  for (const TargetStatus& t : targets())
    if (t.name == "vulkan") {
      if (!t.available) std::cout << "skipped: vulkan target unavailable: " << t.reason << "\n";
      return t.available;
    }
  std::cout << "skipped: no vulkan plugin in this build\n";
  return false;
}

// axpb.spvasm, assembled once with `spirv-as --target-env vulkan1.3` (SPIRV-Tools 2023.1):
// ; B[i] = A[i] * s + 1.0 for i = GlobalInvocationId.x; A at binding 0, B at binding 1, s pushed.
//   OpCapability Shader
//   OpCapability VulkanMemoryModel
//   OpMemoryModel Logical Vulkan
//   OpEntryPoint GLCompute %main "axpb_k0" %gid %A %B %pc
//   OpExecutionMode %main LocalSize 64 1 1
//   OpDecorate %gid BuiltIn GlobalInvocationId
//   OpDecorate %arr ArrayStride 4
//   OpDecorate %blk Block
//   OpMemberDecorate %blk 0 Offset 0
//   OpDecorate %A DescriptorSet 0
//   OpDecorate %A Binding 0
//   OpDecorate %B DescriptorSet 0
//   OpDecorate %B Binding 1
//   OpDecorate %pcs Block
//   OpMemberDecorate %pcs 0 Offset 0
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %uint = OpTypeInt 32 0
//   %float = OpTypeFloat 32
//   %v3uint = OpTypeVector %uint 3
//   %p_in_v3 = OpTypePointer Input %v3uint
//   %gid = OpVariable %p_in_v3 Input
//   %arr = OpTypeRuntimeArray %float
//   %blk = OpTypeStruct %arr
//   %p_sb = OpTypePointer StorageBuffer %blk
//   %A = OpVariable %p_sb StorageBuffer
//   %B = OpVariable %p_sb StorageBuffer
//   %pcs = OpTypeStruct %float
//   %p_pc = OpTypePointer PushConstant %pcs
//   %pc = OpVariable %p_pc PushConstant
//   %p_pcf = OpTypePointer PushConstant %float
//   %p_sbf = OpTypePointer StorageBuffer %float
//   %int0 = OpConstant %uint 0
//   %one = OpConstant %float 1
//   %main = OpFunction %void None %fn
//   %entry = OpLabel
//   %g3 = OpLoad %v3uint %gid
//   %i = OpCompositeExtract %uint %g3 0
//   %pa = OpAccessChain %p_sbf %A %int0 %i
//   %a = OpLoad %float %pa
//   %ps = OpAccessChain %p_pcf %pc %int0
//   %s = OpLoad %float %ps
//   %as = OpFMul %float %a %s
//   %r = OpFAdd %float %as %one
//   %pb = OpAccessChain %p_sbf %B %int0 %i
//   OpStore %pb %r
//   OpReturn
//   OpFunctionEnd
const uint32_t kAxpbWords[] = {
    0x07230203, 0x00010600, 0x00070000, 0x0000001f, 0x00000000, 0x00020011, 0x00000001, 0x00020011,
    0x000014e1, 0x0003000e, 0x00000000, 0x00000003, 0x0009000f, 0x00000005, 0x00000001, 0x62707861,
    0x00306b5f, 0x00000002, 0x00000003, 0x00000004, 0x00000005, 0x00060010, 0x00000001, 0x00000011,
    0x00000040, 0x00000001, 0x00000001, 0x00040047, 0x00000002, 0x0000000b, 0x0000001c, 0x00040047,
    0x00000006, 0x00000006, 0x00000004, 0x00030047, 0x00000007, 0x00000002, 0x00050048, 0x00000007,
    0x00000000, 0x00000023, 0x00000000, 0x00040047, 0x00000003, 0x00000022, 0x00000000, 0x00040047,
    0x00000003, 0x00000021, 0x00000000, 0x00040047, 0x00000004, 0x00000022, 0x00000000, 0x00040047,
    0x00000004, 0x00000021, 0x00000001, 0x00030047, 0x00000008, 0x00000002, 0x00050048, 0x00000008,
    0x00000000, 0x00000023, 0x00000000, 0x00020013, 0x00000009, 0x00030021, 0x0000000a, 0x00000009,
    0x00040015, 0x0000000b, 0x00000020, 0x00000000, 0x00030016, 0x0000000c, 0x00000020, 0x00040017,
    0x0000000d, 0x0000000b, 0x00000003, 0x00040020, 0x0000000e, 0x00000001, 0x0000000d, 0x0004003b,
    0x0000000e, 0x00000002, 0x00000001, 0x0003001d, 0x00000006, 0x0000000c, 0x0003001e, 0x00000007,
    0x00000006, 0x00040020, 0x0000000f, 0x0000000c, 0x00000007, 0x0004003b, 0x0000000f, 0x00000003,
    0x0000000c, 0x0004003b, 0x0000000f, 0x00000004, 0x0000000c, 0x0003001e, 0x00000008, 0x0000000c,
    0x00040020, 0x00000010, 0x00000009, 0x00000008, 0x0004003b, 0x00000010, 0x00000005, 0x00000009,
    0x00040020, 0x00000011, 0x00000009, 0x0000000c, 0x00040020, 0x00000012, 0x0000000c, 0x0000000c,
    0x0004002b, 0x0000000b, 0x00000013, 0x00000000, 0x0004002b, 0x0000000c, 0x00000014, 0x3f800000,
    0x00050036, 0x00000009, 0x00000001, 0x00000000, 0x0000000a, 0x000200f8, 0x00000015, 0x0004003d,
    0x0000000d, 0x00000016, 0x00000002, 0x00050051, 0x0000000b, 0x00000017, 0x00000016, 0x00000000,
    0x00060041, 0x00000012, 0x00000018, 0x00000003, 0x00000013, 0x00000017, 0x0004003d, 0x0000000c,
    0x00000019, 0x00000018, 0x00050041, 0x00000011, 0x0000001a, 0x00000005, 0x00000013, 0x0004003d,
    0x0000000c, 0x0000001b, 0x0000001a, 0x00050085, 0x0000000c, 0x0000001c, 0x00000019, 0x0000001b,
    0x00050081, 0x0000000c, 0x0000001d, 0x0000001c, 0x00000014, 0x00060041, 0x00000012, 0x0000001e,
    0x00000004, 0x00000013, 0x00000017, 0x0003003e, 0x0000001e, 0x0000001d, 0x000100fd, 0x00010038,
};

Artifact axpb_artifact(const uint32_t* words, std::size_t count) {
  Artifact a;
  a.binary.resize(count * 4);
  std::memcpy(a.binary.data(), words, a.binary.size());
  a.entry = "axpb_k0";
  return a;
}

// The IR the module was written for: what load() reads (params, grid, threads) and what the
// contract derives the entry name ("axpb_k0") and the push constants (s at offset 0) from.
Kernel axpb_kernel() {
  KernelBuilder k("axpb");
  auto A = k.tensor("A", {256}, f32);
  auto B = k.tensor("B", {256}, f32);
  Expr s = k.scalar("s", f32);
  k.grid(4).threads(64).body(
      [&](Expr bx) { k.parallel({64}, [&](Expr i) { B(bx * 64 + i) = A(bx * 64 + i) * s + 1.0f; }); });
  return k.build();
}

}  // namespace

TEST_CASE("vulkan device: a hand-written SPIR-V module runs through the device context") {
  if (!vulkan_available()) return;
  Target vk = Target::get("vulkan");
  std::unique_ptr<DeviceContext> ctx = vk.plugin().open(0);
  Kernel k = axpb_kernel();
  std::shared_ptr<void> loaded = ctx->load(axpb_artifact(kAxpbWords, std::size(kAxpbWords)), k.function());
  std::vector<float> in(256), out(256, -1.0f);
  for (int i = 0; i < 256; ++i) in[std::size_t(i)] = float(i) - 100.0f;
  void* a = ctx->allocate(in.size() * 4);
  void* b = ctx->allocate(out.size() * 4);
  ctx->copy_to_device(a, in.data(), in.size() * 4);
  LaunchArg la{a, {256}, f32, {}, true}, lb{b, {256}, f32, {}, true}, ls;
  ls.is_tensor = false;
  ls.scalar = Scalar::of_float(2.0);
  ctx->launch(loaded, k.function(), {la, lb, ls});
  ctx->synchronize();
  ctx->copy_to_host(out.data(), b, out.size() * 4);
  for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == in[i] * 2.0f + 1.0f);

  // Timed runs: one positive duration per run, with the caches flushed in between.
  ctx->flush_l2();
  std::vector<double> ms = ctx->time_launches(loaded, k.function(), {la, lb, ls}, 3);
  REQUIRE(ms.size() == 3);
  for (double t : ms) CHECK(t > 0.0);
  ctx->release(a);
  ctx->release(b);
}

TEST_CASE("vulkan device: a module the device cannot run is an error naming what is missing") {
  if (!vulkan_available()) return;
  Target vk = Target::get("vulkan");
  std::unique_ptr<DeviceContext> ctx = vk.plugin().open(0);
  Kernel k = axpb_kernel();
  // Not SPIR-V at all: a binary of the wrong kind (a stale or foreign cache entry).
  Artifact junk;
  junk.binary = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK_THROWS_WITH_AS(ctx->load(junk, k.function()), doctest::Contains("SPIR-V"), Error);
  // The same module declaring OpCapability CooperativeMatrixKHR (6022), on a device without it.
  if (vk.info().matrix_units.empty()) {
    std::vector<uint32_t> words(std::begin(kAxpbWords), std::end(kAxpbWords));
    words.insert(words.begin() + 5, {0x00020011u, 6022u});
    CHECK_THROWS_WITH_AS(ctx->load(axpb_artifact(words.data(), words.size()), k.function()),
                         doctest::Contains("CooperativeMatrixKHR"), Error);
  }
}

TEST_CASE("vulkan device: TILEGEN_VULKAN_DEVICE picks the device, and says so when none matches") {
  if (!vulkan_available()) return;
  TargetPlugin& plugin = Target::get("vulkan").plugin();
  setenv("TILEGEN_VULKAN_DEVICE", "no-such-device-name", 1);
  ProbeResult none = plugin.probe();
  setenv("TILEGEN_VULKAN_DEVICE", "0", 1);
  ProbeResult first = plugin.probe();
  unsetenv("TILEGEN_VULKAN_DEVICE");
  ProbeResult all = plugin.probe();
  CHECK_FALSE(none.available);
  CHECK(none.reason.find("TILEGEN_VULKAN_DEVICE=no-such-device-name matches no Vulkan device") !=
        std::string::npos);
  REQUIRE(first.available);
  REQUIRE(first.devices.size() == 1);
  REQUIRE(all.available);
  CHECK(first.devices[0].device_name == all.devices[0].device_name);
  CHECK(all.devices[0].arch.rfind("vk1.3;", 0) == 0);
}

#ifdef TILEGEN_HAVE_SAMPLES
TEST_CASE("vulkan device: every sample matches its reference") {
  using namespace tg::samples;
  if (!vulkan_available()) return;
  Target vk = Target::get("vulkan");
  std::mt19937_64 rng(13);
  for (const Sample& s : all())
    for (DType t : s.dtypes)
      for (size_t i = 0; i < s.test_shapes.size(); ++i) {
        // On a software device (lavapipe: minutes per sample in CI) this is a smoke test, one
        // dtype and one shape a sample; conformance_vulkan runs every case there.
        if (vk.info().software && (s.test_shape_info[i].conformance_only || i > 0 || t != s.dtypes[0]))
          continue;
        INFO(s.name << " " << t.name() << " [" << s.test_shape_info[i].label << "] on "
                    << vk.info().device_name);
        Params p = resolve(s, s.test_shapes[i]);
        Kernel k = s.build(p, t);
        Problem pr = s.make_problem(p, t, rng);
        try {
          CompiledKernel ck = vk.compile(k);
          ck.launch(kernel_args(k.function(), pr));
        } catch (const Error& e) {
          // What the target declares it cannot express is a skip (as in conformance), not a pass.
          if (e.message().rfind("unsupported:", 0) == 0) {
            MESSAGE("skipped: " << e.message());
            continue;
          }
          FAIL(e.what());
        }
        size_t out = 0;
        for (const HostArray& a : pr.args) {
          if (!a.is_output) continue;
          Comparison c = compare(a, pr.expected.at(out++), s.tolerance(p, t));
          INFO("output " << a.name << ": max |error| " << c.max_abs_error << " first mismatch "
                         << c.first_mismatch);
          CHECK(c.mismatches == 0);
        }
      }
}
#endif
