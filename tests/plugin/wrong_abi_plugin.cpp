// A plugin built against another tilegen: its entry reports the ABI version after this one's. The loader must refuse
// it before calling create(), which would fail loudly if it were called.
#include <stdexcept>

#include "tilegen/plugin.h"

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry entry{tg::kPluginAbiVersion + 1, "testabi", []() -> tg::TargetPlugin* {
                                     throw std::runtime_error("create() called despite an ABI mismatch");
                                   }};
  return &entry;
}
