#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tilegen/ir/dtype.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"

using namespace tg;

TEST_CASE("dtype names round-trip") {
  for (auto t : {boolean, int4, uint4, i8, u8, i16, i32, i64, u32, fp4_e2m1, fp8_e4m3, fp8_e5m2, f16, bf16, f32, f64}) {
    auto back = DType::from_name(t.name());
    REQUIRE(back);
    CHECK(*back == t);
  }
  CHECK(!DType::from_name("f17"));
}

TEST_CASE("half and bfloat16 conversions are exact round-to-nearest-even") {
  CHECK(half_bits_to_float(float_to_half_bits(1.0f)) == 1.0f);
  CHECK(float_to_half_bits(1.0f) == 0x3C00);
  CHECK(float_to_half_bits(65504.0f) == 0x7BFF);
  CHECK(float_to_half_bits(1e6f) == 0x7C00);           // overflow to infinity
  CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);  // tie to even
  CHECK(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  for (uint32_t h = 0; h < 0x7C00; h += 7) CHECK(float_to_half_bits(half_bits_to_float(uint16_t(h))) == h);
  CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(bf16_bits_to_float(float_to_bf16_bits(3.140625f)) == 3.140625f);
  CHECK(round_float_to(bf16, 1.0 + 1.0 / 256) == 1.0);  // tie to even
}

TEST_CASE("fp8 and fp4 encode every representable value exactly") {
  for (int b = 0; b < 256; ++b) {
    float v = fp8_bits_to_float(fp8_e4m3, uint8_t(b));
    if (std::isnan(v)) continue;
    CHECK(fp8_bits_to_float(fp8_e4m3, float_to_fp8_bits(fp8_e4m3, v)) == v);
  }
  CHECK(fp8_bits_to_float(fp8_e4m3, float_to_fp8_bits(fp8_e4m3, 1000.0f)) == 448.0f);  // saturates
  for (int b = 0; b < 256; ++b) {
    float v = fp8_bits_to_float(fp8_e5m2, uint8_t(b));
    if (std::isnan(v)) continue;
    CHECK(fp8_bits_to_float(fp8_e5m2, float_to_fp8_bits(fp8_e5m2, v)) == v);
  }
  const float fp4[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int b = 0; b < 8; ++b) {
    CHECK(fp4_bits_to_float(uint8_t(b)) == fp4[b]);
    CHECK(fp4_bits_to_float(uint8_t(b | 8)) == -fp4[b]);
    CHECK(float_to_fp4_bits(fp4[b]) == b);
  }
}

TEST_CASE("packed int4 storage: two a byte, low nibble first") {
  std::vector<uint8_t> mem(2, 0);
  store_element(int4, mem.data(), 0, Scalar::of_int(-3));
  store_element(int4, mem.data(), 1, Scalar::of_int(7));
  store_element(int4, mem.data(), 2, Scalar::of_int(-8));
  CHECK(mem[0] == 0x7D);
  CHECK(load_element(int4, mem.data(), 0).i == -3);
  CHECK(load_element(int4, mem.data(), 1).i == 7);
  CHECK(load_element(int4, mem.data(), 2).i == -8);
  CHECK(storage_bytes(int4, 3) == 2);
}

TEST_CASE("conversions saturate float to int and wrap int to int") {
  CHECK(convert_scalar(f32, i8, Scalar::of_float(300.0)).i == 127);
  CHECK(convert_scalar(f32, i32, Scalar::of_float(-2.7)).i == -2);
  CHECK(convert_scalar(i32, u8, Scalar::of_int(257)).i == 1);
  CHECK(convert_scalar(i32, f16, Scalar::of_int(2049)).f == 2048.0);
}

TEST_CASE("saturation bounds: each integer type's range, as doubles the conversion can hold") {
  using Bounds = std::pair<double, double>;
  CHECK(saturation_bounds(int4) == Bounds{-8, 7});
  CHECK(saturation_bounds(uint4) == Bounds{0, 15});
  CHECK(saturation_bounds(i8) == Bounds{-128, 127});
  CHECK(saturation_bounds(u8) == Bounds{0, 255});
  CHECK(saturation_bounds(i16) == Bounds{-32768, 32767});
  CHECK(saturation_bounds(i32) == Bounds{-2147483648.0, 2147483647.0});
  CHECK(saturation_bounds(u32) == Bounds{0, 4294967295.0});
  // i64: 2^63 is no int64; hi is the double just below it, lo is -2^63 exactly.
  auto [lo, hi] = saturation_bounds(i64);
  CHECK(lo == -std::ldexp(1.0, 63));
  CHECK(hi == std::nextafter(std::ldexp(1.0, 63), 0.0));
  CHECK(int64_t(hi) == 9223372036854774784);
}

TEST_CASE("conversions to i64 saturate to INT64_MAX and INT64_MIN") {
  constexpr int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  CHECK(convert_scalar(f32, i64, Scalar::of_float(1e19)).i == max);
  CHECK(convert_scalar(f32, i64, Scalar::of_float(-1e19)).i == min);
  CHECK(convert_scalar(f64, i64, Scalar::of_float(std::ldexp(1.0, 63))).i == max);
  double hi = saturation_bounds(i64).second;  // exact: no saturation
  CHECK(convert_scalar(f64, i64, Scalar::of_float(hi)).i == 9223372036854774784);
  CHECK(convert_scalar(f64, i64, Scalar::of_float(-1e300)).i == min);
  CHECK(convert_scalar(f64, i64, Scalar::of_float(std::nan(""))).i == 0);

  // The same through the interpreter, from f32 tensor elements.
  Function f = parse_function(R"(
func to_i64(X: f32[4] global, Y: i64[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    Y[tx] = cast<i64>(X[tx])
  }
})");
  std::vector<float> x = {1e19f, -1e19f, -2.5e9f, 3.75f};
  std::vector<int64_t> y(4, 7);
  HostArg xa, ya;
  xa.data = x.data(), xa.shape = {4}, xa.dtype = f32;
  ya.data = y.data(), ya.shape = {4}, ya.dtype = i64;
  interpret(f, {xa, ya});
  CHECK(y == std::vector<int64_t>{max, min, -2500000000, 3});
}
