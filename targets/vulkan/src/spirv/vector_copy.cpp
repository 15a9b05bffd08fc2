// 16-byte copies from global memory into Shared tiles, and the register prefetch of a K loop.
//
// partition_threads groups a copy's innermost loop by the vector width (8 elements of f16):
//   for v in vectorized(0 +: 8) { let c1 = flat % 4 * 8 + v { A_shared[c0, c1] = A[by*128 + c0, ko*32 + c1] }
//   }
// Where both sides are contiguous in v and 16-byte aligned at v = 0 (proven on the indices: the
// last index is e + v with e a multiple of 8, the others free of v, the last dimension a
// multiple of 8), that is one uvec4 load from the tensor (its binding seen as a runtime array of
// uvec4, an aliasing variable) and one uvec4 store into the tile:
//   %v = OpLoad %v4uint (OpAccessChain %A_vec4 %int_0 (flat(A, element 0) >> 3))
//   OpStore (OpAccessChain %A_shared (flat(A_shared, element 0) >> 3)) %v
// A tile every store of which is such a copy is held as uvec4s (BufferStorage::Form::Vector):
// single elements are read by extracting their half of a word, cooperative matrices are loaded
// through a uvec4 pointer, and rows a multiple of 64 bytes long are padded by 16 bytes so the 8
// rows a matrix load reads at once fall in different banks (declare_buffers).
//
// A K loop that starts with such copies, fenced by barriers,
//   for ko { barrier; for it { let .. { <group copy> } }; barrier; <compute on the tiles> }
// is emitted with the copies' global loads one iteration ahead, in registers:
//   r[it] = A[.. ko = 0 ..]                                  (before the loop)
//   for ko { barrier; A_shared[..it..] = r[it]; barrier; r[it] = A[.. min(ko + 1, n - 1) ..]; <compute> }
// so the loads' latency overlaps the compute. The tensors read are never written by the kernel,
// so reading them earlier reads the same values; the stores stay where they were.
#include <algorithm>

#include "spirv/kernel_lowering_internal.h"
#include "tile_storage.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

constexpr int64_t kMaxPrefetch = 16;  // uvec4 registers a copy nest may hold per thread

}  // namespace

uint32_t ModuleLowering::vector_view(BufferStorage& t) {
  if (t.vector_variable) return t.vector_variable;
  if (!vector_block_) {  // struct { uvec4 data[]; }, one for every view
    uint32_t arr = m.type_runtime_array(m.type_vector(t_u32, 4));
    m.decorate(arr, spv::DecArrayStride, {16});
    vector_block_ = m.type_struct({arr});
    m.decorate(vector_block_, spv::DecBlock);
    m.member_decorate(vector_block_, 0, spv::DecOffset, {0});
  }
  t.vector_variable =
      m.global_variable(m.type_pointer(spv::SCStorageBuffer, vector_block_), spv::SCStorageBuffer);
  for (auto& [node, b] : tensors)
    if (&b == &t) {
      uint32_t binding = 0;
      for (const Param& p : f.params) {
        if (p.kind != Param::Kind::Tensor) continue;
        if (p.buffer.get() == node) break;
        ++binding;
      }
      m.decorate(t.vector_variable, spv::DecDescriptorSet, {0});
      m.decorate(t.vector_variable, spv::DecBinding, {binding});
      if (!written_tensors.count(node)) m.decorate(t.vector_variable, spv::DecNonWritable);
      m.name(t.vector_variable, node->name + "_vec4");
    }
  return t.vector_variable;  // each entry point using it lists it (KernelLowering::vector_views_)
}

// A group copy (tile_storage.h) the emitter moves as one uvec4: with vector copies on, from a
// tensor of the Narrow form.
std::optional<GroupCopy> KernelLowering::group_copy(const ir::For& op) const {
  if (!M.vector_copies) return std::nullopt;
  std::optional<GroupCopy> g = match_group_copy(op);
  auto t = g ? M.tensors.find(g->src) : M.tensors.end();
  if (t == M.tensors.end() || t->second.form != BufferStorage::Form::Narrow) return std::nullopt;
  return g;
}

