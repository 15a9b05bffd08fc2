// The part of the device-header library that the GPU source targets share (see gpu_source.h):
// plain C++ over a few primitives each target's header provides first. Values of f16/bf16/fp8/fp4
// are computed as float rounded to the format after every operation (the interpreter's
// semantics); buffers hold the formats' bits.
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/int_semantics.h"
#include "tilegen/common/gpu_source.h"

namespace tg::gpu {

// tg_access_failed below writes the record's words at these places.
static_assert(kAccessRecordSite == 0 && kAccessRecordBlock == 1 && kAccessRecordThread == 4 &&
              kAccessRecordIndex == 5 && kAccessRecordMaxIndices == 8);

namespace {

// The operations of int_semantics.h's recipes as C++ statements, one named local each:
// the recipe run with these writes a device function's body. Signed arithmetic goes through
// the unsigned type of the same width, so it wraps instead of being undefined.
struct CxxIntOps {
  using Value = std::string;
  std::string T, U;  // the value type and its unsigned twin
  std::string body;
  int locals = 0;
  Value let(const std::string& type, const std::string& e) {
    std::string v = "v" + std::to_string(locals++);
    body += "  const " + type + " " + v + " = " + e + ";\n";
    return v;
  }
  Value wrapping(const Value& a, const char* op, const Value& b) {
    return let(T, "(" + T + ")((" + U + ")" + a + " " + op + " (" + U + ")" + b + ")");
  }
  Value imm(int64_t v) { return "(" + T + ")(" + std::to_string(v) + ")"; }
  Value add(const Value& a, const Value& b) { return wrapping(a, "+", b); }
  Value sub(const Value& a, const Value& b) { return wrapping(a, "-", b); }
  Value mul(const Value& a, const Value& b) { return wrapping(a, "*", b); }
  Value div_trunc(const Value& a, const Value& b) { return let(T, a + " / " + b); }
  Value bit_and(const Value& a, const Value& b) { return let(T, a + " & " + b); }
  Value bit_xor(const Value& a, const Value& b) { return let(T, a + " ^ " + b); }
  Value shl(const Value& a, const Value& n) {
    return let(T, "(" + T + ")((" + U + ")" + a + " << " + n + ")");
  }
  Value shr(const Value& a, const Value& n) { return let(T, a + " >> " + n); }  // arithmetic when signed
  Value eq(const Value& a, const Value& b) { return let("bool", a + " == " + b); }
  Value ne(const Value& a, const Value& b) { return let("bool", a + " != " + b); }
  Value lt(const Value& a, const Value& b) { return let("bool", a + " < " + b); }
  Value both(const Value& p, const Value& q) { return let("bool", p + " && " + q); }
  Value either(const Value& p, const Value& q) { return let("bool", p + " || " + q); }
  Value select(const Value& c, const Value& x, const Value& y) { return let(T, c + " ? " + x + " : " + y); }
};

std::string unsigned_twin(DType t) {
  std::string v = value_type(t);
  return v == "long long" ? "unsigned long long" : v == "int" ? "unsigned" : v;
}

// One helper: TG_DEVICE T name(T a, T b) { <the recipe> }.
template <typename Recipe>
std::string int_helper(ir::BinOp op, DType t, Recipe recipe) {
  CxxIntOps ops{value_type(t), unsigned_twin(t), "", 0};
  std::string result = recipe(ops);
  return "TG_DEVICE " + ops.T + " " + gpu_int_helper(op, t) + "(" + ops.T + " a, " + ops.T + " b) {\n" +
         ops.body + "  return " + result + ";\n}\n";
}

// First in the header: the target's primitives are written in these types.
const char* integer_types() {
  return R"TGDEV(
#pragma once
typedef unsigned char tg_u8;
typedef unsigned short tg_u16;
typedef unsigned int tg_u32;
typedef long long tg_i64;
)TGDEV";
}

}  // namespace

std::string gpu_device_header(const char* primitives, const char* target_part) {
  return std::string(integer_types()) + primitives + gpu_device_header_common() +
         gpu_device_header_int_ops() + target_part;
}

