// Shared by the cpu target tests: the target, or a printed reason to skip; and a check that
// runs one function on cpu and on the interpreter and compares every output element.
#pragma once
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tilegen/builder.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/plugin.h"
#include "tilegen/runtime.h"

namespace tg::testing {

/// Compiles inside its scope skip the on-disk kernel cache (TILEGEN_CACHE=0): these tests check
/// the code generator itself, which a cached binary from an earlier build would bypass.
class NoKernelCache {
 public:
  NoKernelCache() {
    if (const char* v = std::getenv("TILEGEN_CACHE")) old_ = v;
    ::setenv("TILEGEN_CACHE", "0", 1);
  }
  ~NoKernelCache() {
    if (old_)
      ::setenv("TILEGEN_CACHE", old_->c_str(), 1);
    else
      ::unsetenv("TILEGEN_CACHE");
  }

 private:
  std::optional<std::string> old_;
};

/// The cpu plugin (for its passes without a device), or null after printing that `what` is skipped
/// and why (the test then passes vacuously).
inline TargetPlugin* cpu_plugin_or_skip(const char* what) {
  std::string why;
  TargetPlugin* p = find_plugin("cpu", &why);
  if (!p) MESSAGE("cpu ", what, " tests skipped: ", why);
  return p;
}

/// The cpu target, or nullopt after printing why it is unavailable (the test then passes vacuously).
inline std::optional<Target> cpu_target_or_skip() {
  for (const TargetStatus& s : targets())
    if (s.name == "cpu") {
      if (s.available) return Target::get("cpu");
      std::cerr << "cpu tests skipped: cpu target unavailable: " << s.reason << "\n";
      return std::nullopt;
    }
  std::cerr
      << "cpu tests skipped: no libtilegen_cpu.so beside libtilegen (built without LLVM 19 or oneTBB)\n";
  return std::nullopt;
}

/// A host tensor with its bytes, random contents for inputs.
struct TestArray {
  std::vector<int64_t> shape;
  DType dtype;
  std::vector<uint8_t> bytes;
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

inline TestArray random_array(std::vector<int64_t> shape, DType t, std::mt19937_64& rng) {
  TestArray a{std::move(shape), t, {}};
  a.bytes.resize(storage_bytes(t, a.numel()));
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = u(rng);
    Scalar s = t.is_float() ? Scalar::of_float(round_float_to(t, v))
                            : Scalar::of_int(t.is_bool() ? int64_t(v > 0)
                                                         : wrap_int_to(t, int64_t(std::floor(v * 20))));
    store_element(t, a.bytes.data(), i, s);
  }
  return a;
}

/// Run f on cpu and on the interpreter with copies of the same inputs; every element of every
/// tensor must agree within rel/abs (floats) or exactly (integers). Scalars in `scalars`.
inline void check_cpu_matches_interpreter(const Target& cpu, const Function& f,
                                          std::vector<TestArray> tensors, std::vector<double> scalars = {},
                                          double tol = 1e-5, const CompileOptions& opt = {}) {
  std::vector<TestArray> ref = tensors;
  std::vector<HostArg> hargs;
  std::vector<KernelArg> kargs;
  std::size_t ti = 0, si = 0;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    if (p.kind == Param::Kind::Tensor) {
      TestArray& r = ref[ti];
      TestArray& c = tensors[ti++];
      hargs.push_back({r.bytes.data(), r.shape, r.dtype, {}, true});
      kargs.push_back(HostTensor{c.bytes.data(), c.shape, c.dtype});
    } else {
      double v = scalars.at(si++);
      DType t = p.var.dtype();
      HostArg h;
      h.is_tensor = false;
      h.dtype = t;
      h.scalar = t.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(v));
      hargs.push_back(h);
      if (t.is_float())
        kargs.push_back(v);
      else
        kargs.push_back(int64_t(v));
    }
  }
  interpret(f, hargs);
  NoKernelCache no_cache;
  CompiledKernel k = cpu.compile(Kernel(f), opt);
  k.launch(kargs);
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const TestArray &got = tensors[t], &want = ref[t];
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < got.numel(); ++i) {
      double g = scalar_as_double(got.dtype, load_element(got.dtype, got.bytes.data(), i));
      double w = scalar_as_double(want.dtype, load_element(want.dtype, want.bytes.data(), i));
      bool ok = got.dtype.is_float()
                    ? (std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= tol + tol * std::fabs(w))
                    : g == w;
      if (!ok && first < 0) first = i;
      bad += !ok;
    }
    INFO(
        "tensor "
        << t << ": " << bad << " mismatches, first at " << first << " (got "
        << (first >= 0 ? scalar_as_double(got.dtype, load_element(got.dtype, got.bytes.data(), first)) : 0)
        << ", want "
        << (first >= 0 ? scalar_as_double(want.dtype, load_element(want.dtype, want.bytes.data(), first)) : 0)
        << ")\n"
        << k.source().substr(0, 0));
    CHECK(bad == 0);
  }
}

