// libtilegen_cuda.so's entry point; everything else is in tilegen_cuda_codegen.
#include "cuda_plugin.h"

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry e{tg::kPluginAbiVersion, "cuda", []() -> tg::TargetPlugin* { return tg::cuda::make_plugin(); }};
  return &e;
}
