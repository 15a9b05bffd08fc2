// Conversions between value types and the formats buffers hold, and element access:
// flat indices, access chains, narrow and packed formats (see kernel_lowering.h).
//   f16 tensor element  → OpFConvert to f32         bf16 → its bits << 16, as f32
//   int4 (two a byte)   → OpBitFieldSExtract of the byte at i/2, bits (i%2)*4 ..+4
//   e4m3 / e5m2 / e2m1  → decoded and encoded (ties to even) in integer and float arithmetic
#include <cmath>
#include <limits>

#include "spirv/kernel_lowering_internal.h"

namespace tg::vulkan {

namespace {

// The largest value of `from` (f32 or f64) not above hi, and likewise for lo: the clamp bounds
// of a saturating float→int conversion that the conversion itself can represent.
double clamp_bound(double v, bool is_f32) {
  if (!is_f32) return v;  // saturation_bounds are doubles the conversion represents
  float f = float(v);
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return double(f);
}

}  // namespace

uint32_t KernelLowering::wrap_to(DType t, uint32_t v) {
  switch (t.code) {
    case TypeCode::I4:
    case TypeCode::I8:
    case TypeCode::I16: return m.op(spv::OpBitFieldSExtract, M.t_i32, {v, c_i32(0), c_i32(t.bits())});
    case TypeCode::U4:
    case TypeCode::U8: return m.op(spv::OpBitwiseAnd, M.t_i32, {v, c_i32((int64_t(1) << t.bits()) - 1)});
    default: return v;
  }
}

uint32_t KernelLowering::round_bf16(uint32_t v) {
  uint32_t u = m.op(spv::OpBitcast, M.t_i32, {v});
  uint32_t lsb = m.op(spv::OpBitFieldUExtract, M.t_i32, {u, c_i32(16), c_i32(1)});
  uint32_t r = m.op(spv::OpIAdd, M.t_i32, {u, m.op(spv::OpIAdd, M.t_i32, {c_i32(0x7fff), lsb})});
  r = m.op(spv::OpBitcast, M.t_f32, {m.op(spv::OpBitwiseAnd, M.t_i32, {r, c_i32(-65536)})});
  // NaN keeps its payload's top bits, quietened (as float_to_bf16_bits does)
  uint32_t q = m.op(spv::OpBitwiseOr, M.t_i32,
                    {m.op(spv::OpBitwiseAnd, M.t_i32, {u, c_i32(-65536)}), c_i32(0x400000)});
  uint32_t nan = m.op(spv::OpIsNan, M.t_bool, {v});
  return m.op(spv::OpSelect, M.t_f32, {nan, m.op(spv::OpBitcast, M.t_f32, {q}), r});
}

// f32 → the nearest f16 (ties to even), as an f32, in integer arithmetic: drivers may fold a
// float round trip (f32→f16→f32) away, integer operations they cannot. Normal f16 range: drop
// 13 mantissa bits of the f32 pattern (carries roll into the exponent; 65520 and up become
// inf); below 2^-14: round the significand to a multiple of 2^-24. NaN and inf pass through.
uint32_t KernelLowering::round_f16(uint32_t v) {
  uint32_t i = M.t_i32, bt = M.t_bool;
  auto op = [&](uint32_t code, uint32_t a, uint32_t b) { return m.op(code, i, {a, b}); };
  uint32_t u = m.op(spv::OpBitcast, i, {v});
  uint32_t sign = op(spv::OpBitwiseAnd, u, c_i32(int64_t(0x80000000u) - (int64_t(1) << 32)));
  uint32_t a = op(spv::OpBitwiseAnd, u, c_i32(0x7fffffff));
  uint32_t lsb = m.op(spv::OpBitFieldUExtract, i, {a, c_i32(13), c_i32(1)});
  uint32_t n =
      op(spv::OpBitwiseAnd, op(spv::OpIAdd, a, op(spv::OpIAdd, c_i32(0xfff), lsb)), c_i32(~int64_t(0x1fff)));
  n = m.op(spv::OpSelect, i,
           {m.op(spv::OpSGreaterThanEqual, bt, {n, c_i32(0x47800000)}), c_i32(0x7f800000), n});
  uint32_t e = op(spv::OpShiftRightLogical, a, c_i32(23));
  uint32_t sig = op(spv::OpBitwiseOr, op(spv::OpBitwiseAnd, a, c_i32(0x7fffff)), c_i32(0x800000));
  uint32_t r = glsl(i, spv::GlslSMin, {op(spv::OpISub, c_i32(126), e), c_i32(31)});  // x = sig * 2^-24 >> r
  uint32_t half =
      op(spv::OpISub, op(spv::OpShiftLeftLogical, c_i32(1), op(spv::OpISub, r, c_i32(1))), c_i32(1));
  uint32_t keep =
      m.op(spv::OpBitFieldUExtract, i, {op(spv::OpShiftRightLogical, sig, r), c_i32(0), c_i32(1)});
  uint32_t q = op(spv::OpShiftRightLogical, op(spv::OpIAdd, sig, op(spv::OpIAdd, half, keep)), r);
  uint32_t sub = m.op(
      spv::OpBitcast, i,
      {m.op(spv::OpFMul, M.t_f32, {m.op(spv::OpConvertSToF, M.t_f32, {q}), c_f32(std::ldexp(1.0, -24))})});
  uint32_t mag = m.op(spv::OpSelect, i, {m.op(spv::OpSLessThan, bt, {e, c_i32(113)}), sub, n});
  mag = m.op(spv::OpSelect, i, {m.op(spv::OpSGreaterThanEqual, bt, {a, c_i32(0x7f800000)}), a, mag});
  return m.op(spv::OpBitcast, M.t_f32, {op(spv::OpBitwiseOr, mag, sign)});
}

uint32_t KernelLowering::round_to(DType t, uint32_t v, const SourceLoc& loc) {
  if (t == f16) return round_f16(v);
  if (t == bf16) return round_bf16(v);
  (void)loc;
  // e4m3, e5m2, e2m1: through their bits (NaN stays NaN for fp8; fp4 has none, as on the host)
  if (t.is_float() && t.bits() < 16) return decode_small_float(t, encode_small_float(t, v));
  return v;
}

uint32_t KernelLowering::convert(uint32_t v, DType from, DType to, const SourceLoc& loc) {
  if (from == to) return v;
  uint32_t tt = M.value_type(to, loc), ft = M.value_type(from, loc);
  if (to.is_bool()) {
    if (from.is_float()) return m.op(spv::OpFUnordNotEqual, M.t_bool, {v, m.constant_float(ft, 0.0)});
    return m.op(spv::OpINotEqual, M.t_bool, {v, m.constant_int(ft, 0)});
  }
  if (from.is_bool())
    return m.op(spv::OpSelect, tt,
                {v, to.is_float() ? m.constant_float(tt, 1.0) : m.constant_int(tt, 1),
                 to.is_float() ? m.constant_float(tt, 0.0) : m.constant_int(tt, 0)});
  if (to.is_float()) {
    uint32_t r;
    if (from.is_float())
      r = ft == tt ? v : m.op(spv::OpFConvert, tt, {v});
    else if (from == u32)
      r = m.op(spv::OpConvertUToF, tt, {m.op(spv::OpBitcast, M.t_u32, {v})});
    else
      r = m.op(spv::OpConvertSToF, tt, {v});
    return round_to(to, r, loc);
  }
  if (from.is_float()) {  // truncate toward zero, saturate, NaN → 0
    auto [lo, hi] = saturation_bounds(to);
    const bool is_f32 = ft == M.t_f32;
    double hi_f = clamp_bound(hi, is_f32);
    uint32_t c = glsl(ft, spv::GlslNMax, {v, m.constant_float(ft, lo)});
    c = glsl(ft, spv::GlslNMin, {c, m.constant_float(ft, hi_f)});
    uint32_t r = to == u32 ? m.op(spv::OpBitcast, M.t_i32, {m.op(spv::OpConvertFToU, M.t_u32, {c})})
                           : m.op(spv::OpConvertFToS, tt, {c});
    if (hi_f < hi || to == i64) {  // above the last `from` value ≤ hi: the type's max (i64's is no double)
      uint32_t over = m.op(spv::OpFOrdGreaterThan, M.t_bool, {v, m.constant_float(ft, hi_f)});
      r = m.op(spv::OpSelect, tt,
               {over, m.constant_int(tt, to == i64 ? std::numeric_limits<int64_t>::max() : int64_t(hi)), r});
    }
    return m.op(spv::OpSelect, tt, {m.op(spv::OpIsNan, M.t_bool, {v}), m.constant_int(tt, 0), r});
  }
  if (tt != ft) {  // 32 ↔ 64 bits
    if (to == i64) {
      uint32_t r = m.op(spv::OpSConvert, tt, {v});
      return from == u32 ? m.op(spv::OpBitwiseAnd, tt, {r, m.constant_int(tt, 0xffffffffll)}) : r;
    }
    v = m.op(spv::OpSConvert, tt, {v});
  }
  return wrap_to(to, v);
}

uint32_t KernelLowering::memory_operand(const BufferStorage& b) const {
  return b.storage_class == spv::SCFunction ? uint32_t(spv::MemNone) : uint32_t(spv::MemNonPrivatePointer);
}

// sum of index × stride, in i64 where the buffer needs 64-bit indices.
Expr flat_expr(const BufferStorage& b, const std::vector<Expr>& indices) {
  Expr flat;
  for (std::size_t d = 0; d < indices.size(); ++d) {
    Expr idx = b.wide_index ? make_cast(i64, indices[d]) : indices[d];
    Expr stride = b.wide_index ? make_cast(i64, b.strides[d]) : b.strides[d];
    Expr term = stride.as_int() == 1 ? idx : idx * stride;
    flat = flat.defined() ? flat + term : term;
  }
  return flat.defined() ? flat : Expr(0);
}

uint32_t KernelLowering::flat_index(const BufferStorage& b, const std::vector<Expr>& indices) {
  return expr(flat_expr(b, indices));
}

uint32_t KernelLowering::element_pointer(const BufferStorage& b, uint32_t flat) {
  if (b.tensor) return m.op(spv::OpAccessChain, b.element_ptr, {b.variable, c_i32(0), flat});
  return m.op(spv::OpAccessChain, b.element_ptr, {b.variable, flat});
}

// Element i of a packed buffer: the byte at i >> 1 (as i32) and the nibble's shift (i & 1) * 4.
static std::pair<Expr, Expr> nibble_of(const Expr& flat) {
  return {flat >> Expr(1), (flat & Expr(1)) * Expr(4)};
}

uint32_t KernelLowering::load_element(const BufferStorage& b, const std::vector<Expr>& indices,
                                      const SourceLoc& loc) {
  auto raw_load = [&](uint32_t ptr) {
    uint32_t mem = memory_operand(b);
    return mem ? m.op(spv::OpLoad, b.element_type, {ptr, mem}) : m.op(spv::OpLoad, b.element_type, {ptr});
  };
  auto byte_as_i32 = [&](uint32_t raw) {
    return m.op(spv::OpBitcast, M.t_i32, {m.op(spv::OpUConvert, M.t_u32, {raw})});
  };
  if (b.form == BufferStorage::Form::Packed) {
    auto [byte, shift] = nibble_of(flat_expr(b, indices));
    uint32_t w = byte_as_i32(raw_load(element_pointer(b, expr(byte))));
    uint32_t sh = expr(shift);
    if (b.dtype == int4) return m.op(spv::OpBitFieldSExtract, M.t_i32, {w, sh, c_i32(4)});
    uint32_t nib = m.op(spv::OpBitFieldUExtract, M.t_i32, {w, sh, c_i32(4)});
    return b.dtype == uint4 ? nib : decode_small_float(b.dtype, nib);
  }
  if (b.form == BufferStorage::Form::Vector) return vector_element(b, flat_index(b, indices));
  uint32_t raw = raw_load(element_pointer(b, flat_index(b, indices)));
  switch (b.form) {
    case BufferStorage::Form::Value: return raw;
    case BufferStorage::Form::FloatBits: return m.op(spv::OpBitcast, M.t_f32, {raw});
    default: break;
  }
  switch (b.dtype.code) {
    case TypeCode::F16: return m.op(spv::OpFConvert, M.t_f32, {raw});
    case TypeCode::BF16: {
      uint32_t w = m.op(spv::OpUConvert, M.t_u32, {raw});
      return m.op(spv::OpBitcast, M.t_f32, {m.op(spv::OpShiftLeftLogical, M.t_u32, {w, m.u32(16)})});
    }
    case TypeCode::I16:
    case TypeCode::I8:
    case TypeCode::I4: return m.op(spv::OpSConvert, M.t_i32, {raw});  // I4: a byte each in Shared
    case TypeCode::U8:
    case TypeCode::U4: return byte_as_i32(raw);
    case TypeCode::F4E2M1: return decode_small_float(b.dtype, byte_as_i32(raw));
    case TypeCode::Bool:
      return m.op(spv::OpINotEqual, M.t_bool, {m.op(spv::OpUConvert, M.t_u32, {raw}), m.u32(0)});
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2: return decode_small_float(b.dtype, byte_as_i32(raw));
    default: throw Error("vulkan codegen: no load for " + std::string(b.dtype.name()), loc);
  }
}

// e4m3 (bias 7, no infinities, S.1111.111 NaN), e5m2 (the top byte of an f16), e2m1 (fp4).
uint32_t KernelLowering::decode_small_float(DType t, uint32_t bits) {
  uint32_t f = M.t_f32, i = M.t_i32, bt = M.t_bool;
  if (t == fp8_e5m2) {
    uint32_t h = m.op(spv::OpBitcast, M.t_u32, {m.op(spv::OpShiftLeftLogical, i, {bits, c_i32(8)})});
    return m.op(spv::OpCompositeExtract, f, {glsl(m.type_vector(f, 2), spv::GlslUnpackHalf2x16, {h}), 0});
  }
  const bool e4m3 = t == fp8_e4m3;
  uint32_t sign = m.op(spv::OpBitFieldUExtract, i, {bits, c_i32(e4m3 ? 7 : 3), c_i32(1)});
  uint32_t e = m.op(spv::OpBitFieldUExtract, i, {bits, c_i32(e4m3 ? 3 : 1), c_i32(e4m3 ? 4 : 2)});
  uint32_t man = m.op(spv::OpBitwiseAnd, i, {bits, c_i32(e4m3 ? 7 : 1)});
  uint32_t mf = m.op(spv::OpConvertSToF, f, {man});
  uint32_t v;
  if (e4m3) {
    uint32_t sub = m.op(spv::OpFMul, f, {mf, c_f32(std::ldexp(1.0, -9))});
    uint32_t norm = glsl(f, 53 /* Ldexp */,
                         {m.op(spv::OpFAdd, f, {mf, c_f32(8.0)}), m.op(spv::OpISub, i, {e, c_i32(10)})});
    v = m.op(spv::OpSelect, f, {m.op(spv::OpIEqual, bt, {e, c_i32(0)}), sub, norm});
    uint32_t nan = m.op(spv::OpLogicalAnd, bt,
                        {m.op(spv::OpIEqual, bt, {e, c_i32(15)}), m.op(spv::OpIEqual, bt, {man, c_i32(7)})});
    v = m.op(spv::OpSelect, f, {nan, c_f32(std::numeric_limits<double>::quiet_NaN()), v});
  } else {
    uint32_t half = m.op(spv::OpFMul, f, {mf, c_f32(0.5)});
    uint32_t norm = glsl(f, 53 /* Ldexp */,
                         {m.op(spv::OpFAdd, f, {c_f32(1.0), half}), m.op(spv::OpISub, i, {e, c_i32(1)})});
    v = m.op(spv::OpSelect, f, {m.op(spv::OpIEqual, bt, {e, c_i32(0)}), half, norm});
  }
  return m.op(spv::OpSelect, f,
              {m.op(spv::OpINotEqual, bt, {sign, c_i32(0)}), m.op(spv::OpFNegate, f, {v}), v});
}

// f32 → e4m3 / e5m2 / e2m1 bits with float_to_fp8_bits' (and float_to_fp4_bits') rounding: ties to
// even, e4m3 and e2m1 saturating at their largest finite value, e5m2 overflowing to inf. Normal
// range: drop 23 - mbits bits of the f32 pattern with ties to even (a carry rolls into the
// exponent) and rebias; below the smallest normal: |v| in units of the smallest subnormal, rounded
// to even (exact: the scale is a power of two). NaN → 0x7F for fp8 (its sign dropped), 0 for fp4.
uint32_t KernelLowering::encode_small_float(DType t, uint32_t v) {
  uint32_t f = M.t_f32, i = M.t_i32, bt = M.t_bool;
  const int ebits = t == fp8_e5m2   ? 5
                    : t == fp8_e4m3 ? 4
                                    : 2,
            mbits = t == fp8_e5m2   ? 2
                    : t == fp8_e4m3 ? 3
                                    : 1;
  const int bias = (1 << (ebits - 1)) - 1, drop = 23 - mbits;
  auto op = [&](uint32_t code, uint32_t a, uint32_t b) { return m.op(code, i, {a, b}); };
  uint32_t u = m.op(spv::OpBitcast, i, {v});
  uint32_t a = op(spv::OpBitwiseAnd, u, c_i32(0x7fffffff));
  uint32_t lsb = m.op(spv::OpBitFieldUExtract, i, {a, c_i32(drop), c_i32(1)});
  uint32_t r = op(spv::OpIAdd, a, op(spv::OpIAdd, c_i32((int64_t(1) << (drop - 1)) - 1), lsb));
  uint32_t normal =
      op(spv::OpISub, op(spv::OpShiftRightLogical, r, c_i32(drop)), c_i32(int64_t(127 - bias) << mbits));
  uint32_t mag = glsl(f, 4 /* FAbs */, {v});
  uint32_t units =
      glsl(f, 2 /* RoundEven */, {m.op(spv::OpFMul, f, {mag, c_f32(std::ldexp(1.0, bias - 1 + mbits))})});
  uint32_t sub = m.op(spv::OpFOrdLessThan, bt, {mag, c_f32(std::ldexp(1.0, 1 - bias))});
  uint32_t code = m.op(spv::OpSelect, i, {sub, m.op(spv::OpConvertFToS, i, {units}), normal});
  const int largest = (1 << (ebits + mbits)) - 1;  // all exponent and mantissa bits set
  if (t == fp8_e5m2)                               // past 57344 (0x7B): inf
    code = m.op(spv::OpSelect, i, {m.op(spv::OpSGreaterThan, bt, {code, c_i32(0x7B)}), c_i32(0x7C), code});
  else  // e4m3: 448 (0x7E) is the largest finite, e2m1: 6 (0x7)
    code = glsl(i, 39 /* SMin */, {code, c_i32(t == fp8_e4m3 ? largest - 1 : largest)});
  uint32_t sign = op(spv::OpShiftLeftLogical, m.op(spv::OpBitFieldUExtract, i, {u, c_i32(31), c_i32(1)}),
                     c_i32(ebits + mbits));
  code = op(spv::OpBitwiseOr, code, sign);
  return m.op(spv::OpSelect, i, {m.op(spv::OpIsNan, bt, {v}), c_i32(t == fp4_e2m1 ? 0 : 0x7F), code});
}

void KernelLowering::store_element(const BufferStorage& b, const std::vector<Expr>& indices, uint32_t v,
                                   const SourceLoc& loc) {
  uint32_t mem = memory_operand(b);
  auto raw_store = [&](uint32_t ptr, uint32_t value) {
    if (mem)
      m.inst(spv::OpStore, {ptr, value, mem});
    else
      m.inst(spv::OpStore, {ptr, value});
  };
  auto to_byte = [&](uint32_t w) {
    return m.op(spv::OpUConvert, m.type_int(8, false), {m.op(spv::OpBitcast, M.t_u32, {w})});
  };
  if (b.form == BufferStorage::Form::Packed)  // two elements a byte: no race-free byte store in SPIR-V
    throw Error("unsupported: the vulkan target does not store " + std::string(b.dtype.name()) +
                    " elements to a tensor (two share a byte, and threads storing neighbours would undo each "
                    "other's writes); store i8 and pack on the host",
                loc);
  if (b.form == BufferStorage::Form::Vector)  // plan_vector_tiles admits 16-byte copies only
    throw Error("internal: a single element stored to a tile held as uvec4s; report this kernel", loc);
  uint32_t ptr = element_pointer(b, flat_index(b, indices));
  if (b.form == BufferStorage::Form::Value) return raw_store(ptr, v);
  if (b.form == BufferStorage::Form::FloatBits) return raw_store(ptr, m.op(spv::OpBitcast, M.t_i32, {v}));
  switch (b.dtype.code) {
    case TypeCode::F16: return raw_store(ptr, m.op(spv::OpFConvert, b.element_type, {v}));
    case TypeCode::BF16: {
      uint32_t bits = m.op(spv::OpBitcast, M.t_u32, {round_bf16(v)});
      bits = m.op(spv::OpShiftRightLogical, M.t_u32, {bits, m.u32(16)});
      return raw_store(ptr, m.op(spv::OpUConvert, b.element_type, {bits}));
    }
    case TypeCode::I16:
    case TypeCode::I8:
    case TypeCode::I4: return raw_store(ptr, m.op(spv::OpSConvert, b.element_type, {v}));
    case TypeCode::U8:
    case TypeCode::U4: return raw_store(ptr, to_byte(v));
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2:
    case TypeCode::F4E2M1: return raw_store(ptr, to_byte(encode_small_float(b.dtype, v)));
    case TypeCode::Bool:
      return raw_store(ptr, to_byte(m.op(spv::OpSelect, M.t_i32, {v, c_i32(1), c_i32(0)})));
    default: throw Error("vulkan codegen: no store for " + std::string(b.dtype.name()), loc);
  }
}

}  // namespace tg::vulkan
