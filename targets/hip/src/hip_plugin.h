// The hip plugin object, for libtilegen_hip.so's entry point (hip_entry.cpp) and for the unit
// tests, which link tilegen_hip_codegen instead of dlopen'ing the plugin.
#pragma once
#include "tilegen/plugin.h"

namespace tg::hip {

/// A new hip plugin; the caller owns it.
TargetPlugin* make_plugin();

}  // namespace tg::hip