std::string gpu_int_helper(ir::BinOp op, DType t) {
  using ir::BinOp;
  bool shift = op == BinOp::Shl || op == BinOp::Shr;
  // Division does not depend on the width, only on the value type and signedness.
  if (!shift) t = t == u32 ? u32 : t == i64 ? i64 : i32;
  const char* verb = op == BinOp::Div ? "div" : op == BinOp::Mod ? "mod" : op == BinOp::Shl ? "shl" : "shr";
  return "tg_" + std::string(verb) + "_" + std::string(t.name());
}

const std::string& gpu_device_header_int_ops() {
  using ir::BinOp;
  static const std::string text = [] {
    std::string h =
        "\n// ---- integer / % << >>: int_semantics.h's recipes, generated (x / 0 = 0, x % 0 = x,\n"
        "// MIN / -1 = MIN, shifts by counts outside [0, width) shift every bit out).\n";
    for (DType t : {i32, u32, i64})
      for (bool div : {true, false})
        h += int_helper(div ? BinOp::Div : BinOp::Mod, t,
                        [&](CxxIntOps& g) { return ir::lower_int_div(g, div, "a", "b", t); });
    for (DType t : {int4, uint4, i8, u8, i16, i32, u32, i64})
      for (bool left : {true, false})
        h += int_helper(left ? BinOp::Shl : BinOp::Shr, t,
                        [&](CxxIntOps& g) { return ir::lower_int_shift(g, left, "a", "b", t); });
    return h;
  }();
  return text;
}

