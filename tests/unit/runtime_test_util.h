// Shared by the runtime, plugin and host-side tests: two small kernels, an environment-variable
// guard, a scratch directory, error capture, and the targets a host-side test runs on.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/runtime.h"

namespace tg::testing {

/// axpy(X: f32[n], Y: f32[n], alpha: f32):  Y[i] = alpha * X[i] + Y[i], i = bx * 32 + tx.
inline Kernel axpy_kernel(int64_t n = 64) {
  KernelBuilder k("axpy");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {n}, f32);
  Expr alpha = k.scalar("alpha", f32);
  k.grid(n / 32).threads(32).body([&](Expr bx) {
    Expr i = bx * 32 + k.thread_index();
    Y(i) = alpha * X(i) + Y(i);
  });
  return k.build();
}

/// mm(A: f32[M, K], B: f32[K, N], C: f32[M, N]) with symbolic M, N, K; one block per row of C.
inline Kernel matmul_kernel() {
  KernelBuilder k("mm");
  Expr M = k.size("M"), N = k.size("N"), K = k.size("K");
  auto A = k.tensor("A", {M, K}, f32);
  auto B = k.tensor("B", {K, N}, f32);
  auto C = k.tensor("C", {M, N}, f32);
  k.grid(M).threads(1).body([&](Expr bx) {
    k.serial(N, [&](Expr j) {
      C(bx, j) = 0.0f;
      k.serial(K, [&](Expr kk) { C(bx, j) += A(bx, kk) * B(kk, j); });
    });
  });
  return k.build();
}

/// Sets (or, with nullopt, unsets) an environment variable for a scope.
class EnvGuard {
 public:
  EnvGuard(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A fresh directory under the system's temp directory, removed with its contents at scope end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("tilegen_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// what() of the tg::Error that `f` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// "test_runtime.cpp:123: " — how a message located at that test line starts.
inline std::string at_line(const char* file, int line) {
  std::string f = file;
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line) + ": ";
}

/// The targets a host-side test runs on where they are available here: interp always, cpu and
/// vulkan (lavapipe in CI) when their plugins load and find a device. Each skipped one is said.
inline std::vector<Target> host_test_targets(bool with_interp = true) {
  std::vector<Target> out;
  if (with_interp) out.push_back(Target::get("interp"));
  for (const char* name : {"cpu", "vulkan"}) {
    std::string reason;
    if (!find_plugin(name, &reason)) {
      MESSAGE("skipped on ", std::string(name), ": ", reason);  // a const char* would print as a pointer
      continue;
    }
    try {
      out.push_back(Target::get(name));
    } catch (const Error& e) {
      MESSAGE("skipped on ", std::string(name), ": ", std::string(e.what()));
    }
  }
  return out;
}

}  // namespace tg::testing
