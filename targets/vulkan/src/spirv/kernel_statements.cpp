// A kernel's function body: indices, push-constant scalars, Shared/Local buffers, statements
// with structured control flow, atomics and barriers.
//
//   for i in serial(0 +: n) { body }        if (c) { a } else { b }
// become
//   OpStore %i %lo; OpBranch %header          OpSelectionMerge %merge None
//   %header: %c = i < end                     OpBranchConditional %c %then %else
//            OpLoopMerge %merge %cont None    %then: a; OpBranch %merge
//            OpBranchConditional %c %body %merge   %else: b; OpBranch %merge
//   %body: body; OpBranch %cont               %merge: ...
//   %cont: i = i + 1; OpBranch %header
//   %merge: ...
#include "spirv/kernel_lowering_internal.h"
#include "tilegen/ir/visitor.h"

namespace tg::vulkan {

namespace {
constexpr uint32_t kBarrierSemantics = spv::SemAcquireRelease | spv::SemWorkgroupMemory |
                                       spv::SemUniformMemory | spv::SemMakeAvailable | spv::SemMakeVisible;
constexpr uint32_t kLoopControlUnroll = 0x1;
constexpr uint32_t kLoopControlDontUnroll = 0x2;
// What a driver is asked to compile per thread. Beyond these a kernel stalls or crashes the
// driver's compiler (an f32[2^30] local crashed lavapipe; unrolled(10^6) took 205 s and 5 GB):
// local buffers are private arrays the driver keeps in registers or on the stack, and an
// unrolled loop's body is copied once per iteration.
constexpr int64_t kMaxLocalBytesPerThread = 32 * 1024;
constexpr int64_t kMaxUnrolledCopies = 4096;
}  // namespace

uint32_t KernelLowering::lower(uint32_t function_type, std::vector<uint32_t>* interface) {
  uint32_t fn = m.begin_function(M.t_void, function_type);
  m.label(m.fresh_id());
  uint32_t wg = m.op(spv::OpLoad, m.type_vector(M.t_u32, 3), {M.workgroup_id_var});
  for (std::size_t d = 0; d < k_.block_vars.size() && d < 3; ++d)
    values_[k_.block_vars[d].node()] =
        m.op(spv::OpBitcast, M.t_i32, {m.op(spv::OpCompositeExtract, M.t_u32, {wg, uint32_t(d)})});
  values_[k_.thread_var.node()] =
      m.op(spv::OpBitcast, M.t_i32, {m.op(spv::OpLoad, M.t_u32, {M.local_index_var})});
  for (const Param& p : M.f.params) {  // in parameter order, not by address
    if (p.kind == Param::Kind::Tensor) continue;
    auto found = M.push_members.find(p.var.node());
    if (found == M.push_members.end()) continue;
    const auto& [var, member] = *found;
    uint32_t type = M.value_type(member.second, k_.loc);
    uint32_t ptr = m.op(spv::OpAccessChain, m.type_pointer(spv::SCPushConstant, type),
                        {M.push_var, c_i32(member.first)});
    uint32_t v = m.op(spv::OpLoad, type, {ptr});
    values_[var] = convert(v, member.second, var->dtype, var->loc);
  }
  declare_buffers();
  plan_holds();
  stmt(k_.body);
  m.inst(spv::OpReturn, {});
  m.end_function();
  interface->insert(interface->end(), workgroup_vars_.begin(), workgroup_vars_.end());
  interface->insert(interface->end(), vector_views_.begin(), vector_views_.end());
  return fn;
}

// Shared → a Workgroup array, Local → a Function array, both of value types (Shared tiles of
// 16- and 8-bit formats at their width, see narrow_shared; tiles filled only by 16-byte copies
// as uvec4s with padded rows, see vector_copy.cpp).
void KernelLowering::declare_buffers() {
  const std::set<const ir::BufferNode*> vector_tiles = plan_vector_tiles();
  for (const Buffer& b : k_.buffers) {
    if (b->scope == Scope::Fragment)
      throw Error(
          "fragment " + b->name + " is still block-wide; run the gpu pipeline (partition_threads) first",
          b->loc);
    std::optional<int64_t> n = b.const_numel();
    if (!n || *n <= 0 || *n >= (int64_t(1) << 31))
      throw Error(std::string(name_of(b->scope)) + " buffer " + b->name +
                      " needs a constant shape of fewer than 2^31 elements; bind the sizes first",
                  b->loc);
  }
  check_local_bytes();
  int64_t declared_bytes = 0;
  std::string shared_names, fragment_names;  // "A_s (8192 bytes)", by origin
  for (const Buffer& b : k_.buffers) {
    std::optional<int64_t> n = b.const_numel();
    BufferStorage s;
    s.dtype = b->dtype;
    s.strides = b->scope == Scope::Shared ? stored_strides(*b.get()) : row_major_strides(*b.get());
    s.element_type = M.value_type(b->dtype, b->loc);
    if (M.float_bits_buffers.count(b.get()))
      s.element_type = M.t_i32, s.form = BufferStorage::Form::FloatBits;
    int64_t elements = b->scope == Scope::Shared ? stored_elements(*b.get()) : *n;
    if (vector_tiles.count(b.get())) {  // rows row_pitch() apart (pad_shared_rows may pad them)
      elements /= 8;
      s.form = BufferStorage::Form::Vector;
      s.element_type = m.type_vector(M.t_u32, 4);
    } else if (b->scope == Scope::Shared && s.form == BufferStorage::Form::Value) {
      narrow_shared(b->dtype, &s);
    }
    s.storage_class = b->scope == Scope::Shared ? spv::SCWorkgroup : spv::SCFunction;
    s.element_ptr = m.type_pointer(s.storage_class, s.element_type);
    if (b->scope == Scope::Local && s.form == BufferStorage::Form::Vector && constant_registers(b.get())) {
      for (int64_t r = 0; r < elements; ++r) {  // registers: one variable each, never indexed
        s.registers.push_back(m.function_variable(s.element_ptr));
        m.name(s.registers.back(), b->name + "_" + std::to_string(r));
      }
      buffers_[b.get()] = s;
      continue;
    }
    uint32_t arr = m.type_pointer(s.storage_class, m.type_array(s.element_type, uint32_t(elements)));
    if (b->scope == Scope::Shared) {
      s.variable = m.global_variable(arr, spv::SCWorkgroup);
      workgroup_vars_.push_back(s.variable);
      const int64_t width = s.form == BufferStorage::Form::Vector   ? 16
                            : s.form == BufferStorage::Form::Narrow ? std::max(1, b->dtype.bits() / 8)
                            : b->dtype.bits() > 32                  ? 8
                                                                    : 4;
      declared_bytes += elements * width;
      std::string& names = b->from_fragment ? fragment_names : shared_names;
      names += (names.empty() ? "" : ", ") + b->name + " (" + std::to_string(elements * width) + " bytes)";
    } else {
      s.variable = m.function_variable(arr);
    }
    m.name(s.variable, b->name);
    buffers_[b.get()] = s;
  }
  if (declared_bytes > int64_t(M.features.max_shared_bytes))
    throw workgroup_overflow(declared_bytes, shared_names, fragment_names);
}

// Which tiles fill Workgroup memory, and why a fragment is among them.
Error KernelLowering::workgroup_overflow(int64_t bytes, const std::string& shared_names,
                                         const std::string& fragment_names) const {
  std::string what;
  if (!shared_names.empty()) what = "shared buffers " + shared_names;
  if (!fragment_names.empty())
    what += (what.empty() ? "" : " and ") + std::string("fragments ") + fragment_names +
            " (a fragment is in Workgroup memory when the layout passes cannot spread it over the threads' "
            "registers: it is a reduce's source, a gemm's A or B operand, or indexed other than by the "
            "variables of parallel loops over its shape)";
  return Error(
      "unsupported: " + what + " need " + std::to_string(bytes) +
          " bytes of Workgroup memory (f16, bf16, i16, i8, u8, e4m3, e5m2 at their width and 4-bit formats "
          "as "
          "bytes with shaderFloat16, shaderInt16 and shaderInt8, other formats below 32 bits as 32-bit "
          "values); this Vulkan device has " +
          std::to_string(M.features.max_shared_bytes) + ": use smaller tiles" +
          (fragment_names.empty() ? "" : ", or keep fragments to gemm accumulators and element-wise loops"),
      k_.loc);
}

void KernelLowering::check_local_bytes() const {
  int64_t bytes = 0;
  for (const Buffer& b : k_.buffers) {
    if (b->scope != Scope::Local) continue;
    bytes += *b.const_numel() * (b->dtype.bits() > 32 ? 8 : 4);  // below 32 bits: a 32-bit value each
    if (bytes > kMaxLocalBytesPerThread)
      throw Error(
          "unsupported: local buffers need " + std::to_string(bytes) + " bytes or more per thread with " +
              b->name + " (" + std::to_string(*b.const_numel()) + " elements); the vulkan target allows " +
              std::to_string(kMaxLocalBytesPerThread) +
              " (the driver keeps them in registers or on its stack): use a shared buffer or fragment "
              "for large tiles",
          b->loc);
  }
}

// A Shared tile of a 16- or 8-bit format held at its width (the Narrow form, as in a tensor)
// where the device has the type: half or a quarter of the Workgroup memory, and f16/i8 tiles
// can be loaded as cooperative matrices. bf16 is held as its 16 bits in a u16.
void KernelLowering::narrow_shared(DType t, BufferStorage* s) {
  if (t == f16 && M.features.float16_arith) {
    m.capability(spv::CapFloat16);
    s->element_type = m.type_float(16), s->form = BufferStorage::Form::Narrow;
  } else if ((t == bf16 || t == i16) && M.features.int16) {
    m.capability(spv::CapInt16);
    s->element_type = m.type_int(16, t == i16), s->form = BufferStorage::Form::Narrow;
  } else if ((t == i8 || t == u8 || t == fp8_e4m3 || t == fp8_e5m2 || t.is_packed()) && M.features.int8) {
    m.capability(spv::CapInt8);  // fp8 as its bits (as in a tensor); int4, uint4, fp4: a byte each
    s->element_type = m.type_int(8, t == i8 || t == int4), s->form = BufferStorage::Form::Narrow;
  }
}

const BufferStorage& KernelLowering::storage_of(const ir::BufferNode* b, const SourceLoc& loc) {
  if (auto it = buffers_.find(b); it != buffers_.end()) return it->second;
  if (auto it = M.tensors.find(b); it != M.tensors.end()) return it->second;
  throw Error("buffer " + b->name + " is neither a tensor parameter nor declared by the kernel", loc);
}

void KernelLowering::barrier(uint32_t scope) {
  uint32_t sem =
      scope == spv::ScopeWorkgroup ? kBarrierSemantics : kBarrierSemantics & ~uint32_t(spv::SemUniformMemory);
  m.inst(spv::OpControlBarrier, {m.u32(scope), m.u32(scope), m.u32(sem)});
}

void KernelLowering::stmt(const Stmt& s) {
  if (s->kind == ir::StmtKind::Mma) return mma(*s.as<ir::Mma>());
  // A and B matrices loaded straight from Shared are reused by the next Mmas of a run only:
  // anything else may write the tiles, or leave the block the loads are in.
  coopmat_loads_.clear();
  statement(s);
  coopmat_loads_.clear();
}

void KernelLowering::statement(const Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Seq: {
      for (const Stmt& child : s.as<ir::Seq>()->stmts) stmt(child);
      return;
    }
    case ir::StmtKind::Store: return store(*s.as<ir::Store>());
    case ir::StmtKind::Atomic: return atomic(*s.as<ir::Atomic>());
    case ir::StmtKind::Barrier: return barrier(spv::ScopeWorkgroup);
    case ir::StmtKind::MmaSync: return;    // no asynchronous matrix unit here: nothing to fence or wait for
    case ir::StmtKind::AsyncWait: return;  // async stores are plain here: done at once, one legal schedule
    case ir::StmtKind::Prefetch: return;   // a hint a target may ignore: no vulkan pass writes one
    case ir::StmtKind::Hold: return hold(*s.as<ir::Hold>());
    case ir::StmtKind::For: return loop(*s.as<ir::For>());
    case ir::StmtKind::If: {
      const auto* op = s.as<ir::If>();
      uint32_t c = expr(op->cond);
      if (!op->cond.dtype().is_bool()) c = convert(c, op->cond.dtype(), boolean, op->loc);
      if_else(
          c, [&] { stmt(op->then_body); }, [&] { stmt(op->else_body); }, bool(op->else_body));
      return;
    }
    case ir::StmtKind::Let: {
      const auto* op = s.as<ir::Let>();
      uint32_t v = expr(op->value);  // before the binding: the value cannot see it
      auto it = values_.find(op->var.node());
      std::optional<uint32_t> saved;
      if (it != values_.end()) saved = it->second;
      values_[op->var.node()] = v;
      stmt(op->body);
      if (saved)
        values_[op->var.node()] = *saved;
      else
        values_.erase(op->var.node());
      return;
    }
    default:
      throw Error(std::string("the vulkan target emits per-thread code only, and this is a collective ") +
                      "statement; run the gpu pipeline (partition_threads) first",
                  s->loc);
  }
}

