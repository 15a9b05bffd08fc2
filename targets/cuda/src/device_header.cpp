// The device-header library compiled by NVRTC with every generated kernel, as
// "tilegen_device.h". Self-contained: no CUDA headers, so NVRTC needs no include path.
// gpu_device_header() puts together the shared integer types, CUDA's primitives (PTX cvt, bit
// casts, atomics), the part every GPU source target shares (gpu_device_header_common(): fp8/fp4
// decoding, floor div/mod, ...), and CUDA's own (mma.sync, ldmatrix, cp.async).
#include "device_header.h"

#include <string>

#include "tilegen/common/gpu_source.h"

namespace tg::cuda {

namespace {

const char* primitives() {
  return R"TGDEV(
#define TG_DEVICE __device__ __forceinline__

// ---- primitives the shared part builds on (gpu_device_header_common()).
TG_DEVICE float tg_f16_to_f32(tg_u16 h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
TG_DEVICE tg_u16 tg_f32_to_f16(float f) {
  tg_u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
TG_DEVICE tg_u16 tg_f32_to_bf16(float f) {
  tg_u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
TG_DEVICE float tg_f32_from_bits(tg_u32 b) { return __uint_as_float(b); }
TG_DEVICE double tg_f64_from_bits(unsigned long long b) { return __longlong_as_double((long long)b); }
TG_DEVICE tg_u32 tg_f32_bits(float f) { return __float_as_uint(f); }
TG_DEVICE int tg_atomic_cas(int* p, int expected, int desired) { return atomicCAS(p, expected, desired); }
TG_DEVICE void tg_atomic_add(float* p, float v) { atomicAdd(p, v); }
TG_DEVICE void tg_atomic_add(int* p, int v) { atomicAdd(p, v); }
TG_DEVICE void tg_atomic_max(int* p, int v) { atomicMax(p, v); }
TG_DEVICE void tg_atomic_min(int* p, int v) { atomicMin(p, v); }
// IEEE maxNum/minNum (a NaN operand gives the other), as the interpreter's std::fmax/fmin.
TG_DEVICE float tg_fmax(float a, float b) { return fmaxf(a, b); }
TG_DEVICE double tg_fmax(double a, double b) { return fmax(a, b); }
TG_DEVICE float tg_fmin(float a, float b) { return fminf(a, b); }
TG_DEVICE double tg_fmin(double a, double b) { return fmin(a, b); }
// 2^x: the MUFU instruction alone (flushing subnormal inputs and results to zero; exp2f's
// subnormal handling costs three more instructions and a predicate).
TG_DEVICE float tg_exp2f(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
// The butterfly shuffle of the whole warp (full member mask) in segments of `width` lanes.
TG_DEVICE tg_u32 tg_shfl_xor_bits(tg_u32 v, int mask, int width) {
  tg_u32 r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, 0xffffffff;" : "=r"(r) : "r"(v), "r"(mask), "r"(((32 - width) << 8) | 0x1f));
  return r;
}
)TGDEV";
}

const char* cuda_part() {
  return R"TGDEV(
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// mma.sync m16n8k32 on 8-bit floats (sm_89 and later): four bytes a register, a0..a15 in A[0..3].
#define TG_MMA_M16N8K32(T)                                                                                   \
  __device__ __forceinline__ void tg_mma_m16n8k32_##T##_f32(float* c, const tg_u8* a, const tg_u8* b) {     \
    const tg_u32* A = reinterpret_cast<const tg_u32*>(a);                                                    \
    const tg_u32* B = reinterpret_cast<const tg_u32*>(b);                                                    \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." #T "." #T                                         \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                            \
                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));                        \
  }
TG_MMA_M16N8K32(e4m3)
TG_MMA_M16N8K32(e5m2)
#undef TG_MMA_M16N8K32
#endif

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
// The same with 32-bit shared-window addresses (tg_smem_base + a byte offset): the generated
// code's form, whose constant offsets ptxas folds into the instructions' immediates.
__device__ __forceinline__ void tg_ldmatrix_x1_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
}
__device__ __forceinline__ void tg_ldmatrix_x2_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}
__device__ __forceinline__ void tg_ldmatrix_x4_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void tg_ldmatrix_x1_trans_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
}
__device__ __forceinline__ void tg_ldmatrix_x2_trans_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
}
__device__ __forceinline__ void tg_ldmatrix_x4_trans_s(tg_u32* r, tg_u32 a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
template <int N> __device__ __forceinline__ void tg_cp_async_s(tg_u32 smem, const void* gmem) {
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem), "l"(gmem) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(smem), "l"(gmem), "n"(N) : "memory");
}
__device__ __forceinline__ void tg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void tg_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ void tg_copy_16(void* dst, const void* src) {
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
}
)TGDEV";
}

