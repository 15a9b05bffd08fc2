// Helpers for the GPU pass tests: the usual gemm kernel as IR text, a pass run on a kernel for a
// target (sm_80 unless told), random inputs run in the interpreter, and two versions of a
// function compared on the same inputs.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "gpu_targets.h"
#include "tilegen/passes/gpu_pipeline.h"

namespace tg::test {

/// 64 threads (two warps of 32): lane t gets the value lane t ^ 5 held, then a butterfly over
/// masks 1 and 2 sums each aligned group of 4 lanes.
inline const char* const kWarpButterfly =
    "func f(X: f32[64] global, O: f32[64] global, S: f32[64] global) {\n"
    "  kernel grid(1) threads(64) -> (bx; tx) {\n"
    "    local v: f32[1]\n"
    "    local w: f32[1]\n"
    "    v[0] = X[tx]\n"
    "    shuffle_xor(5 of 32) w[0] = v[0]\n"
    "    O[tx] = w[0]\n"
    "    shuffle_xor(1 of 32) w[0] = v[0]\n"
    "    v[0] = v[0] + w[0]\n"
    "    shuffle_xor(2 of 32) w[0] = v[0]\n"
    "    v[0] = v[0] + w[0]\n"
    "    S[tx] = v[0]\n"
    "  }\n"
    "}\n";

/// Three phases of shared buffers: A lives until the first barrier's reader, then B and C
/// together; a plan may put B on A's bytes, never C on B's.
inline const char* const kSharedPhases = R"(
func phases(X: f32[256] global, Y: f32[256] global) {
  kernel grid(1) threads(256) -> (bx; tx) {
    shared A: f32[256]
    shared B: f32[256]
    shared C: f32[8]
    A[tx] = X[tx]
    barrier
    Y[tx] = A[255 - tx]
    barrier
    B[tx] = Y[tx] * 2.0
    if tx < 8 {
      C[tx] = 1.0
    }
    barrier
    Y[tx] = B[255 - tx] + C[0]
  }
}
)";

/// A tile filled through registers by group copies; `extra` may touch the registers otherwise.
inline std::string tile_through_registers(const std::string& extra) {
  return R"(
func r(A: f16[64, 32] global, B: f16[64, 32] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f16[64, 32]
    local R: f16[32]
    for it in unrolled(0 +: 4) {
      for v in vectorized(0 +: 8) {
        R[it*8 + v] = A[(it*64 + tx) / 4, (it*64 + tx) % 4 * 8 + v]
      }
    }
)" + extra +
         R"(    for it in unrolled(0 +: 4) {
      for v in vectorized(0 +: 8) {
        S[(it*64 + tx) / 4, (it*64 + tx) % 4 * 8 + v] = R[it*8 + v]
      }
    }
    barrier
    for it in serial(0 +: 32) {
      let e: i32 = it*64 + tx
      B[e / 32, e % 32] = S[63 - e / 32, e % 32]
    }
  }
})";
}

/// Every tensor parameter's contents after running f on inputs drawn from `seed`.
inline std::vector<std::vector<double>> run_on_random(const Function& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-8, 8);  // exact in every dtype used here
  std::vector<std::vector<uint8_t>> storage;
  std::vector<HostArg> args;
  for (const Buffer& t : f.tensors()) {
    int64_t n = *t.const_numel();
    storage.emplace_back(storage_bytes(t->dtype, n));
    for (int64_t i = 0; i < n; ++i) {
      double v = dist(rng) / 4.0;
      store_element(t->dtype, storage.back().data(), i,
                    t->dtype.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(v * 4) % 8));
    }
    HostArg a;
    a.data = storage.back().data();
    for (const Expr& d : t->shape) a.shape.push_back(*d.as_int());
    a.dtype = t->dtype;
    args.push_back(a);
  }
  interpret(f, args);
  std::vector<std::vector<double>> out;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const Buffer t = f.tensors()[k];
    std::vector<double> v;
    for (int64_t i = 0; i < *t.const_numel(); ++i)
      v.push_back(scalar_as_double(t->dtype, load_element(t->dtype, storage[k].data(), i)));
    out.push_back(std::move(v));
  }
  return out;
}

