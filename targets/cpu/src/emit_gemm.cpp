// gemm on the cpu: a register-blocked FMA micro-kernel on LLVM vector types.
//
//   gemm As, Bs -> Cf          (As f16[128, 32], Bs f16[32, 128], Cf f32[128, 128]; AVX2: VL = 8)
// becomes, with MR = 6 rows and NV = 2 vectors (NR = 16 columns) per micro-tile:
//   Bp = f32 copy of op(B) as K×N rows            (only when B is not f32 or is transposed)
//   P  = op(B) in panels [N/16][K][16]             ; each micro-tile streams one contiguous panel
//   for j0 in [0, 128) step 16 {                   ; a B panel stays in L1 over all rows
//     for i0 in [0, 126) step 6 {                  ; 12 accumulators <8 x float> in registers
//       acc[r][v] = Cf[i0 + r, j0 + 8v : +8]
//       for k in [0, 32) { b[v] = P[j0 / 16, k, 8v : +8]; a = splat(fpext As[i0 + r, k]);
//                          acc[r][v] = fma(a, b[v], acc[r][v]) }
//       Cf[i0 + r, j0 + 8v : +8] = acc[r][v]
//     }
//     rows 126, 127: the same with MR = 2
//   }
// Columns past the last whole vector (N % VL) take a scalar loop. The sum is in f32, rounded at
// every FMA (the interpreter sums in double: the samples' tolerances allow f32 accumulation).
#include <llvm/IR/Intrinsics.h>

#include <functional>

#include "emitter.h"

namespace tg::cpu {

using namespace ir;
using llvm::Value;

namespace {

/// A matrix operand: the region's flat offset and the strides of its last two dimensions.
struct Mat {
  Value* off;
  int64_t row_stride, rows, cols;
  DType t;
  Buffer buf;
};

int64_t extent(const Expr& e) { return *e.as_int(); }

}  // namespace

/// Whether the micro-kernel handles this gemm (f32 C, float A and B, constant extents);
/// the pipeline lowers the others to loops (lower_tile_ops' keep_gemm).
bool gemm_has_microkernel(const Gemm& g) {
  auto ok_in = [](DType t) { return t == f32 || t == f16 || t == bf16; };
  if (g.c.buffer->dtype != f32 || !ok_in(g.a.buffer->dtype) || !ok_in(g.b.buffer->dtype)) return false;
  for (const Region* r : {&g.a, &g.b, &g.c}) {
    if (r->extents.size() < 2 || r->buffer->scope == Scope::Global) return false;
    for (std::size_t d = 0; d < r->extents.size(); ++d) {
      auto e = r->extents[d].as_int();
      if (!e || *e < 1 || (d + 2 < r->extents.size() && *e != 1)) return false;
    }
    for (auto& s : r->buffer->shape)
      if (!s.as_int()) return false;
  }
  return true;
}

void Emitter::emit_gemm(const Gemm& g) {
  auto mat = [&](const Region& r) {
    std::size_t n = r.extents.size();
    int64_t last = *r.buffer->shape[n - 1].as_int();
    return Mat{flat_index(r.buffer, r.offsets),
               last,
               extent(r.extents[n - 2]),
               extent(r.extents[n - 1]),
               r.buffer->dtype,
               r.buffer};
  };
  Mat A = mat(g.a), Bm = mat(g.b), C = mat(g.c);
  const int64_t M = C.rows, N = C.cols, K = g.trans_a ? A.rows : A.cols;
  const int VL = opt.vector_bits / 32;
  auto* f32t = B.getFloatTy();
  auto* vty = llvm::FixedVectorType::get(f32t, unsigned(VL));
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());

