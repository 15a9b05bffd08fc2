// gemm on the cpu: a register-blocked FMA micro-kernel on LLVM vector types.
//
//   gemm As, Bs -> Cf          (As f16[128, 32], Bs f16[32, 128], Cf f32[128, 128]; AVX2: VL = 8)
// becomes, with MR = 6 rows and NV = 2 vectors (NR = 16 columns) per micro-tile:
//   Aw = f32 copy of As, same layout               (only when A is not f32)
//   Bp = f32 copy of op(B) as K×N rows            (only when B is not f32 or is transposed),
//        rows an odd number of cache lines apart (N = 128: 144 floats), as emit_kernel pads
//        an f32 Bs: a 16-column strip's K rows then fall in distinct L1 sets
//   P  = op(B) in panels [N/16][K][16]             (only when B's rows are not so spread)
//   for j0 in [0, 128) step 16 {                   ; a B strip (or panel) stays in L1 over all rows
//     for i0 in [0, 126) step 6 {                  ; 12 accumulators <8 x float> in registers
//       acc[r][v] = Cf[i0 + r, j0 + 8v : +8]
//       for k in [0, 32) { b[v] = Bp[k, j0 + 8v : +8]; a = splat(Aw[i0 + r, k]);
//                          acc[r][v] = fma(a, b[v], acc[r][v]) }
//       Cf[i0 + r, j0 + 8v : +8] = acc[r][v]
//     }
//     rows 126, 127: the same with MR = 2
//   }
// Columns past the last whole vector (N % VL) take a scalar loop. The sum is in f32, rounded at
// every FMA (the interpreter sums in double: the samples' tolerances allow f32 accumulation).
//
// bf16 A and B on a CPU with avx512_bf16, on request (EmitOptions::bf16_dot), skip the widening:
// vdpbf16ps multiplies 16 pairs of bf16 products and adds both to 16 f32 lanes, two k steps at once:
//   Bq = op(B) as bf16 pairs [K/2][N'][2]: Bq[kp, j] = (B[2kp, j], B[2kp+1, j]), zero past K,
//        rows an odd number of cache lines apart
//   Aq = A as pairs [M][K/2] (only when A is transposed or K is odd: else A's own rows are pairs)
//   per k pair: b[v] = Bq[kp, j0 + 16v : +16] (32 bf16); a = splat(Aq[i0 + r, kp]) (one dword);
//               acc[r][v] = vdpbf16ps(acc[r][v], a, b[v])
// Half the k iterations, half the bytes of B per lane and no conversions; but on Sapphire Rapids
// the instruction issues at half the rate of vfmadd231ps (measured: both this kernel and oneDNN's
// avx512_core_bf16 one reach ~80 GFLOP/s a core, widening to f32 ~125), so it is not the default.
// The instruction treats bf16 denormals as zero and rounds its sum to nearest even.
//
// bf16 A and B on a CPU with AMX (EmitOptions::amx) use the same pairs in tile registers, all of
// one shape, 16 rows × 64 bytes: C in 16×16 f32 tiles, 2×2 of them per block with two A tiles
// (16 rows × 16 pairs) and two B tiles (16 pairs × 16 columns, straight from Bq), one tdpbf16ps
// per C tile and k step of 16 pairs. K is padded with zero pairs to whole steps (Bq; A packed too
// unless its rows are whole steps already), and the k steps are emitted unrolled (a gemm's K is
// the tile's, a constant), so no tile value crosses a basic block:
//   for each 32×32 block (edges: a 16-column or 16-row block; the last M % 16 rows in a zeroed
//   16-row copy of their C rows):
//     c[x][y] = tileloadd Cf (or tilezero)
//     for kp0 in [0, K/2) step 16 (unrolled): a[x] = tileloadd A rows; b[y] = tileloadd Bq rows;
//                                              c[x][y] = tdpbf16ps(c[x][y], a[x], b[y])
//     tilestored c[x][y] -> Cf
// One shape lets LLVM configure the tiles once per function (ldtilecfg at entry, tilerelease at
// exit); Linux must first grant the process the tile state (jit.cpp), or the first tile
// instruction raises SIGILL.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

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

/// Where vector v of op(B)'s row k starts for the current micro-tile's columns.
using PanelFn = std::function<Value*(Value* k, int v)>;

