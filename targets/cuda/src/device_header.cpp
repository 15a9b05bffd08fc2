// The device-header library compiled by NVRTC with every generated kernel, as
// "tilegen_device.h". Self-contained: no CUDA headers, so NVRTC needs no include path.
// Values of f16/bf16/fp8/fp4 are computed as float rounded to the format after every operation
// (the interpreter's semantics); buffers hold the formats' bits.
#include "device_header.h"

namespace tg::cuda {

const char* device_header() {
  return R"TGDEV(
#pragma once
typedef unsigned char tg_u8;
typedef unsigned short tg_u16;
typedef unsigned int tg_u32;
typedef long long tg_i64;

// ---- f16 / bf16 bits <-> float (cvt instructions: exact, round to nearest even).
__device__ __forceinline__ float tg_f16_to_f32(tg_u16 h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ tg_u16 tg_f32_to_f16(float f) {
  tg_u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float tg_bf16_to_f32(tg_u16 h) { return __uint_as_float(tg_u32(h) << 16); }
__device__ __forceinline__ tg_u16 tg_f32_to_bf16(float f) {
  tg_u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float tg_round_f16(float f) { return tg_f16_to_f32(tg_f32_to_f16(f)); }
__device__ __forceinline__ float tg_round_bf16(float f) { return tg_bf16_to_f32(tg_f32_to_bf16(f)); }
__device__ __forceinline__ float tg_round_f16(double f) { return tg_round_f16(float(f)); }
__device__ __forceinline__ float tg_round_bf16(double f) { return tg_round_bf16(float(f)); }

// ---- fp8 and fp4 decoding (e4m3: bias 7, no infinities, 0x7f/0xff NaN; e5m2: bias 15, IEEE-like).
__device__ __forceinline__ float tg_e4m3_to_f32(tg_u8 b) {
  int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  float v = (e == 15 && m == 7) ? __int_as_float(0x7fc00000)
            : e == 0 ? ldexpf(float(m), -9) : ldexpf(float(8 + m), e - 10);
  return s ? -v : v;
}
__device__ __forceinline__ float tg_e5m2_to_f32(tg_u8 b) { return tg_f16_to_f32(tg_u16(b) << 8); }
__device__ __forceinline__ float tg_e2m1_to_f32(tg_u8 nib) {
  const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  float v = mag[nib & 7];
  return (nib & 8) ? -v : v;
}

// ---- packed 4-bit elements: element i in the low nibble of byte i/2 when i is even.
__device__ __forceinline__ int tg_ld_u4(const tg_u8* p, tg_i64 i) { return (p[i >> 1] >> ((i & 1) * 4)) & 15; }
__device__ __forceinline__ int tg_ld_i4(const tg_u8* p, tg_i64 i) { int v = tg_ld_u4(p, i); return v >= 8 ? v - 16 : v; }
__device__ __forceinline__ void tg_st_4(tg_u8* p, tg_i64 i, int v) {
  int sh = (i & 1) * 4;
  p[i >> 1] = tg_u8((p[i >> 1] & ~(15 << sh)) | ((v & 15) << sh));
}

// ---- floor division and modulo (the IR's integer Div/Mod).
template <typename T> __device__ __forceinline__ T tg_floordiv(T a, T b) {
  T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T> __device__ __forceinline__ T tg_floormod(T a, T b) {
  T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ float tg_floormod(float a, float b) { return a - b * floorf(a / b); }
__device__ __forceinline__ double tg_floormod(double a, double b) { return a - b * floor(a / b); }
template <typename T> __device__ __forceinline__ T tg_min(T a, T b) { return b < a ? b : a; }
template <typename T> __device__ __forceinline__ T tg_max(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ float tg_sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ double tg_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

// ---- atomics: max/min on floats through compare-and-swap.
__device__ __forceinline__ void tg_atomic_max(float* p, float v) {
  int* q = (int*)p; int old = *q, assumed;
  do { assumed = old; if (__int_as_float(assumed) >= v) return; old = atomicCAS(q, assumed, __float_as_int(v)); } while (old != assumed);
}
__device__ __forceinline__ void tg_atomic_min(float* p, float v) {
  int* q = (int*)p; int old = *q, assumed;
  do { assumed = old; if (__int_as_float(assumed) <= v) return; old = atomicCAS(q, assumed, __float_as_int(v)); } while (old != assumed);
}
__device__ __forceinline__ void tg_atomic_max(int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void tg_atomic_min(int* p, int v) { atomicMin(p, v); }

// ---- Tensor Cores: mma.sync m16n8k16, operands as the PTX fragment registers a0..a7, b0..b3,
// c0..c3 (two 16-bit elements a 32-bit register, the lower-numbered in the low half).
__device__ __forceinline__ void tg_mma_m16n8k16_f16_f32(float* c, const tg_u16* a, const tg_u16* b) {
  const tg_u32* A = reinterpret_cast<const tg_u32*>(a);
  const tg_u32* B = reinterpret_cast<const tg_u32*>(b);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
__device__ __forceinline__ void tg_mma_m16n8k16_bf16_f32(float* c, const tg_u16* a, const tg_u16* b) {
  const tg_u32* A = reinterpret_cast<const tg_u32*>(a);
  const tg_u32* B = reinterpret_cast<const tg_u32*>(b);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}

// ---- Shared-memory movement for hand-written and future lowered code: ldmatrix (four 8×8
// b16 matrices), cp.async of 16 bytes with commit/wait, 16-byte vector copies.
__device__ __forceinline__ tg_u32 tg_smem_addr(const void* p) { return tg_u32(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void tg_ldmatrix_x1(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_ldmatrix_x2(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_ldmatrix_x4(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_ldmatrix_x1_trans(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_ldmatrix_x2_trans(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_ldmatrix_x4_trans(tg_u32* r, const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tg_smem_addr(smem_row)));
}
__device__ __forceinline__ void tg_cp_async_16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(tg_smem_addr(smem)), "l"(gmem));
}
template <int N> __device__ __forceinline__ void tg_cp_async(void* smem, const void* gmem) {
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(tg_smem_addr(smem)), "l"(gmem) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(tg_smem_addr(smem)), "l"(gmem), "n"(N) : "memory");
}
__device__ __forceinline__ void tg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void tg_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ void tg_copy_16(void* dst, const void* src) {
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
}
)TGDEV";
}

}  // namespace tg::cuda
