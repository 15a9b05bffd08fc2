// The `null` target: a skeleton plugin to copy (docs/adding_a_target.md walks through it). Every
// hook of tilegen/plugin.h is here, each with what it receives, what it returns and what the
// runtime does with the result. It has no device, so probe() says it is unavailable and nothing
// ever selects it; its compile side is real all the same, so `tilegen ir` and `tilegen source`
// show what each hook hands the next:
//
//   tilegen ir gemm --target null --arch null --after all     the IR after each pass of pipeline()
//   tilegen source gemm --target null --arch null             codegen()'s source: the lowered IR
//
// The life of one kernel, and where each hook comes in:
//   Target::select / Target::get   probe() (once per process), then open(i) of the chosen device
//   Target::compile, first launch  bind the launch's sizes, pipeline(info) through the
//                                  PassManager, codegen(), then DeviceContext::load() — or, on a
//                                  kernel-cache hit (artifacts with a binary), load() alone
//   every launch                   DeviceContext::launch() on the loaded kernel
//   `tilegen source --arch A`      info_for_arch(A), pipeline(), codegen(): no device, no probe
#include "null_device.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/plugin.h"

namespace tg::null_target {

namespace {

/// What the passes and codegen() know of one device. A real target fills this from the device
/// in probe() (cuDeviceGetAttribute, vkGetPhysicalDeviceProperties2) and from a table in
/// info_for_arch(); null describes a plain GPU-shaped device without matrix units.
TargetInfo null_info() {
  TargetInfo info;
  info.target = "null";                   // the plugin's name
  info.device_name = "null (no device)";  // shown by `tilegen targets` and in errors
  info.arch = "null";                     // what info_for_arch() takes back; part of the cache key
  // Lanes of a warp (wave, subgroup): a matrix unit is used only where its group has this many;
  // 1 keeps tiles whole for a code generator that vectorises them itself (cpu).
  info.warp_size = 32;
  info.max_threads = 1024;            // threads a block: the verifier checks every kernel against it
  info.shared_mem_bytes = 48 * 1024;  // a block's shared memory: pipeline_shared and tile sizes fit it
  info.vector_bytes = 16;             // the widest load or store: partition_threads vectorises to it
  info.async_copy = false;            // background global → shared copies (cp.async on sm_80 and up)
  info.lane_shuffle = false;          // lanes exchange registers (warp shuffles): row reductions in registers
  info.max_grid = {2147483647, 65535, 65535};  // blocks a grid may have per dimension (check_grid_limits)
  // Names in the matrix-unit registry (ir/include/tilegen/ir/matrix_unit.h) that codegen() can
  // emit; infer_fragment_layouts then lowers gemms to them. None: gemms become per-thread FMAs.
  info.matrix_units = {};
  // How Target::select() ranks the device (api/src/device_ranking.cpp): software (emulated on
  // the CPU, ranked last), is_cpu (the native CPU), portable (a GPU through a portable API such as
  // Vulkan, below its vendor's own target). All false: a hardware GPU, ranked first.
  return info;
}

class NullPlugin final : public TargetPlugin {
 public:
  /// The plugin's name: its library must be libtilegen_<name>.so and its entry must say the same
  /// name. It is what `--target`, TILEGEN_TARGET and Target::get() take.
  std::string name() const override { return "null"; }

  /// Called once per process, when the target is first listed or asked for; never at load time.
  /// Looks for the runtime (dlopen the vendor library here, so the plugin loads on every machine)
  /// and the devices; returns available = true with one TargetInfo per device, or available =
  /// false with a reason that `tilegen targets` prints and Target::get() puts in its error. A
  /// probe that throws is reported as unavailable with the exception's message.
  ///   { available: true,  devices: [{target: "cuda", device_name: "NVIDIA H200", arch: "sm_90", ...}] }
  ///   { available: false, reason: "libcuda.so.1 not found (install the NVIDIA driver)" }
  ProbeResult probe() override {
    ProbeResult r;
    r.available = false;
    r.reason =
        "the null target is a skeleton to copy (targets/null, docs/adding_a_target.md); it has no device";
    return r;
  }

  /// The CompileOptions::params keys this target reads besides check_bounds, each with the
  /// values it takes, its default and, where one may set the default, its environment variable:
  /// a key the target does not list, or a value its key does not take, is a tg::Error before any
  /// pass runs, and the runtime puts the variables' values into the params (so the kernel cache
  /// keys on them). null reads none; cuda returns
  ///   {ParamKey::on_off("cp_async", true, "TILEGEN_CUDA_CP_ASYNC", ...), ... "ldmatrix" ...}
  /// and its pipeline() reads them with param_on(opt, key), never the environment.
  std::vector<ParamKey> param_keys() const override { return {}; }

