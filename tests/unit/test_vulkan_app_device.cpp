// The vulkan target on the application's own Vulkan device (Target::adopt_vulkan): the test
// makes an instance, device and queues as an application would (vulkan_app_device.h), opens
// tilegen on them, and runs real kernels submitted to its queue and recorded into its command
// buffers, ordered with its own commands; then the errors. Under the validation layer with
// synchronization validation (where it is installed, as in CI), every test also fails on a
// hazard or misuse the layer reports, so a missing barrier of tilegen's fails here.
// Skipped, with the reason, where there is no Vulkan 1.3 device or no vulkan plugin.
#if __has_include(<vulkan/vulkan.h>)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "runtime_test_util.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"
#include "vulkan_app_device.h"

using namespace tg;
using namespace tg::testing;

namespace {

/// The application's device, or why there is none (then the test says so and passes nothing).
std::unique_ptr<AppVulkan> app_device(const AppDeviceOptions& opt = {}) {
  std::string reason;
  if (!find_plugin("vulkan", &reason)) {
    MESSAGE("skipped: no vulkan plugin: ", reason);
    return nullptr;
  }
  auto app = std::make_unique<AppVulkan>(opt);
  if (!app->skip.empty()) {
    MESSAGE("skipped: ", app->skip);
    return nullptr;
  }
  if (!app->validation) MESSAGE("without the validation layer (not installed): hazards go unseen");
  return app;
}

/// No validation message on the application's instance since the last call.
void check_no_validation_messages(AppVulkan& app) {
  std::vector<std::string> msgs = app.log.take();
  std::string all;
  for (const std::string& m : msgs) all += "\n  " + m;
  INFO("validation messages:" << all);
  CHECK(msgs.empty());
}

/// gemm_relu (f16, ragged 45x39x50): the sample's buffers on `vk`, inputs random, the output
/// poisoned, and its float64 reference.
struct GemmRelu {
  samples::Params p;
  samples::Problem pr;
  const samples::Sample* s = nullptr;
  Kernel kernel;
  std::vector<DeviceBuffer> buffers;

