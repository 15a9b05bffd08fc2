// Element types of the tile IR, and exact host conversions to and from them.
// Packed types (int4, uint4, fp4 e2m1) store two elements a byte, element i in the low nibble
// of byte i/2 when i is even and the high nibble when odd.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace tg {

enum class TypeCode : uint8_t {
  Bool, I4, U4, I8, U8, I16, I32, I64, U32, F4E2M1, F8E4M3, F8E5M2, F16, BF16, F32, F64
};

struct DType {
  TypeCode code = TypeCode::F32;

  constexpr int bits() const {
    switch (code) {
      case TypeCode::Bool: return 8;
      case TypeCode::I4: case TypeCode::U4: case TypeCode::F4E2M1: return 4;
      case TypeCode::I8: case TypeCode::U8: case TypeCode::F8E4M3: case TypeCode::F8E5M2: return 8;
      case TypeCode::I16: case TypeCode::F16: case TypeCode::BF16: return 16;
      case TypeCode::I32: case TypeCode::U32: case TypeCode::F32: return 32;
      case TypeCode::I64: case TypeCode::F64: return 64;
    }
    return 0;
  }
  constexpr bool is_bool() const { return code == TypeCode::Bool; }
  constexpr bool is_float() const {
    return code == TypeCode::F4E2M1 || code == TypeCode::F8E4M3 || code == TypeCode::F8E5M2 ||
           code == TypeCode::F16 || code == TypeCode::BF16 || code == TypeCode::F32 || code == TypeCode::F64;
  }
  constexpr bool is_int() const { return !is_float() && !is_bool(); }
  constexpr bool is_signed_int() const {
    return code == TypeCode::I4 || code == TypeCode::I8 || code == TypeCode::I16 || code == TypeCode::I32 ||
           code == TypeCode::I64;
  }
  /// Sub-byte types, two elements a byte.
  constexpr bool is_packed() const { return bits() < 8; }
  std::string_view name() const;  // "f16", "bf16", "e4m3", "int4", ...
  static std::optional<DType> from_name(std::string_view name);

  friend constexpr bool operator==(DType a, DType b) { return a.code == b.code; }
  friend constexpr bool operator!=(DType a, DType b) { return a.code != b.code; }
};

inline constexpr DType boolean{TypeCode::Bool};
inline constexpr DType int4{TypeCode::I4};
inline constexpr DType uint4{TypeCode::U4};
inline constexpr DType i8{TypeCode::I8};
inline constexpr DType u8{TypeCode::U8};
inline constexpr DType i16{TypeCode::I16};
inline constexpr DType i32{TypeCode::I32};
inline constexpr DType i64{TypeCode::I64};
inline constexpr DType u32{TypeCode::U32};
inline constexpr DType fp4_e2m1{TypeCode::F4E2M1};
inline constexpr DType fp8_e4m3{TypeCode::F8E4M3};
inline constexpr DType fp8_e5m2{TypeCode::F8E5M2};
inline constexpr DType f16{TypeCode::F16};
inline constexpr DType bf16{TypeCode::BF16};
inline constexpr DType f32{TypeCode::F32};
inline constexpr DType f64{TypeCode::F64};

/// Bytes needed to hold `count` elements (packed types round up).
std::size_t storage_bytes(DType t, int64_t count);
/// The element count of a shape whose dimensions are all ≥ 0, or nullopt when the count or its
/// bytes in t pass INT64_MAX: {2^21, 2^21, 2^22} (2^64 elements) and f32 {2^62 + 1} do.
std::optional<int64_t> checked_numel(const int64_t* dims, std::size_t rank, DType t);

/// A scalar as the interpreter and host references see it: floats as double, integers and bools
/// as int64. Which member is live follows the dtype.
union Scalar {
  double f;
  int64_t i;
  constexpr Scalar() : i(0) {}
  static constexpr Scalar of_float(double v) { Scalar s; s.f = v; return s; }
  static constexpr Scalar of_int(int64_t v) { Scalar s; s.i = v; return s; }
};

/// Round a value to what `t` can hold: floats to nearest-even in t's format (saturating fp8 e4m3
/// and fp4 to their finite maximum, as hardware conversions do), integers wrapped to t's width.
double round_float_to(DType t, double v);
int64_t wrap_int_to(DType t, int64_t v);
/// Convert between dtypes with C semantics (float→int truncates toward zero and saturates).
Scalar convert_scalar(DType from, DType to, Scalar v);
/// The clamping range {lo, hi} of a float→int conversion to the integer type `t`, as doubles
/// exactly representable and convertible to `t`: {-128, 127} for i8, {0, 4294967295} for u32.
/// i64's hi is the largest double below 2^63 (2^63 itself overflows); a value above it
/// saturates to INT64_MAX, which no double holds.
std::pair<double, double> saturation_bounds(DType t);
double scalar_as_double(DType t, Scalar v);

/// Element access on host memory in the dtype's storage format.
Scalar load_element(DType t, const void* base, int64_t index);
void store_element(DType t, void* base, int64_t index, Scalar v);

/// Bit-exact helpers shared by the host references and targets.
uint16_t float_to_half_bits(float v);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(float v);
float bf16_bits_to_float(uint16_t h);
uint8_t float_to_fp8_bits(DType t, float v);  // t is fp8_e4m3 or fp8_e5m2
float fp8_bits_to_float(DType t, uint8_t b);
uint8_t float_to_fp4_bits(float v);  // e2m1, low nibble
float fp4_bits_to_float(uint8_t nibble);

}  // namespace tg
