// A library whose static constructor aborts: dlopen runs it inside whatever process opens it.
// Only a child process can survive it; nothing but `tilegen targets` (targets_isolated) and an
// explicit Target::get("testabort") may open it.
#include <cstdlib>

__attribute__((constructor)) static void abort_on_load() { std::abort(); }

extern "C" __attribute__((visibility("default"))) const void* tilegen_plugin_entry() { return nullptr; }