void KernelLowering::loop(const ir::For& op) {
  if (vector_copy(op)) return;
  counted_loop(op, [&] { stmt(op.body); });
}

void KernelLowering::counted_loop(const ir::For& op, const std::function<void()>& body_fn) {
  uint32_t type = M.value_type(op.var.dtype(), op.loc);
  uint32_t var = m.function_variable(m.type_pointer(spv::SCFunction, type));
  m.name(var, op.var.name());
  uint32_t lo = expr(op.min);
  uint32_t end = expr(op.min + op.extent);
  m.inst(spv::OpStore, {var, lo});
  uint32_t header = m.fresh_id(), body = m.fresh_id(), cont = m.fresh_id(), merge = m.fresh_id();
  m.inst(spv::OpBranch, {header});
  m.label(header);
  uint32_t i = m.op(spv::OpLoad, type, {var});
  uint32_t c = m.op(spv::OpSLessThan, M.t_bool, {i, end});
  // the loop controls are IR (unroll_hints: short loops around mmas are unrolled, loops around
  // barriers rolled); the emitter translates them
  const bool unroll = op.for_kind == ForKind::Unrolled || op.for_kind == ForKind::Vectorized;
  const int64_t outer_copies = unrolled_copies_;
  if (unroll) {
    const int64_t trips = op.extent.as_int().value_or(1);
    if (trips > kMaxUnrolledCopies / outer_copies)
      throw Error("unsupported: " + std::string(name_of(op.for_kind)) + " loop over " + op.var.name() +
                      " with " + std::to_string(trips) + " iterations" +
                      (outer_copies > 1 ? " inside unrolled loops of " + std::to_string(outer_copies)
                                        : std::string()) +
                      ": the vulkan target unrolls at most " + std::to_string(kMaxUnrolledCopies) +
                      " copies of a body; use a serial loop (or unroll only a short inner loop)",
                  op.loc);
    unrolled_copies_ = outer_copies * trips;
  }
  m.inst(spv::OpLoopMerge, {merge, cont,
                            unroll      ? kLoopControlUnroll
                            : op.rolled ? kLoopControlDontUnroll
                                        : spv::kLoopControlNone});
  m.inst(spv::OpBranchConditional, {c, body, merge});
  m.label(body);
  loop_vars_[op.var.node()] = var;
  body_fn();
  loop_vars_.erase(op.var.node());
  unrolled_copies_ = outer_copies;
  m.inst(spv::OpBranch, {cont});
  m.label(cont);
  uint32_t cur = m.op(spv::OpLoad, type, {var});
  m.inst(spv::OpStore, {var, m.op(spv::OpIAdd, type, {cur, m.constant_int(type, 1)})});
  m.inst(spv::OpBranch, {header});
  m.label(merge);
}