/// The emission of one gemm: operands, tile choice, packing, micro-tiles, edges.
class GemmEmitter {
 public:
  GemmEmitter(Emitter& e, const Gemm& g)
      : e_(e), B(e.B), g_(g), entry_(&entry_block(e), entry_block(e).begin()) {
    A_ = mat(g.a), Bm_ = mat(g.b), C_ = mat(g.c);
    M_ = C_.rows, N_ = C_.cols, K_ = g.trans_a ? A_.rows : A_.cols;
    const MicroTiling tiling = micro_tiling(g, e.opt.vector_bits);
    VL_ = tiling.vl, nv_ = tiling.nv, mr_ = tiling.mr;
    f32t_ = B.getFloatTy();
    vty_ = llvm::FixedVectorType::get(f32t_, unsigned(VL_));
    NR_ = tiling.nr();
    n_main_ = tiling.n_main(), n_vec_ = N_ / VL_ * VL_, m_main_ = tiling.m_main();
    dot_ = e.opt.bf16_dot && VL_ == 16 && A_.t == bf16 && Bm_.t == bf16;
    amx_ = gemm_uses_amx(g, e.opt);
  }

  void run() {
    // The hints run before each step, and the steps are this kernel's whole micro-tiles.
    const int64_t steps = gemm_steps(g_, e_.opt);
    if (g_.each_step && g_.steps != steps)
      throw Error("cpu: the gemm's hints are interleaved in steps(" + std::to_string(g_.steps) +
                      ") but the micro-kernel carries this gemm out in " + std::to_string(steps) +
                      " steps here (micro_kernel.h); run insert_prefetches for this CPU",
                  g_.loc);
    if (amx_) {
      run_amx();
      return;
    }
    if (dot_) {
      run_dot();
      return;
    }
    widen_a();
    pack_rows();
    pack_panels();
    if (n_main_ > 0)
      e_.loop(i64(0), i64(n_main_ / NR_), nullptr, [&](Value* jb) {
        Value* j0 = B.CreateMul(jb, i64(NR_));
        if (!panels_) {
          rows(j0, nv_, [&](Value* k, int v) { return b_ptr(k, B.CreateAdd(j0, i64(v * VL_))); });
          return;
        }
        Value* start = B.CreateMul(jb, i64(K_ * NR_));
        rows(j0, nv_, [&](Value* k, int v) {
          return B.CreateInBoundsGEP(f32t_, panels_,
                                     B.CreateAdd(start, B.CreateAdd(B.CreateMul(k, i64(NR_)), i64(v * VL_))));
        });
      });
    if (n_vec_ > n_main_)
      rows(i64(n_main_), int((n_vec_ - n_main_) / VL_),
           [&](Value* k, int v) { return b_ptr(k, i64(n_main_ + v * VL_)); });
    scalar_cols(n_vec_);
  }

 private:
  static llvm::BasicBlock& entry_block(Emitter& e) {
    return e.B.GetInsertBlock()->getParent()->getEntryBlock();
  }
  Value* i64(int64_t v) { return B.getInt64(uint64_t(v)); }

  Mat mat(const Region& r) {
    std::size_t n = r.extents.size();
    return Mat{e_.flat_index(r.buffer, r.offsets),
               e_.strides(r.buffer)[n - 2],
               extent(r.extents[n - 2]),
               extent(r.extents[n - 1]),
               r.buffer->dtype,
               r.buffer};
  }

  Value* scratch(int64_t floats) {
    auto* a = entry_.CreateAlloca(f32t_, entry_.getInt64(uint64_t(floats)));
    a->setAlignment(llvm::Align(64));
    return a;
  }

