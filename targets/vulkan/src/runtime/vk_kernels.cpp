// load(), launch() and time_launches(): SPIR-V words → one compute pipeline per kernel entry
// point; a launch binds the tensors (set 0, binding i), pushes the scalars, and dispatches
// each kernel's grid in order, with a barrier between kernels.
//
//   func softmax(X: f32[100, 1000] global, Y: f32[100, 1000] global)  (one ir::Kernel, grid(100))
//     load:   module → pipeline "softmax_k0", set layout {0: X, 1: Y}, no push constants
//     launch: bind set {X, Y}; dispatch(100, 1, 1); barrier → host; submit; wait
#include <algorithm>
#include <cstring>

#include "tilegen/ir/error.h"
#include "tilegen/ir/kernel_names.h"
#include "vk_context.h"

namespace tg::vulkan {

/// What load() returns: the pipelines of one module and the state a launch reuses.
struct LoadedKernels {
  VulkanContext* ctx = nullptr;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;  // rewritten by each launch (launches are synchronous)
  uint32_t tensors = 0;
  PushLayout push;
  struct Entry {
    VkPipeline pipeline = VK_NULL_HANDLE;
    uint32_t grid[3] = {1, 1, 1};
  };
  std::vector<Entry> entries;

  ~LoadedKernels() {
    if (!ctx) return;
    try {
      ctx->wait_for_submissions();  // a launch on the application's queue may still use the pipelines
    } catch (...) {                 // a lost device: nothing runs any more
    }
    const DeviceFns& vk = ctx->fns();
    VkDevice d = ctx->device();
    for (Entry& e : entries)
      if (e.pipeline) vk.vkDestroyPipeline(d, e.pipeline, nullptr);
    if (pool) vk.vkDestroyDescriptorPool(d, pool, nullptr);
    if (layout) vk.vkDestroyPipelineLayout(d, layout, nullptr);
    if (set_layout) vk.vkDestroyDescriptorSetLayout(d, set_layout, nullptr);
    if (module) vk.vkDestroyShaderModule(d, module, nullptr);
  }
};

namespace {

// A SPIR-V capability and the device feature it needs, so a module the device cannot run is an
// error that names the feature, not a driver crash.
struct CapabilityNeed {
  uint32_t capability;
  const char* name;
  bool (*has)(const PhysicalDevice&);
};
const CapabilityNeed kCapabilityNeeds[] = {
    {9, "Float16 (shaderFloat16)",
     [](const PhysicalDevice& d) { return bool(d.supported.v12.shaderFloat16); }},
    {10, "Float64 (shaderFloat64)",
     [](const PhysicalDevice& d) { return bool(d.supported.core.features.shaderFloat64); }},
    {11, "Int64 (shaderInt64)",
     [](const PhysicalDevice& d) { return bool(d.supported.core.features.shaderInt64); }},
    {12, "Int64Atomics (shaderBufferInt64Atomics)",
     [](const PhysicalDevice& d) { return bool(d.supported.v12.shaderBufferInt64Atomics); }},
    {22, "Int16 (shaderInt16)",
     [](const PhysicalDevice& d) { return bool(d.supported.core.features.shaderInt16); }},
    {39, "Int8 (shaderInt8)", [](const PhysicalDevice& d) { return bool(d.supported.v12.shaderInt8); }},
    {4433, "StorageBuffer16BitAccess (storageBuffer16BitAccess)",
     [](const PhysicalDevice& d) { return bool(d.supported.v11.storageBuffer16BitAccess); }},
    {4448, "StorageBuffer8BitAccess (storageBuffer8BitAccess)",
     [](const PhysicalDevice& d) { return bool(d.supported.v12.storageBuffer8BitAccess); }},
    {5345, "VulkanMemoryModel (vulkanMemoryModel)",
     [](const PhysicalDevice& d) { return bool(d.supported.v12.vulkanMemoryModel); }},
    {6022, "CooperativeMatrixKHR (VK_KHR_cooperative_matrix)",
     [](const PhysicalDevice& d) { return d.has_coopmat && d.supported.coopmat.cooperativeMatrix; }},
    {6033, "AtomicFloat32AddEXT (shaderBufferFloat32AtomicAdd)",
     [](const PhysicalDevice& d) {
       return d.has_atomic_float && d.supported.atomic_float.shaderBufferFloat32AtomicAdd;
     }},
    {63, "GroupNonUniformArithmetic (subgroup arithmetic)",
     [](const PhysicalDevice& d) { return d.features.subgroup_arith; }},
    {65, "GroupNonUniformShuffle (subgroup shuffle)",
     [](const PhysicalDevice& d) { return d.features.subgroup_arith; }},
};

std::vector<uint32_t> words_of(const Artifact& a) {
  if (a.binary.empty() || a.binary.size() % 4)
    throw Error(
        "vulkan: the kernel's binary is " + std::to_string(a.binary.size()) +
        " bytes, not a SPIR-V module (a whole number of 32-bit words); rebuild it (clear the kernel cache)");
  std::vector<uint32_t> w(a.binary.size() / 4);
  std::memcpy(w.data(), a.binary.data(), a.binary.size());
  if (w[0] != 0x07230203u)
    throw Error(
        "vulkan: the kernel's binary does not start with the SPIR-V magic number; rebuild it "
        "(clear the kernel cache)");
  return w;
}

void check_grid(const PhysicalDevice& d, const ir::Kernel& k, LoadedKernels::Entry& e,
                const std::string& entry) {
  if (uint32_t(k.threads) > d.features.max_threads)
    throw Error("vulkan: kernel " + entry + " has " + std::to_string(k.threads) +
                    " threads per block; device " + d.name + " allows " +
                    std::to_string(d.features.max_threads) + ": use fewer threads",
                k.loc);
  for (std::size_t i = 0; i < k.grid.size() && i < 3; ++i) {
    auto v = k.grid[i].as_int();
    if (!v)
      throw Error("vulkan: kernel " + entry + ": grid dimension " + std::to_string(i) +
                      " is not a constant after size binding",
                  k.loc);
    // Within maxComputeWorkGroupCount, and at most 3-D: check_grid_limits (TargetInfo::max_grid).
    e.grid[i] = uint32_t(std::max<int64_t>(*v, 0));
  }
}

}  // namespace

void VulkanContext::check_capabilities(const std::vector<uint32_t>& words) const {
  for (std::size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16, op = words[i] & 0xffff;
    if (count == 0 || i + count > words.size())
      throw Error("vulkan: the SPIR-V module is truncated or corrupt");
    if (op == 17 /* OpCapability */ && count == 2)
      for (const CapabilityNeed& n : kCapabilityNeeds)
        if (n.capability == words[i + 1] && !n.has(phys_))
          throw Error(
              adopted_
                  ? "vulkan: the kernel needs " + std::string(n.name) +
                        ", which the application's "
                        "device " +
                        phys_.name +
                        " was not created with; enable it in its "
                        "VkDeviceCreateInfo, or compile a kernel that does without"
                  : "vulkan: the kernel needs " + std::string(n.name) + ", which device " + phys_.name +
                        " lacks; compile for this device (clear the kernel cache) or use another target");
    i += count;
  }
}

// Set 0 with one storage buffer per tensor parameter, the push-constant range of the scalars,
// and the one descriptor set every launch rewrites.
void VulkanContext::create_layouts(LoadedKernels& k, const Function& lowered) {
  for (const Param& p : lowered.params) k.tensors += p.kind == Param::Kind::Tensor;
  k.push = push_constant_layout(lowered);
  if (k.push.bytes > phys_.limits.maxPushConstantsSize)
    throw Error("vulkan: kernel " + lowered.name + " has " + std::to_string(k.push.bytes) +
                " bytes of scalar parameters; device " + phys_.name + " takes " +
                std::to_string(phys_.limits.maxPushConstantsSize) + ": pass fewer scalars");
  if (phys_.push_descriptors && k.tensors > phys_.max_push_descriptors)
    throw Error("vulkan: kernel " + lowered.name + " has " + std::to_string(k.tensors) +
                " tensor parameters; the application's device " + phys_.name + " pushes at most " +
                std::to_string(phys_.max_push_descriptors) +
                " descriptors (maxPushDescriptors): pass fewer tensors");
  std::vector<VkDescriptorSetLayoutBinding> bindings(k.tensors);
  for (uint32_t i = 0; i < k.tensors; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo li =
      vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  li.bindingCount = k.tensors;
  li.pBindings = bindings.data();
  // Pushed descriptors live in the command buffer: a recorded launch needs no set kept alive.
  if (phys_.push_descriptors) li.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  check(vk_.vkCreateDescriptorSetLayout(device_, &li, nullptr, &k.set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push.bytes};
  VkPipelineLayoutCreateInfo pli =
      vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &k.set_layout;
  pli.pushConstantRangeCount = k.push.bytes ? 1 : 0;
  pli.pPushConstantRanges = &range;
  check(vk_.vkCreatePipelineLayout(device_, &pli, nullptr, &k.layout), "vkCreatePipelineLayout");
  if (k.tensors && !phys_.push_descriptors) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, k.tensors};
    VkDescriptorPoolCreateInfo dpi =
        vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    check(vk_.vkCreateDescriptorPool(device_, &dpi, nullptr, &k.pool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo ai =
        vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    ai.descriptorPool = k.pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &k.set_layout;
    check(vk_.vkAllocateDescriptorSets(device_, &ai, &k.set), "vkAllocateDescriptorSets");
  }
}

// One pipeline per entry point, through the pipeline cache; each kernel's grid checked against
// the device's limits.
void VulkanContext::create_pipelines(LoadedKernels& k, const Function& lowered) {
  const std::vector<const ir::Kernel*> kernels = ir::kernels_of(lowered);  // one entry point each
  const std::vector<std::string> names = ir::kernel_entry_names(lowered);
  for (std::size_t i = 0; i < names.size(); ++i) {
    LoadedKernels::Entry e;
    check_grid(phys_, *kernels[i], e, names[i]);
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo sub =
        vk_struct<VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
            VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO);
    sub.requiredSubgroupSize = phys_.features.subgroup_size;  // what the code was generated for
    VkComputePipelineCreateInfo ci =
        vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    ci.stage =
        vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    ci.stage.pNext = phys_.require_subgroup_size ? &sub : nullptr;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = k.module;
    ci.stage.pName = names[i].c_str();
    ci.layout = k.layout;
    check(vk_.vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &e.pipeline),
          "vkCreateComputePipelines", "entry point " + names[i]);
    k.entries.push_back(e);
  }
}

std::shared_ptr<void> VulkanContext::load(const Artifact& a, const Function& lowered) {
  std::vector<uint32_t> words = words_of(a);
  check_capabilities(words);
  auto k = std::make_shared<LoadedKernels>();
  k->ctx = this;
  VkShaderModuleCreateInfo mi =
      vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  mi.codeSize = a.binary.size();
  mi.pCode = words.data();
  check(vk_.vkCreateShaderModule(device_, &mi, nullptr, &k->module), "vkCreateShaderModule", lowered.name);
  create_layouts(*k, lowered);
  create_pipelines(*k, lowered);
  check_validation("building the pipelines");
  return k;
}

void VulkanContext::record_kernels(VkCommandBuffer cmd, LoadedKernels& k, const Function& lowered,
                                   const std::vector<LaunchArg>& args) {
  // Tensors in order → bindings 0, 1, ...; scalars → their push-constant fields.
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<std::size_t> arg_of_param(lowered.params.size(), 0);
  std::size_t a = 0;
  for (std::size_t p = 0; p < lowered.params.size(); ++p) {
    if (lowered.params[p].kind == Param::Kind::Size) continue;
    if (a >= args.size())
      throw Error("vulkan: " + lowered.name + " got " + std::to_string(args.size()) + " arguments");
    arg_of_param[p] = a;
    if (args[a].is_tensor) {
      auto* b = static_cast<const BufferHandle*>(args[a].device_ptr);
      if (b->size > phys_.limits.maxStorageBufferRange)
        throw Error("vulkan: argument " + lowered.params[p].name() + " is " + std::to_string(b->size) +
                    " bytes; device " + phys_.name + " binds storage buffers of at most " +
                    std::to_string(phys_.limits.maxStorageBufferRange) + " bytes: use smaller tensors");
      infos.push_back({b->buffer, 0, VK_WHOLE_SIZE});
    }
    ++a;
  }
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (uint32_t i = 0; i < infos.size(); ++i) {
    writes[i] = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = k.set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  if (!writes.empty() && !phys_.push_descriptors)
    vk_.vkUpdateDescriptorSets(device_, uint32_t(writes.size()), writes.data(), 0, nullptr);
  std::vector<uint8_t> push(k.push.bytes, 0);
  for (const PushField& f : k.push.fields) {
    const LaunchArg& arg = args[arg_of_param[f.param_index]];
    store_element(f.dtype, push.data() + f.offset, 0, convert_scalar(arg.dtype, f.dtype, arg.scalar));
  }
  VkMemoryBarrier between = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  between.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  between.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  for (std::size_t i = 0; i < k.entries.size(); ++i) {
    if (i)
      vk_.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &between, 0, nullptr, 0, nullptr);
    const LoadedKernels::Entry& e = k.entries[i];
    vk_.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, e.pipeline);
    if (phys_.push_descriptors && !writes.empty())
      vk_.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, uint32_t(writes.size()),
                                    writes.data());
    else if (k.set)
      vk_.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &k.set, 0, nullptr);
    if (!push.empty())
      vk_.vkCmdPushConstants(cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(push.size()),
                             push.data());
    if (e.grid[0] && e.grid[1] && e.grid[2]) vk_.vkCmdDispatch(cmd, e.grid[0], e.grid[1], e.grid[2]);
  }
}

