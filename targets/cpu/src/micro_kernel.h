// What the cpu target's gemm micro-kernel (emit_gemm.cpp) does with a gemm, as facts its passes
// plan with (insert_prefetches.h) and its emitter follows: one rule in one place, no LLVM here.
//
//   gemm(As, Bs -> Cf)      (Cf f32[128, 128]; AVX-512: VL = 16 floats a vector)
//   → micro-tiles of MR = 6 rows × NV = 4 vectors (NR = 64 columns): the whole ones cover rows
//     [0, 126) × columns [0, 128), 21 × 2 = 42 of them, run strip by strip (columns j0 = 0, 64),
//     rows i0 = 0, 6, ..., 120 in each; rows 126, 127 and columns past the last whole strip
//     follow in smaller tiles.
// A gemm whose hints interleave with its work (ir::Gemm::each_step) runs its hints before each
// of those whole micro-tiles: gemm_steps() of them, the step index counting them in that order.
#pragma once
#include <cstdint>

#include "tilegen/ir/stmt.h"

namespace tg::cpu {

struct EmitOptions {
  bool fast_math = false;        // CompileOptions.params["fast_math"] == "1"
  int num_threads = 0;           // CompileOptions.params["num_threads"]
  int vector_bits = 256;         // 512 with AVX-512
  bool gemm_microkernel = true;  // false: a plain i-k-j loop nest for every gemm
  bool bf16_dot = false;         // bf16 gemm through vdpbf16ps (avx512_bf16 CPUs, on request; emit_gemm.cpp)
  bool amx = false;              // bf16 gemm in AMX tiles (amx-bf16 CPUs whose OS grants the tile state)
};

/// Whether emit_gemm's micro-kernel handles this gemm (f32 C, f32/f16/bf16/fp8 A and B, constant
/// extents, no Global operand); the pipeline lowers the other gemms to loops.
bool gemm_has_microkernel(const ir::Gemm& g);

/// The micro-kernel's tiling of C (m × n) with vectors of vl floats: micro-tiles of mr rows ×
/// nv vectors (nr = nv·vl columns), as many accumulators as the register file holds.
struct MicroTiling {
  int64_t m = 0, n = 0;
  int vl = 8, nv = 2, mr = 6;
  int64_t nr() const { return int64_t(nv) * vl; }
  int64_t m_main() const { return m / mr * mr; }      // rows in whole micro-tiles
  int64_t n_main() const { return n / nr() * nr(); }  // columns in whole strips
  int64_t whole_tiles() const { return (m_main() / mr) * (n_main() / nr()); }
};
MicroTiling micro_tiling(const ir::Gemm& g, int vector_bits);

/// Whether the gemm runs in AMX tiles (bf16 A and B, opt.amx, 512-bit vectors): then it has no
/// micro-tiles and no steps.
bool gemm_uses_amx(const ir::Gemm& g, const EmitOptions& opt);

/// The steps a micro-kernel gemm is carried out in (its whole micro-tiles of whole strips; 0 in AMX tiles).
int64_t gemm_steps(const ir::Gemm& g, const EmitOptions& opt);

}  // namespace tg::cpu
