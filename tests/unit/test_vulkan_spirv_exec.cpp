// The plain path's semantics executed for real where a Vulkan device is present (lavapipe in
// CI): small per-thread kernels over every conversion, integer rule and storage format the code
// generator handles, run by the vulkan target and by the interpreter on the same random inputs,
// compared bit for bit. Skipped, with the reason printed, without a vulkan device.
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>

#include "gpu_pass_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/runtime.h"

using namespace tg;

namespace {

bool vulkan_device() {
  for (const TargetStatus& t : targets())
    if (t.name == "vulkan") {
      if (!t.available) std::cout << "skipped: vulkan target unavailable: " << t.reason << "\n";
      return t.available;
    }
  std::cout << "skipped: no vulkan plugin in this build\n";
  return false;
}

// Random contents for each tensor: floats in [-300, 300] with fractions (ints as a range of
// their type), so conversions saturate, round and wrap.
std::vector<std::vector<uint8_t>> random_tensors(const Function& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<uint8_t>> out;
  for (const Buffer& t : f.tensors()) {
    int64_t n = *t.const_numel();
    out.emplace_back(storage_bytes(t->dtype, n));
    for (int64_t i = 0; i < n; ++i) {
      double v = std::uniform_real_distribution<double>(-300, 300)(rng);
      Scalar s = t->dtype.is_float() ? Scalar::of_float(round_float_to(t->dtype, v))
                                     : Scalar::of_int(wrap_int_to(t->dtype, int64_t(rng()) % 4096 - 2048));
      store_element(t->dtype, out.back().data(), i, s);
    }
  }
  return out;
}

// Bit-exact by default. float_tolerance (relative) is for kernels using operations whose Vulkan
// precision is not exact (OpFDiv: 2.5 ulp; sqrt: inherited from inversesqrt): NVIDIA's driver
// uses those latitudes, lavapipe does not. Returns the tensors as the vulkan target left them.
std::vector<std::vector<uint8_t>> check_same_as_interpreter(const std::string& text,
                                                            double float_tolerance = 0.0) {
  Function f = parse_function(text);
  INFO(text);
  auto interp_data = random_tensors(f, 9), vk_data = interp_data;
  std::vector<HostArg> iargs;
  std::vector<KernelArg> vargs;
  std::vector<Buffer> ts = f.tensors();
  for (std::size_t i = 0; i < ts.size(); ++i) {
    std::vector<int64_t> shape;
    for (const Expr& d : ts[i]->shape) shape.push_back(*d.as_int());
    HostArg a;
    a.data = interp_data[i].data(), a.shape = shape, a.dtype = ts[i]->dtype;
    iargs.push_back(a);
    HostTensor h;
    h.data = vk_data[i].data(), h.shape = shape, h.dtype = ts[i]->dtype;
    vargs.push_back(h);
  }
  interpret(f, iargs);
  Target::get("vulkan").compile(Kernel(f)).launch(vargs);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    INFO("tensor " << ts[i]->name);
    for (int64_t e = 0; e < *ts[i].const_numel(); ++e) {
      double want = scalar_as_double(ts[i]->dtype, load_element(ts[i]->dtype, interp_data[i].data(), e));
      double got = scalar_as_double(ts[i]->dtype, load_element(ts[i]->dtype, vk_data[i].data(), e));
      INFO("element " << e << ": vulkan " << got << ", interpreter " << want);
      const bool same = got == want || (std::isnan(got) && std::isnan(want)) ||
                        (ts[i]->dtype.is_float() && std::abs(got - want) <= float_tolerance * std::max(1.0, std::abs(want)));
      CHECK(same);
      if (!same) return vk_data;
    }
  }
  return vk_data;
}

}  // namespace

TEST_CASE("vulkan execution: conversions saturate, round and wrap as the interpreter does") {
  if (!vulkan_device()) return;
  check_same_as_interpreter(R"(
func conv(X: f32[256] global, A: i8[256] global, B: u8[256] global, C: i16[256] global, D: i32[256] global,
          E: f16[256] global, F: bf16[256] global, G: u32[256] global, H: f32[256] global) {
  kernel grid(2) threads(128) -> (bx; tx) {
    let i: i32 = bx*128 + tx
    let x: f32 = X[i] * 1000000.0
    A[i] = cast<i8>(X[i])
    B[i] = cast<u8>(X[i])
    C[i] = cast<i16>(x / 10.0)
    D[i] = cast<i32>(x * 10000.0)
    E[i] = cast<f16>(X[i] * 1.001)
    F[i] = cast<bf16>(X[i] * 1.001)
    G[i] = cast<u32>(x)
    H[i] = cast<f32>(cast<f16>(X[i]) * cast<f16>(X[i])) + cast<f32>(cast<bf16>(X[i]) + cast<bf16>(1.5))
  }
})");
}