void KernelLowering::store(const ir::Store& op) {
  if (op.shuffle())  // infer_fragment_layouts writes none without TargetInfo::lane_shuffle
    throw Error("the vulkan target does not translate lane shuffles (shuffle_xor) yet", op.loc);
  const BufferStorage& b = storage_of(op.buffer.get(), op.loc);
  uint32_t v = expr(op.value);
  v = convert(v, op.value.dtype(), b.dtype, op.loc);
  store_element(b, op.indices, v, op.loc);
}

void KernelLowering::atomic(const ir::Atomic& op) {
  const BufferStorage& b = storage_of(op.buffer.get(), op.loc);
  DType t = b.dtype;
  if (t != f32 && t != i32 && t != u32)
    throw Error(
        "unsupported: " + std::string("atomic ") + name_of(op.op) + " on " + std::string(t.name()) +
            ": the vulkan target performs atomics on f32, i32 and u32 only; accumulate in one of those",
        op.loc);
  uint32_t v = convert(expr(op.value), op.value.dtype(), t, op.loc);
  uint32_t ptr = element_pointer(b, flat_index(b, op.indices));
  uint32_t scope = b.storage_class == spv::SCWorkgroup ? spv::ScopeWorkgroup : spv::ScopeQueueFamily;
  if (b.storage_class == spv::SCFunction) {  // a Local buffer is the thread's own: no atomicity needed
    Expr old = op.buffer.load(op.indices);
    uint32_t cur = expr(old), r;
    if (op.op == AtomicOp::Add)
      r = t == f32 ? m.op(spv::OpFAdd, M.t_f32, {cur, v}) : m.op(spv::OpIAdd, M.t_i32, {cur, v});
    else
      r = glsl(t == f32 ? M.t_f32 : M.t_i32,
               t == f32   ? (op.op == AtomicOp::Max ? spv::GlslNMax : spv::GlslNMin)
               : t == u32 ? (op.op == AtomicOp::Max ? spv::GlslUMax : spv::GlslUMin)
                          : (op.op == AtomicOp::Max ? spv::GlslSMax : spv::GlslSMin),
               {cur, v});
    return store_element(b, op.indices, r, op.loc);
  }
  if (t == f32 && b.form == BufferStorage::Form::FloatBits) return cas_loop(b, ptr, scope, op.op, v);
  uint32_t opcode;
  uint32_t type = M.t_i32;
  if (t == f32) {  // add, on a device with VK_EXT_shader_atomic_float (see WriteScan)
    m.extension("SPV_EXT_shader_atomic_float_add");
    m.capability(spv::CapAtomicFloat32AddEXT);
    opcode = spv::OpAtomicFAddEXT, type = M.t_f32;
  } else if (op.op == AtomicOp::Add) {
    opcode = spv::OpAtomicIAdd;
  } else if (t == u32) {
    opcode = op.op == AtomicOp::Max ? 239u : 237u;  // OpAtomicUMax, OpAtomicUMin
  } else {
    opcode = op.op == AtomicOp::Max ? spv::OpAtomicSMax : spv::OpAtomicSMin;
  }
  m.op(opcode, type, {ptr, m.u32(scope), m.u32(0), v});
}

