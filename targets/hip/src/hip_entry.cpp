// libtilegen_hip.so's entry point; everything else is in tilegen_hip_codegen.
#include "hip_plugin.h"

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry e{tg::kPluginAbiVersion, "hip", []() -> tg::TargetPlugin* { return tg::hip::make_plugin(); }};
  return &e;
}
