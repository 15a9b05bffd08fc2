// CUDA's hooks on the shared GPU source emitter (see cuda_codegen.h).
#include "cuda_codegen.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "tilegen/ir/error.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"

namespace tg::cuda {

namespace {

// The registers async mmas (wgmma) of a kernel own while in flight, with their counts: the
// accumulators, and the A registers of the RS form.
struct AsyncAccumulators : IRVisitor {
  std::map<const ir::BufferNode*, int64_t> regs;
  using IRVisitor::visit;
  void visit(const ir::Mma* op) override {
    const MatrixUnit* u = find_matrix_unit(op->unit);
    if (!u || !u->async) return;
    regs.emplace(op->c.buffer.get(), op->c.buffer.const_numel().value_or(0));
    if (!op->a.is_tile()) regs.emplace(op->a.buffer.get(), op->a.buffer.const_numel().value_or(0));
  }
};

// The registers a thread of kernel k holds at entry where its warp roles move them: each branch
// of the concurrent if `tx < T` starts with set_max_registers (the pass warp_roles writes them
// so), and the entry count is the threads' average, rounded up to the allocation's 8, so that the
// registers one role gives back are those the other takes and no setmaxnreg.inc waits. 0 where k
// has none; an error where one stands elsewhere.
int entry_registers(const ir::Kernel& k) {
  struct Scan : IRVisitor {
    using IRVisitor::visit;
    int uses = 0;
    std::vector<const ir::If*> roles;
    void visit(const ir::MmaSync* op) override { uses += op->op == ir::MmaSync::Op::Registers; }
    void visit(const ir::If* op) override {
      if (op->concurrent) roles.push_back(op);
      IRVisitor::visit(op);
    }
  } scan;
  scan.visit_stmt(k.body);
  if (scan.uses == 0) return 0;
  auto first = [](const Stmt& s) -> const ir::MmaSync* {
    Stmt at = s;
    while (const auto* seq = at.as<ir::Seq>()) {
      if (seq->stmts.empty()) return nullptr;
      at = seq->stmts.front();
    }
    const auto* r = at.as<ir::MmaSync>();
    return r && r->op == ir::MmaSync::Op::Registers ? r : nullptr;
  };
  const ir::If* r = scan.roles.size() == 1 ? scan.roles.front() : nullptr;
  const auto* lt = r ? r->cond.as<ir::Binary>() : nullptr;
  const ir::MmaSync* a = r ? first(r->then_body) : nullptr;
  const ir::MmaSync* b = r && r->else_body ? first(r->else_body) : nullptr;
  const int64_t t = lt && lt->b.as_int() ? *lt->b.as_int() : 0;
  if (!a || !b || scan.uses != 2 || lt->op != ir::BinOp::Lt || !lt->a.same_as(k.thread_var) || t <= 0 ||
      t >= k.threads)
    throw Error(
        "cuda codegen: set_max_registers stands only first in both branches of one concurrent if "
        "`tx < T` (the pass warp_roles writes them so); the kernel's register count at entry is their "
        "average",
        k.loc);
  const int64_t total = int64_t(a->registers) * t + int64_t(b->registers) * (k.threads - t);
  return int((total + 8 * k.threads - 1) / (8 * k.threads) * 8);
}

}  // namespace

TensorMapSpec tensor_map_of(const Function& f, const ir::BulkCopy& op) {
  TensorMapSpec t;
  const ir::BufferNode* g = op.src.buffer.get();
  for (std::size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].kind == Param::Kind::Tensor && f.params[i].buffer.get() == g) t.param = int(i);
  if (t.param < 0) throw Error("cuda codegen: the bulk copy's source " + g->name + " is not a tensor parameter", op.loc);
  t.dtype = g->dtype;
  for (const Expr& e : op.src.extents) t.box.push_back(e.as_int().value_or(0));
  const ir::BufferNode& d = *op.dst.buffer.get();
  t.swizzle = d.layout.kind == Layout::Kind::Swizzle ? d.layout.param : 0;
  return t;
}