TEST_CASE("vulkan execution: integer floor division, modulo, shifts, min/max and narrow wrap") {
  if (!vulkan_device()) return;
  check_same_as_interpreter(R"(
func ints(X: i32[128] global, Y: i32[128] global, Z: i8[128] global, W: i16[128] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    let a: i32 = X[tx]
    let b: i32 = tx % 13 - 6
    if b != 0 {
      Y[tx] = a / b * 1000 + a % b + a / 7 + a % -5 + (a >> 3) + (a << 2) + min(a, b) * max(a, b) + a / 8 + a % 16
    } else {
      Y[tx] = a & 255 | (a ^ 7)
    }
    Z[tx] = cast<i8>(a) + cast<i8>(100)
    W[tx] = cast<i16>(a * 40)
  }
})");
}

TEST_CASE("vulkan execution: guarded loads, short-circuit logic and narrow formats") {
  if (!vulkan_device()) return;
  check_same_as_interpreter(R"(
func guard(X: f32[64] global, P: int4[64] global, Q: uint4[64] global, E: e4m3[64] global, F: e5m2[64] global,
           Y: f32[64] global, Z: i8[64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    Y[tx] = select(tx < 50, X[tx + 14], -1.0) + cast<f32>(P[tx]) * 100.0 + cast<f32>(Q[tx]) +
            select(tx < 40 && X[tx + 24] > 0.0, 1000.0, 0.0) + cast<f32>(E[tx]) * 0.001 + cast<f32>(F[tx]) * 0.000001
    Z[tx] = cast<i8>(P[tx] + cast<int4>(3))
  }
})");
}

TEST_CASE("vulkan execution: float atomics by compare-and-swap and math intrinsics") {
  if (!vulkan_device()) return;
  check_same_as_interpreter(R"(
func atom(X: f32[128] global, M: f32[4] global, N: f32[4] global, S: i32[4] global, Y: f32[128] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    atomic max(M[tx % 4], X[tx])
    atomic min(N[(tx + 1) % 4], X[tx])
    atomic add(S[tx % 4], cast<i32>(X[tx]))
    Y[tx] = floor(X[tx] / 7.0) + round(X[tx] / 3.0) + abs(X[tx]) + sqrt(abs(X[tx])) + ceil(X[tx] / 5.0) + X[tx] % 7.0
  }
})",
                            1e-6);
}

TEST_CASE("vulkan execution: shared tiles with padded rows, by hand and by pad_shared_rows") {
  if (!vulkan_device()) return;
  // f32 rows of 20 padded by 3 (a Value-form tile, rows 23 apart), read back transposed
  check_same_as_interpreter(R"(
func pad(X: f32[16, 20] global, Y: f32[16, 20] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f32[16, 20] layout=padded(3)
    for i in serial(0 +: 5) {
      let e: i32 = i*64 + tx
      S[e / 20, e % 20] = X[e / 20, e % 20]
    }
    barrier
    for i in serial(0 +: 5) {
      let e: i32 = i*64 + tx
      Y[e / 20, e % 20] = S[15 - e / 20, 19 - e % 20]
    }
  }
})");
  // through registers that only 16-byte copies touch (uvec4s), and ones an element store touches
  for (const std::string extra : {"", "    R[3] = cast<f16>(1.0)\n"})
    check_same_as_interpreter(test::tile_through_registers(extra));
  // f16 rows of 32 filled by 16-byte copies: the pass pads them by 8 (uvec4 rows 5 apart)
  check_same_as_interpreter(R"(
func vec(A: f16[64, 32] global, B: f16[64, 32] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f16[64, 32]
    for it in serial(0 +: 4) {
      let flat: i32 = it*64 + tx
      for v in vectorized(0 +: 8) {
        S[flat / 4, flat % 4 * 8 + v] = A[flat / 4, flat % 4 * 8 + v]
      }
    }
    barrier
    for it in serial(0 +: 4) {
      let flat: i32 = it*64 + tx
      for v in serial(0 +: 8) {
        B[flat / 4, flat % 4 * 8 + v] = S[63 - flat / 4, flat % 4 * 8 + 7 - v]
      }
    }
  }
})");
}

TEST_CASE("vulkan execution: f32 → i64 saturates to INT64_MAX and INT64_MIN as the interpreter does") {
  if (!vulkan_device()) return;
  // X is in [-300, 300], so the products reach ±3e19: beyond ±2^63 (9.2e18) at both ends.
  auto out = check_same_as_interpreter(R"(
func to_i64(X: f32[256] global, Y: i64[256] global) {
  kernel grid(2) threads(128) -> (bx; tx) {
    let i: i32 = bx*128 + tx
    Y[i] = cast<i64>(X[i] * 100000000000000000.0)
  }
})");
  REQUIRE(out.size() == 2);
  const auto* x = reinterpret_cast<const float*>(out[0].data());
  const auto* y = reinterpret_cast<const int64_t*>(out[1].data());
  int above = 0, below = 0;
  for (int i = 0; i < 256; ++i) {
    const float p = x[i] * 1e17f, two63 = 0x1p63f;
    INFO("X[" << i << "] = " << x[i]);
    if (p >= two63) {
      CHECK(y[i] == std::numeric_limits<int64_t>::max());
      ++above;
    } else if (p <= -two63) {
      CHECK(y[i] == std::numeric_limits<int64_t>::min());
      ++below;
    }
  }
  CHECK(above > 0);
  CHECK(below > 0);
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
