// The `vulkan` target: the shared GPU pipeline and the target's own passes (vulkan_pipeline.h,
// passes/), SPIR-V words from the project's own module builder (spirv/), and Vulkan 1.3 compute
// through the loader opened by dlopen (runtime/).
// Built from the interp target's model (api/src/interp_target.cpp), hook by hook.
#include <cstring>
#include <mutex>

#include "runtime/vk_adopt.h"
#include "runtime/vk_context.h"
#include "runtime/vk_physical_device.h"
#include "spirv_codegen.h"
#include "tilegen/plugin.h"
#include "vulkan_pipeline.h"

namespace tg::vulkan {

namespace {

class VulkanPlugin final : public TargetPlugin {
 public:
  std::string name() const override { return "vulkan"; }

  // Every Vulkan 1.3 device, best first; software devices (lavapipe) report software = true so
  // select() ranks them after hardware GPUs and the native cpu target:
  //   {available, devices: [{device_name "NVIDIA H200", arch "vk1.3;sg=32;...;cm=..."}]}
  //   {unavailable, reason "libvulkan.so.1 not found (...)"}
  ProbeResult probe() override {
    std::lock_guard<std::mutex> lock(mu_);
    devices_.clear();
    return probe_devices(&devices_);
  }

  // coopmat, vector_copies, pad_rows, prefetch, double_buffer (vulkan_pipeline.h).
  std::vector<ParamKey> param_keys() const override { return vulkan_param_keys(); }

  // The shared GPU pipeline, then this target's passes (vulkan_pipeline.h; docs/passes.md lists
  // it); TargetInfo: warp_size = subgroup size, matrix_units = coopmat shapes. With coopmat=0
  // every pass sees the device without them, as codegen does: gemms lower to the plain path.
  std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions& opt) override {
    return vulkan_pipeline(opt);
  }

  // Lowered IR → SPIR-V words (binary) and their disassembly (source); entry lists the entry
  // points, one per kernel:
  //   kernel grid(4, 4) threads(128) { ... }  →  OpEntryPoint GLCompute %main "gemm_k0" ...
  Artifact codegen(const Function& lowered, const TargetInfo& info, const CompileOptions& opt) override {
    TargetInfo target = opt.arch.empty() ? info : info_for_arch(opt.arch);
    SpirvOutput out = emit_spirv(lowered, device_features(target, opt), fast_paths(opt));
    Artifact a;
    a.source = std::move(out.text);
    a.binary.resize(out.words.size() * 4);
    std::memcpy(a.binary.data(), out.words.data(), a.binary.size());
    for (const std::string& e : ir::kernel_entry_names(lowered)) a.entry += (a.entry.empty() ? "" : ",") + e;
    return a;
  }

  std::unique_ptr<DeviceContext> open(int index) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (devices_.empty()) {  // open() without a probe() in this process
      ProbeResult r = probe_devices(&devices_);
      if (!r.available) throw Error("vulkan: " + r.reason);
    }
    if (index < 0 || std::size_t(index) >= devices_.size())
      throw Error("vulkan has " + std::to_string(devices_.size()) + " device(s), numbered from 0; device " +
                  std::to_string(index) + " does not exist");
    // The context owns a copy of the description: a later probe() may rebuild devices_.
    return std::make_unique<VulkanContext>(devices_[std::size_t(index)]);
  }

  // The application's device (Target::adopt_vulkan): checked, and described by what it was
  // created with (runtime/vk_adopt.h).
  std::unique_ptr<DeviceContext> adopt_vulkan(const VulkanDevice& device, TargetInfo& info) override {
    return adopt_device(device, info);
  }

  // An arch string as probe() writes it, for codegen without a device:
  //   tilegen source gemm --target vulkan --arch
  //   "vk1.3;sg=32;f16s;i64;sgops;smem=49152;thr=1024;cm=coopmat_16x16x16_f16_f32"
  TargetInfo info_for_arch(const std::string& arch) override {
    return target_info(parse_arch(arch), "vulkan (" + arch + ")", false);
  }

 private:
  std::mutex mu_;
  std::vector<PhysicalDevice> devices_;
};

}  // namespace

}  // namespace tg::vulkan

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry e{tg::kPluginAbiVersion, "vulkan",
                               []() -> tg::TargetPlugin* { return new tg::vulkan::VulkanPlugin; }};
  return &e;
}