std::set<const ir::BufferNode*> KernelLowering::plan_vector_tiles() const {
  return M.vector_copies ? vector_tiles(k_.body) : std::set<const ir::BufferNode*>{};
}

uint32_t KernelLowering::vector_pointer(const BufferStorage& b, uint32_t flat, uint32_t offset) {
  uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t index_type = b.wide_index ? m.type_int(64, true) : M.t_i32;
  uint32_t q = m.op(spv::OpShiftRightArithmetic, index_type, {flat, m.constant_int(index_type, 3)});
  if (!b.tensor && (offset || b.slot_offset))  // a two-slot tile: the slot being filled, or the one read
    q = m.op(spv::OpIAdd, index_type, {q, offset ? offset : b.slot_offset});
  if (b.tensor) {
    auto& t = M.tensors.at(
        std::find_if(M.tensors.begin(), M.tensors.end(), [&](auto& kv) { return &kv.second == &b; })->first);
    uint32_t var = M.vector_view(t);
    if (std::find(vector_views_.begin(), vector_views_.end(), var) == vector_views_.end())
      vector_views_.push_back(var);
    return m.op(spv::OpAccessChain, m.type_pointer(spv::SCStorageBuffer, v4), {var, c_i32(0), q});
  }
  return m.op(spv::OpAccessChain, b.element_ptr, {b.variable, q});
}

// Element `flat` of a tile held as uvec4s: its word, then its half.
uint32_t KernelLowering::vector_element(const BufferStorage& b, uint32_t flat) {
  uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t vec = m.op(spv::OpLoad, v4, {vector_pointer(b, flat), uint32_t(spv::MemNonPrivatePointer)});
  uint32_t word_index = m.op(spv::OpBitwiseAnd, M.t_i32,
                             {m.op(spv::OpShiftRightArithmetic, M.t_i32, {flat, c_i32(1)}), c_i32(3)});
  uint32_t word = m.op(spv::OpVectorExtractDynamic, M.t_u32, {vec, word_index});
  uint32_t shift =
      m.op(spv::OpShiftLeftLogical, M.t_i32, {m.op(spv::OpBitwiseAnd, M.t_i32, {flat, c_i32(1)}), c_i32(4)});
  if (b.dtype == i16)
    return m.op(spv::OpBitFieldSExtract, M.t_i32, {m.op(spv::OpBitcast, M.t_i32, {word}), shift, c_i32(16)});
  uint32_t bits = m.op(spv::OpBitFieldUExtract, M.t_u32, {word, shift, c_i32(16)});
  if (b.dtype == bf16)
    return m.op(spv::OpBitcast, M.t_f32, {m.op(spv::OpShiftLeftLogical, M.t_u32, {bits, m.u32(16)})});
  return m.op(spv::OpCompositeExtract, M.t_f32,
              {glsl(m.type_vector(M.t_f32, 2), spv::GlslUnpackHalf2x16, {bits}), 0});
}

bool KernelLowering::vector_copy(const ir::For& op) {
  std::optional<GroupCopy> g = group_copy(op);
  if (!g) return false;
  const BufferStorage& dst = storage_of(g->dst, op.loc);
  if (dst.form != BufferStorage::Form::Vector) return false;
  const BufferStorage& src = storage_of(g->src, op.loc);
  uint32_t v4 = m.type_vector(M.t_u32, 4);
  uint32_t v =
      m.op(spv::OpLoad, v4,
           {vector_pointer(src, flat_index(src, g->src_index)), uint32_t(spv::MemNonPrivatePointer)});
  m.inst(spv::OpStore,
         {vector_pointer(dst, flat_index(dst, g->dst_index)), v, uint32_t(spv::MemNonPrivatePointer)});
  return true;
}