std::vector<TensorMapSpec> tensor_maps(const Function& f, const ir::Kernel& k) {
  struct Scan : IRVisitor {
    const Function* f;
    std::vector<TensorMapSpec> out;
    using IRVisitor::visit;
    void visit(const ir::BulkCopy* op) override {
      TensorMapSpec t = tensor_map_of(*f, *op);
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  } scan;
  scan.f = &f;
  scan.visit_stmt(k.body);
  return scan.out;
}

namespace {

class CudaEmitter final : public gpu::SourceEmitter {
 public:
  CudaEmitter(const Function& f, const KernelPlan& p, const TargetInfo& info)
      : SourceEmitter(f, p), info_(info) {}

 private:
  const TargetInfo& info_;

  std::string target_name() const override { return "cuda"; }

  // __launch_bounds__(threads); where warp roles move registers (set_max_registers), the entry's
  // count instead (__maxnreg__: the two cannot be combined), from which each role's setmaxnreg
  // goes up or down.
  std::string kernel_head(const std::string& params) override {
    entry_registers_ = entry_registers(*p_.kernel);
    const std::string bounds = entry_registers_
                                   ? "__maxnreg__(" + std::to_string(entry_registers_) + ")"
                                   : "__launch_bounds__(" + std::to_string(p_.kernel->threads) + ")";
    return "extern \"C\" __global__ void " + bounds + " " + p_.name + "(" + params + ")";
  }
  int entry_registers_ = 0;

  // Dynamic: the launch passes the plan's size (above 48 KB with the opt-in attribute).
  // tg_smem_base: its 32-bit shared-window address, to which ldmatrix and cp.async add byte
  // offsets (shared_offset) instead of converting a 64-bit generic pointer at each one.
  void declare_shared(int64_t) override {
    // A swizzled tile (wgmma's operands) needs 1024-byte alignment: the hardware swizzles on
    // address bits 4-9, and place_shared_memory aligns it within the block's shared memory.
    bool swizzled = false;
    for (auto& [b, off] : p_.shared.offsets) swizzled |= b->layout.kind == Layout::Kind::Swizzle;
    line(std::string("extern __shared__ __align__(") + (swizzled ? "1024" : "16") + ") tg_u8 tg_smem[];");
    line("const tg_u32 tg_smem_base = tg_smem_addr(tg_smem);");
  }

  std::string block_index(int d) const override { return std::string("blockIdx.") + "xyz"[d]; }
  std::string thread_index() const override { return "threadIdx.x"; }

  void mma(const ir::Mma& op) override {
    const MatrixUnit* u = find_matrix_unit(op.unit);
    if (u && u->async) return wgmma(op, *u);
    gpu::check_matrix_unit(op, info_);
    line("tg_" + op.unit + "(" + operand_address(op.c) + ", " + operand_address(op.a) + ", " +
         operand_address(op.b) + ");");
  }

  // wgmma on two swizzled shared tiles (swizzle_shared_tiles): A (M×K) K-major, B (K×N) N-major
  // or, a transposed tile (N×K), K-major. A held in registers (the RS form: eight 16-bit elements
  // from its offset, the layout of MatrixUnit::a_layout) goes to the _rs function.
  // Strips of W bytes (buffer.h): the descriptor's stride byte offset is 8 rows of a strip; B's
  // leading byte offset is the strip after the next (its rows × W), A's unused (16 by convention).
  void wgmma(const ir::Mma& op, const MatrixUnit& u) {
    if (std::find(info_.matrix_units.begin(), info_.matrix_units.end(), op.unit) == info_.matrix_units.end())
      throw Error("the cuda target has no " + op.unit + " on " + info_.arch + "; wgmma needs sm_90a", op.loc);
    auto desc = [&](const ir::MmaOperand& o, bool mn_major) {
      const ir::BufferNode& b = *o.buffer.get();
      if (!o.is_tile() || b.scope != Scope::Shared || b.layout.kind != Layout::Kind::Swizzle)
        throw Error("cuda codegen: " + op.unit +
                        " reads its operands as swizzled shared tiles (the pass "
                        "swizzle_shared_tiles); " +
                        b.name + " is not one",
                    op.loc);
      const int64_t w = int64_t(16) << b.layout.param, rows = *b.shape[b.shape.size() - 2].as_int();
      const int mode = b.layout.param == 3 ? 1 : b.layout.param == 2 ? 2 : 3;
      return "tg_wgmma_desc(tg_smem_base + " + shared_tile_offset(b, o.tile) + ", " +
             std::to_string(mn_major ? rows * w : 16) + "u, " + std::to_string(8 * w) + "u, " +
             std::to_string(mode) + "u)";
    };
    // B stored N×K (a transposed tile) is K-major: its descriptor is A's kind, imm-trans-b 0.
    const bool b_mn = !op.b.trans;
    if (!op.a.is_tile()) {
      if (op.a.buffer->scope != Scope::Local || op.a.buffer->dtype.bits() != 16)
        throw Error("cuda codegen: " + op.unit + " reads A from 16-bit registers; " + op.a.buffer->name +
                        " is not a local buffer of them",
                    op.loc);
      return line("tg_" + u.name + "_rs<" + (b_mn ? "1" : "0") + ">(" + operand_address(op.c) + ", " +
                  operand_address(op.a) + ", " + desc(op.b, b_mn) + ");");
    }
    if (op.a.trans)
      throw Error(
          "cuda codegen: " + op.unit + " reads A K-major; the tile " + op.a.buffer->name + " is transposed",
          op.loc);
    line("tg_" + u.name + "<0, " + (b_mn ? "1" : "0") + ">(" + operand_address(op.c) + ", " +
         desc(op.a, false) + ", " + desc(op.b, b_mn) + ");");
  }

  // ir::MmaSync. The accumulators are pinned around the fence and the wait (tg_fence_operand) so
  // that the compiler moves no access of them into the unit's asynchronous window.
  void mma_sync(const ir::MmaSync& op) override {
    if (!accumulators_) {
      AsyncAccumulators found;
      found.visit_stmt(p_.kernel->body);
      accumulators_ = std::make_unique<std::map<const ir::BufferNode*, int64_t>>(std::move(found.regs));
    }
    auto pin = [&] {
      for (auto& [b, n] : *accumulators_) {
        line("#pragma unroll");
        if (b->dtype.bits() == 16)  // RS A registers, by the 32-bit register a pair of them is
          line("for (int tg_r = 0; tg_r < " + std::to_string(n / 2) + "; ++tg_r) tg_fence_operand_pair(&" +
               name(b, b->name) + "[2 * tg_r]);");
        else
          line("for (int tg_r = 0; tg_r < " + std::to_string(n) + "; ++tg_r) tg_fence_operand(" +
               name(b, b->name) + "[tg_r]);");
      }
    };
    switch (op.op) {
      case ir::MmaSync::Op::Registers:
        if (op.registers == entry_registers_) return;
        return line(
            std::string(op.registers > entry_registers_ ? "tg_setmaxnreg_inc<" : "tg_setmaxnreg_dec<") +
            std::to_string(op.registers) + ">();");
      case ir::MmaSync::Op::Fence: pin(); return line("tg_wgmma_fence();");
      case ir::MmaSync::Op::ProxyFence: return line("tg_fence_proxy_async();");
      case ir::MmaSync::Op::Wait:
        line("tg_wgmma_commit();");
        line("tg_wgmma_wait<" + std::to_string(op.in_flight) + ">();");
        return pin();
    }
  }
  std::unique_ptr<std::map<const ir::BufferNode*, int64_t>> accumulators_;

  // The pass async_copies decided which moves are asynchronous and where each group is waited
  // for; this only spells them.
  void async_move(int64_t bytes, const std::string& dst, const std::string& src) override {
    line("tg_cp_async<" + std::to_string(bytes) + ">(" + dst + ", " + src + ");");
  }
  void async_store(int64_t bytes, const ir::BufferNode& dst, const std::vector<Expr>& dst_index,
                   const std::string& src) override {
    line("tg_cp_async_s<" + std::to_string(bytes) + ">(tg_smem_base + " + shared_offset(dst, dst_index) +
         ", " + src + ");");
  }
  void async_wait(int in_flight) override {
    if (in_flight == 0) return line("tg_cp_async_wait_all();");
    line("tg_cp_async_commit();");
    line("tg_cp_async_wait<" + std::to_string(in_flight) + ">();");
  }

  // The tensor maps of the kernel's bulk copies (tensor_maps), passed by value.
  std::string extra_params() override {
    maps_ = tensor_maps(f_, *p_.kernel);
    std::string out;
    for (std::size_t i = 0; i < maps_.size(); ++i)
      out += ", const __grid_constant__ tg_tensor_map tg_tmap" + std::to_string(i);
    return out;
  }
  std::vector<TensorMapSpec> maps_;

  // bulk_copies chose them; these only spell them (mbarrier.*, cp.async.bulk.tensor: sm_90).
  void mbarrier(const ir::MBarrier& op) override {
    const std::string bar = "tg_smem_base + " + shared_offset(*op.buffer.get(), op.indices);
    switch (op.op) {
      case ir::MBarrier::Op::Init: return line("tg_mbarrier_init(" + bar + ", " + expr(op.value) + ");");
      case ir::MBarrier::Op::Arrive: return line("tg_mbarrier_arrive(" + bar + ");");
      case ir::MBarrier::Op::ExpectTx: return line("tg_mbarrier_expect_tx(" + bar + ", " + expr(op.value) + ");");
      case ir::MBarrier::Op::Wait: return line("tg_mbarrier_wait(" + bar + ", " + expr(op.value) + ");");
    }
  }
  void bulk_copy(const ir::BulkCopy& op) override {
    if (info_.arch.rfind("sm_", 0) != 0 || std::atoi(info_.arch.c_str() + 3) < 90)
      throw Error("bulk tensor copies need sm_90 or later; " + info_.arch + " has none", op.loc);
    const ir::BufferNode& d = *op.dst.buffer.get();
    if (d.layout.kind != Layout::Kind::Swizzle && !d.layout.is_default())
      throw Error("cuda codegen: the bulk copy into " + d.name +
                      " writes its box's rows back to back, but the tile's layout is not dense or swizzled "
                      "(pad_shared_tiles leaves bulk-copied tiles alone)",
                  op.loc);
    const TensorMapSpec t = tensor_map_of(f_, op);
    const std::size_t i = std::size_t(std::find(maps_.begin(), maps_.end(), t) - maps_.begin());
    std::string coords;  // innermost first
    for (std::size_t d = op.src.offsets.size(); d-- > 0;)
      coords += ", (int)(" + expr(op.src.offsets[d]) + ")";
    std::vector<Expr> first;
    for (const Expr& o : op.dst.offsets) first.push_back(o);
    line("tg_bulk_copy_" + std::to_string(op.src.offsets.size()) + "d(tg_smem_base + " +
         shared_offset(*op.dst.buffer.get(), first) + ", &tg_tmap" + std::to_string(i) + ", tg_smem_base + " +
         shared_offset(*op.barrier.get(), op.barrier_indices) + coords + ");");
  }

  // use_ldmatrix chose it and proved it; this only spells it.
  void ldmatrix(const ir::LdMatrix& op) override {
    line("tg_ldmatrix_x" + std::to_string(op.matrices) + (op.trans ? "_trans" : "") +
         "_s(reinterpret_cast<tg_u32*>(&" + name(op.regs.get(), op.regs->name) + "[" + expr(op.reg_base) +
         "]), " + "tg_smem_base + " + shared_offset(*op.src.get(), op.src_indices) + ");");
  }
};
}  // namespace

std::string emit_cuda(const Function& f, const TargetInfo& info) {
  std::string out =
      "// " + f.name + ": generated by tilegen for " + info.arch + "\n#include \"tilegen_device.h\"\n";
  for (const KernelPlan& p : plan_kernels(f, info)) out += "\n" + CudaEmitter(f, p, info).emit();
  return out;
}

}  // namespace tg::cuda