  // A narrower than f32 (f16, bf16, e4m3, e5m2) as an f32 copy in the same layout, so that the micro-kernel
  // broadcasts with one vbroadcastss per row instead of a load, a shift (bf16) or vcvtph2ps
  // (f16), a move and a shuffle; the conversion loop is contiguous and vectorises.
  void widen_a() {
    abase_ = nullptr;
    if (A_.t == f32) return;
    const int64_t rows = g_.trans_a ? K_ : M_, cols = g_.trans_a ? M_ : K_;
    Value* wide = scratch(rows * cols);
    e_.loop(i64(0), i64(rows), nullptr, [&](Value* r) {
      e_.loop(i64(0), i64(cols), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* c) {
        Value* src = B.CreateAdd(A_.off, B.CreateAdd(B.CreateMul(r, i64(A_.row_stride)), c));
        Value* v = e_.convert(e_.load(A_.buf, src), A_.t, f32);
        B.CreateStore(v, B.CreateInBoundsGEP(f32t_, wide, B.CreateAdd(B.CreateMul(r, i64(cols)), c)));
      });
    });
    abase_ = wide, astride_ = cols;
  }

  // op(B) as f32 K×N rows, unless B already is exactly that.
  void pack_rows() {
    bbase_ = e_.base(Bm_.buf), boff_ = Bm_.off, bstride_ = Bm_.row_stride;
    if (!g_.trans_b && Bm_.t == f32) return;
    const int64_t stride = spread_stride(N_);
    Value* packed = scratch(K_ * stride);
    e_.loop(i64(0), i64(K_), nullptr, [&](Value* k) {
      e_.loop(i64(0), i64(N_), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* j) {
        Value* src = g_.trans_b ? B.CreateAdd(B.CreateMul(j, i64(bstride_)), k)
                                : B.CreateAdd(B.CreateMul(k, i64(bstride_)), j);
        Value* v = e_.convert(e_.load(Bm_.buf, B.CreateAdd(boff_, src)), Bm_.t, f32);
        B.CreateStore(v, B.CreateInBoundsGEP(f32t_, packed, B.CreateAdd(B.CreateMul(k, i64(stride)), j)));
      });
    });
    bbase_ = packed, boff_ = i64(0), bstride_ = stride;
  }

  // A row stride of at least n floats whose rows start on cache lines and spread over every L1
  // set: an odd number of 64-byte lines (576 bytes for 128 floats, not 512).
  static int64_t spread_stride(int64_t n) {
    int64_t lines = (n + 15) / 16;
    return (lines % 2 ? lines : lines + 1) * 16;
  }
  bool rows_spread() const { return bstride_ % 16 == 0 && (bstride_ / 16) % 2 == 1; }

  // The whole panels of op(B), packed panel after panel as [N/NR][K][NR]: a micro-tile then
  // streams one contiguous block (row-major B with a power-of-two row stride would map a
  // panel's K rows onto a few L1 sets).
  void pack_panels() {
    if (n_main_ == 0 || rows_spread()) return;  // the micro-kernel streams B's rows in place
    panels_ = scratch(K_ * n_main_);
    e_.loop(i64(0), i64(K_), nullptr, [&](Value* k) {
      e_.loop(i64(0), i64(n_main_), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* j) {
        Value *jb = B.CreateUDiv(j, i64(NR_)), *jj = B.CreateURem(j, i64(NR_));
        Value* at = B.CreateAdd(B.CreateMul(B.CreateAdd(B.CreateMul(jb, i64(K_)), k), i64(NR_)), jj);
        B.CreateStore(B.CreateLoad(f32t_, b_ptr(k, j)), B.CreateInBoundsGEP(f32t_, panels_, at));
      });
    });
  }

  Value* b_ptr(Value* k, Value* j) {
    return B.CreateInBoundsGEP(f32t_, bbase_,
                               B.CreateAdd(boff_, B.CreateAdd(B.CreateMul(k, i64(bstride_)), j)));
  }
  // op(B)[k, j] as f32: from the f32 rows, or converted from B itself (bbase_ null).
  Value* b_val(Value* k, Value* j) {
    if (bbase_) return B.CreateLoad(f32t_, b_ptr(k, j));
    Value* src = g_.trans_b ? B.CreateAdd(B.CreateMul(j, i64(Bm_.row_stride)), k)
                            : B.CreateAdd(B.CreateMul(k, i64(Bm_.row_stride)), j);
    return e_.convert(e_.load(Bm_.buf, B.CreateAdd(Bm_.off, src)), Bm_.t, f32);
  }
  Value* a_val(Value* i, Value* k) {
    const int64_t stride = abase_ ? astride_ : A_.row_stride;
    Value* idx = g_.trans_a ? B.CreateAdd(B.CreateMul(k, i64(stride)), i)
                            : B.CreateAdd(B.CreateMul(i, i64(stride)), k);
    if (abase_) return B.CreateLoad(f32t_, B.CreateInBoundsGEP(f32t_, abase_, idx));
    return e_.convert(e_.load(A_.buf, B.CreateAdd(A_.off, idx)), A_.t, f32);
  }
  Value* c_ptr(Value* i, Value* j) {
    return B.CreateInBoundsGEP(f32t_, e_.base(C_.buf),
                               B.CreateAdd(C_.off, B.CreateAdd(B.CreateMul(i, i64(C_.row_stride)), j)));
  }

  // Every row of one column strip: whole MR-row micro-tiles, then the remaining rows.
  void rows(Value* j0, int nv, const PanelFn& panel) {
    rows_of(j0, nv, [&](Value* i0, int mr) { micro(i0, j0, mr, nv, panel); });
  }
  void rows_of(Value* j0, int nv, const std::function<void(Value* i0, int mr)>& tile) {
    if (m_main_ > 0)
      e_.loop(i64(0), i64(m_main_ / mr_), nullptr, [&](Value* ib) {
        // Whole micro-tiles of whole strips are the gemm's steps: its hints run before each.
        if (nv == nv_ && g_.each_step)
          e_.gemm_hints(g_, B.CreateAdd(B.CreateMul(B.CreateUDiv(j0, i64(NR_)), i64(m_main_ / mr_)), ib));
        tile(B.CreateMul(ib, i64(mr_)), mr_);
      });
    if (M_ > m_main_) tile(i64(m_main_), int(M_ - m_main_));
  }

  // ---- bf16 pairs and vdpbf16ps (the header's second scheme)

  void run_dot() {
    kp_ = (K_ + 1) / 2;
    pack_pairs_b();
    pack_pairs_a();
    if (n_main_ > 0)
      e_.loop(i64(0), i64(n_main_ / NR_), nullptr, [&](Value* jb) {
        Value* j0 = B.CreateMul(jb, i64(NR_));
        rows_of(j0, nv_, [&](Value* i0, int mr) { micro_dot(i0, j0, mr, nv_); });
      });
    if (n_vec_ > n_main_)
      rows_of(i64(n_main_), int((n_vec_ - n_main_) / VL_),
              [&](Value* i0, int mr) { micro_dot(i0, i64(n_main_), mr, int((n_vec_ - n_main_) / VL_)); });
    bbase_ = nullptr;  // the scalar columns read A and B themselves, converting
    scalar_cols(n_vec_);
  }

  // Element (r, c) of op(m), m stored row-major (transposed: m[c, r]), as its raw bf16 bits
  // zero-extended to i32.
  Value* bits(const Mat& m, bool trans, Value* r, Value* c) {
    Value* src = trans ? B.CreateAdd(B.CreateMul(c, i64(m.row_stride)), r) : B.CreateAdd(B.CreateMul(r, i64(m.row_stride)), c);
    auto* ld = B.CreateLoad(B.getInt16Ty(), B.CreateInBoundsGEP(B.getInt16Ty(), e_.base(m.buf), B.CreateAdd(m.off, src)));
    e_.tag_access(ld);
    return B.CreateZExt(ld, B.getInt32Ty());
  }
  Value* b_bits(Value* k, Value* j) { return bits(Bm_, g_.trans_b, k, j); }
  Value* a_bits(Value* i, Value* k) { return bits(A_, g_.trans_a, i, k); }
  // lo | hi << 16: the pair as vdpbf16ps reads it (element 2i in the low half of dword i).
  Value* pair(Value* lo, Value* hi) { return B.CreateOr(lo, B.CreateShl(hi, 16)); }

  // Bq[kp, j] for j < n_vec_, kp < ceil(K/2); the odd K's last pair has a zero high half, and
  // pair rows from ceil(K/2) to `rows` are zero.
  void pack_pairs_b(int64_t rows = 0) {
    if (n_vec_ == 0) return;
    pstride_ = spread_stride(n_vec_);
    rows = std::max(rows, kp_);
    bq_ = scratch(rows * pstride_);
    if (rows > kp_)
      B.CreateMemSet(B.CreateInBoundsGEP(B.getInt32Ty(), bq_, i64(kp_ * pstride_)), B.getInt8(0),
                     i64((rows - kp_) * pstride_ * 4), llvm::MaybeAlign(4));
    auto fill = [&](Value* kp, bool last_odd) {
      e_.loop(i64(0), i64(n_vec_), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* j) {
        Value* k = B.CreateMul(kp, i64(2));
        Value* lo = b_bits(k, j);
        Value* v = last_odd ? lo : pair(lo, b_bits(B.CreateAdd(k, i64(1)), j));
        B.CreateStore(v, B.CreateInBoundsGEP(B.getInt32Ty(), bq_, B.CreateAdd(B.CreateMul(kp, i64(pstride_)), j)));
      });
    };
    e_.loop(i64(0), i64(K_ / 2), nullptr, [&](Value* kp) { fill(kp, false); });
    if (K_ % 2) fill(i64(K_ / 2), true);
  }

  // A's rows already are pairs when A is not transposed and K is even (and `in_place_ok`); else
  // Aq = [rows][stride] dwords, its first M rows × ceil(K/2) pairs A's, the rest zero.
  void pack_pairs_a(int64_t rows = 0, int64_t stride = 0, bool in_place_ok = true) {
    aq_ = nullptr;
    if (!g_.trans_a && K_ % 2 == 0 && in_place_ok) return;
    rows = std::max(rows, M_), aq_stride_ = std::max(stride, kp_);
    aq_ = scratch(rows * aq_stride_);
    if (rows > M_ || aq_stride_ > kp_)
      B.CreateMemSet(aq_, B.getInt8(0), i64(rows * aq_stride_ * 4), llvm::MaybeAlign(64));
    e_.loop(i64(0), i64(M_), nullptr, [&](Value* i) {
      auto fill = [&](Value* kp, bool last_odd) {
        Value* k = B.CreateMul(kp, i64(2));
        Value* lo = a_bits(i, k);
        Value* v = last_odd ? lo : pair(lo, a_bits(i, B.CreateAdd(k, i64(1))));
        B.CreateStore(v, B.CreateInBoundsGEP(B.getInt32Ty(), aq_, B.CreateAdd(B.CreateMul(i, i64(aq_stride_)), kp)));
      };
      e_.loop(i64(0), i64(K_ / 2), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* kp) { fill(kp, false); });
      if (K_ % 2) fill(i64(K_ / 2), true);
    });
  }

  // The dword holding A[i, 2kp] and A[i, 2kp + 1].
  Value* a_pair(Value* i, Value* kp) {
    if (aq_)
      return B.CreateLoad(B.getInt32Ty(), B.CreateInBoundsGEP(B.getInt32Ty(), aq_, B.CreateAdd(B.CreateMul(i, i64(aq_stride_)), kp)));
    Value* at = B.CreateAdd(A_.off, B.CreateAdd(B.CreateMul(i, i64(A_.row_stride)), B.CreateMul(kp, i64(2))));
    return B.CreateAlignedLoad(B.getInt32Ty(), B.CreateInBoundsGEP(B.getInt16Ty(), e_.base(A_.buf), at), llvm::Align(2));
  }

  // A micro-tile's MR×NV vector accumulators at (i0, j0), from C (or zero when the gemm clears
  // it): allocas of vectors that mem2reg turns into loop phis; close_acc stores them back.
  std::vector<llvm::AllocaInst*> open_acc(Value* i0, Value* j0, int mr, int nv) {
    std::vector<llvm::AllocaInst*> acc;
    for (int r = 0; r < mr; ++r)
      for (int v = 0; v < nv; ++v) {
        acc.push_back(entry_.CreateAlloca(vty_));
        Value* init = g_.clear_c ? llvm::ConstantAggregateZero::get(vty_)
                                 : static_cast<Value*>(B.CreateAlignedLoad(vty_, acc_ptr(i0, j0, r, v), llvm::Align(4)));
        B.CreateStore(init, acc.back());
      }
    return acc;
  }
  void close_acc(const std::vector<llvm::AllocaInst*>& acc, Value* i0, Value* j0, int mr, int nv) {
    for (int r = 0; r < mr; ++r)
      for (int v = 0; v < nv; ++v)
        B.CreateAlignedStore(B.CreateLoad(vty_, acc[size_t(r * nv + v)]), acc_ptr(i0, j0, r, v), llvm::Align(4));
  }
  Value* acc_ptr(Value* i0, Value* j0, int r, int v) {
    return c_ptr(B.CreateAdd(i0, i64(r)), B.CreateAdd(j0, i64(v * VL_)));
  }

  // One MR×(NV·16) micro-tile at (i0, j0) on bf16 pairs: the accumulators stay in registers.
  void micro_dot(Value* i0, Value* j0, int mr, int nv) {
    llvm::Function* dp = llvm::Intrinsic::getDeclaration(&e_.mod, llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512);
    llvm::Type* pairs_t = dp->getFunctionType()->getParamType(1);  // 32 bf16 (LLVM 19: <32 x bfloat>)
    std::vector<llvm::AllocaInst*> acc = open_acc(i0, j0, mr, nv);
    e_.loop(i64(0), i64(kp_), nullptr, [&](Value* kp) {
      std::vector<Value*> bv;
      for (int v = 0; v < nv; ++v) {
        Value* at = B.CreateAdd(B.CreateMul(kp, i64(pstride_)), B.CreateAdd(j0, i64(v * VL_)));
        bv.push_back(B.CreateAlignedLoad(pairs_t, B.CreateInBoundsGEP(B.getInt32Ty(), bq_, at), llvm::Align(4)));
      }
      for (int r = 0; r < mr; ++r) {
        Value* a = B.CreateBitCast(B.CreateVectorSplat(16, a_pair(B.CreateAdd(i0, i64(r)), kp)), pairs_t);
        for (int v = 0; v < nv; ++v) {
          auto* slot = acc[size_t(r * nv + v)];
          B.CreateStore(B.CreateCall(dp, {B.CreateLoad(vty_, slot), a, bv[size_t(v)]}), slot);
        }
      }
    });
    close_acc(acc, i0, j0, mr, nv);
  }

  // One MR×(NV·VL) micro-tile at (i0, j0), its accumulators in registers across the k loop.
  void micro(Value* i0, Value* j0, int mr, int nv, const PanelFn& panel) {
    std::vector<llvm::AllocaInst*> acc = open_acc(i0, j0, mr, nv);
    e_.loop(i64(0), i64(K_), nullptr, [&](Value* k) {
      std::vector<Value*> bv;
      for (int v = 0; v < nv; ++v) bv.push_back(B.CreateAlignedLoad(vty_, panel(k, v), llvm::Align(4)));
      for (int r = 0; r < mr; ++r) {
        Value* a = B.CreateVectorSplat(unsigned(VL_), a_val(B.CreateAdd(i0, i64(r)), k));
        for (int v = 0; v < nv; ++v) {
          auto* slot = acc[size_t(r * nv + v)];
          B.CreateStore(
              B.CreateIntrinsic(llvm::Intrinsic::fma, {vty_}, {a, bv[size_t(v)], B.CreateLoad(vty_, slot)}),
              slot);
        }
      }
    });
    close_acc(acc, i0, j0, mr, nv);
  }

  // ---- AMX tiles (the header's third scheme)

  // Every tile has one shape, 16 rows × 64 bytes (16 f32, 16 bf16 pairs), so LLVM configures the
  // tile registers once: K is padded with zero pairs to a multiple of 16 pairs (in Bq and, when
  // packed, Aq), and the last M % 16 rows go through a 16-row copy of their C rows.
  void run_amx() {
    kp_ = (K_ + 1) / 2;
    const int64_t kp16 = (kp_ + 15) / 16 * 16;
    pack_pairs_b(kp16);
    pack_pairs_a((M_ + 15) / 16 * 16, kp16, K_ % 32 == 0 && M_ % 16 == 0);
    const int64_t ct = n_vec_ / 16, mt = M_ / 16, tr = M_ % 16;
    auto on_c = [&](Value* i, Value* j) { return c_ptr(i, j); };
    // The row tiles of a column block: pairs of 16-row tiles in a loop, an odd one, the M % 16 rows.
    auto row_groups = [&](Value* j0, int ncols) {
      if (mt >= 2)
        e_.loop(i64(0), i64(mt / 2), nullptr, [&](Value* ib) {
          amx_block(B.CreateMul(ib, i64(32)), 2, j0, ncols, on_c, C_.row_stride);
        });
      if (mt % 2) amx_block(i64(mt / 2 * 32), 1, j0, ncols, on_c, C_.row_stride);
      if (tr) amx_tail_rows(i64(mt * 16), tr, j0, ncols);
    };
    if (ct >= 2)
      e_.loop(i64(0), i64(ct / 2), nullptr, [&](Value* jb) { row_groups(B.CreateMul(jb, i64(32)), 2); });
    if (ct % 2) row_groups(i64(ct / 2 * 32), 1);
    bbase_ = nullptr;
    scalar_cols(n_vec_);
  }

  using CPtr = std::function<Value*(Value* i, Value* j)>;

  // C rows [i0, i0 + 16·nrt) × columns [j0, j0 + 16·ncols) in tiles, over all of K; C's element
  // (i, j) at cptr(i, j), rows cstride floats apart.
  void amx_block(Value* i0, int nrt, Value* j0, int ncols, const CPtr& cptr, int64_t cstride) {
    auto intr = [&](llvm::Intrinsic::ID id) { return llvm::Intrinsic::getDeclaration(&e_.mod, id); };
    llvm::Function *load = intr(llvm::Intrinsic::x86_tileloadd64_internal),
                   *store = intr(llvm::Intrinsic::x86_tilestored64_internal),
                   *zero = intr(llvm::Intrinsic::x86_tilezero_internal),
                   *dp = intr(llvm::Intrinsic::x86_tdpbf16ps_internal);
    Value *r16 = B.getInt16(16), *b64 = B.getInt16(64);
    std::vector<Value*> c, row0;
    for (int x = 0; x < nrt; ++x) row0.push_back(B.CreateAdd(i0, i64(int64_t(x) * 16)));
    for (int x = 0; x < nrt; ++x)
      for (int y = 0; y < ncols; ++y)
        c.push_back(g_.clear_c ? B.CreateCall(zero, {r16, b64})
                               : B.CreateCall(load, {r16, b64, cptr(row0[size_t(x)], B.CreateAdd(j0, i64(y * 16))),
                                                     i64(cstride * 4)}));
    for (int64_t p0 = 0; p0 < kp_; p0 += 16) {
      std::vector<Value*> a, b;
      for (int x = 0; x < nrt; ++x) {
        Value *ptr, *stride;
        if (aq_) {
          ptr = B.CreateInBoundsGEP(B.getInt32Ty(), aq_, B.CreateAdd(B.CreateMul(row0[size_t(x)], i64(aq_stride_)), i64(p0)));
          stride = i64(aq_stride_ * 4);
        } else {
          Value* at = B.CreateAdd(A_.off, B.CreateAdd(B.CreateMul(row0[size_t(x)], i64(A_.row_stride)), i64(2 * p0)));
          ptr = B.CreateInBoundsGEP(B.getInt16Ty(), e_.base(A_.buf), at);
          stride = i64(A_.row_stride * 2);
        }
        a.push_back(B.CreateCall(load, {r16, b64, ptr, stride}));
      }
      for (int y = 0; y < ncols; ++y) {
        Value* at = B.CreateAdd(i64(p0 * pstride_), B.CreateAdd(j0, i64(y * 16)));
        b.push_back(B.CreateCall(load, {r16, b64, B.CreateInBoundsGEP(B.getInt32Ty(), bq_, at), i64(pstride_ * 4)}));
      }
      for (int x = 0; x < nrt; ++x)
        for (int y = 0; y < ncols; ++y) {
          Value*& acc = c[size_t(x * ncols + y)];
          acc = B.CreateCall(dp, {r16, b64, b64, acc, a[size_t(x)], b[size_t(y)]});
        }
    }
    for (int x = 0; x < nrt; ++x)
      for (int y = 0; y < ncols; ++y)
        B.CreateCall(store, {r16, b64, cptr(row0[size_t(x)], B.CreateAdd(j0, i64(y * 16))), i64(cstride * 4),
                             c[size_t(x * ncols + y)]});
  }

  // The last rows (fewer than 16) of C through a 16-row copy: zero rows below them, so the tile
  // computes on Aq's zero rows and nothing past C is read or written.
  void amx_tail_rows(Value* i0, int64_t rows, Value* j0, int ncols) {
    const int64_t w = 16 * ncols;
    if (!ct_) ct_ = scratch(16 * 32);
    B.CreateMemSet(ct_, B.getInt8(0), i64(16 * w * 4), llvm::MaybeAlign(64));
    auto at = [&](Value* r, Value* j) { return B.CreateInBoundsGEP(f32t_, ct_, B.CreateAdd(B.CreateMul(r, i64(w)), j)); };
    auto copy = [&](bool in) {
      e_.loop(i64(0), i64(rows), nullptr, [&](Value* r) {
        e_.loop(i64(0), i64(w), e_.loop_metadata(ForKind::Vectorized, nullptr), [&](Value* j) {
          Value* c = c_ptr(B.CreateAdd(i0, r), B.CreateAdd(j0, j));
          if (in)
            B.CreateStore(B.CreateLoad(f32t_, c), at(r, j));
          else
            B.CreateStore(B.CreateLoad(f32t_, at(r, j)), c);
        });
      });
    };
    if (!g_.clear_c) copy(true);
    amx_block(i0, 1, j0, ncols, [&](Value* i, Value* j) { return at(B.CreateSub(i, i0), B.CreateSub(j, j0)); }, w);
    copy(false);
  }

  // Columns [j_lo, N) of every row, one element at a time.
  void scalar_cols(int64_t j_lo) {
    if (j_lo >= N_) return;
    e_.loop(i64(0), i64(M_), nullptr, [&](Value* i) {
      e_.loop(i64(j_lo), i64(N_ - j_lo), nullptr, [&](Value* j) {
        Value* p = c_ptr(i, j);
        llvm::AllocaInst* sum = entry_.CreateAlloca(f32t_);
        B.CreateStore(
            g_.clear_c ? llvm::ConstantFP::get(f32t_, 0.0) : static_cast<Value*>(B.CreateLoad(f32t_, p)),
            sum);
        e_.loop(i64(0), i64(K_), nullptr, [&](Value* k) {
          Value* b = b_val(k, j);
          B.CreateStore(
              B.CreateIntrinsic(llvm::Intrinsic::fma, {f32t_}, {a_val(i, k), b, B.CreateLoad(f32t_, sum)}),
              sum);
        });
        B.CreateStore(B.CreateLoad(f32t_, sum), p);
      });
    });
  }

  Emitter& e_;
  llvm::IRBuilder<>& B;
  const Gemm& g_;
  llvm::IRBuilder<> entry_;  // allocas go to the function's entry block
  Mat A_, Bm_, C_;
  int64_t M_ = 0, N_ = 0, K_ = 0, NR_ = 0, n_main_ = 0, n_vec_ = 0, m_main_ = 0;
  int VL_ = 8, nv_ = 2, mr_ = 6;
  llvm::Type* f32t_ = nullptr;
  llvm::FixedVectorType* vty_ = nullptr;
  Value *bbase_ = nullptr, *boff_ = nullptr, *panels_ = nullptr;
  int64_t bstride_ = 0;
  Value* abase_ = nullptr;  // A widened to f32 (widen_a), or nullptr: read A_ itself
  int64_t astride_ = 0;
  bool dot_ = false;                           // bf16 pairs and vdpbf16ps (run_dot)
  bool amx_ = false;                           // bf16 pairs in AMX tiles (run_amx)
  Value *bq_ = nullptr, *aq_ = nullptr;        // the pair copies of op(B) and A (aq_: when needed)
  int64_t kp_ = 0, pstride_ = 0;               // k pairs; Bq's row stride in dwords
  int64_t aq_stride_ = 0;                      // Aq's row stride in dwords
  Value* ct_ = nullptr;                        // AMX: 16 rows of C for the last M % 16 rows
};

}  // namespace