// The static shape of a prefetchable K loop (see the file comment): the copy nests, and the
// index of the barrier after them; nothing where op is not one.
std::optional<KernelLowering::PrefetchPlan> KernelLowering::match_prefetch(const ir::For& op) const {
  const auto* seq = op.body.as<ir::Seq>();
  if (!M.prefetch || op.for_kind != ForKind::Serial || !op.min.as_int() || !op.extent.as_int() ||
      *op.extent.as_int() < 1 || !seq || seq->stmts.size() < 3 || !seq->stmts[0].as<ir::Barrier>())
    return std::nullopt;
  PrefetchPlan plan;
  std::size_t i = 1;
  for (; i < seq->stmts.size(); ++i) {
    const auto* f = seq->stmts[i].as<ir::For>();
    if (!f) break;
    std::optional<int64_t> lo = f->min.as_int(), n = f->extent.as_int();
    if (f->for_kind == ForKind::Parallel || !lo || !n || *n < 1 || *n > kMaxPrefetch) return std::nullopt;
    PrefetchNest nest;
    nest.outer = f;
    Stmt s = f->body;
    while (const auto* l = s.as<ir::Let>()) nest.lets.push_back({l->var, l->value}), s = l->body;
    const auto* inner = s.as<ir::For>();
    std::optional<GroupCopy> g = inner ? group_copy(*inner) : std::nullopt;
    if (!g || M.written_tensors.count(g->src)) return std::nullopt;
    nest.copy = *g;
    plan.nests.push_back(std::move(nest));
  }
  if (plan.nests.empty() || i + 1 >= seq->stmts.size() || !seq->stmts[i].as<ir::Barrier>())
    return std::nullopt;
  plan.second_barrier = i;
  return plan;
}

// Tiles of prefetched K loops that can have two slots (read slot (ko - min) % 2, fill the
// other): the loop body ends with a barrier and nothing outside the loop touches the tile.
std::set<const ir::BufferNode*> KernelLowering::plan_double_buffers(
    const std::set<const ir::BufferNode*>& vector_tiles) const {
  std::set<const ir::BufferNode*> out;
  if (!M.double_buffer) return out;
  struct Loops : IRVisitor {
    const KernelLowering* self;
    std::vector<std::pair<const ir::For*, PrefetchPlan>> found;
    void visit(const ir::For* op) override {
      if (auto p = self->match_prefetch(*op)) found.push_back({op, *p});
      IRVisitor::visit(op);
    }
  } loops;
  loops.self = this;
  loops.visit_stmt(k_.body);
  for (auto& [loop, plan] : loops.found) {
    const auto& stmts = loop->body.as<ir::Seq>()->stmts;
    if (!stmts.back().as<ir::Barrier>()) continue;
    struct Outside : BufferAccessVisitor {  // buffers referenced outside `loop`
      const ir::For* loop;
      std::set<const ir::BufferNode*> used;
      using BufferAccessVisitor::visit;
      void visit(const ir::For* op) override {
        if (op != loop) BufferAccessVisitor::visit(op);
      }
      void access(const Buffer& b, BufferAccess) override { used.insert(b.get()); }
    } outside;
    outside.loop = loop;
    outside.visit_stmt(k_.body);
    bool ok = true;
    for (const PrefetchNest& n : plan.nests)
      ok = ok && vector_tiles.count(n.copy.dst) && !outside.used.count(n.copy.dst);
    if (ok)
      for (const PrefetchNest& n : plan.nests) out.insert(n.copy.dst);
  }
  return out;
}

