#include "tilegen/ir/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tg {

namespace {
struct NameEntry {
  TypeCode code;
  const char* name;
};
constexpr NameEntry kNames[] = {
    {TypeCode::Bool, "bool"},   {TypeCode::I4, "int4"},      {TypeCode::U4, "uint4"},   {TypeCode::I8, "i8"},
    {TypeCode::U8, "u8"},       {TypeCode::I16, "i16"},      {TypeCode::I32, "i32"},    {TypeCode::I64, "i64"},
    {TypeCode::U32, "u32"},     {TypeCode::F4E2M1, "fp4"},   {TypeCode::F8E4M3, "e4m3"}, {TypeCode::F8E5M2, "e5m2"},
    {TypeCode::F16, "f16"},     {TypeCode::BF16, "bf16"},    {TypeCode::F32, "f32"},    {TypeCode::F64, "f64"},
};

// Round a finite double to a binary float format with `mbits` mantissa bits, exponent bias
// `bias` and minimum normal exponent 1-bias, nearest-even, subnormals included. Overflow is
// handled by the caller.
double round_to_format(double v, int mbits, int min_exp) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e;
  std::frexp(v, &e);  // v = f * 2^e, 0.5 <= |f| < 1, so the leading bit is 2^(e-1)
  int exp = std::max(e - 1, min_exp);
  double quantum = std::ldexp(1.0, exp - mbits);
  return std::nearbyint(v / quantum) * quantum;  // default rounding mode: nearest-even
}
}  // namespace

std::string_view DType::name() const {
  for (auto& n : kNames)
    if (n.code == code) return n.name;
  return "?";
}

std::optional<DType> DType::from_name(std::string_view name) {
  for (auto& n : kNames)
    if (name == n.name) return DType{n.code};
  if (name == "fp16" || name == "float16" || name == "half") return f16;
  if (name == "fp32" || name == "float32" || name == "float") return f32;
  if (name == "fp64" || name == "float64" || name == "double") return f64;
  if (name == "bfloat16") return bf16;
  if (name == "int8") return i8;
  if (name == "uint8") return u8;
  if (name == "int16") return i16;
  if (name == "int32" || name == "int") return i32;
  if (name == "int64") return i64;
  if (name == "uint32") return u32;
  if (name == "fp8_e4m3" || name == "float8_e4m3") return fp8_e4m3;
  if (name == "fp8_e5m2" || name == "float8_e5m2") return fp8_e5m2;
  if (name == "fp4_e2m1" || name == "e2m1") return fp4_e2m1;
  return std::nullopt;
}

std::size_t storage_bytes(DType t, int64_t count) {
  if (count <= 0) return 0;
  return std::size_t((__int128(count) * t.bits() + 7) / 8);
}

std::optional<int64_t> checked_numel(const int64_t* dims, std::size_t rank, DType t) {
  int64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(n, dims[d], &n)) return std::nullopt;
  if ((__int128(n) * t.bits() + 7) / 8 > INT64_MAX) return std::nullopt;
  return n;
}

double round_float_to(DType t, double v) {
  if (std::isnan(v)) return v;
  switch (t.code) {
    case TypeCode::F64: return v;
    case TypeCode::F32: return double(float(v));
    case TypeCode::F16: {
      double r = round_to_format(v, 10, -14);
      return std::fabs(r) > 65504.0 ? std::copysign(INFINITY, v) : r;
    }
    case TypeCode::BF16: {
      double r = round_to_format(v, 7, -126);
      return std::fabs(r) > 3.3895313892515355e38 ? std::copysign(INFINITY, v) : r;
    }
    case TypeCode::F8E4M3: {  // no infinities; saturate at 448
      if (std::isinf(v)) return std::copysign(448.0, v);
      double r = round_to_format(v, 3, -6);
      return std::fabs(r) > 448.0 ? std::copysign(448.0, v) : r;
    }
    case TypeCode::F8E5M2: {
      double r = round_to_format(v, 2, -14);
      return std::fabs(r) > 57344.0 ? std::copysign(INFINITY, v) : r;
    }
    case TypeCode::F4E2M1: {  // values 0, 0.5, 1, 1.5, 2, 3, 4, 6; saturating
      if (std::isinf(v)) return std::copysign(6.0, v);
      double r = round_to_format(v, 1, 0);
      return std::fabs(r) > 6.0 ? std::copysign(6.0, v) : r;
    }
    default: return v;
  }
}

int64_t wrap_int_to(DType t, int64_t v) {
  switch (t.code) {
    case TypeCode::Bool: return v != 0;
    case TypeCode::I4: return int64_t(uint64_t(v) << 60) >> 60;
    case TypeCode::U4: return v & 0xF;
    case TypeCode::I8: return int8_t(v);
    case TypeCode::U8: return uint8_t(v);
    case TypeCode::I16: return int16_t(v);
    case TypeCode::I32: return int32_t(v);
    case TypeCode::U32: return uint32_t(v);
    default: return v;
  }
}

