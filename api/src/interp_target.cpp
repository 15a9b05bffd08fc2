// The `interp` target: the reference interpreter as a plugin, built into the core. A new target
// starts from targets/null instead (docs/adding_a_target.md), a skeleton plugin with every hook
// commented; the hooks, in brief:
//
//   name()     the plugin's name; the library must be libtilegen_<name>.so
//   probe()    find the runtime and the devices (dlopen the vendor library here, never earlier)
//   pipeline() the passes from the builder's IR to what codegen() accepts, bind_sizes first
//              (start from default_pipeline(opt.sizes); docs/passes.md lists each target's)
//   codegen()  lowered IR → source text and binary, without touching a device
//   open()     a DeviceContext: memory, copies, load, launch, synchronise
//
// A plugin built outside the tree also exports the entry point (see tests/plugin/good_plugin.cpp):
//
//   TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
//     static const TgPluginEntry e{tg::kPluginAbiVersion, "mytarget",
//                                  []() -> tg::TargetPlugin* { return new MyPlugin; }};
//     return &e;
//   }
//
// interp itself is registered by the loader directly (no dlopen): it is always present.
#include "runtime_internal.h"
#include "tilegen/host_device_context.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/check_element_accesses.h"
#include "tilegen/passes/pipeline.h"

namespace tg {
namespace {

TargetInfo interp_info() {
  TargetInfo info;
  info.target = "interp";
  info.device_name = "reference interpreter";
  info.arch = "host";
  info.software = true;  // ranked last by Target::select()
  info.is_cpu = false;   // not the native cpu target
  return info;
}

/// Device memory is host memory; a launch interprets the lowered function on it.
class InterpContext final : public HostDeviceContext {
 public:
  InterpContext() : HostDeviceContext("interp") {}
  // Interpreted runs are far slower than memory: flushing caches between them would only cost time.
  void flush_l2() override {}
  // Nothing to load: the interpreter reads the lowered function itself at launch.
  std::shared_ptr<void> load(const Artifact&, const Function&) override { return nullptr; }

  // LaunchArgs are HostArgs with device pointers that happen to be host pointers.
  void launch(const std::shared_ptr<void>&, const Function& lowered,
              const std::vector<LaunchArg>& args) override {
    interpret_launch(lowered, args);
  }
};

class InterpPlugin final : public TargetPlugin {
 public:
  std::string name() const override { return "interp"; }

  // Always available: one software device, the host.
  ProbeResult probe() override {
    ProbeResult r;
    r.available = true;
    r.devices.push_back(interp_info());
    return r;
  }

  // The target-neutral pipeline (sizes bound, ragged edges predicated), so `interp` executes
  // the IR every hardware target starts its own lowering from:
  //   before: copy B[0 : +N, 0 : +64] -> Bs     (check_bounds; B is f32[N, 64], N = 256)
  //   after:  copy B[0 : +256, 0 : +64] -> Bs   (check_bounds cleared: proven in range)
  std::vector<PassEntry> pipeline(const TargetInfo&, const CompileOptions& opt) override {
    std::vector<PassEntry> p = default_pipeline(opt.sizes);
    if (checks_accesses(opt)) p.push_back({"check_element_accesses", check_element_accesses});
    return p;
  }

  // The "source" of the interpreter is the IR text it will run; there is no binary.
  //   lowered:  func add(A: f32[64] global, ...) { kernel grid(1) threads(64) ... }
  //   artifact: {source: "func add(...) {...}", binary: {}, entry: "add"}
  Artifact codegen(const Function& lowered, const TargetInfo&, const CompileOptions&) override {
    Artifact a;
    a.source = print(lowered);
    a.entry = lowered.name;
    return a;
  }

  std::unique_ptr<DeviceContext> open(int index) override {
    if (index != 0)
      throw Error("interp has one device (0); device " + std::to_string(index) + " does not exist");
    return std::make_unique<InterpContext>();
  }

  // "host" (or no arch at all) is the only architecture.
  TargetInfo info_for_arch(const std::string& arch) override {
    if (arch.empty() || arch == "host") return interp_info();
    throw Error("interp knows one architecture, 'host', not '" + arch + "'");
  }
};

}  // namespace

std::unique_ptr<TargetPlugin> make_interp_plugin() { return std::make_unique<InterpPlugin>(); }

}  // namespace tg
