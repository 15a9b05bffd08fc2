// Shared by test_runtime.cpp and test_plugins.cpp: small kernels built from IR nodes, an
// environment-variable guard, a scratch directory, and error capture.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "tilegen/runtime.h"

namespace tg::testing {

inline Stmt store(const Buffer& b, std::vector<Expr> idx, Expr value) {
  auto s = std::make_shared<ir::Store>(SourceLoc{});
  s->buffer = b;
  s->indices = std::move(idx);
  s->value = std::move(value);
  return Stmt(s);
}

inline Stmt serial(const Var& v, Expr extent, Stmt body) {
  auto f = std::make_shared<ir::For>(SourceLoc{});
  f->var = v;
  f->min = Expr(0);
  f->extent = std::move(extent);
  f->for_kind = ForKind::Serial;
  f->body = std::move(body);
  return Stmt(f);
}

/// kernel grid(grid...) threads(threads) -> (b0, b1, ...; tx) { body(block vars, tx) }
inline Stmt kernel(std::vector<Expr> grid, int threads,
                   const std::function<Stmt(std::vector<Var>, Var)>& body) {
  auto k = std::make_shared<ir::Kernel>(SourceLoc{});
  for (std::size_t d = 0; d < grid.size(); ++d) k->block_vars.push_back(Var("b" + std::to_string(d)));
  k->grid = std::move(grid);
  k->threads = threads;
  k->thread_var = Var("tx");
  k->body = body(k->block_vars, k->thread_var);
  return Stmt(k);
}

inline Param tensor_param(const Buffer& b) {
  Param p;
  p.kind = Param::Kind::Tensor;
  p.buffer = b;
  return p;
}
inline Param var_param(Param::Kind kind, const Var& v) {
  Param p;
  p.kind = kind;
  p.var = v;
  return p;
}

/// axpy(X: f32[n] global, Y: f32[n] global, alpha: f32):  Y[i] = alpha * X[i] + Y[i]
/// as grid(n / 32) threads(32), i = b0 * 32 + tx.
inline Kernel axpy_kernel(int64_t n = 64) {
  Buffer X = Buffer::make("X", {Expr(n)}, f32, Scope::Global);
  Buffer Y = Buffer::make("Y", {Expr(n)}, f32, Scope::Global);
  Var alpha("alpha", f32);
  Function f;
  f.name = "axpy";
  f.params = {tensor_param(X), tensor_param(Y), var_param(Param::Kind::Scalar, alpha)};
  f.body = kernel({Expr(n / 32)}, 32, [&](std::vector<Var> b, Var tx) {
    Expr i = b[0] * 32 + tx;
    return store(Y, {i}, alpha * X.load({i}) + Y.load({i}));
  });
  return Kernel(f);
}

/// mm(A: f32[M, K], B: f32[K, N], C: f32[M, N], M, N, K: size), one block per row of C:
///   for j in [0, N): C[b0, j] = 0; for k in [0, K): C[b0, j] = C[b0, j] + A[b0, k] * B[k, j]
inline Kernel matmul_kernel() {
  Var M("M"), N("N"), K("K");
  Buffer A = Buffer::make("A", {M, K}, f32, Scope::Global);
  Buffer B = Buffer::make("B", {K, N}, f32, Scope::Global);
  Buffer C = Buffer::make("C", {M, N}, f32, Scope::Global);
  Function f;
  f.name = "mm";
  f.params = {tensor_param(A),
              tensor_param(B),
              tensor_param(C),
              var_param(Param::Kind::Size, M),
              var_param(Param::Kind::Size, N),
              var_param(Param::Kind::Size, K)};
  f.body = kernel({M}, 1, [&](std::vector<Var> b, Var) {
    Var j("j"), k("k");
    Stmt acc = store(C, {b[0], j}, C.load({b[0], j}) + A.load({b[0], k}) * B.load({k, j}));
    return serial(j, N, make_seq({store(C, {b[0], j}, make_float(0.0)), serial(k, K, acc)}));
  });
  return Kernel(f);
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

}  // namespace tg::testing