Scalar convert_scalar(DType from, DType to, Scalar v) {
  if (to.is_float()) {
    double d = from.is_float() ? v.f : double(v.i);
    return Scalar::of_float(round_float_to(to, d));
  }
  if (to.is_bool()) return Scalar::of_int(from.is_float() ? v.f != 0 : v.i != 0);
  if (!from.is_float()) return Scalar::of_int(wrap_int_to(to, v.i));
  double d = v.f;
  if (std::isnan(d)) return Scalar::of_int(0);
  d = std::trunc(d);
  // Saturate into the target's range, as GPU conversions do.
  auto [lo, hi] = saturation_bounds(to);
  if (to == i64 && d > hi) return Scalar::of_int(std::numeric_limits<int64_t>::max());
  return Scalar::of_int(int64_t(std::clamp(d, lo, hi)));
}

std::pair<double, double> saturation_bounds(DType t) {
  switch (t.code) {
    case TypeCode::I4: return {-8, 7};
    case TypeCode::U4: return {0, 15};
    case TypeCode::I8: return {-128, 127};
    case TypeCode::U8: return {0, 255};
    case TypeCode::I16: return {-32768, 32767};
    case TypeCode::I32: return {-2147483648.0, 2147483647.0};
    case TypeCode::U32: return {0, 4294967295.0};
    default: return {-9.2233720368547758e18, 9.2233720368547748e18};  // i64
  }
}

double scalar_as_double(DType t, Scalar v) { return t.is_float() ? v.f : double(v.i); }

// ---- Bit formats

uint16_t float_to_half_bits(float v) {
  double r = round_float_to(f16, v);
  uint32_t sign = std::signbit(r) ? 0x8000u : 0u;
  if (std::isnan(r)) return uint16_t(sign | 0x7E00u);
  double a = std::fabs(r);
  if (std::isinf(a)) return uint16_t(sign | 0x7C00u);
  if (a == 0) return uint16_t(sign);
  int e;
  double f = std::frexp(a, &e);  // a = f * 2^e
  int exp = e - 1;               // a = 1.m * 2^exp
  if (exp < -14) return uint16_t(sign | uint32_t(std::lround(a * 16777216.0)));  // subnormal: a / 2^-24
  uint32_t mant = uint32_t(std::lround((f * 2 - 1) * 1024.0));
  return uint16_t(sign | uint32_t(exp + 15) << 10 | mant);
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(double(mant | 0x400), int(exp) - 25);
  return float(sign ? -v : v);
}