  // op(B) as f32 K×N rows, unless B already is exactly that.
  bool pack = g.trans_b || Bm.t != f32;
  Value* bbase = base(Bm.buf);
  Value* boff = Bm.off;
  int64_t bstride = Bm.row_stride;
  if (pack) {
    Value* packed = entry.CreateAlloca(f32t, entry.getInt64(uint64_t(K * N)));
    llvm::cast<llvm::AllocaInst>(packed)->setAlignment(llvm::Align(64));
    loop(B.getInt64(0), B.getInt64(uint64_t(K)), nullptr, [&](Value* k) {
      loop(B.getInt64(0), B.getInt64(uint64_t(N)), loop_metadata(ForKind::Vectorized, nullptr),
           [&](Value* j) {
             Value* src = g.trans_b ? B.CreateAdd(B.CreateMul(j, B.getInt64(uint64_t(bstride))), k)
                                    : B.CreateAdd(B.CreateMul(k, B.getInt64(uint64_t(bstride))), j);
             Value* v = convert(load(Bm.buf, B.CreateAdd(boff, src)), Bm.t, f32);
             B.CreateStore(v, B.CreateInBoundsGEP(f32t, packed,
                                                  B.CreateAdd(B.CreateMul(k, B.getInt64(uint64_t(N))), j)));
           });
    });
    bbase = packed, boff = B.getInt64(0), bstride = N;
  }
  auto b_ptr = [&](Value* k, Value* j) {
    return B.CreateInBoundsGEP(
        f32t, bbase, B.CreateAdd(boff, B.CreateAdd(B.CreateMul(k, B.getInt64(uint64_t(bstride))), j)));
  };
  auto a_val = [&](Value* i, Value* k) {
    Value* idx = g.trans_a ? B.CreateAdd(B.CreateMul(k, B.getInt64(uint64_t(A.row_stride))), i)
                           : B.CreateAdd(B.CreateMul(i, B.getInt64(uint64_t(A.row_stride))), k);
    return convert(load(A.buf, B.CreateAdd(A.off, idx)), A.t, f32);
  };
  Value* cbase = base(C.buf);
  auto c_ptr = [&](Value* i, Value* j) {
    return B.CreateInBoundsGEP(
        f32t, cbase, B.CreateAdd(C.off, B.CreateAdd(B.CreateMul(i, B.getInt64(uint64_t(C.row_stride))), j)));
  };

  // One MR×(NV·VL) micro-tile at (i0, j0), accumulators in registers across the k loop.
  // panel(k, v): where vector v of B's row k starts for this micro-tile's columns.
  auto micro = [&](Value* i0, Value* j0, int mr, int nv, const std::function<Value*(Value*, int)>& panel) {
    std::vector<llvm::AllocaInst*> acc;
    for (int x = 0; x < mr * nv; ++x) acc.push_back(entry.CreateAlloca(vty));
    for (int r = 0; r < mr; ++r)
      for (int v = 0; v < nv; ++v) {
        Value* j = B.CreateAdd(j0, B.getInt64(uint64_t(v * VL)));
        Value* init = g.clear_c
                          ? llvm::ConstantAggregateZero::get(vty)
                          : static_cast<Value*>(B.CreateAlignedLoad(
                                vty, c_ptr(B.CreateAdd(i0, B.getInt64(uint64_t(r))), j), llvm::Align(4)));
        B.CreateStore(init, acc[size_t(r * nv + v)]);
      }
    loop(B.getInt64(0), B.getInt64(uint64_t(K)), nullptr, [&](Value* k) {
      std::vector<Value*> bv;
      for (int v = 0; v < nv; ++v) bv.push_back(B.CreateAlignedLoad(vty, panel(k, v), llvm::Align(4)));
      for (int r = 0; r < mr; ++r) {
        Value* a = B.CreateVectorSplat(unsigned(VL), a_val(B.CreateAdd(i0, B.getInt64(uint64_t(r))), k));
        for (int v = 0; v < nv; ++v) {
          auto* slot = acc[size_t(r * nv + v)];
          Value* c = B.CreateLoad(vty, slot);
          B.CreateStore(B.CreateIntrinsic(llvm::Intrinsic::fma, {vty}, {a, bv[size_t(v)], c}), slot);
        }
      }
    });
    for (int r = 0; r < mr; ++r)
      for (int v = 0; v < nv; ++v) {
        Value* j = B.CreateAdd(j0, B.getInt64(uint64_t(v * VL)));
        B.CreateAlignedStore(B.CreateLoad(vty, acc[size_t(r * nv + v)]),
                             c_ptr(B.CreateAdd(i0, B.getInt64(uint64_t(r))), j), llvm::Align(4));
      }
  };
  // Columns [j_lo, N) of rows [i_lo, i_hi), one element at a time.
  auto scalar_cols = [&](int64_t i_lo, int64_t i_hi, int64_t j_lo) {
    if (j_lo >= N || i_lo >= i_hi) return;
    loop(B.getInt64(uint64_t(i_lo)), B.getInt64(uint64_t(i_hi - i_lo)), nullptr, [&](Value* i) {
      loop(B.getInt64(uint64_t(j_lo)), B.getInt64(uint64_t(N - j_lo)), nullptr, [&](Value* j) {
        Value* p = c_ptr(i, j);
        llvm::AllocaInst* sum = entry.CreateAlloca(f32t);
        B.CreateStore(
            g.clear_c ? llvm::ConstantFP::get(f32t, 0.0) : static_cast<Value*>(B.CreateLoad(f32t, p)), sum);
        loop(B.getInt64(0), B.getInt64(uint64_t(K)), nullptr, [&](Value* k) {
          Value* b = B.CreateLoad(f32t, b_ptr(k, j));
          B.CreateStore(
              B.CreateIntrinsic(llvm::Intrinsic::fma, {f32t}, {a_val(i, k), b, B.CreateLoad(f32t, sum)}),
              sum);
        });
        B.CreateStore(B.CreateLoad(f32t, sum), p);
      });
    });
  };

