// The device-header library compiled with every generated HIP kernel, as "tilegen_device.h".
// gpu_device_header() puts together the shared integer types, HIP's primitives (bit casts,
// f16/bf16 conversion, atomics, the barrier, block and thread indices, all from clang's AMDGPU
// builtins), the part every GPU source target shares (gpu_device_header_common(): fp8/fp4
// decoding, floor div/mod, ...), and MFMA.
//
// Two compilers read it. hiprtc (a ROCm install) brings HIP's own headers: __global__, expf, ...
// exist. clang's HIP device compilation without ROCm (-nogpuinc -nogpulib, TG_HIP_STANDALONE)
// has none of them and no device math library, so this header defines the kernel attributes
// and the math functions on clang builtins, which the AMDGPU backend expands inline.
#include "device_header.h"

#include <string>

#include "tilegen/common/gpu_source.h"

namespace tg::hip {

namespace {

const char* primitives() {
  return R"TGDEV(
#ifdef TG_HIP_STANDALONE
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
struct uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
#define TG_MATH1(f, b) static __device__ inline float f(float x) { return b(x); }
#define TG_MATHD(f, b) static __device__ inline double f(double x) { return b(x); }
TG_MATH1(expf, __builtin_expf) TG_MATH1(exp2f, __builtin_exp2f) TG_MATH1(logf, __builtin_logf)
TG_MATH1(log2f, __builtin_log2f) TG_MATH1(sqrtf, __builtin_sqrtf) TG_MATH1(fabsf, __builtin_fabsf)
TG_MATH1(floorf, __builtin_floorf) TG_MATH1(ceilf, __builtin_ceilf) TG_MATH1(roundf, __builtin_roundf)
TG_MATH1(sinf, __builtin_sinf) TG_MATH1(cosf, __builtin_cosf) TG_MATH1(rintf, __builtin_rintf)
TG_MATHD(exp, __builtin_exp) TG_MATHD(exp2, __builtin_exp2) TG_MATHD(log, __builtin_log)
TG_MATHD(log2, __builtin_log2) TG_MATHD(sqrt, __builtin_sqrt) TG_MATHD(fabs, __builtin_fabs)
TG_MATHD(floor, __builtin_floor) TG_MATHD(ceil, __builtin_ceil) TG_MATHD(round, __builtin_round)
static __device__ inline float ldexpf(float x, int e) { return __builtin_ldexpf(x, e); }
static __device__ inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static __device__ inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
static __device__ inline int abs(int x) { return x < 0 ? -x : x; }
static __device__ inline long long abs(long long x) { return x < 0 ? -x : x; }
// No device library: these are built from exp/log (accurate to a few ulp of float).
static __device__ inline float tanhf(float x) {
  float e = __builtin_expf(-2.f * __builtin_fabsf(x)), t = (1.f - e) / (1.f + e);
  return x < 0 ? -t : t;
}
static __device__ inline float powf(float x, float y) { return __builtin_exp2f(y * __builtin_log2f(x)); }
static __device__ inline float erff(float x) {  // Abramowitz-Stegun 7.1.26 refined by one Newton step
  float a = __builtin_fabsf(x), t = 1.f / (1.f + 0.3275911f * a);
  float y = 1.f - (((((1.061405429f * t - 1.453152027f) * t) + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t * __builtin_expf(-a * a);
  return x < 0 ? -y : y;
}
#endif
#define TG_DEVICE static __device__ inline __attribute__((always_inline))

// ---- primitives the shared part builds on (gpu_device_header_common()).
// IEEE maxNum/minNum (a NaN operand gives the other), as the interpreter's std::fmax/fmin.
TG_DEVICE float tg_fmax(float a, float b) { return __builtin_fmaxf(a, b); }
TG_DEVICE double tg_fmax(double a, double b) { return __builtin_fmax(a, b); }
TG_DEVICE float tg_fmin(float a, float b) { return __builtin_fminf(a, b); }
TG_DEVICE double tg_fmin(double a, double b) { return __builtin_fmin(a, b); }
TG_DEVICE float tg_exp2f(float x) { return __builtin_exp2f(x); }
TG_DEVICE float tg_f16_to_f32(tg_u16 h) { return float(__builtin_bit_cast(_Float16, h)); }
TG_DEVICE tg_u16 tg_f32_to_f16(float f) { return __builtin_bit_cast(tg_u16, (_Float16)f); }
TG_DEVICE float tg_f32_from_bits(tg_u32 b) { return __builtin_bit_cast(float, b); }
TG_DEVICE double tg_f64_from_bits(unsigned long long b) { return __builtin_bit_cast(double, b); }
TG_DEVICE tg_u32 tg_f32_bits(float f) { return __builtin_bit_cast(tg_u32, f); }
TG_DEVICE tg_u16 tg_f32_to_bf16(float f) {  // round to nearest even; NaN stays a quiet NaN
  tg_u32 b = tg_f32_bits(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return tg_u16((b >> 16) | 0x40);
  return tg_u16((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
}
TG_DEVICE int tg_atomic_cas(int* p, int expected, int desired) {
  __hip_atomic_compare_exchange_strong(p, &expected, desired, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return expected;
}
TG_DEVICE void tg_atomic_add(float* p, float v) { __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
TG_DEVICE void tg_atomic_add(int* p, int v) { __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
TG_DEVICE void tg_atomic_max(int* p, int v) { __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }
TG_DEVICE void tg_atomic_min(int* p, int v) { __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT); }

// ---- the work-group (block) and work-item (thread) of this lane; the block-wide barrier with
// LDS visibility (what HIP's __syncthreads is).
TG_DEVICE int tg_block_index_x() { return int(__builtin_amdgcn_workgroup_id_x()); }
TG_DEVICE int tg_block_index_y() { return int(__builtin_amdgcn_workgroup_id_y()); }
TG_DEVICE int tg_block_index_z() { return int(__builtin_amdgcn_workgroup_id_z()); }
TG_DEVICE int tg_thread_index() { return int(__builtin_amdgcn_workitem_id_x()); }
TG_DEVICE void tg_barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
// The value of lane ^ mask of this wave (ds_bpermute addresses lanes in bytes); mask < width, so
// the partner is in this lane's group of `width`.
TG_DEVICE tg_u32 tg_shfl_xor_bits(tg_u32 v, int mask, int) {
  const int lane = int(__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)));
  return tg_u32(__builtin_amdgcn_ds_bpermute((lane ^ mask) << 2, int(v)));
}
)TGDEV";
}

// Operands are the lane's registers as the matrix-unit descriptions lay them out (A: a_regs
// k-values of one row, B: of one column, C: c_regs rows of one column), copied into the vector
// types the builtins take; the copies stay in registers.
const char* mfma_part() {
  return R"TGDEV(
// ---- MFMA (CDNA2/CDNA3 matrix cores), wave64.
typedef float tg_f32x4 __attribute__((ext_vector_type(4)));
typedef float tg_f32x16 __attribute__((ext_vector_type(16)));
typedef _Float16 tg_f16x4 __attribute__((ext_vector_type(4)));
typedef short tg_i16x4 __attribute__((ext_vector_type(4)));
template <typename V, typename T> TG_DEVICE V tg_vec(const T* p) { V v; __builtin_memcpy(&v, p, sizeof v); return v; }
template <typename V> TG_DEVICE void tg_unvec(float* p, V v) { __builtin_memcpy(p, &v, sizeof v); }

TG_DEVICE void tg_mfma_f32_16x16x16_f16(float* c, const tg_u16* a, const tg_u16* b) {
  tg_unvec(c, __builtin_amdgcn_mfma_f32_16x16x16f16(tg_vec<tg_f16x4>(a), tg_vec<tg_f16x4>(b), tg_vec<tg_f32x4>(c), 0, 0, 0));
}
TG_DEVICE void tg_mfma_f32_16x16x16_bf16(float* c, const tg_u16* a, const tg_u16* b) {
  tg_unvec(c, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(tg_vec<tg_i16x4>(a), tg_vec<tg_i16x4>(b), tg_vec<tg_f32x4>(c), 0, 0, 0));
}
TG_DEVICE void tg_mfma_f32_32x32x8_f16(float* c, const tg_u16* a, const tg_u16* b) {
  tg_unvec(c, __builtin_amdgcn_mfma_f32_32x32x8f16(tg_vec<tg_f16x4>(a), tg_vec<tg_f16x4>(b), tg_vec<tg_f32x16>(c), 0, 0, 0));
}
TG_DEVICE void tg_mfma_f32_32x32x8_bf16(float* c, const tg_u16* a, const tg_u16* b) {
  tg_unvec(c, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(tg_vec<tg_i16x4>(a), tg_vec<tg_i16x4>(b), tg_vec<tg_f32x16>(c), 0, 0, 0));
}
TG_DEVICE void tg_mfma_f32_16x16x4_f32(float* c, const float* a, const float* b) {
  tg_unvec(c, __builtin_amdgcn_mfma_f32_16x16x4f32(a[0], b[0], tg_vec<tg_f32x4>(c), 0, 0, 0));
}
// e4m3 → f16, exact: its 7 magnitude bits shifted into f16's exponent and mantissa fields are the
// value times 2^-8 (bias 15 against 7; e4m3's subnormals land on f16's), so one multiply by 256
// rescales; S.1111.111 (NaN) is set apart.
TG_DEVICE _Float16 tg_e4m3_to_f16(tg_u8 b) {
  const tg_u16 bits = tg_u16(((b & 0x7f) << 7) | ((b & 0x80) << 8));
  const _Float16 v = __builtin_bit_cast(_Float16, bits) * (_Float16)256.0f;
  return (b & 0x7f) == 0x7f ? __builtin_bit_cast(_Float16, tg_u16(0x7e00)) : v;
}
// 16x16x32 with OCP e4m3 inputs (the IR's fp8). gfx942's fp8 MFMA reads the FNUZ variant (bias 8),
// which cannot hold e4m3 values of 256 and above, so the lane's 8 k-values are decoded to f16
// (exact) and multiplied as two 16x16x16 f16 MFMAs: lane L's k = 8*(L/16) + i splits into
// i < 4 and i >= 4, and each half is a 16x16x16 operand (k' = 4*(L/16) + i) of the same rows.
TG_DEVICE void tg_mfma_f32_16x16x32_fp8(float* c, const tg_u8* a, const tg_u8* b) {
  tg_f32x4 acc = tg_vec<tg_f32x4>(c);
  for (int h = 0; h < 2; ++h) {
    tg_f16x4 av, bv;
    for (int i = 0; i < 4; ++i) {
      av[i] = tg_e4m3_to_f16(a[4 * h + i]);
      bv[i] = tg_e4m3_to_f16(b[4 * h + i]);
    }
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(av, bv, acc, 0, 0, 0);
  }
  tg_unvec(c, acc);
}
)TGDEV";
}

}  // namespace

const char* device_header() {
  static const std::string text = gpu::gpu_device_header(primitives(), mfma_part());
  return text.c_str();
}

}  // namespace tg::hip
