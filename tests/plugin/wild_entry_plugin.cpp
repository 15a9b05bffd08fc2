// The entry function returns a pointer into nowhere (0x10). The loader must not read through it.
// (Its type is the ABI's: a function of another type called through the entry's pointer type is
// itself undefined behaviour, which no loader can check.)
#include <cstdint>

struct TgPluginEntry;

extern "C" __attribute__((visibility("default"))) const TgPluginEntry* tilegen_plugin_entry() {
  return reinterpret_cast<const TgPluginEntry*>(std::uintptr_t(0x10));
}
