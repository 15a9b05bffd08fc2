// exp and exp2 of f32 inline, in straight-line IR that the loop vectoriser turns into AVX2 /
// AVX-512 code with no calls (see emitter.h). A call to libmvec's _ZGVdN8v_expf per 8 elements
// spills every live vector register around it; softmax spends most of its time there.
//
//   tile IR:  x[i, j] = exp(x[i, j] - row_max[i])
//   LLVM IR:  %c = clamp(%d, -104.0, 88.8)                ; by compare-select: NaN stays NaN
//             %t = fma(%c, log2(e), 1.5·2^23)             ; e^c = 2^n · e^r, |r| <= ln2 / 2
//             %n = %t - 1.5·2^23 ; (int) n = bits(%t) - bits(1.5·2^23)
//             %r = fma(%n, -ln2_lo, fma(%n, -ln2_hi, %c)) ; Cody–Waite: r exact to ~1 ulp
//             %p = 1 + r + r²·P(r)                        ; Cephes expf polynomial, degree 7
//             %e = (%p · 2^(n>>1)) · 2^(n - (n>>1))       ; two exact scalings: n in [-150, 128]
//
// Accuracy: within 2 ulp of the correctly rounded result over the whole range (Cephes reports
// 1 ulp for expf with this polynomial); results below FLT_MIN round once, as denormals, in the
// last multiplication; inf and overflow give inf, -inf and underflow 0, NaN gives NaN. No
// fast-math flags: each operation is IEEE, so the vectorised loop equals the scalar one.
#include <llvm/IR/Intrinsics.h>

#include "emitter.h"

namespace tg::cpu {

using llvm::Value;

namespace {

// Cephes expf: e^r ≈ 1 + r + r²·(p0 + r·(p1 + ...)) for |r| <= ln2 / 2.
constexpr float kExpPoly[] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f,
                              8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with few mantissa bits so that n · kLn2Hi is exact for |n| <= 256.
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

}  // namespace

Value* Emitter::exp_f32(Value* x, bool base2) {
  llvm::Type* f = B.getFloatTy();
  llvm::Type* i32 = B.getInt32Ty();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  auto fma = [&](Value* a, Value* b, Value* acc) {
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {f}, {a, b, acc});
  };
  // Clamp so that n stays in [-150, 128]. Compare-and-select keeps NaN (it fails both compares)
  // and lowers to one vminps / vmaxps each.
  Value* hi = c(base2 ? 128.0 : 88.8);
  Value* lo = c(base2 ? -150.0 : -104.0);
  Value* cl = B.CreateSelect(B.CreateFCmpOGT(x, hi), hi, x);
  cl = B.CreateSelect(B.CreateFCmpOLT(cl, lo), lo, cl);
  // n = round(cl · log2 e) by adding 1.5 · 2^23: the sum's low mantissa bits are n itself, read
  // as an integer with no conversion (a NaN gives a defined garbage n and a NaN r: NaN out).
  Value* magic = c(12582912.0);
  Value* t = base2 ? B.CreateFAdd(cl, magic) : fma(cl, c(1.44269504088896341), magic);
  Value* n = B.CreateFSub(t, magic);
  Value* r = base2 ? B.CreateFMul(B.CreateFSub(cl, n), c(0.69314718055994531))  // cl - n is exact
                   : fma(n, c(-kLn2Lo), fma(n, c(-kLn2Hi), cl));
  Value* p = c(kExpPoly[5]);
  for (int i = 4; i >= 0; --i) p = fma(p, r, c(kExpPoly[i]));
  Value* y = fma(p, B.CreateFMul(r, r), B.CreateFAdd(r, c(1.0)));
  // 2^n as two factors 2^n1 · 2^n2, each a normal float built from its exponent bits.
  Value* ni = B.CreateSub(B.CreateBitCast(t, i32), B.CreateBitCast(magic, i32));
  Value* n1 = B.CreateAShr(ni, 1);
  Value* n2 = B.CreateSub(ni, n1);
  auto pow2 = [&](Value* e) { return B.CreateBitCast(B.CreateShl(B.CreateAdd(e, B.getInt32(127)), 23), f); };
  return B.CreateFMul(B.CreateFMul(y, pow2(n1)), pow2(n2));
}

}  // namespace tg::cpu