const char* gpu_device_header_common() {
  return R"TGDEV(
// ---- f16 / bf16 rounding through the target's exact conversions (round to nearest even).
TG_DEVICE float tg_bf16_to_f32(tg_u16 h) { return tg_f32_from_bits(tg_u32(h) << 16); }
TG_DEVICE float tg_round_f16(float f) { return tg_f16_to_f32(tg_f32_to_f16(f)); }
// Lane shuffles (ir::Store::shuffle_xor) over the target's tg_shfl_xor_bits: the value of lane ^ mask.
TG_DEVICE float tg_shfl_xor(float v, int mask, int width) {
  return tg_f32_from_bits(tg_shfl_xor_bits(tg_f32_bits(v), mask, width));
}
TG_DEVICE int tg_shfl_xor(int v, int mask, int width) { return int(tg_shfl_xor_bits(tg_u32(v), mask, width)); }
TG_DEVICE tg_u32 tg_shfl_xor(tg_u32 v, int mask, int width) { return tg_shfl_xor_bits(v, mask, width); }
TG_DEVICE float tg_round_bf16(float f) { return tg_bf16_to_f32(tg_f32_to_bf16(f)); }
TG_DEVICE float tg_round_f16(double f) { return tg_round_f16(float(f)); }
TG_DEVICE float tg_round_bf16(double f) { return tg_round_bf16(float(f)); }

// ---- fp8 and fp4 decoding (OCP formats. e4m3: bias 7, no infinities, 0x7f/0xff NaN;
// e5m2: bias 15, IEEE-like, the high byte of an f16).
TG_DEVICE float tg_e4m3_to_f32(tg_u8 b) {
  int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  float v = (e == 15 && m == 7) ? tg_f32_from_bits(0x7fc00000u)
            : e == 0 ? ldexpf(float(m), -9) : ldexpf(float(8 + m), e - 10);
  return s ? -v : v;
}
TG_DEVICE float tg_e5m2_to_f32(tg_u8 b) { return tg_f16_to_f32(tg_u16(tg_u16(b) << 8)); }
TG_DEVICE float tg_e2m1_to_f32(tg_u8 nib) {
  const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  float v = mag[nib & 7];
  return (nib & 8) ? -v : v;
}

// ---- fp8 and fp4 encoding with float_to_fp8_bits' rounding (ties to even; e4m3 and e2m1 saturate
// at their largest finite value, e5m2 overflows to inf; NaN is 0x7f, 0 for fp4). Normal range: drop
// 23 - mbits bits of the f32 pattern, ties to even, a carry rolling into the exponent, and rebias;
// below the smallest normal: |v| in units of the smallest subnormal, rounded to even (exact).
TG_DEVICE tg_u32 tg_small_float_code(float v, int mbits, int bias) {
  tg_u32 a = tg_f32_bits(v) & 0x7fffffffu;
  float mag = tg_f32_from_bits(a);
  if (mag < ldexpf(1.f, 1 - bias)) return tg_u32(rintf(ldexpf(mag, bias - 1 + mbits)));
  int drop = 23 - mbits;
  tg_u32 r = a + ((1u << (drop - 1)) - 1u) + ((a >> drop) & 1u);
  return (r >> drop) - (tg_u32(127 - bias) << mbits);
}
TG_DEVICE tg_u8 tg_f32_to_e4m3(float v) {
  if (v != v) return 0x7f;
  tg_u32 c = tg_small_float_code(v, 3, 7);
  return tg_u8((c > 0x7eu ? 0x7eu : c) | ((tg_f32_bits(v) >> 24) & 0x80u));
}
TG_DEVICE tg_u8 tg_f32_to_e5m2(float v) {
  if (v != v) return 0x7f;
  tg_u32 c = tg_small_float_code(v, 2, 15);
  return tg_u8((c > 0x7bu ? 0x7cu : c) | ((tg_f32_bits(v) >> 24) & 0x80u));
}
TG_DEVICE int tg_f32_to_e2m1(float v) {
  if (v != v) return 0;
  tg_u32 c = tg_small_float_code(v, 1, 1);
  return int((c > 7u ? 7u : c) | ((tg_f32_bits(v) >> 28) & 8u));
}

// ---- packed 4-bit elements: element i in the low nibble of byte i/2 when i is even.
TG_DEVICE int tg_ld_u4(const tg_u8* p, tg_i64 i) { return (p[i >> 1] >> ((i & 1) * 4)) & 15; }
TG_DEVICE int tg_ld_i4(const tg_u8* p, tg_i64 i) { int v = tg_ld_u4(p, i); return v >= 8 ? v - 16 : v; }
TG_DEVICE void tg_st_4(tg_u8* p, tg_i64 i, int v) {
  int sh = (i & 1) * 4;
  p[i >> 1] = tg_u8((p[i >> 1] & ~(15 << sh)) | ((v & 15) << sh));
}

// ---- float modulo (integer division, modulo and shifts: gpu_device_header_int_ops()).
TG_DEVICE float tg_floormod(float a, float b) { return a - b * floorf(a / b); }
TG_DEVICE double tg_floormod(double a, double b) { return a - b * floor(a / b); }
template <typename T> TG_DEVICE T tg_min(T a, T b) { return b < a ? b : a; }
template <typename T> TG_DEVICE T tg_max(T a, T b) { return a < b ? b : a; }
TG_DEVICE float tg_sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
TG_DEVICE double tg_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

// ---- atomics: max/min on floats through compare-and-swap of their bits.
TG_DEVICE void tg_atomic_max(float* p, float v) {
  int* q = (int*)p; int old = *q, assumed;
  do { assumed = old; if (tg_f32_from_bits(tg_u32(assumed)) >= v) return; old = tg_atomic_cas(q, assumed, int(tg_f32_bits(v))); } while (old != assumed);
}
TG_DEVICE void tg_atomic_min(float* p, float v) {
  int* q = (int*)p; int old = *q, assumed;
  do { assumed = old; if (tg_f32_from_bits(tg_u32(assumed)) <= v) return; old = tg_atomic_cas(q, assumed, int(tg_f32_bits(v))); } while (old != assumed);
}

// ---- checked element accesses (check_bounds=all): the first failure of a launch claims the
// record (word 0: site + 1) and writes its block, thread and indices (access_check.h).
TG_DEVICE bool tg_access_failed(tg_u32* rec, int site, int bx, int by, int bz, int thread, tg_i64 i0, tg_i64 i1,
                                tg_i64 i2, tg_i64 i3, tg_i64 i4, tg_i64 i5, tg_i64 i6, tg_i64 i7) {
  if (tg_atomic_cas((int*)rec, 0, site + 1) != 0) return false;
  rec[1] = tg_u32(bx); rec[2] = tg_u32(by); rec[3] = tg_u32(bz); rec[4] = tg_u32(thread);
  const tg_i64 idx[8] = {i0, i1, i2, i3, i4, i5, i6, i7};
  for (int d = 0; d < 8; ++d) {
    rec[5 + 2 * d] = tg_u32((unsigned long long)idx[d]);
    rec[6 + 2 * d] = tg_u32((unsigned long long)idx[d] >> 32);
  }
  return false;
}
)TGDEV";
}

}  // namespace tg::gpu