  explicit GemmRelu(const Target& vk, uint64_t seed) : s(samples::find("gemm_relu")), kernel(build(seed)) {
    for (samples::HostArray& a : pr.args) buffers.push_back(vk.upload(a.view()));
  }
  Kernel build(uint64_t seed) {
    REQUIRE(s);
    p = samples::resolve(*s, s->test_shapes.at(1));
    std::mt19937_64 rng(seed);
    pr = s->make_problem(p, f16, rng);
    return s->build(p, f16);
  }
  std::vector<KernelArg> args() const {
    std::vector<KernelArg> out;
    for (const DeviceBuffer& b : buffers) out.push_back(&b);
    return out;
  }
  /// Downloads the output and compares it with the reference.
  void check_output() {
    std::size_t out = 0;
    for (std::size_t i = 0; i < pr.args.size(); ++i) {
      samples::HostArray& a = pr.args[i];
      if (!a.is_output) continue;
      buffers[i].download(a.bytes.data(), a.bytes.size());
      samples::Comparison c = samples::compare(a, pr.expected.at(out++), s->tolerance(p, f16));
      INFO("output " << a.name << ": max |error| " << c.max_abs_error << ", first mismatch "
                     << c.first_mismatch);
      CHECK(c.mismatches == 0);
    }
    CHECK(out == 1);
  }
  /// The output poisoned again (NaN), so the next launch must write every element.
  void poison_output() {
    for (std::size_t i = 0; i < pr.args.size(); ++i)
      if (pr.args[i].is_output) {
        std::vector<uint8_t> nan(pr.args[i].bytes.size(), 0xff);  // f16 0xffff: NaN
        buffers[i].upload(nan.data(), nan.size());
      }
  }
};

/// scale(X: f32[n], Y: f32[n]):  Y[i] = 2 * X[i] + 1.
Kernel scale_kernel(int64_t n) {
  KernelBuilder k("scale");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(n / 64).threads(64).body([&](Expr bx) {
    Expr i = bx * 64 + k.thread_index();
    Y(i) = X(i) * 2.0f + 1.0f;
  });
  return k.build();
}

/// gather(I: i32[n], X: f32[n], Y: f32[n]):  Y[i] = X[I[i]], an index no pass can bound.
Kernel gather_kernel(int64_t n) {
  KernelBuilder k("gather");
  auto I = k.tensor("I", {n}, i32);
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(n / 64).threads(64).body([&](Expr bx) {
    Expr i = bx * 64 + k.thread_index();
    Y(i) = X(I(i));
  });
  return k.build();
}

VkBuffer vk_buffer(const DeviceBuffer& b) { return reinterpret_cast<VkBuffer>(b.native_handle()); }

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("vulkan on the application's device: gemm_relu on its queue and in its command buffer") {
  auto app = app_device();
  if (!app) return;
  Target vk = Target::adopt_vulkan(app->handles());
  CHECK(vk.name() == "vulkan");
  CHECK(vk.info().device_name == app->physical_name);
  GemmRelu g(vk, 7);
  CompiledKernel k = vk.compile(g.kernel);
  REQUIRE(g.buffers.size() == 3);
  CHECK(g.buffers[0].device_index() == -1);
  CHECK(g.buffers[0].native_handle() != nullptr);
  CHECK(g.buffers[0].native_handle() != g.buffers[1].native_handle());

  SUBCASE("without a stream: as on tilegen's own device, on the queue given at adoption") {
    k.launch(g.args());
    g.check_output();
  }
  SUBCASE("on the application's second queue, then waited for by the application") {
    REQUIRE(app->queues.size() >= 1);
    VkQueue q = app->queues.back();
    k.launch(g.args(), Stream{q});
    REQUIRE(app->fn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(q) == VK_SUCCESS);
    g.check_output();
    // Again on the same buffers, poisoned: the second launch writes every element too.
    g.poison_output();
    for (int i = 0; i < 3; ++i) k.launch(g.args(), Stream{q});  // queued back to back, not waited for
    REQUIRE(app->fn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(q) == VK_SUCCESS);
    g.check_output();
  }
  SUBCASE("recorded into the application's command buffer, submitted by it") {
    VkCommandBuffer cmd = app->command_buffer();
    k.launch(g.args(), Stream::command_buffer(cmd));
    // Nothing ran yet: the output is still the poison.
    std::vector<uint8_t> before(g.pr.args[2].bytes.size());
    g.buffers[2].download(before.data(), before.size());
    CHECK(before == g.pr.args[2].bytes);
    app->full_barrier(cmd);
    app->submit_and_wait(cmd, app->queues.at(0));
    g.check_output();
  }
  SUBCASE("profile on the application's queue") {
    ProfileOptions opt;
    opt.warmup = 1;
    opt.runs = 3;
    opt.stream = Stream{app->queues.at(0)};
    ProfileResult r = k.profile(g.args(), opt);
    CHECK(r.runs == 3);
    CHECK(r.min_ms > 0);
    g.check_output();
  }
  SUBCASE("check_bounds on the application's queue: the access record is read back after it") {
    CompileOptions opt;
    opt.params["check_bounds"] = "all";
    CompiledKernel gather = vk.compile(gather_kernel(64), opt);
    std::vector<int32_t> idx(64);
    std::vector<float> x(64), y(64, -1.0f);
    for (int i = 0; i < 64; ++i) idx[i] = 63 - i, x[i] = float(i);
    HostTensor I{idx.data(), {64}, i32}, X{x.data(), {64}, f32}, Y{y.data(), {64}, f32};
    gather.launch({I, X, Y}, Stream{app->queues.at(0)});
    for (int i = 0; i < 64; ++i) CHECK(y[i] == float(63 - i));
    idx[5] = 64;  // one past the end
    std::string err = error_of([&] { gather.launch({I, X, Y}, Stream{app->queues.at(0)}); });
    CHECK(err.find("out-of-range load from X[64]") != std::string::npos);
  }
  SUBCASE("host tensors on the application's queue: copied in and back, as on cuda") {
    std::vector<KernelArg> host;
    for (samples::HostArray& a : g.pr.args) host.push_back(a.view());
    k.launch(host, Stream{app->queues.at(0)});
    std::size_t out = 0;
    for (samples::HostArray& a : g.pr.args)
      if (a.is_output) {
        samples::Comparison c = samples::compare(a, g.pr.expected.at(out++), g.s->tolerance(g.p, f16));
        CHECK(c.mismatches == 0);
      }
  }
  check_no_validation_messages(*app);
}

TEST_CASE("vulkan on the application's device: its writes, tilegen's kernel, its reads, in order") {
  auto app = app_device();
  if (!app) return;
  Target vk = Target::adopt_vulkan(app->handles());
  const int64_t n = 4096;
  CompiledKernel k = vk.compile(scale_kernel(n));
  DeviceBuffer x = vk.alloc({n}, f32), y = vk.alloc({n}, f32), z = vk.alloc({n}, f32);
  std::vector<float> poison(n, std::nanf("")), got(n);
  auto fill = app->fn<PFN_vkCmdFillBuffer>("vkCmdFillBuffer");
  auto copy = app->fn<PFN_vkCmdCopyBuffer>("vkCmdCopyBuffer");
  const VkBufferCopy whole{0, 0, VkDeviceSize(n * 4)};

  SUBCASE("one command buffer: fill X, the kernel, copy Y to Z") {
    for (float v : {3.0f, -1.5f}) {  // twice: the second round overwrites the first's results
      x.upload(poison.data(), n * 4);
      y.upload(poison.data(), n * 4);
      z.upload(poison.data(), n * 4);
      VkCommandBuffer cmd = app->command_buffer();
      fill(cmd, vk_buffer(x), 0, VK_WHOLE_SIZE, float_bits(v));  // the application's write...
      k.launch({&x, &y}, Stream::command_buffer(cmd));           // ...read by tilegen's kernel...
      copy(cmd, vk_buffer(y), vk_buffer(z), 1, &whole);          // ...whose output it reads
      app->full_barrier(cmd);
      app->submit_and_wait(cmd, app->queues.at(0));
      z.download(got.data(), n * 4);
      CHECK(got == std::vector<float>(n, 2 * v + 1));
      y.download(got.data(), n * 4);
      CHECK(got == std::vector<float>(n, 2 * v + 1));
    }
  }
  SUBCASE("one queue: the application's submission, tilegen's, the application's") {
    x.upload(poison.data(), n * 4);
    z.upload(poison.data(), n * 4);
    VkQueue q = app->queues.at(0);
    VkCommandBuffer before = app->command_buffer();
    fill(before, vk_buffer(x), 0, VK_WHOLE_SIZE, float_bits(0.25f));
    VkCommandBuffer after = app->command_buffer();
    copy(after, vk_buffer(y), vk_buffer(z), 1, &whole);
    app->full_barrier(after);
    auto end = app->fn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer");
    REQUIRE(end(before) == VK_SUCCESS);
    VkSubmitInfo si = vk_init<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &before;
    REQUIRE(app->fn<PFN_vkQueueSubmit>("vkQueueSubmit")(q, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS);
    k.launch({&x, &y}, Stream{q});  // after `before` in the queue's submission order
    app->submit_and_wait(after, q);
    z.download(got.data(), n * 4);
    CHECK(got == std::vector<float>(n, 1.5f));
    app->fn<PFN_vkFreeCommandBuffers>("vkFreeCommandBuffers")(app->device, app->pool, 1, &before);
  }
  check_no_validation_messages(*app);
}

TEST_CASE("vulkan on the application's device: tilegen destroys none of its handles") {
  auto app = app_device();
  if (!app) return;
  for (int round = 0; round < 2; ++round) {  // a second adoption of the same device, after the first is gone
    Target vk = Target::adopt_vulkan(app->handles());
    CompiledKernel k = vk.compile(scale_kernel(64));
    DeviceBuffer x = vk.alloc({64}, f32), y = vk.alloc({64}, f32);
    std::vector<float> ones(64, 1.0f);
    x.upload(ones.data(), 256);
    k.launch({&x, &y}, Stream{app->queues.at(0)});  // in flight when the Target goes: waited for
  }
  // The device, its queue and the pool are the application's still: a submission of its own runs.
  VkCommandBuffer cmd = app->command_buffer();
  app->full_barrier(cmd);
  app->submit_and_wait(cmd, app->queues.at(0));
  REQUIRE(app->fn<PFN_vkDeviceWaitIdle>("vkDeviceWaitIdle")(app->device) == VK_SUCCESS);
  check_no_validation_messages(*app);
}

TEST_CASE("vulkan on the application's device: Target::wrap of its own VkBuffers") {
  auto app = app_device();
  if (!app) return;
  Target vk = Target::adopt_vulkan(app->handles());
  const int64_t n = 256;
  AppVulkan::Buffer bx = app->make_buffer(n * 4), by = app->make_buffer(n * 4);
  auto* hx = static_cast<float*>(bx.mapped);
  auto* hy = static_cast<float*>(by.mapped);
  for (int64_t i = 0; i < n; ++i) hx[i] = float(i), hy[i] = std::nanf("");
  {
    DeviceBuffer x = vk.wrap(reinterpret_cast<void*>(bx.buffer), {n}, f32);
    DeviceBuffer y = vk.wrap(reinterpret_cast<void*>(by.buffer), {n}, f32);
    CHECK_FALSE(x.owns_memory());
    CHECK(x.native_handle() == reinterpret_cast<void*>(bx.buffer));
    CompiledKernel k = vk.compile(scale_kernel(n));
    VkCommandBuffer cmd = app->command_buffer();
    k.launch({&x, &y}, Stream::command_buffer(cmd));
    app->full_barrier(cmd);
    app->submit_and_wait(cmd, app->queues.at(0));
    for (int64_t i = 0; i < n; ++i) CHECK(hy[i] == 2.0f * float(i) + 1.0f);  // through its own mapping
    // upload and download: through tilegen's staging, the buffers being the application's.
    std::vector<float> ones(n, 1.0f), got(n);
    x.upload(ones.data(), n * 4);
    CHECK(hx[7] == 1.0f);
    k.launch({&x, &y});
    y.download(got.data(), n * 4);
    CHECK(got == std::vector<float>(n, 3.0f));
    std::string err = error_of([&] { vk.wrap(reinterpret_cast<void*>(bx.buffer), {2 * n}, f32); });
    CHECK(err.find("wrap: target 'vulkan' the application's device " + app->physical_name +
                   " cannot use the memory for f32[512]: the VkBuffer needs") != std::string::npos);
    CHECK(err.find("fewer than the tensor's 2048") != std::string::npos);
    CHECK(error_of([&] { vk.wrap(nullptr, {n}, f32); }).find("wrap: the pointer for f32[256] is null") !=
          std::string::npos);
    // Two wraps of one VkBuffer are one memory: the kernel may not write one and read the other.
    DeviceBuffer x2 = vk.wrap(reinterpret_cast<void*>(bx.buffer), {n}, f32);
    CHECK(error_of([&] {
            k.launch({&x, &x2});
          }).find("share memory, and the kernel writes argument 2 (Y)") != std::string::npos);
    // Buffers of two adoptions of one device do not mix: each is a context of its own.
    Target other = Target::adopt_vulkan(app->handles());
    DeviceBuffer z = other.alloc({n}, f32);
    CHECK(error_of([&] { k.launch({&x, &z}); }).find("(another adoption of it)") != std::string::npos);
  }
  // Never destroyed by tilegen: the application destroys them (a second destroy would be reported).
  app->destroy_buffer(bx);
  app->destroy_buffer(by);
  check_no_validation_messages(*app);
}

TEST_CASE("vulkan on the application's device: the older feature structures are read too") {
  AppDeviceOptions opt;
  opt.features_in_chain = false;  // VkPhysicalDevice16BitStorageFeatures, ... and pEnabledFeatures
  auto app = app_device(opt);
  if (!app) return;
  Target vk = Target::adopt_vulkan(app->handles());
  GemmRelu g(vk, 11);
  vk.compile(g.kernel).launch(g.args(), Stream{app->queues.at(0)});
  REQUIRE(app->fn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(app->queues.at(0)) == VK_SUCCESS);
  g.check_output();
  check_no_validation_messages(*app);
}

TEST_CASE("vulkan on the application's device: what it lacks, and handles that are not its own") {
  auto app = app_device();
  if (!app) return;
  const std::string at = at_line(__FILE__, __LINE__ + 2);  // the call below: the user's call site
  auto adopt_error = [&](const VulkanDevice& d) {
    std::string err = error_of([&] { Target::adopt_vulkan(d); });
    CHECK(err.rfind(at + "adopt_vulkan: vulkan: ", 0) == 0);
    return err;
  };
  SUBCASE("null handles and an old instance") {
    VulkanDevice d = app->handles();
    d.device = nullptr;
    CHECK(adopt_error(d).find("VulkanDevice::device is null; pass the application's VkDevice") !=
          std::string::npos);
    d = app->handles();
    d.queue = nullptr;
    CHECK(adopt_error(d).find("VulkanDevice::queue is null") != std::string::npos);
    d = app->handles();
    d.api_version = VK_API_VERSION_1_2;
    CHECK(adopt_error(d).find("the instance was created for Vulkan 1.2 (VulkanDevice::api_version); "
                              "tilegen needs 1.3") != std::string::npos);
    d = app->handles();
    d.queue_family = 99;
    CHECK(adopt_error(d).find("queue family 99 of device " + app->physical_name + " does not exist") !=
          std::string::npos);
  }
  SUBCASE("a device created without VK_KHR_push_descriptor and vulkanMemoryModel") {
    AppDeviceOptions opt;
    opt.push_descriptor = false;
    opt.memory_model = false;
    AppVulkan bare(opt);
    REQUIRE(bare.skip.empty());
    CHECK(adopt_error(bare.handles())
              .find("the application's device " + bare.physical_name +
                    " was created without the feature vulkanMemoryModel and the extension "
                    "VK_KHR_push_descriptor, which tilegen needs: enable them in the VkDeviceCreateInfo") !=
          std::string::npos);
    check_no_validation_messages(bare);
  }
  SUBCASE("a device without 16-bit storage: an f16 kernel is refused, an f32 one runs") {
    AppDeviceOptions opt;
    opt.storage_16bit = false;
    AppVulkan no16(opt);
    REQUIRE(no16.skip.empty());
    Target vk = Target::adopt_vulkan(no16.handles());
    CHECK(vk.info().arch.find(";f16s") == std::string::npos);
    GemmRelu g(vk, 3);
    std::string err = error_of([&] { vk.compile(g.kernel).launch(g.args()); });
    CHECK(err.find(
              "f16 tensors need 16-bit storage (storageBuffer16BitAccess), which this Vulkan device lacks") !=
          std::string::npos);
    DeviceBuffer x = vk.alloc({64}, f32), y = vk.alloc({64}, f32);
    std::vector<float> ones(64, 1.0f), got(64);
    x.upload(ones.data(), 256);
    vk.compile(scale_kernel(64)).launch({&x, &y});
    y.download(got.data(), 256);
    CHECK(got == std::vector<float>(64, 3.0f));
    check_no_validation_messages(no16);
  }
  SUBCASE(
      "streams: another device's queue and command buffer, null, host tensors and profile in a command "
      "buffer") {
    Target vk = Target::adopt_vulkan(app->handles());
    AppVulkan other;
    REQUIRE(other.skip.empty());
    CompiledKernel k = vk.compile(scale_kernel(64));
    DeviceBuffer x = vk.alloc({64}, f32), y = vk.alloc({64}, f32);
    std::string line;
    auto launch_error = [&](Stream s) {
      line = at_line(__FILE__, __LINE__ + 1);
      return error_of([&] { k.launch({&x, &y}, s); });
    };
    std::string err = launch_error(Stream{other.queues.at(0)});
    CHECK(err.rfind(line +
                        "target 'vulkan' cannot launch on the stream given: the VkQueue belongs to another "
                        "VkDevice than the one tilegen was opened on",
                    0) == 0);
    VkCommandBuffer foreign = other.command_buffer();
    CHECK(launch_error(Stream::command_buffer(foreign))
              .find("the VkCommandBuffer belongs to another VkDevice than the one tilegen was opened on") !=
          std::string::npos);
    CHECK(launch_error(Stream{nullptr}).find("the VkQueue is null") != std::string::npos);
    CHECK(launch_error(Stream::command_buffer(nullptr)).find("the VkCommandBuffer is null") !=
          std::string::npos);
    other.submit_and_wait(foreign, other.queues.at(0));  // recorded nothing: it ends as it began

    VkCommandBuffer cmd = app->command_buffer();
    std::vector<float> hx(64, 1.0f), hy(64);
    err = error_of([&] { k.launch({HostTensor{hx.data(), {64}, f32}, &y}, Stream::command_buffer(cmd)); });
    CHECK(err.find("a copy to the device is needed, but a launch into a command buffer runs only when the "
                   "application submits it") != std::string::npos);
    CHECK(err.find("pass DeviceBuffers (not HostTensors)") != std::string::npos);
    CompileOptions checked;
    checked.params["check_bounds"] = "all";
    CompiledKernel gather = vk.compile(gather_kernel(64), checked);
    DeviceBuffer idx = vk.alloc({64}, i32);
    err = error_of([&] { gather.launch({&idx, &x, &y}, Stream::command_buffer(cmd)); });
    CHECK(err.find("a copy to the device is needed, but a launch into a command buffer runs only when") !=
          std::string::npos);
    ProfileOptions opt;
    opt.stream = Stream::command_buffer(cmd);
    err = error_of([&] { k.profile({&x, &y}, opt); });
    CHECK(err.find("profile: ProfileOptions::stream is a command buffer") != std::string::npos);
    app->submit_and_wait(cmd, app->queues.at(0));  // nothing was recorded by the refused calls

    // tilegen's own vulkan device has no queue of the application's.
    std::optional<Target> own;
    try {
      own = Target::get("vulkan");
    } catch (const Error& e) {
      MESSAGE("own device skipped: ", std::string(e.what()));
    }
    if (own) {
      CompiledKernel ko = own->compile(scale_kernel(64));
      err = error_of([&] {
        ko.launch({HostTensor{hx.data(), {64}, f32}, HostTensor{hy.data(), {64}, f32}},
                  Stream{app->queues.at(0)});
      });
      CHECK(
          err.find("this vulkan device is tilegen's own, so no queue or command buffer of the application's "
                   "belongs to it; open tilegen on the application's device (Target::adopt_vulkan)") !=
          std::string::npos);
    }
    check_no_validation_messages(other);
  }
  check_no_validation_messages(*app);
}

#endif
