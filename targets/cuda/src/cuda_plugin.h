// The cuda plugin object, for libtilegen_cuda.so's entry point (cuda_entry.cpp) and for the unit
// tests, which link tilegen_cuda_codegen instead of dlopen'ing the plugin.
#pragma once
#include "tilegen/plugin.h"

namespace tg::cuda {

/// A new cuda plugin; the caller owns it.
TargetPlugin* make_plugin();

}  // namespace tg::cuda