// Hopper's transaction barriers and bulk tensor copies (sm_90): the tensor map (CUtensorMap's 128
// opaque bytes, encoded on the host by cuTensorMapEncodeTiled and passed by value as a
// __grid_constant__ parameter), mbarrier init/arrive/expect_tx/wait on 32-bit shared addresses,
// and cp.async.bulk.tensor of 1 to 5 dimensions (coordinates innermost first) completing on one.
std::string bulk_part() {
  std::string s = R"TGDEV(
struct __align__(64) tg_tensor_map { unsigned long long opaque[16]; };
#if __CUDA_ARCH__ >= 900
// Earlier generic-proxy writes to shared memory made visible to the async proxy (bulk copies'
// barriers after their init, wgmma's operands).
__device__ __forceinline__ void tg_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void tg_mbarrier_init(tg_u32 bar, tg_u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
}
__device__ __forceinline__ void tg_mbarrier_arrive(tg_u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void tg_mbarrier_expect_tx(tg_u32 bar, tg_u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tg_mbarrier_wait(tg_u32 bar, tg_u32 parity) {
  asm volatile(
      "{\n .reg .pred tg_p;\n TG_WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 tg_p, [%0], %1;\n"
      " @!tg_p bra TG_WAIT;\n}" ::"r"(bar), "r"(parity) : "memory");
}
)TGDEV";
  for (int rank = 1; rank <= 5; ++rank) {
    std::string params, regs, args;
    for (int d = 0; d < rank; ++d) {
      params += ", int c" + std::to_string(d);
      regs += std::string(d ? ", " : "") + "%" + std::to_string(3 + d);
      args += ", \"r\"(c" + std::to_string(d) + ")";
    }
    s += "__device__ __forceinline__ void tg_bulk_copy_" + std::to_string(rank) +
         "d(tg_u32 dst, const tg_tensor_map* map, tg_u32 bar" + params + ") {\n  asm volatile(\"cp.async.bulk.tensor." +
         std::to_string(rank) +
         "d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {" + regs +
         "}], [%2];\" ::\"r\"(dst), \"l\"(map), \"r\"(bar)" + args + " : \"memory\");\n}\n";
  }
  return s + "#endif\n";
}

// Hopper's wgmma (sm_90a only: __CUDA_ARCH_FEAT_SM90_ALL): shared-memory matrix descriptors, the
// fences and waits of ir::MmaSync, and one function a shape and type, written out here because
// the accumulator is N/2 "+f" operands of one asm statement:
//   tg_wgmma_m64n128k16_f16_f32<TA, TB>(float* d, unsigned long long desc_a, unsigned long long desc_b)   d
//   += A·B
// TA/TB: 1 where the operand is M/N-major in shared memory (imm-trans-a/b). The RS form, A from
// registers (attention's P):
//   tg_wgmma_m64n128k16_f16_f32_rs<TB>(float* d, const tg_u16* a, unsigned long long desc_b)
std::string wgmma_part() {
  std::string s = R"TGDEV(
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// PTX ISA "Matrix Descriptor Format": start address, leading and stride byte offsets (each >> 4,
// 14 bits), swizzle mode in bits 62-63 (1: 128-byte, 2: 64-byte, 3: 32-byte).
__device__ __forceinline__ unsigned long long tg_wgmma_desc(tg_u32 addr, tg_u32 lbo, tg_u32 sbo, tg_u32 mode) {
  return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | ((unsigned long long)mode << 62);
}
__device__ __forceinline__ void tg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// setmaxnreg: the warpgroup's threads hold N registers from here on (warp roles: set_max_registers; sm_90a).
template <int N>
__device__ __forceinline__ void tg_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void tg_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
__device__ __forceinline__ void tg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tg_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// Keeps the compiler from moving accesses of an accumulator register across a fence or wait; the
// pair form for two 16-bit A registers (the RS form's) of one 32-bit register.
__device__ __forceinline__ void tg_fence_operand(float& r) { asm volatile("" : "+f"(r) :: "memory"); }
__device__ __forceinline__ void tg_fence_operand_pair(tg_u16* r) {
  asm volatile("" : "+r"(*reinterpret_cast<tg_u32*>(r)) :: "memory");
}
)TGDEV";
  // f16/bf16 (k16) and the 8-bit forms (k32: both operands K-major, PTX has no imm-trans for them,
  // and no RS form here).
  for (const char* t : {"f16", "bf16", "e4m3", "e5m2"})
    for (int n : {64, 128, 256}) {
      const bool bytes = t[0] == 'e';
      const std::string shape = "m64n" + std::to_string(n) + (bytes ? "k32" : "k16");
      const int regs = n / 2;
      std::string list, operands;
      for (int i = 0; i < regs; ++i) {
        list += (i ? "," : "") + std::string("%") + std::to_string(i);
        operands += (i ? ", " : "") + std::string("\"+f\"(d[") + std::to_string(i) + "])";
      }
      auto op = [&](int k) { return "%" + std::to_string(regs + k); };
      s += "template <int TA, int TB>\n__device__ __forceinline__ void tg_wgmma_" + shape + "_" + t +
           "_f32(float* d, unsigned long long desc_a, unsigned long long desc_b) {\n" +
           (bytes ? "  static_assert(TA == 0 && TB == 0, \"8-bit wgmma reads A and B K-major\");\n" : "") +
           "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + op(2) +
           ", 0;\\nwgmma.mma_async.sync.aligned." + shape + ".f32." + t + "." + t + " {" + list + "}, " + op(0) +
           ", " + op(1) + ", p, 1, 1" + (bytes ? "" : ", " + op(3) + ", " + op(4)) + ";\\n}\"\n      : " +
           operands + "\n      : \"l\"(desc_a), \"l\"(desc_b), \"r\"(1)" +
           (bytes ? "" : ", \"n\"(TA), \"n\"(TB)") + ");\n}\n";
      if (bytes) continue;
      // The RS form: A from four 32-bit registers (eight 16-bit elements, the lower-numbered in
      // the low half, as mma.sync's A), B through its descriptor.
      s += "template <int TB>\n__device__ __forceinline__ void tg_wgmma_" + shape + "_" + t +
           "_f32_rs(float* d, const tg_u16* a, unsigned long long desc_b) {\n"
           "  const tg_u32* A = reinterpret_cast<const tg_u32*>(a);\n"
           "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, " +
           op(5) + ", 0;\\nwgmma.mma_async.sync.aligned." + shape + ".f32." + t + "." + t + " {" + list + "}, {" +
           op(0) + ", " + op(1) + ", " + op(2) + ", " + op(3) + "}, " + op(4) + ", p, 1, 1, " + op(6) +
           ";\\n}\"\n      : " + operands +
           "\n      : \"r\"(A[0]), \"r\"(A[1]), \"r\"(A[2]), \"r\"(A[3]), \"l\"(desc_b), \"r\"(1), "
           "\"n\"(TB));\n}\n";
    }
  s += "#endif\n";
  return s;
}

}  // namespace

const char* device_header() {
  static const std::string part = std::string(cuda_part()) + bulk_part() + wgmma_part();
  static const std::string text = gpu::gpu_device_header(primitives(), part.c_str());
  return text.c_str();
}

}  // namespace tg::cuda