  // Tile choice: as many accumulators as the register file holds (16 or 32 vector registers).
  int nv = VL >= 16 ? 4 : 2, mr = 6;
  if (VL >= 16 && N % (4 * VL) != 0) nv = 3, mr = 8;
  const int64_t NR = int64_t(nv) * VL;
  const int64_t n_main = N / NR * NR, n_vec = N / VL * VL;
  const int64_t m_main = M / mr * mr;
  // The whole panels of op(B), packed panel after panel as [N/NR][K][NR]: a micro-tile then
  // streams one contiguous block (row-major B with a power-of-two row stride would map a
  // panel's K rows onto a few L1 sets).
  Value* panels = nullptr;
  if (n_main > 0) {
    panels = entry.CreateAlloca(f32t, entry.getInt64(uint64_t(K * n_main)));
    llvm::cast<llvm::AllocaInst>(panels)->setAlignment(llvm::Align(64));
    loop(B.getInt64(0), B.getInt64(uint64_t(K)), nullptr, [&](Value* k) {
      loop(B.getInt64(0), B.getInt64(uint64_t(n_main)), loop_metadata(ForKind::Vectorized, nullptr),
           [&](Value* j) {
             Value *jb = B.CreateUDiv(j, B.getInt64(uint64_t(NR))),
                   *jj = B.CreateURem(j, B.getInt64(uint64_t(NR)));
             Value* at = B.CreateAdd(B.CreateMul(B.CreateAdd(B.CreateMul(jb, B.getInt64(uint64_t(K))), k),
                                                 B.getInt64(uint64_t(NR))),
                                     jj);
             B.CreateStore(B.CreateLoad(f32t, b_ptr(k, j)), B.CreateInBoundsGEP(f32t, panels, at));
           });
    });
  }
  auto rows = [&](Value* j0, int v, const std::function<Value*(Value*, int)>& panel) {
    if (m_main > 0)
      loop(B.getInt64(0), B.getInt64(uint64_t(m_main / mr)), nullptr,
           [&](Value* ib) { micro(B.CreateMul(ib, B.getInt64(uint64_t(mr))), j0, mr, v, panel); });
    if (M > m_main) micro(B.getInt64(uint64_t(m_main)), j0, int(M - m_main), v, panel);
  };
  if (n_main > 0)
    loop(B.getInt64(0), B.getInt64(uint64_t(n_main / NR)), nullptr, [&](Value* jb) {
      Value* start = B.CreateMul(jb, B.getInt64(uint64_t(K * NR)));
      rows(B.CreateMul(jb, B.getInt64(uint64_t(NR))), nv, [&](Value* k, int v) {
        return B.CreateInBoundsGEP(f32t, panels,
                                   B.CreateAdd(start, B.CreateAdd(B.CreateMul(k, B.getInt64(uint64_t(NR))),
                                                                  B.getInt64(uint64_t(v * VL)))));
      });
    });
  if (n_vec > n_main)
    rows(B.getInt64(uint64_t(n_main)), int((n_vec - n_main) / VL),
         [&](Value* k, int v) { return b_ptr(k, B.getInt64(uint64_t(n_main + v * VL))); });
  scalar_cols(0, M, n_vec);
}

}  // namespace tg::cpu
