// Kernels the hip tests share.
#pragma once
#include "tilegen/builder.h"

namespace tg::test {

/// C = A·B with fp8 (e4m3) inputs and an f32 accumulator: on gfx942 the gemm lowers to the
/// mfma_f32_16x16x32_fp8 unit; no sample has fp8 matrix inputs.
inline Kernel fp8_gemm_kernel() {
  KernelBuilder k("gemm_fp8");
  auto A = k.tensor("A", {64, 64}, fp8_e4m3);
  auto B = k.tensor("B", {64, 64}, fp8_e4m3);
  auto C = k.tensor("C", {64, 64}, f32);
  k.grid(1, 1).threads(256).body([&](Expr, Expr) {
    auto As = k.shared({64, 64}, fp8_e4m3);
    auto Bs = k.shared({64, 64}, fp8_e4m3);
    auto Cf = k.fragment({64, 64}, f32);
    k.clear(Cf);
    k.copy(A.at(0, 0), As);
    k.copy(B.at(0, 0), Bs);
    k.gemm(As, Bs, Cf);
    k.copy(Cf, C.at(0, 0));
  });
  return k.build();
}

}  // namespace tg::test
