// Mma on a cooperative-matrix unit (SPV_KHR_cooperative_matrix). The registry's coopmat units
// model lane L of a 32-lane subgroup as holding row-major elements L·regs .. L·regs+regs−1 of
// each operand; the hardware's distribution is opaque. So each Mma goes through per-subgroup
// Workgroup staging tiles, which makes the model layout true by construction:
//
//   mma "coopmat_16x16x16_f16_f32" a: a_regs[0], b: b_regs[0], c: C_local[0]
// becomes, for warp = tx / 32 and lane = tx % 32,
//   OpControlBarrier Subgroup                       ; earlier readers of the tiles are done
//   stage_a[warp][lane*8 + r] = a_regs[r]  (r < 8)  ; and b, c likewise
//   OpControlBarrier Subgroup
//   %a = OpCooperativeMatrixLoadKHR %coopA (&stage_a[warp][0]) RowMajorKHR 16  ; b, c likewise
//   %d = OpCooperativeMatrixMulAddKHR %coopC %a %b %c
//   OpCooperativeMatrixStoreKHR (&stage_c[warp][0]) %d RowMajorKHR 16
//   OpControlBarrier Subgroup
//   C_local[r] = stage_c[warp][lane*8 + r]
// Execution checks the equivalence on a device; the interpreter checks the same lowered IR
// with the same model layout in CI. Inside a region where an accumulator stays a cooperative
// matrix (coopmat_resident.cpp), C is loaded from and stored to its Function variable instead.
#include <algorithm>

#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

// The SPIR-V component type of a coopmat operand; bf16 has no SPIR-V 1.6 type.
uint32_t KernelLowering::coopmat_component(DType t, const SourceLoc& loc) {
  switch (t.code) {
    case TypeCode::F16:
      if (!M.features.float16_arith)
        throw Error(
            "unsupported: cooperative matrices of f16 need shaderFloat16, which this Vulkan device lacks",
            loc);
      M.m.capability(spv::CapFloat16);
      return M.m.type_float(16);
    case TypeCode::F32: return M.t_f32;
    case TypeCode::I32: return M.t_i32;
    case TypeCode::I8: M.m.capability(spv::CapInt8); return M.m.type_int(8, true);
    default:
      throw Error("unsupported: the vulkan target has no cooperative-matrix component type for " +
                      std::string(t.name()) + "; use an f16 or i8 unit",
                  loc);
  }
}

// A per-subgroup staging tile: a Workgroup array of `elements` per subgroup of the kernel.
uint32_t KernelLowering::scratch_base(const std::string& which, uint32_t component, uint32_t elements,
                                      uint32_t* ptr_type) {
  Scratch& s = scratch_[which + "_" + std::to_string(component) + "_" + std::to_string(elements)];
  if (!s.variable) {
    uint32_t groups = uint32_t(std::max(1, k_.threads / 32));
    uint32_t arr = m.type_array(component, groups * elements);
    s.variable = m.global_variable(m.type_pointer(spv::SCWorkgroup, arr), spv::SCWorkgroup);
    s.element_ptr = m.type_pointer(spv::SCWorkgroup, component);
    m.name(s.variable, "coopmat_stage_" + which);
    workgroup_vars_.push_back(s.variable);
  }
  *ptr_type = s.element_ptr;
  return s.variable;
}

// The element lane L (= tx % 32) holds in register r of a tile operand: (L·regs + r) / cols,
// (L·regs + r) % cols of the tile (the registry's coopmat layout), as indices into its buffer.
std::vector<Expr> KernelLowering::tile_element(const ir::MmaOperand& o, uint32_t regs, uint32_t cols, uint32_t r) {
  Expr e = Expr(k_.thread_var) % Expr(32) * Expr(int(regs)) + Expr(int(r));
  std::vector<Expr> at = o.tile;
  at[at.size() - 2] = at[at.size() - 2] + e / Expr(int(cols));
  at[at.size() - 1] = at[at.size() - 1] + e % Expr(int(cols));
  return at;
}

// A tile operand loadable as one cooperative matrix: its storage of the matrix's component type
// (f16 as f16, i8 as i8: the Narrow form; f32 and i32 as themselves; 16-bit tiles held as
// uvec4s), its rows and first element 16-byte aligned (the Vulkan rule for matrix loads).
std::optional<KernelLowering::DirectTile> KernelLowering::direct_tile(const ir::MmaOperand& o, DType t,
                                                                    const SourceLoc& loc) {
  const BufferStorage& sh = storage_of(o.buffer.get(), loc);
  const auto want = t.bits() < 32 ? BufferStorage::Form::Narrow : BufferStorage::Form::Value;
  const bool vector = sh.form == BufferStorage::Form::Vector && t.bits() == 16;
  if (sh.storage_class != spv::SCWorkgroup || (sh.form != want && !vector) || t.bits() > 32) return std::nullopt;
  const std::size_t rank = o.tile.size();
  std::optional<int64_t> pitch = sh.strides[rank - 2].as_int();
  std::optional<int64_t> row_len = o.buffer->shape[rank - 1].as_int();
  if (!pitch || !row_len || *pitch < *row_len) return std::nullopt;
  Expr flat = o.tile[rank - 1];
  for (std::size_t d = 0; d + 1 < rank; ++d) flat = flat + o.tile[d] * sh.strides[d];
  flat = simplify_expr(flat);
  const int64_t per16 = 16 / std::max(1, t.bits() / 8);
  if (*pitch % per16 != 0 || !is_multiple_of(flat, per16)) return std::nullopt;
  return DirectTile{o.buffer.get(), flat, uint32_t(*pitch)};
}

