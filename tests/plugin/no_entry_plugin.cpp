// A shared library named like a plugin that exports no tilegen_plugin_entry (for instance one
// whose entry function lost its extern "C"). The loader must say so, not crash.
extern "C" __attribute__((visibility("default"))) int tilegen_not_the_entry() { return 42; }