void VulkanContext::launch(const std::shared_ptr<void>& loaded, const Function& lowered,
                           const std::vector<LaunchArg>& args) {
  auto& k = *static_cast<LoadedKernels*>(loaded.get());
  if (mode_ != Mode::Own) {
    launch_on_application([&](VkCommandBuffer cmd) { record_kernels(cmd, k, lowered, args); });
    check_validation("a launch on the application's queue or command buffer");
    return;
  }
  submit_and_wait([&](VkCommandBuffer cmd) { record_kernels(cmd, k, lowered, args); }, "a launch");
}

// Device time between two timestamps around the dispatches; without timestamps on the queue,
// the wall clock (the interface's default).
std::vector<double> VulkanContext::time_launches(const std::shared_ptr<void>& loaded, const Function& lowered,
                                                 const std::vector<LaunchArg>& args, int runs) {
  if (!queries_) return DeviceContext::time_launches(loaded, lowered, args, runs);
  auto& k = *static_cast<LoadedKernels*>(loaded.get());
  const uint64_t mask = phys_.timestamp_bits >= 64 ? ~0ull : ((1ull << phys_.timestamp_bits) - 1);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    submit_and_wait(
        [&](VkCommandBuffer cmd) {
          vk_.vkCmdResetQueryPool(cmd, queries_, 0, 2);
          vk_.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
          record_kernels(cmd, k, lowered, args);
          vk_.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
        },
        "a timed launch");
    uint64_t t[2] = {0, 0};
    check(vk_.vkGetQueryPoolResults(device_, queries_, 0, 2, sizeof t, t, sizeof(uint64_t),
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    ms.push_back(double((t[1] - t[0]) & mask) * phys_.timestamp_period_ns * 1e-6);
  }
  return ms;
}

}  // namespace tg::vulkan
