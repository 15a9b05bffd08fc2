// A well-formed plugin whose probe() writes through a null pointer: a crash, not an exception.
// Loading it is harmless; probing it kills the process that does.
#include "tilegen/plugin.h"

namespace {

class ProbeSegvPlugin final : public tg::TargetPlugin {
 public:
  std::string name() const override { return "testsegv"; }
  tg::ProbeResult probe() override {
    volatile int* p = nullptr;
    *p = 1;
    return {};
  }
  std::vector<tg::PassEntry> pipeline(const tg::TargetInfo&, const tg::CompileOptions&) override {
    return {};
  }
  tg::Artifact codegen(const tg::Function&, const tg::TargetInfo&, const tg::CompileOptions&) override {
    return {};
  }
  std::unique_ptr<tg::DeviceContext> open(int) override { return nullptr; }
};

}  // namespace

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry entry{tg::kPluginAbiVersion, "testsegv",
                                   []() -> tg::TargetPlugin* { return new ProbeSegvPlugin; }};
  return &entry;
}
