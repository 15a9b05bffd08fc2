// CUDA's hooks on the shared GPU source emitter (see cuda_codegen.h).
#include "cuda_codegen.h"

#include "ldmatrix_match.h"

namespace tg::cuda {

namespace {

class CudaEmitter final : public gpu::SourceEmitter {
 public:
  CudaEmitter(const Function& f, const KernelPlan& p, const EmitOptions& o)
      : SourceEmitter(f, p), ldmatrix_(o.ldmatrix), cp_async_(o.cp_async) {}

 private:
  std::string target_name() const override { return "cuda"; }

  std::string kernel_head(const std::string& params) override {
    return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(p_.kernel->threads) + ") " +
           p_.name + "(" + params + ")";
  }

  // Dynamic: the launch passes the plan's size (above 48 KB with the opt-in attribute).
  void declare_shared(int64_t) override { line("extern __shared__ __align__(16) tg_u8 tg_smem[];"); }

  std::string block_index(int d) const override { return std::string("blockIdx.") + "xyz"[d]; }
  std::string thread_index() const override { return "threadIdx.x"; }

  void barrier() override {
    if (async_open_) line("tg_cp_async_wait_all();");  // a barrier inside the copy phase: finish the copies
    line("__syncthreads();");
  }

  void mma(const ir::Mma& op) override {
    if (op.unit != "mma_m16n8k16_f16_f32" && op.unit != "mma_m16n8k16_bf16_f32")
      throw Error("the cuda target has no instruction for matrix unit " + op.unit +
                      "; use mma_m16n8k16_f16_f32 or mma_m16n8k16_bf16_f32",
                  op.loc);
    line("tg_" + op.unit + "(" + operand_address(op.c) + ", " + operand_address(op.a) + ", " +
         operand_address(op.b) + ");");
  }

  bool async_move(int64_t bytes, const ir::Store& st, const ir::Load& ld, const std::string& dst,
                  const std::string& src) override {
    if (!async_open_ || bytes < 4 || st.buffer->scope != Scope::Shared || ld.buffer->scope != Scope::Global)
      return false;
    line("tg_cp_async<" + std::to_string(bytes) + ">(" + dst + ", " + src + ");");
    return true;
  }

  // The lane index (thread index mod 32), for ldmatrix.
  void on_let(const ir::Let& op) override {
    if (const auto* m = op.value.as<ir::Binary>();
        m && m->op == ir::BinOp::Mod && m->a.same_as(p_.kernel->thread_var) && m->b.as_int() == 32)
      lane_ = op.var;
  }

  // An operand load that match_ldmatrix proves equal to one ldmatrix.
  bool special_for(const ir::For& op) override {
    if (op.for_kind != ForKind::Unrolled || !ldmatrix_ || !lane_.defined()) return false;
    auto m = match_ldmatrix(op, lane_, [](const ir::BufferNode& b) { return gpu::strides_of(b); });
    if (!m) return false;
    line("tg_ldmatrix_x" + std::to_string(m->matrices) + (m->trans ? "_trans" : "") +
         "(reinterpret_cast<tg_u32*>(&" + name(m->regs.get(), m->regs->name) + "[" + expr(m->reg_base) +
         "]), &" + name(m->src.get(), m->src->name) + "[" + expr(m->src_index) + "]);");
    return true;
  }

  bool loop_body(const ir::For& op) override {
    if (!cp_async_ || op.for_kind != ForKind::Pipelined || op.stages < 2 || !op.body.as<ir::Seq>())
      return false;
    pipelined_body(op);
    return true;
  }

  // The body of a loop that pipeline_shared multi-buffered (see its header for the contract):
  // its leading global-to-shared copies become cp.async, committed as one group at the first
  // barrier, which waits until at most stages - 1 groups are in flight.
  //   __syncthreads();  tg_cp_async<16>(...); ...  tg_cp_async_commit(); tg_cp_async_wait<2>();
  //   __syncthreads();  <reads>
  // Every iteration commits exactly one group (empty when the guarded fill was simplified away)
  // and waits for it before the barrier that precedes the reads. Without fills — the trip count is
  // at most stages - 1, so every tile came from the prologue — the wait goes before the leading
  // barrier, never after the reads:  tg_cp_async_commit(); tg_cp_async_wait<2>(); __syncthreads(); <reads>
  void pipelined_body(const ir::For& op) {
    ++indent_;
    const std::vector<Stmt>& stmts = op.body.as<ir::Seq>()->stmts;
    std::size_t i = 0;
    while (i < stmts.size() && stmts[i]->kind == ir::StmtKind::Barrier) ++i;
    if (i == stmts.size() || !gpu::fills_shared_from_global(stmts[i])) {
      line("tg_cp_async_commit();");
      line("tg_cp_async_wait<" + std::to_string(op.stages - 1) + ">();");
      for (const Stmt& s : stmts) stmt(s);
      --indent_;
      return;
    }
    for (std::size_t j = 0; j < i; ++j) stmt(stmts[j]);
    async_open_ = true;
    for (; i < stmts.size(); ++i) {
      if (async_open_ && stmts[i]->kind == ir::StmtKind::Barrier) {
        async_open_ = false;
        line("tg_cp_async_commit();");
        line("tg_cp_async_wait<" + std::to_string(op.stages - 1) + ">();");
      }
      stmt(stmts[i]);
    }
    if (async_open_) {  // no barrier after the copies: complete them here
      async_open_ = false;
      line("tg_cp_async_wait_all();");
    }
    --indent_;
  }

  bool async_open_ = false;  // inside the copy phase of a pipelined loop body
  bool ldmatrix_ = true;
  bool cp_async_ = true;
  Var lane_;  // the innermost let of thread index mod 32
};

}  // namespace

std::string emit_cuda(const Function& f, const TargetInfo& info, const EmitOptions& opt) {
  std::string out =
      "// " + f.name + ": generated by tilegen for " + info.arch + "\n#include \"tilegen_device.h\"\n";
  for (const KernelPlan& p : plan_kernels(f, info)) out += "\n" + CudaEmitter(f, p, opt).emit();
  return out;
}

}  // namespace tg::cuda
