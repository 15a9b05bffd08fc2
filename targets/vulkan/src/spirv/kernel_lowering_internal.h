// One kernel's lowering, shared by kernel_lowering.cpp (statements, buffers), lower_expr.cpp
// (expressions, conversions, element access) and coopmat_lowering.cpp (Mma).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spirv/kernel_lowering.h"
#include "tile_storage.h"
#include "tilegen/ir/matrix_unit.h"

namespace tg::vulkan {

class KernelLowering {
 public:
  KernelLowering(ModuleLowering& mod, const ir::Kernel& k) : M(mod), m(mod.m), k_(k) {}
  /// Emits the entry point's function and returns its id; adds the Workgroup variables it
  /// declares to `interface`.
  uint32_t lower(uint32_t function_type, std::vector<uint32_t>* interface);

  // ---- expressions (lower_expr.cpp)
  uint32_t expr(const Expr& e);
  /// value converted from one dtype to another, with the interpreter's semantics.
  uint32_t convert(uint32_t value, DType from, DType to, const SourceLoc& loc);
  /// A float value (in f32/f64) rounded to the format t (f16, bf16); others unchanged.
  uint32_t round_to(DType t, uint32_t value, const SourceLoc& loc);
  /// An integer value wrapped to t's width (i8, u8, i16, int4, uint4); others unchanged.
  uint32_t wrap_to(DType t, uint32_t value);
  uint32_t load_element(const BufferStorage& b, const std::vector<Expr>& indices, const SourceLoc& loc);
  void store_element(const BufferStorage& b, const std::vector<Expr>& indices, uint32_t value,
                     const SourceLoc& loc);
  /// Pointer to the stored element at a flat index (value id of i32/i64 type).
  uint32_t element_pointer(const BufferStorage& b, uint32_t flat);
  uint32_t flat_index(const BufferStorage& b, const std::vector<Expr>& indices);
  uint32_t memory_operand(const BufferStorage& b) const;
  const BufferStorage& storage_of(const ir::BufferNode* b, const SourceLoc& loc);
  uint32_t glsl(uint32_t result_type, uint32_t inst, const std::vector<uint32_t>& args);
  uint32_t c_i32(int64_t v) { return m.constant_int(M.t_i32, v); }
  uint32_t c_f32(double v) { return m.constant_float(M.t_f32, v); }

  // ---- 16-byte copies (vector_copy.cpp)
  /// The Shared tiles and Local registers to hold in the Vector form (tile_storage.h), where
  /// vector copies are on.
  std::set<const ir::BufferNode*> plan_vector_tiles() const;
  /// Whether every group copy names the Local registers b by a constant index.
  bool constant_registers(const ir::BufferNode* b) const;
  /// Emits a group copy between a Narrow tensor and Vector-form buffers as one uvec4 load and
  /// store; false, emitting nothing, otherwise.
  bool vector_copy(const ir::For& op);
  /// &b[flat / 8] as a pointer to uvec4 (flat: an i32 or i64 value, a multiple of 8).
  uint32_t vector_pointer(const BufferStorage& b, uint32_t flat);
  /// The uvec4 at element 0's indices of a group copy's side: a register variable, or a pointer.
  uint32_t vector_pointer_at(const BufferStorage& b, const std::vector<Expr>& index);
  uint32_t vector_element(const BufferStorage& b, uint32_t flat);

  // ---- structured control flow helpers (kernel_lowering.cpp)
  /// if (cond) { then_fn() } else { else_fn() } as a selection construct; either may be empty.
  template <typename Then, typename Else>
  void if_else(uint32_t cond, Then then_fn, Else else_fn, bool has_else);
  void barrier(uint32_t scope);

  // ---- cooperative matrices (coopmat_lowering.cpp, coopmat_resident.cpp)
  void mma(const ir::Mma& op);
  /// The matrix variables of the accumulators that holds keep (ir::Hold).
  void plan_holds();
  void hold(const ir::Hold& op);

  ModuleLowering& M;
  ModuleBuilder& m;

 private:
  uint32_t binary(const ir::Binary& op);
  uint32_t call(const ir::Call& op);
  uint32_t cast(const ir::Cast& op);
  uint32_t lazy_select(uint32_t cond, const Expr& t, const Expr& f, DType type);
  uint32_t access_check(const ir::AccessCheck& op);  // lower_access_check.cpp
  uint32_t decode_small_float(DType t, uint32_t bits);
  uint32_t encode_small_float(DType t, uint32_t value);  // f32 → the format's bits, as i32
  uint32_t round_bf16(uint32_t value);
  uint32_t round_f16(uint32_t value);
  uint32_t erf(uint32_t x);