/// C = op(A) · op(B) over M×N×K in bm×bn×bk tiles: Shared tiles of A and B, an f32 Fragment
/// accumulator, the gemm the cpu micro-kernel takes (A and B of dtype t, C f32); the K loop
/// serial, or pipelined over `stages` when stages > 0.
inline Kernel gemm_kernel(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn,
                          int64_t bk, int stages = 0) {
  KernelBuilder k("g");
  auto A = k.tensor("A", ta ? std::vector<Expr>{K, M} : std::vector<Expr>{M, K}, t);
  auto B = k.tensor("B", tb ? std::vector<Expr>{N, K} : std::vector<Expr>{K, N}, t);
  auto C = k.tensor("C", {M, N}, f32);
  k.grid(ceildiv(N, bn), ceildiv(M, bm)).threads(32).body([&](Expr bx, Expr by) {
    auto As = ta ? k.shared({bk, bm}, t, "As") : k.shared({bm, bk}, t, "As");
    auto Bs = tb ? k.shared({bn, bk}, t, "Bs") : k.shared({bk, bn}, t, "Bs");
    auto Cf = k.fragment({bm, bn}, f32, "Cf");
    k.clear(Cf);
    auto step = [&](Expr ko) {
      k.copy(ta ? A.at(ko * bk, by * bm) : A.at(by * bm, ko * bk), As);
      k.copy(tb ? B.at(bx * bn, ko * bk) : B.at(ko * bk, bx * bn), Bs);
      k.gemm(As, Bs, Cf, GemmOptions{.trans_a = ta, .trans_b = tb});
    };
    if (stages > 0)
      k.pipelined(ceildiv(K, bk), stages, step);
    else
      k.serial(ceildiv(K, bk), step);
    k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

/// The cpu pipeline's pass `name` on f, for AVX2 (8 floats a vector), its output verified.
inline Function run_cpu_pass(TargetPlugin& cpu, const Function& f, const std::string& name,
                             const CompileOptions& opt = {}) {
  const TargetInfo info = cpu.info_for_arch("haswell");
  for (const PassEntry& p : cpu.pipeline(info, opt))
    if (p.name == name) {
      Function out = p.run(f, info);
      verify(out);
      return out;
    }
  FAIL("the cpu pipeline has no ", name);
  return f;
}

/// cpu code equals the interpreter on a ragged gemm — 61×83×70 in 24×48×16 tiles: 13 rows, 35
/// columns and 6 K steps at the edges — in each of `types` and transpose, with the param `key` at
/// each of `values`.
inline void check_ragged_gemms(const Target& cpu, const std::string& key,
                               const std::vector<std::string>& values, const std::vector<DType>& types,
                               std::mt19937_64& rng) {
  NoKernelCache no_cache;
  for (const std::string& value : values)
    for (DType t : types)
      for (int tr = 0; tr < 4; ++tr) {
        const bool ta = tr & 1, tb = tr & 2;
        INFO(key << " " << value << " " << t.name() << " trans_a " << ta << " trans_b " << tb);
        const int64_t M = 61, N = 83, K = 70;
        Kernel k = gemm_kernel(t, ta, tb, M, N, K, 24, 48, 16, 3);
        std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
        std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
        CompileOptions opt;
        opt.params[key] = value;
        check_cpu_matches_interpreter(
            cpu, k.function(),
            {random_array(as, t, rng), random_array(bs, t, rng), random_array({M, N}, f32, rng)}, {}, 1e-4,
            opt);
      }
}

/// `text` with its first `from` replaced by `to` (which must be there).
inline std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace tg::testing
