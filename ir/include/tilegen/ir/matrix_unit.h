// Matrix-unit descriptions, held as data (after CuTe's MMA atoms and traits): one per instruction
// family and shape. The layout pass reads them to give fragments per-lane layouts; the
// interpreter executes ir::Mma from them; targets map a unit's name to their instruction.
//
// A description lists, for every lane of the group and every register slot of an operand, the
// (row, col) of the operand tile that slot holds. A is M×K, B is K×N, C is M×N (row, col in those).
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/dtype.h"

namespace tg {

struct MatrixUnit {
  struct Slot {
    int row, col;
  };
  std::string name;    // "mma_m16n8k16_f16_f32", "mfma_f32_16x16x16_f16", "coopmat_16x16x16_f16_f32"
  std::string family;  // "mma.sync", "wgmma", "mfma", "coopmat"
  int m = 0, n = 0, k = 0;
  int group_size = 32;  // lanes that perform one operation together
  // Issued by an Mma and completed by an mma_wait (ir::MmaSync; Hopper's wgmma.mma_async): A and
  // B are read from Shared tiles through descriptors; the B layout below is the interpreter's.
  bool async = false;
  DType a_type, b_type, c_type;
  // [lane * regs + r] → element; regs = size / group_size.
  std::vector<Slot> a_layout, b_layout, c_layout;
  int a_regs() const { return int(a_layout.size()) / group_size; }
  int b_regs() const { return int(b_layout.size()) / group_size; }
  int c_regs() const { return int(c_layout.size()) / group_size; }
  /// Every element of each operand is held by exactly one (lane, slot): throws tg::Error if not.
  void check() const;
};

/// The registry of descriptions. Core registers the CUDA mma.sync and wgmma, AMD MFMA and SPIR-V
/// cooperative-matrix families; a target plugin may add its own.
void register_matrix_unit(MatrixUnit unit);
/// nullptr when no description of that name exists.
const MatrixUnit* find_matrix_unit(const std::string& name);
std::vector<std::string> matrix_unit_names();

}  // namespace tg
