// tilegen_plugin_entry exported as a data object, not a function. Calling it would jump into
// data: the loader must see the symbol's type and refuse it.
extern "C" __attribute__((visibility("default"))) const char tilegen_plugin_entry[64] = {1, 0, 0, 0};