MicroTiling micro_tiling(const Gemm& g, int vector_bits) {
  MicroTiling t;
  const std::size_t n = g.c.extents.size();
  t.m = extent(g.c.extents[n - 2]), t.n = extent(g.c.extents[n - 1]);
  t.vl = vector_bits / 32;
  // As many accumulators as the register file holds (16 or 32 vector registers).
  t.nv = t.vl >= 16 ? 4 : 2, t.mr = 6;
  if (t.vl >= 16 && t.n % (4 * t.vl) != 0) t.nv = 3, t.mr = 8;
  return t;
}

bool gemm_uses_amx(const Gemm& g, const EmitOptions& opt) {
  return opt.amx && opt.vector_bits / 32 == 16 && g.a.buffer->dtype == bf16 && g.b.buffer->dtype == bf16;
}

int64_t gemm_steps(const Gemm& g, const EmitOptions& opt) {
  if (!gemm_has_microkernel(g) || gemm_uses_amx(g, opt)) return 0;
  return micro_tiling(g, opt.vector_bits).whole_tiles();
}

/// Whether the micro-kernel handles this gemm (f32 C, float A and B, constant extents);
/// the pipeline lowers the others to loops (lower_tile_ops' keep_gemm).
bool gemm_has_microkernel(const Gemm& g) {
  auto ok_in = [](DType t) { return t == f32 || t == f16 || t == bf16 || t == fp8_e4m3 || t == fp8_e5m2; };
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

void Emitter::emit_gemm(const Gemm& g) { GemmEmitter(*this, g).run(); }

}  // namespace tg::cpu