void KernelLowering::mma(const ir::Mma& op) {
  const MatrixUnit* u = find_matrix_unit(op.unit);
  if (!u || u->family != "coopmat")
    throw Error("the vulkan target has no instruction for matrix unit " + op.unit +
                    "; run gpu_pipeline with vulkan::target_info() so gemm uses the device's coopmat units",
                op.loc);
  const auto& units = M.features.coopmat_units;
  if (M.features.subgroup_size != 32 || std::find(units.begin(), units.end(), op.unit) == units.end())
    throw Error("matrix unit " + op.unit + " is not reported by this Vulkan device (subgroup size " +
                    std::to_string(M.features.subgroup_size) + "); compile for the device's own features",
                op.loc);
  if (k_.threads % 32 != 0)
    throw Error(
        "unsupported: cooperative matrices need a multiple of 32 threads a workgroup; this kernel has " +
            std::to_string(k_.threads),
        op.loc);
  M.coopmat_used = true;
  m.extension("SPV_KHR_cooperative_matrix");
  m.capability(spv::CapCooperativeMatrixKHR);
  uint32_t ta = coopmat_component(u->a_type, op.loc), tb = coopmat_component(u->b_type, op.loc);
  uint32_t tc = coopmat_component(u->c_type, op.loc);
  // an accumulator held as cooperative matrices inside this region (coopmat_resident.cpp)
  auto res = resident_.find(op.c.buffer.get());
  Resident* resident = res != resident_.end() && res->second.active ? &res->second : nullptr;
  const int staged = resident ? 2 : 3;
  uint32_t tx = values_.at(k_.thread_var.node());
  uint32_t warp = m.op(spv::OpShiftRightArithmetic, M.t_i32, {tx, c_i32(5)});
  uint32_t lane = m.op(spv::OpBitwiseAnd, M.t_i32, {tx, c_i32(31)});

  struct Operand {
    const ir::MmaOperand* reg;
    DType dtype;
    uint32_t component, rows, cols, use, regs;
    uint32_t var = 0, ptr = 0;
  };
  Operand ops[3] = {
      {&op.a, u->a_type, ta, uint32_t(u->m), uint32_t(u->k), spv::MatrixA, uint32_t(u->a_regs())},
      {&op.b, u->b_type, tb, uint32_t(u->k), uint32_t(u->n), spv::MatrixB, uint32_t(u->b_regs())},
      {&op.c, u->c_type, tc, uint32_t(u->m), uint32_t(u->n), spv::MatrixAccumulator, uint32_t(u->c_regs())}};
  const char* role[3] = {"a", "b", "c"};
  const uint32_t nonprivate = spv::MemNonPrivatePointer;
  auto stage_pointer = [&](Operand& o, uint32_t element) {  // &stage[warp * rows*cols + element]
    uint32_t base = m.op(spv::OpIMul, M.t_i32, {warp, c_i32(o.rows * o.cols)});
    return m.op(spv::OpAccessChain, o.ptr, {o.var, m.op(spv::OpIAdd, M.t_i32, {base, element})});
  };
  auto lane_slot = [&](Operand& o, uint32_t r) {
    return m.op(spv::OpIAdd, M.t_i32, {m.op(spv::OpIMul, M.t_i32, {lane, c_i32(o.regs)}), c_i32(r)});
  };

  // A and B from their Shared tiles (`a=tile A_s[..]`, the pass mma_tiles_from_shared): one
  // matrix load where the tile's storage allows it, else staged element by element
  std::optional<DirectTile> direct[3];
  for (int i = 0; i < 2; ++i)
    if (ops[i].reg->is_tile()) direct[i] = direct_tile(*ops[i].reg, ops[i].dtype, op.loc);
  bool any_staged = false;
  for (int i = 0; i < staged; ++i) any_staged = any_staged || !direct[i];
  if (any_staged) barrier(spv::ScopeSubgroup);
  for (int i = 0; i < staged; ++i) {
    Operand& o = ops[i];
    if (direct[i]) continue;
    o.var = scratch_base(role[i], o.component, o.rows * o.cols, &o.ptr);
    const bool tile = o.reg->is_tile();
    const BufferStorage& src = storage_of(o.reg->buffer.get(), op.loc);
    for (uint32_t r = 0; r < o.regs; ++r) {
      uint32_t v = load_element(src, tile ? tile_element(*o.reg, o.regs, o.cols, r) : std::vector<Expr>{o.reg->offset + Expr(int(r))},
                                op.loc);
      v = convert(v, src.dtype, o.dtype, op.loc);
      if (o.component != M.t_f32 && o.component != M.t_i32)
        v = m.op(o.dtype.is_float() ? spv::OpFConvert : spv::OpSConvert, o.component, {v});
      m.inst(spv::OpStore, {stage_pointer(o, lane_slot(o, r)), v, nonprivate});
    }
  }
  if (any_staged) barrier(spv::ScopeSubgroup);
  uint32_t mats[3];
  uint32_t resident_ptr = 0;
  if (resident && !resident->tiles.empty()) {  // a variable per tile: the offset is constant here
    std::optional<int64_t> c = constant_offset(op.c.offset);
    if (!c || *c < 0 || *c / resident->regs >= resident->units)
      throw Error("internal: the accumulator offset of this mma is not a constant tile; report this kernel",
                  op.loc);
    resident_ptr = resident->tiles[size_t(*c / resident->regs)];
    mats[2] = m.op(spv::OpLoad, resident->type, {resident_ptr});
  } else if (resident) {  // C[offset .. offset+regs) is unit tile offset / regs of the accumulator
    uint32_t index = m.op(spv::OpSDiv, M.t_i32, {expr(op.c.offset), c_i32(resident->regs)});
    resident_ptr = m.op(spv::OpAccessChain, resident->element_ptr, {resident->var, index});
    mats[2] = m.op(spv::OpLoad, resident->type, {resident_ptr});
  }
  for (int i = 0; i < staged; ++i) {
    Operand& o = ops[i];
    uint32_t type = m.type_cooperative_matrix(o.component, spv::ScopeSubgroup, o.rows, o.cols, o.use);
    if (direct[i]) {  // in a run of consecutive Mmas, each tile is loaded once
      const std::string key = op.unit + ":" + role[i] + ":" +
                              std::to_string(reinterpret_cast<uintptr_t>(direct[i]->shared)) + ":" +
                              print(direct[i]->flat);
      if (auto c = coopmat_loads_.find(key); c != coopmat_loads_.end()) {
        mats[i] = c->second;
        continue;
      }
      const BufferStorage& sh = storage_of(direct[i]->shared, op.loc);
      const bool vector = sh.form == BufferStorage::Form::Vector;  // 8 elements a uvec4
      uint32_t flat = expr(direct[i]->flat);
      mats[i] = m.op(spv::OpCooperativeMatrixLoadKHR, type,
                     {vector ? vector_pointer(sh, flat) : element_pointer(sh, flat), m.u32(spv::RowMajorKHR),
                      m.u32(vector ? direct[i]->stride / 8 : direct[i]->stride), nonprivate});
      coopmat_loads_[key] = mats[i];
      continue;
    }
    mats[i] = m.op(spv::OpCooperativeMatrixLoadKHR, type,
                   {stage_pointer(o, c_i32(0)), m.u32(spv::RowMajorKHR), m.u32(o.cols), nonprivate});
  }
  uint32_t ctype =
      m.type_cooperative_matrix(tc, spv::ScopeSubgroup, ops[2].rows, ops[2].cols, spv::MatrixAccumulator);
  uint32_t flags = u->a_type.is_signed_int()
                       ? uint32_t(spv::CMASigned | spv::CMBSigned | spv::CMCSigned | spv::CMResultSigned)
                       : uint32_t(spv::CMNone);
  uint32_t d = flags ? m.op(spv::OpCooperativeMatrixMulAddKHR, ctype, {mats[0], mats[1], mats[2], flags})
                     : m.op(spv::OpCooperativeMatrixMulAddKHR, ctype, {mats[0], mats[1], mats[2]});
  if (resident) {
    m.inst(spv::OpStore, {resident_ptr, d});
    return;
  }
  m.inst(spv::OpCooperativeMatrixStoreKHR,
         {stage_pointer(ops[2], c_i32(0)), d, m.u32(spv::RowMajorKHR), m.u32(ops[2].cols), nonprivate});
  barrier(spv::ScopeSubgroup);
  Operand& c = ops[2];
  const BufferStorage& cregs = storage_of(c.reg->buffer.get(), op.loc);
  for (uint32_t r = 0; r < c.regs; ++r) {
    uint32_t v = m.op(spv::OpLoad, c.component, {stage_pointer(c, lane_slot(c, r)), nonprivate});
    if (c.component != M.t_f32 && c.component != M.t_i32) v = m.op(spv::OpFConvert, M.t_f32, {v});
    v = convert(v, c.dtype, cregs.dtype, op.loc);
    store_element(cregs, {c.reg->offset + Expr(int(r))}, v, op.loc);
  }
}

}  // namespace tg::vulkan