bool KernelLowering::prefetch_loop(const ir::For& op) {
  std::optional<PrefetchPlan> plan = match_prefetch(op);
  if (!plan) return false;
  std::vector<PrefetchNest>& nests = plan->nests;
  bool two_slots = true;
  for (const PrefetchNest& nest : nests) {
    if (storage_of(nest.copy.dst, op.loc).form != BufferStorage::Form::Vector) return false;
    two_slots = two_slots && storage_of(nest.copy.dst, op.loc).slot_vec4s > 0;
    // the source indices may use the loops' variables and values bound before the K loop only
    for (const Expr& e : nest.copy.src_index) {
      for (const ir::VarNode* v : vars_in(through_lets(e, nest.lets)))
        if (v != op.var.node() && v != nest.outer->var.node() && !values_.count(v) && !loop_vars_.count(v))
          return false;
    }
  }
  const auto* seq = op.body.as<ir::Seq>();
  uint32_t v4 = m.type_vector(M.t_u32, 4), reg_ptr = m.type_pointer(spv::SCFunction, v4);
  const uint32_t nonprivate = spv::MemNonPrivatePointer;
  for (PrefetchNest& nest : nests)
    for (int64_t it = 0; it < *nest.outer->extent.as_int(); ++it)
      nest.regs.push_back(m.function_variable(reg_ptr));
  // element 0's indices of iteration `it` of a nest, the K loop variable replaced by ko (if given)
  auto indices = [&](const PrefetchNest& nest, const std::vector<Expr>& index, int64_t it, const Expr& ko) {
    std::vector<std::pair<Var, Expr>> map = {{nest.outer->var, Expr(int(*nest.outer->min.as_int() + it))}};
    if (ko.defined()) map.push_back({op.var, ko});
    std::vector<Expr> out;
    for (const Expr& e : index) out.push_back(simplify_expr(substitute(through_lets(e, nest.lets), map)));
    return out;
  };
  auto load_tiles = [&](const Expr& ko) {  // registers ← the tensors' tiles of iteration ko
    for (const PrefetchNest& nest : nests) {
      const BufferStorage& src = storage_of(nest.copy.src, op.loc);
      for (std::size_t it = 0; it < nest.regs.size(); ++it) {
        uint32_t flat = flat_index(src, indices(nest, nest.copy.src_index, int64_t(it), ko));
        m.inst(spv::OpStore, {nest.regs[it], m.op(spv::OpLoad, v4, {vector_pointer(src, flat), nonprivate})});
      }
    }
  };
  // Shared tiles ← registers; `slot` (0 or 1, an i32 value; 0 for none) picks the tiles' half
  auto store_tiles = [&](uint32_t slot) {
    for (const PrefetchNest& nest : nests) {
      const BufferStorage& dst = storage_of(nest.copy.dst, op.loc);
      uint32_t offset = slot ? m.op(spv::OpIMul, M.t_i32, {slot, c_i32(dst.slot_vec4s)}) : 0;
      for (std::size_t it = 0; it < nest.regs.size(); ++it) {
        uint32_t flat = flat_index(dst, indices(nest, nest.copy.dst_index, int64_t(it), Expr()));
        m.inst(spv::OpStore,
               {vector_pointer(dst, flat, offset), m.op(spv::OpLoad, v4, {nest.regs[it]}), nonprivate});
      }
    }
  };
  const Expr last = op.min + op.extent - 1;
  for (std::size_t j = 0; j < seq->stmts.size(); ++j) plan_direct(*seq, j);
  auto rest = [&](std::size_t from) {
    for (std::size_t j = from; j < seq->stmts.size(); ++j)
      if (!dead_fill(*seq, j)) stmt(seq->stmts[j]);
  };
  load_tiles(op.min);
  if (!two_slots) {
    //   for ko { barrier; tiles ← regs; barrier; regs ← tile ko+1; rest }
    counted_loop(op, [&] {
      barrier(spv::ScopeWorkgroup);
      store_tiles(0);
      barrier(spv::ScopeWorkgroup);
      load_tiles(min(op.var + 1, last));
      rest(plan->second_barrier + 1);
    });
    return true;
  }
  //   slot 0 ← tile min; regs ← tile min+1; barrier
  //   for ko { p = (ko - min) & 1; slot 1-p ← regs; regs ← tile ko+2; rest reading slot p (ends with a
  //   barrier) }
  store_tiles(0);
  load_tiles(min(op.min + 1, last));
  barrier(spv::ScopeWorkgroup);
  counted_loop(op, [&] {
    uint32_t p = m.op(spv::OpBitwiseAnd, M.t_i32, {expr(op.var - op.min), c_i32(1)});
    store_tiles(m.op(spv::OpISub, M.t_i32, {c_i32(1), p}));
    load_tiles(min(op.var + 2, last));
    for (const PrefetchNest& nest : nests) {
      BufferStorage& dst = buffers_.at(nest.copy.dst);
      dst.slot_offset = m.op(spv::OpIMul, M.t_i32, {p, c_i32(dst.slot_vec4s)});
    }
    rest(plan->second_barrier + 1);
    for (const PrefetchNest& nest : nests) buffers_.at(nest.copy.dst).slot_offset = 0;
  });
  return true;
}

}  // namespace tg::vulkan