uint16_t float_to_bf16_bits(float v) {
  uint32_t u = std::bit_cast<uint32_t>(v);
  if (std::isnan(v)) return uint16_t((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1);  // nearest-even
  return uint16_t(u >> 16);
}

float bf16_bits_to_float(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

namespace {
// Small float formats: exponent bits, mantissa bits, bias; e4m3 has no infinities and NaN = S.1111.111.
uint8_t encode_small(double r, int ebits, int mbits, int bias) {
  uint32_t sign = std::signbit(r) ? 1u : 0u;
  double a = std::fabs(r);
  uint32_t code;
  if (a == 0) code = 0;
  else {
    int e;
    double f = std::frexp(a, &e);
    int exp = e - 1;
    if (exp < 1 - bias) code = uint32_t(std::lround(a / std::ldexp(1.0, 1 - bias - mbits)));
    else code = uint32_t(exp + bias) << mbits | uint32_t(std::lround((f * 2 - 1) * (1 << mbits)));
  }
  return uint8_t(sign << (ebits + mbits) | code);
}
double decode_small(uint32_t bits, int ebits, int mbits, int bias) {
  uint32_t sign = bits >> (ebits + mbits), exp = (bits >> mbits) & ((1u << ebits) - 1), mant = bits & ((1u << mbits) - 1);
  double v = exp == 0 ? std::ldexp(double(mant), 1 - bias - mbits)
                      : std::ldexp(double(mant | (1u << mbits)), int(exp) - bias - mbits);
  return sign ? -v : v;
}
}  // namespace

uint8_t float_to_fp8_bits(DType t, float v) {
  if (t == fp8_e4m3) {
    if (std::isnan(v)) return 0x7F;
    return encode_small(round_float_to(t, v), 4, 3, 7);
  }
  if (std::isnan(v)) return 0x7F;
  double r = round_float_to(t, v);
  if (std::isinf(r)) return r > 0 ? 0x7C : 0xFC;
  return encode_small(r, 5, 2, 15);
}

float fp8_bits_to_float(DType t, uint8_t b) {
  if (t == fp8_e4m3) {
    if ((b & 0x7F) == 0x7F) return NAN;
    return float(decode_small(b, 4, 3, 7));
  }
  uint32_t exp = (b >> 2) & 0x1F;
  if (exp == 31) return (b & 3) ? NAN : ((b & 0x80) ? -INFINITY : INFINITY);
  return float(decode_small(b, 5, 2, 15));
}

uint8_t float_to_fp4_bits(float v) {
  if (std::isnan(v)) return 0;
  return encode_small(round_float_to(fp4_e2m1, v), 2, 1, 1) & 0xF;
}
float fp4_bits_to_float(uint8_t nibble) { return float(decode_small(nibble & 0xF, 2, 1, 1)); }

// ---- Element access

Scalar load_element(DType t, const void* base, int64_t index) {
  auto p = static_cast<const uint8_t*>(base);
  switch (t.code) {
    case TypeCode::Bool: return Scalar::of_int(p[index] != 0);
    case TypeCode::I4: case TypeCode::U4: case TypeCode::F4E2M1: {
      uint8_t nib = (index & 1) ? p[index / 2] >> 4 : p[index / 2] & 0xF;
      if (t.code == TypeCode::F4E2M1) return Scalar::of_float(fp4_bits_to_float(nib));
      return Scalar::of_int(wrap_int_to(t, nib));
    }
    case TypeCode::I8: return Scalar::of_int(int8_t(p[index]));
    case TypeCode::U8: return Scalar::of_int(p[index]);
    case TypeCode::F8E4M3: case TypeCode::F8E5M2: return Scalar::of_float(fp8_bits_to_float(t, p[index]));
    case TypeCode::I16: { int16_t v; std::memcpy(&v, p + 2 * index, 2); return Scalar::of_int(v); }
    case TypeCode::F16: { uint16_t v; std::memcpy(&v, p + 2 * index, 2); return Scalar::of_float(half_bits_to_float(v)); }
    case TypeCode::BF16: { uint16_t v; std::memcpy(&v, p + 2 * index, 2); return Scalar::of_float(bf16_bits_to_float(v)); }
    case TypeCode::I32: { int32_t v; std::memcpy(&v, p + 4 * index, 4); return Scalar::of_int(v); }
    case TypeCode::U32: { uint32_t v; std::memcpy(&v, p + 4 * index, 4); return Scalar::of_int(v); }
    case TypeCode::F32: { float v; std::memcpy(&v, p + 4 * index, 4); return Scalar::of_float(v); }
    case TypeCode::I64: { int64_t v; std::memcpy(&v, p + 8 * index, 8); return Scalar::of_int(v); }
    case TypeCode::F64: { double v; std::memcpy(&v, p + 8 * index, 8); return Scalar::of_float(v); }
  }
  return Scalar{};
}

void store_element(DType t, void* base, int64_t index, Scalar v) {
  auto p = static_cast<uint8_t*>(base);
  switch (t.code) {
    case TypeCode::Bool: p[index] = v.i != 0; return;
    case TypeCode::I4: case TypeCode::U4: case TypeCode::F4E2M1: {
      uint8_t nib = t.code == TypeCode::F4E2M1 ? float_to_fp4_bits(float(v.f)) : uint8_t(v.i & 0xF);
      uint8_t& byte = p[index / 2];
      byte = (index & 1) ? uint8_t((byte & 0x0F) | nib << 4) : uint8_t((byte & 0xF0) | nib);
      return;
    }
    case TypeCode::I8: case TypeCode::U8: p[index] = uint8_t(v.i); return;
    case TypeCode::F8E4M3: case TypeCode::F8E5M2: p[index] = float_to_fp8_bits(t, float(v.f)); return;
    case TypeCode::I16: { int16_t x = int16_t(v.i); std::memcpy(p + 2 * index, &x, 2); return; }
    case TypeCode::F16: { uint16_t x = float_to_half_bits(float(v.f)); std::memcpy(p + 2 * index, &x, 2); return; }
    case TypeCode::BF16: { uint16_t x = float_to_bf16_bits(float(v.f)); std::memcpy(p + 2 * index, &x, 2); return; }
    case TypeCode::I32: case TypeCode::U32: { uint32_t x = uint32_t(v.i); std::memcpy(p + 4 * index, &x, 4); return; }
    case TypeCode::F32: { float x = float(v.f); std::memcpy(p + 4 * index, &x, 4); return; }
    case TypeCode::I64: std::memcpy(p + 8 * index, &v.i, 8); return;
    case TypeCode::F64: std::memcpy(p + 8 * index, &v.f, 8); return;
  }
}

}  // namespace tg
