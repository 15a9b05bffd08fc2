// The built-in matrix-unit descriptions, generated at registration from the vendors' documented
// lane formulas. Each generator is the formula of the manual, written once; the tables are data.
//
// Conventions: A is M×K, B is K×N, C is M×N; a slot is (row, col) of that operand; slots are
// listed lane by lane, `regs` a lane ([lane * regs + r]).
#include <functional>
#include <string>

#include "tilegen/ir/matrix_unit.h"

namespace tg {

std::vector<MatrixUnit> builtin_matrix_units();

namespace {

using Slot = MatrixUnit::Slot;
using SlotFn = std::function<Slot(int lane, int reg)>;

std::vector<Slot> table(int lanes, int regs, const SlotFn& fn) {
  std::vector<Slot> out;
  out.reserve(std::size_t(lanes) * regs);
  for (int lane = 0; lane < lanes; ++lane)
    for (int r = 0; r < regs; ++r) out.push_back(fn(lane, r));
  return out;
}

MatrixUnit unit(std::string name, std::string family, int m, int n, int k, int group, DType a, DType b,
                DType c) {
  MatrixUnit u;
  u.name = std::move(name);
  u.family = std::move(family);
  u.m = m, u.n = n, u.k = k;
  u.group_size = group;
  u.a_type = a, u.b_type = b, u.c_type = c;
  return u;
}

// ---- CUDA mma.sync.aligned.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
// floating point type"). groupID = lane >> 2, threadID_in_group = lane % 4.
//   A (16×16, a0..a7):  row = groupID + 8·((i>>1)&1), col = 2·tid + (i&1) + 8·(i>>2)
//   B (16×8,  b0..b3):  row = 2·tid + (i&1) + 8·(i>>1), col = groupID
//   C (16×8,  c0..c3):  row = groupID + 8·(i>>1),       col = 2·tid + (i&1)
Slot mma_a(int lane, int i) {
  return {(lane >> 2) + 8 * ((i >> 1) & 1), (lane % 4) * 2 + (i & 1) + 8 * (i >> 2)};
}
Slot mma_b(int lane, int i) { return {(lane % 4) * 2 + (i & 1) + 8 * (i >> 1), lane >> 2}; }
Slot mma_c(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), (lane % 4) * 2 + (i & 1)}; }

MatrixUnit mma_m16n8k16(DType in) {
  MatrixUnit u =
      unit("mma_m16n8k16_" + std::string(in.name()) + "_f32", "mma.sync", 16, 8, 16, 32, in, in, f32);
  u.a_layout = table(32, 8, mma_a);
  u.b_layout = table(32, 4, mma_b);
  u.c_layout = table(32, 4, mma_c);
  return u;
}

// ---- CUDA mma.sync.aligned.m16n8k32 with 8-bit floats (e4m3, e5m2; sm_89 and later; PTX ISA,
// "Matrix Fragments for mma.m16n8k32"): four bytes a 32-bit register, the lower-numbered lowest.
//   A (16×32, a0..a15): row = groupID + 8·((i>>2)&1), col = 4·tid + (i&3) + 16·(i>>3)
//   B (32×8,  b0..b7):  row = 4·tid + (i&3) + 16·(i>>2),   col = groupID
//   C: as m16n8k16's.
MatrixUnit mma_m16n8k32(DType in) {
  MatrixUnit u =
      unit("mma_m16n8k32_" + std::string(in.name()) + "_f32", "mma.sync", 16, 8, 32, 32, in, in, f32);
  u.a_layout = table(32, 16, [](int lane, int i) {
    return Slot{(lane >> 2) + 8 * ((i >> 2) & 1), (lane % 4) * 4 + (i & 3) + 16 * (i >> 3)};
  });
  u.b_layout = table(32, 8, [](int lane, int i) {
    return Slot{(lane % 4) * 4 + (i & 3) + 16 * (i >> 2), lane >> 2};
  });
  u.c_layout = table(32, 4, mma_c);
  return u;
}

// ---- Hopper wgmma.mma_async.m64nNk16 (f16, bf16) and m64nNk32 (e4m3, e5m2) (PTX ISA, "Register
// Fragments and Shared Memory Matrix Layouts" for wgmma). A warpgroup of 128 threads; warp w =
// lane / 32 owns rows 16w .. 16w+15.
//   C/D (64×N, N/2 regs): within its warp, a thread repeats the m16n8 C pattern for every 8
//     columns: row = 16w + groupID + 8·((i>>1)&1), col = 8·(i>>2) + 2·tid + (i&1).
//   A (64×K): the register-sourced (RS) form, per warp the m16n8k16 A pattern (8 16-bit elements)
//     or, for 8-bit types, m16n8k32's (16 elements: row groupID + 8·((i>>2)&1), col 4·tid + (i&3)
//     + 16·(i>>3)).
//   B (K×N): hardware reads B from shared memory through a descriptor, so no lane owns it.
//     For interpretation we model it as registers: lane L holds row-major elements
//     L·regs .. L·regs + regs − 1 of the K×N tile. Targets must not read this as a hardware layout.
// The 8-bit forms read both operands K-major (no transposed descriptors).
MatrixUnit wgmma_m64nN(int n, DType in) {
  const int k = in.bits() == 8 ? 32 : 16;
  std::string name =
      "wgmma_m64n" + std::to_string(n) + "k" + std::to_string(k) + "_" + std::string(in.name()) + "_f32";
  MatrixUnit u = unit(name, "wgmma", 64, n, k, 128, in, in, f32);
  u.async = true;
  if (k == 16)
    u.a_layout = table(128, 8, [](int lane, int i) {
      Slot s = mma_a(lane % 32, i);
      return Slot{16 * (lane / 32) + s.row, s.col};
    });
  else
    u.a_layout = table(128, 16, [](int lane, int i) {
      int g = (lane % 32) >> 2, t = lane % 4;
      return Slot{16 * (lane / 32) + g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
    });
  int b_regs = k * n / 128;
  u.b_layout = table(128, b_regs, [n, b_regs](int lane, int r) {
    int e = lane * b_regs + r;
    return Slot{e / n, e % n};
  });
  u.c_layout = table(128, n / 2, [](int lane, int i) {
    int g = (lane % 32) >> 2, t = lane % 4;
    return Slot{16 * (lane / 32) + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)};
  });
  return u;
}

