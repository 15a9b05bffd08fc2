// The entry function returns a pointer into nowhere (0x10). The loader must not read through it.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) const void* tilegen_plugin_entry() {
  return reinterpret_cast<const void*>(std::uintptr_t(0x10));
}
