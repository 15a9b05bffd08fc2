// A plugin whose create() throws, as one might when its constructor meets a broken installation.
// The loader must turn that into a reason in tg::targets().
#include <stdexcept>

#include "tilegen/plugin.h"

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry entry{tg::kPluginAbiVersion, "testthrow", []() -> tg::TargetPlugin* {
                                     throw std::runtime_error("testthrow: the device runtime is broken");
                                   }};
  return &entry;
}