// ---- AMD CDNA MFMA, wave64 (AMD matrix instruction calculator / CDNA3 ISA, "Matrix fused
// multiply-add"). With b = k-values a lane holds (1 for f32, 4 for f16/bf16, 8 for fp8):
//   16x16xK: A lane L holds row L%16, k = b·⌊L/16⌋ + i;  B lane L holds col L%16, same k;
//            C lane L holds col L%16, rows 4·⌊L/16⌋ + i (i < 4).
//   32x32x8: A lane L holds row L%32, k = 4·⌊L/32⌋ + i;  B col L%32, same k;
//            C lane L holds col L%32, rows 8·⌊i/4⌋ + 4·⌊L/32⌋ + i%4 (i < 16).
MatrixUnit mfma_16x16(int k, DType in, const std::string& type_name) {
  std::string name = "mfma_f32_16x16x" + std::to_string(k) + "_" + type_name;
  MatrixUnit u = unit(name, "mfma", 16, 16, k, 64, in, in, f32);
  int per_lane = k / 4;  // 1 k-value for x4, 4 for x16, 8 for x32
  u.a_layout = table(64, per_lane, [per_lane](int l, int i) {
    return Slot{l % 16, per_lane * (l / 16) + i};
  });
  u.b_layout = table(64, per_lane, [per_lane](int l, int i) {
    return Slot{per_lane * (l / 16) + i, l % 16};
  });
  u.c_layout = table(64, 4, [](int l, int i) { return Slot{4 * (l / 16) + i, l % 16}; });
  return u;
}

MatrixUnit mfma_32x32x8(DType in, const std::string& type_name) {
  MatrixUnit u = unit("mfma_f32_32x32x8_" + type_name, "mfma", 32, 32, 8, 64, in, in, f32);
  u.a_layout = table(64, 4, [](int l, int i) { return Slot{l % 32, 4 * (l / 32) + i}; });
  u.b_layout = table(64, 4, [](int l, int i) { return Slot{4 * (l / 32) + i, l % 32}; });
  u.c_layout = table(64, 16, [](int l, int i) { return Slot{8 * (i / 4) + 4 * (l / 32) + i % 4, l % 32}; });
  return u;
}

// ---- SPIR-V KHR cooperative matrix, subgroup scope, 32 lanes. The real distribution is opaque
// (implementation-defined); targets must move these tiles with OpCooperativeMatrixLoad/Store, so
// the layout below is the interpreter's model only: lane L holds row-major elements
// L·regs .. L·regs + regs − 1 of each operand.
std::vector<Slot> row_major_over_lanes(int rows, int cols, int lanes) {
  int regs = rows * cols / lanes;
  return table(lanes, regs, [cols, regs](int l, int r) {
    int e = l * regs + r;
    return Slot{e / cols, e % cols};
  });
}

MatrixUnit coopmat(int k, DType in, DType acc) {
  std::string name =
      "coopmat_16x16x" + std::to_string(k) + "_" + std::string(in.name()) + "_" + std::string(acc.name());
  MatrixUnit u = unit(name, "coopmat", 16, 16, k, 32, in, in, acc);
  u.a_layout = row_major_over_lanes(16, k, 32);
  u.b_layout = row_major_over_lanes(k, 16, 32);
  u.c_layout = row_major_over_lanes(16, 16, 32);
  return u;
}

}  // namespace

std::vector<MatrixUnit> builtin_matrix_units() {
  std::vector<MatrixUnit> units;
  units.push_back(mma_m16n8k16(f16));
  units.push_back(mma_m16n8k16(bf16));
  units.push_back(mma_m16n8k32(fp8_e4m3));
  units.push_back(mma_m16n8k32(fp8_e5m2));
  for (int n : {64, 128, 256}) {
    units.push_back(wgmma_m64nN(n, f16));
    units.push_back(wgmma_m64nN(n, bf16));
    units.push_back(wgmma_m64nN(n, fp8_e4m3));
    units.push_back(wgmma_m64nN(n, fp8_e5m2));
  }
  units.push_back(mfma_16x16(16, f16, "f16"));
  units.push_back(mfma_16x16(16, bf16, "bf16"));  // gfx90a v_mfma_f32_16x16x16bf16_1k
  units.push_back(mfma_32x32x8(f16, "f16"));
  units.push_back(mfma_32x32x8(bf16, "bf16"));       // gfx90a v_mfma_f32_32x32x8bf16_1k
  units.push_back(mfma_16x16(32, fp8_e4m3, "fp8"));  // gfx942 v_mfma_f32_16x16x32_fp8_fp8
  units.push_back(mfma_16x16(4, f32, "f32"));        // v_mfma_f32_16x16x4f32: one k-value a lane
  units.push_back(coopmat(16, f16, f32));
  units.push_back(coopmat(16, f16, f16));
  units.push_back(coopmat(16, bf16, f32));
  units.push_back(coopmat(32, i8, i32));  // drivers report 16x16x32 for 8-bit integers
  return units;
}

}  // namespace tg
