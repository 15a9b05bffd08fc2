// A vendor runtime reached through dlopen — libcuda, libnvrtc, libamdhip64, libhiprtc,
// libvulkan. Plugins link none of them, so they load on every machine and report
// "unavailable: <reason>" where one is missing; this is the one way they open a library, bind
// its functions and word the reason.
//
//   VendorLibrary lib({"libamdhip64.so", "libamdhip64.so.6"}, "no ROCm runtime on this machine");
//   lib.bind(hipInit, "hipInit", "update ROCm");
//   lib.error()  →  ""  (loaded, every bound symbol found)
//                →  "libamdhip64.so not found (no ROCm runtime on this machine)"
//                →  "libamdhip64.so lacks hipInit; update ROCm"
//
// The library stays open for the process's life: the runtime's functions, and anything it
// loaded itself, stay valid in every static that holds them.
#pragma once
#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace tg {

class VendorLibrary {
 public:
  /// Opens the first of `candidates` that dlopen finds (RTLD_NOW | RTLD_LOCAL); if none, the
  /// error is "<first candidate> not found (<if_missing>)".
  VendorLibrary(std::initializer_list<const char*> candidates, const std::string& if_missing) {
    for (const char* c : candidates) {
      if (name_.empty()) name_ = c;
      if ((handle_ = dlopen(c, RTLD_NOW | RTLD_LOCAL))) return;
    }
    error_ = name_ + " not found (" + if_missing + ")";
  }

  /// Binds fn to `symbol`; a missing one is the error "<library> lacks <symbol>[; <advice>]",
  /// unless an earlier failure is already the error. Returns whether fn was bound.
  template <typename F>
  bool bind(F& fn, const char* symbol, const char* advice = nullptr) {
    fn = handle_ ? reinterpret_cast<F>(dlsym(handle_, symbol)) : nullptr;
    if (!fn && handle_) fail(name_ + " lacks " + symbol + (advice ? std::string("; ") + advice : std::string()));
    return fn != nullptr;
  }

  /// Records why the runtime cannot be used (its init call failed, a version is too old), unless
  /// an earlier failure is already the error.
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void* handle() const { return handle_; }
  /// The library's name as the messages give it: the first candidate.
  const std::string& name() const { return name_; }

 private:
  void* handle_ = nullptr;
  std::string name_, error_;
};

}  // namespace tg