// do { old = *p; new = old (+|max|min) v } while (compare_exchange(p, new, old) != old), on the
// f32's int32 bits: atomics on floats without VK_EXT_shader_atomic_float.
void KernelLowering::cas_loop(const BufferStorage&, uint32_t ptr, uint32_t scope, AtomicOp op, uint32_t v) {
  uint32_t header = m.fresh_id(), body = m.fresh_id(), cont = m.fresh_id(), merge = m.fresh_id();
  m.inst(spv::OpBranch, {header});
  m.label(header);
  m.inst(spv::OpLoopMerge, {merge, cont, spv::kLoopControlNone});
  m.inst(spv::OpBranch, {body});
  m.label(body);
  uint32_t old = m.op(spv::OpAtomicLoad, M.t_i32, {ptr, m.u32(scope), m.u32(0)});
  uint32_t oldf = m.op(spv::OpBitcast, M.t_f32, {old});
  uint32_t nf = op == AtomicOp::Add
                    ? m.op(spv::OpFAdd, M.t_f32, {oldf, v})
                    : glsl(M.t_f32, op == AtomicOp::Max ? spv::GlslNMax : spv::GlslNMin, {oldf, v});
  uint32_t nw = m.op(spv::OpBitcast, M.t_i32, {nf});
  uint32_t got =
      m.op(spv::OpAtomicCompareExchange, M.t_i32, {ptr, m.u32(scope), m.u32(0), m.u32(0), nw, old});
  uint32_t done = m.op(spv::OpIEqual, M.t_bool, {got, old});
  m.inst(spv::OpBranch, {cont});
  m.label(cont);
  m.inst(spv::OpBranchConditional, {done, merge, header});
  m.label(merge);
}

}  // namespace tg::vulkan