  void stmt(const Stmt& s);
  void statement(const Stmt& s);  // any but Mma
  void store(const ir::Store& op);
  void atomic(const ir::Atomic& op);
  void cas_loop(const BufferStorage& b, uint32_t ptr, uint32_t scope, AtomicOp op, uint32_t value);
  void loop(const ir::For& op);
  /// for op.var in [op.min, op.min + op.extent) { body() }, the variable in loop_vars_.
  void counted_loop(const ir::For& op, const std::function<void()>& body);
  void declare_buffers();
  /// Local buffers fit the per-thread budget (kMaxLocalBytesPerThread).
  void check_local_bytes() const;
  Error workgroup_overflow(int64_t bytes, const std::string& shared_names,
                           const std::string& fragment_names) const;
  void narrow_shared(DType t, BufferStorage* s);
  uint32_t scratch_base(const std::string& which, uint32_t component, uint32_t elements, uint32_t* ptr_type);
  /// A Local accumulator held as one cooperative matrix per unit tile inside its holds.
  struct Resident {
    const MatrixUnit* unit = nullptr;
    uint32_t var = 0, element_ptr = 0, type = 0, component = 0, units = 0, regs = 0;
    bool active = false;  // lowering is inside one of its holds
    /// One Function variable per unit tile (instead of the array `var`) when every Mma's C
    /// offset in the holds is constant: no dynamic index, so registers.
    std::vector<uint32_t> tiles;
  };
  /// Pointer to unit tile t of a resident accumulator.
  uint32_t resident_tile(const Resident& r, uint32_t t);
  /// Direct A/B matrices already loaded by the run of consecutive Mmas being emitted, by tile.
  std::map<std::string, uint32_t> coopmat_loads_;
  uint32_t coopmat_component(DType t, const SourceLoc& loc);
  /// A tile operand (`a=tile A_s[..]`) loadable as one cooperative matrix.
  struct DirectTile {
    const ir::BufferNode* shared = nullptr;
    Expr flat;            // the tile's first element, flat in the buffer's storage
    uint32_t stride = 0;  // the buffer's row pitch in storage
  };
  std::optional<DirectTile> direct_tile(const ir::MmaOperand& o, DType t, const SourceLoc& loc);
  std::vector<Expr> tile_element(const ir::MmaOperand& o, uint32_t regs, uint32_t cols, uint32_t r);
  void sync_resident(const ir::BufferNode* b, Resident& r, bool into_matrices, const SourceLoc& loc);

  const ir::Kernel& k_;
  std::map<const ir::VarNode*, uint32_t> values_;           // lets, thread/block indices, scalars
  std::map<const ir::VarNode*, uint32_t> loop_vars_;        // loop variables: Function variables
  std::map<const ir::BufferNode*, BufferStorage> buffers_;  // Shared and Local
  std::vector<uint32_t> workgroup_vars_;
  std::vector<uint32_t> vector_views_;  // tensors' uvec4 views this entry point uses
  struct Scratch {
    uint32_t variable = 0, element_ptr = 0;
  };
  std::map<std::string, Scratch> scratch_;  // coopmat staging tiles by role and type
  std::map<const ir::BufferNode*, Resident> resident_;
  /// Iterations of the unrolled and vectorized loops around the statement being emitted, all
  /// multiplied: the copies of a body the driver will make (counted_loop bounds it).
  int64_t unrolled_copies_ = 1;

  friend class CoopmatLowering;
};

/// An Mma's C offset as a constant, where it simplifies to one.
std::optional<int64_t> constant_offset(const Expr& offset);
/// The flat element index of b[indices] in its storage, as an expression (lower_access.cpp).
Expr flat_expr(const BufferStorage& b, const std::vector<Expr>& indices);

template <typename Then, typename Else>
void KernelLowering::if_else(uint32_t cond, Then then_fn, Else else_fn, bool has_else) {
  uint32_t then_l = m.fresh_id(), else_l = has_else ? m.fresh_id() : 0, merge = m.fresh_id();
  m.inst(spv::OpSelectionMerge, {merge, spv::kSelectionControlNone});
  m.inst(spv::OpBranchConditional, {cond, then_l, has_else ? else_l : merge});
  m.label(then_l);
  then_fn();
  m.inst(spv::OpBranch, {merge});
  if (has_else) {
    m.label(else_l);
    else_fn();
    m.inst(spv::OpBranch, {merge});
  }
  m.label(merge);
}

}  // namespace tg::vulkan
