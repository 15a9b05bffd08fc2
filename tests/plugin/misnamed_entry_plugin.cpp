// An entry that names another plugin than its file (libtilegen_testmisnamed.so says "cpu"). The
// loader must refuse it before create(), which fails loudly if called.
#include <stdexcept>

#include "tilegen/plugin.h"

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry entry{tg::kPluginAbiVersion, "cpu", []() -> tg::TargetPlugin* {
                                     throw std::runtime_error("create() called despite a misnamed entry");
                                   }};
  return &entry;
}