  /// The passes from the builder's IR, with every size bound, to what codegen() accepts, in
  /// order. The runtime runs them through a PassManager (verifying after each, dumping with
  /// `tilegen ir --after`, TILEGEN_DUMP_AFTER); whatever codegen does beyond translating one
  /// statement belongs here as a named pass, so the interpreter checks it. null takes the shared
  /// GPU pipeline (passes/include/tilegen/passes/gpu_pipeline.h): tile statements in, per-thread
  /// code out (a host-side target starts from default_pipeline() of pipeline.h instead).
  /// For gemm (64×64×64 in 32×32 tiles, 128 threads):
  ///   before:  fragment C_local: f32[32, 32]
  ///            fill C_local = 0.0
  ///            ... gemm(A_shared, B_shared -> C_local)
  ///   after:   local C_local: f32[8]                      (each thread's 8 elements of the tile)
  ///            for mi in unrolled(0 +: 4) { for ni in unrolled(0 +: 2) { C_local[mi*2 + ni] = 0.0 } }
  ///            ... C_local[mi*2 + ni] = fma(a_regs_0[mi], b_regs_1[ni], C_local[mi*2 + ni])
  /// With check_bounds=all (checks_accesses(opt)) it ends with check_element_accesses.
  std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions& opt) override {
    return gpu_pipeline(checks_accesses(opt), opt.sizes);
  }

  /// Lowered IR (the pipeline's output) → an Artifact: source text, assembly and binary where
  /// the target has them, the kernel entry names. It must not need a device: `tilegen source`
  /// runs it on machines without one, for `info` from info_for_arch(). opt.arch, when set, names
  /// the architecture to generate for (cuda then codegens for info_for_arch(opt.arch) rather than
  /// the device's own `info`; null has one architecture). A statement it cannot translate is a
  /// tg::Error at that statement's loc (the builder line). The runtime keeps every artifact with
  /// a binary in the kernel cache, keyed by the lowered IR, plugin, TargetInfo and options, then
  /// hands it to DeviceContext::load(); CompiledKernel::source(), assembly() and binary() return
  /// its fields. null's "source" is the lowered IR text, which its load() parses back; it has no
  /// binary, so nothing is cached (a real target's binary is what makes a cache hit skip codegen).
  ///   lowered:  func gemm(A: f16[64, 64] global, ...) { kernel grid(2, 2) threads(128) -> (bx, by; tx) ... }
  ///   artifact: {source: "func gemm(A: f16[64, 64] global, ...) {...}", binary: {}, entry: "gemm"}
  Artifact codegen(const Function& lowered, const TargetInfo&, const CompileOptions&) override {
    Artifact a;
    a.source = print(lowered);
    a.entry = lowered.name;
    return a;
  }

  /// Opens device `index` of probe().devices for the runtime: allocations, copies, loads and
  /// launches go through the context returned, which lives until the last Target, buffer and
  /// kernel of the device are gone. A device that will not open is a tg::Error (select() then
  /// tries the next best). null's probe() lists no device, so the runtime never calls this; it
  /// returns the host stand-in of null_device.h, which the tests drive hook by hook.
  std::unique_ptr<DeviceContext> open(int index) override {
    if (index != 0) throw Error("null: there is one stand-in context (0), not " + std::to_string(index));
    return std::make_unique<NullContext>();
  }

  /// adopt_vulkan(const VulkanDevice& device, TargetInfo& info): a context on the application's
  /// own Vulkan device (Target::adopt_vulkan), with `info` describing what that device was
  /// created with. Only the vulkan target has it (targets/vulkan/src/runtime/vk_adopt.h);
  /// plugin.h's default, kept here, is a tg::Error naming the target.

  /// The TargetInfo of an architecture named by the user, for codegen without a device:
  /// `tilegen source gemm --target null --arch null` and `tilegen ir ... --arch null` pass it to
  /// pipeline() and codegen(). A real target keeps a table of the architectures it supports
  /// (cuda: nvidia_target_info(sm) in targets/cuda/src/cuda_target_info.cpp, for sm_80 and later) and names them when given another.
  /// Without an override, plugin.h's default throws: the target has no device-less codegen.
  TargetInfo info_for_arch(const std::string& arch) override {
    if (arch == "null") return null_info();
    throw Error("null: architecture '" + arch + "' is unknown; the null target has one, 'null'");
  }
};

}  // namespace

}  // namespace tg::null_target

/// The one symbol the loader looks up. It checks abi_version against the tilegen it runs in (a
/// plugin built against another tilegen is listed as unavailable: rebuild it), that `name` is the
/// file's libtilegen_<name>.so, then calls create() once per process. The plugin object is never
/// destroyed, and the library never unloaded.
TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry e{tg::kPluginAbiVersion, "null",
                               []() -> tg::TargetPlugin* { return new tg::null_target::NullPlugin; }};
  return &e;
}