/// The two functions leave every tensor equal within `tol` (relative) on the same inputs.
inline void check_same_results(const Function& before, const Function& after, double tol = 0) {
  auto a = run_on_random(before, 5), b = run_on_random(after, 5);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < a[k].size(); ++i) {
      INFO("tensor " << k << " element " << i);
      CHECK(std::abs(a[k][i] - b[k][i]) <= tol * (1 + std::abs(a[k][i])));
    }
}

/// One block's C = A·B, the usual input of the GPU pass tests. Defaults give
///   func mm(A: f32[16, 16] global, B: f32[16, 16] global, C: f32[16, 16] global) {
///     kernel grid(1) threads(64) -> (bx; tx) {
///       shared As: f32[16, 16]
///       shared Bs: f32[16, 16]
///       fragment Cf: f32[16, 16]
///       copy A -> As
///       copy B -> Bs
///       gemm(As, Bs -> Cf, clear)
///       copy Cf -> C
///     }
///   }
/// k_tile > 0 stages K through the tiles in a loop instead (fill Cf = 0.0, then
/// `for ko in serial(0 +: k/k_tile)` or pipelined with `stages`, copying the ko-th tiles);
/// `epilogue` stands before the store; `reduce` ("max", "sum") stores Cf's rows reduced into
/// fragment m to M: acc[m] instead of storing Cf to C.
struct GemmKernel {
  std::string name = "mm";
  int m = 16, n = 16, k = 16;
  int k_tile = 0, stages = 0;
  int threads = 64;
  std::string in = "f32", acc = "f32", out = "f32";  // A and B, Cf, C
  std::string epilogue = "", reduce = "";            // defaults keep designated initializers warning-free

  std::string text() const {
    auto dims = [](int a, int b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; };
    const int kt = k_tile ? k_tile : k;
    std::string s =
        "func " + name + "(A: " + in + dims(m, k) + " global, B: " + in + dims(k, n) + " global, ";
    s += reduce.empty() ? "C: " + out + dims(m, n) : "M: " + acc + "[" + std::to_string(m) + "]";
    s += " global) {\n  kernel grid(1) threads(" + std::to_string(threads) + ") -> (bx; tx) {\n";
    s += "    shared As: " + in + dims(m, kt) + "\n    shared Bs: " + in + dims(kt, n) + "\n";
    s += "    fragment Cf: " + acc + dims(m, n) + "\n";
    if (!reduce.empty()) s += "    fragment m: " + acc + "[" + std::to_string(m) + "]\n";
    if (k_tile) {
      const std::string tiles = "0 +: " + std::to_string(k / k_tile), t = std::to_string(k_tile);
      s += "    fill Cf = 0.0\n    for ko in ";
      s += stages ? "pipelined(" + tiles + ", stages=" + std::to_string(stages) + ")"
                  : "serial(" + tiles + ")";
      s += " {\n      copy A[0 +: " + std::to_string(m) + ", ko*" + t + " +: " + t + "] -> As\n";
      s += "      copy B[ko*" + t + " +: " + t + ", 0 +: " + std::to_string(n) + "] -> Bs\n";
      s += "      gemm(As, Bs -> Cf)\n    }\n";
    } else {
      s += "    copy A -> As\n    copy B -> Bs\n    gemm(As, Bs -> Cf, clear)\n";
    }
    s += epilogue;
    s += reduce.empty() ? "    copy Cf -> C\n"
                        : "    reduce " + reduce + "(Cf -> m, axis=1, clear)\n    copy m -> M\n";
    return s + "  }\n}\n";
  }
};

/// A pass run on a kernel for a target: the function before and after, and the result printed
/// (for contains() checks; INFO(text) shows it when one fails).
struct PassRun {
  Function before, after;
  std::string text;
};

template <class Pass>
PassRun run_pass(const Function& f, Pass pass, const TargetInfo& info = test::sm80()) {
  PassRun r{f, pass(f, info), ""};
  r.text = print(r.after);
  return r;
}
template <class Pass>
PassRun run_pass(const std::string& source, Pass pass, const TargetInfo& info = test::sm80()) {
  return run_pass(parse_function(source), pass, info);
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tg::test
