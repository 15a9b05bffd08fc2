// CUDA's hooks on the shared GPU source emitter (see cuda_codegen.h).
#include "cuda_codegen.h"

#include <map>

#include "tilegen/ir/error.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"

namespace tg::cuda {

namespace {

// The accumulators of async mmas (wgmma) in a kernel, with their register counts.
struct AsyncAccumulators : IRVisitor {
  std::map<const ir::BufferNode*, int64_t> regs;
  using IRVisitor::visit;
  void visit(const ir::Mma* op) override {
    const MatrixUnit* u = find_matrix_unit(op->unit);
    if (u && u->async) regs.emplace(op->c.buffer.get(), op->c.buffer.const_numel().value_or(0));
  }
};

class CudaEmitter final : public gpu::SourceEmitter {
 public:
  CudaEmitter(const Function& f, const KernelPlan& p, const TargetInfo& info)
      : SourceEmitter(f, p), info_(info) {}

 private:
  const TargetInfo& info_;

  std::string target_name() const override { return "cuda"; }

  std::string kernel_head(const std::string& params) override {
    return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(p_.kernel->threads) + ") " +
           p_.name + "(" + params + ")";
  }

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

  // wgmma on two swizzled shared tiles (swizzle_shared_tiles): A (M×K) K-major, B (K×N) N-major.
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
    line("tg_" + u.name + "<0, 1>(" + operand_address(op.c) + ", " + desc(op.a, false) + ", " +
         desc(op.b, true) + ");");
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
        line("for (int tg_r = 0; tg_r < " + std::to_string(n) + "; ++tg_r) tg_fence_operand(" +
             name(b, b->name) + "[tg_r]);");
      }
    };
    switch (op.op) {
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
