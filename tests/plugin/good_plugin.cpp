// A small out-of-tree plugin, built like a third party would build one: public headers only
// (tilegen/plugin.h and what it includes), linked against libtilegen for the interpreter.
// Target "testgood" runs kernels by handing them to tg::interpret, but goes through every hook
// the way a real target does: a pass of its own, a binary, a load step that reads the binary.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/plugin.h"

namespace {

constexpr const char* kHeader = "// testgood\n";

// A codegen switch, as real targets declare theirs: its value (from --param switch=..., or from
// TILEGEN_TESTGOOD_SWITCH, which the runtime reads into the params) is written into the source.
const tg::ParamKey& switch_key() {
  static const tg::ParamKey key = tg::ParamKey::on_off("switch", false, "TILEGEN_TESTGOOD_SWITCH",
                                                       "a line in the source saying it is on");
  return key;
}

tg::TargetInfo echo_info() {
  tg::TargetInfo info;
  info.target = "testgood";
  info.device_name = "echo device";
  info.arch = "echo-1";
  info.software = true;
  return info;
}

/// Host memory; the "binary" is the IR text, parsed back by nobody: load() checks it is intact.
class EchoContext final : public tg::DeviceContext {
 public:
  void* allocate(std::size_t bytes) override { return std::malloc(bytes ? bytes : 1); }
  void release(void* p) override { std::free(p); }
  void copy_to_device(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
  void copy_to_host(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
  std::shared_ptr<void> load(const tg::Artifact& a, const tg::Function& lowered) override {
    std::string bin(a.binary.begin(), a.binary.end());
    if (bin != a.source || a.entry != lowered.name)
      throw tg::Error("testgood: the artifact's binary does not match its source or entry");
    return std::make_shared<std::string>(a.entry);
  }
  void launch(const std::shared_ptr<void>& loaded, const tg::Function& lowered,
              const std::vector<tg::LaunchArg>& args) override {
    if (!loaded || *static_cast<std::string*>(loaded.get()) != lowered.name)
      throw tg::Error("testgood: launch of a kernel that was not loaded");
    std::vector<tg::HostArg> host;
    for (const tg::LaunchArg& a : args)
      host.push_back({a.device_ptr, a.shape, a.dtype, a.scalar, a.is_tensor});
    tg::interpret(lowered, host);
  }
  void synchronize() override {}
};

class EchoPlugin final : public tg::TargetPlugin {
 public:
  std::string name() const override { return "testgood"; }
  tg::ProbeResult probe() override { return {true, "", {echo_info()}}; }
  // The sizes bound (what every pipeline begins with), then one pass of its own: the kernel is
  // renamed <name>_echo, visible in stages() and lowered().
  std::vector<tg::PassEntry> pipeline(const tg::TargetInfo&, const tg::CompileOptions& opt) override {
    return {tg::bind_sizes_pass(opt.sizes), {"echo_rename", [](const tg::Function& f, const tg::TargetInfo&) {
                                               tg::Function g = f;
                                               g.name += "_echo";
                                               return g;
                                             }}};
  }
  // Source: the IR text; binary: the same bytes; assembly: which codegen call made it, so a test
  // can tell a kernel-cache hit (an earlier call's number) from a fresh compile.
  tg::Artifact codegen(const tg::Function& lowered, const tg::TargetInfo&,
                       const tg::CompileOptions& opt) override {
    static std::atomic<int> calls{0};
    tg::Artifact a;
    a.source =
        kHeader + std::string(tg::param_on(opt, switch_key()) ? "// switch on\n" : "") + tg::print(lowered);
    a.binary.assign(a.source.begin(), a.source.end());
    a.assembly = "codegen call " + std::to_string(++calls);
    a.entry = lowered.name;
    return a;
  }
  std::vector<tg::ParamKey> param_keys() const override { return {switch_key()}; }
  std::unique_ptr<tg::DeviceContext> open(int) override { return std::make_unique<EchoContext>(); }
};

}  // namespace

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry entry{tg::kPluginAbiVersion, "testgood",
                                   []() -> tg::TargetPlugin* { return new EchoPlugin; }};
  return &entry;
}
