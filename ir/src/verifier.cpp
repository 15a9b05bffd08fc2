// The verifier's walk: scopes of variables and buffers, where collective and per-thread
// statements may stand, and the per-operation checks of verifier_ops.cpp.
//
//   kernel grid(4) threads(128) -> (bx; tx) {
//     if (tx < 32) { copy(A[bx*64 : 64] -> As) }   ← error: copy under an if that depends on tx
//   }
#include "tilegen/ir/verifier.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "text_syntax.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "verifier_internal.h"

namespace tg {

using namespace ir;
using namespace verify_detail;

namespace {

/// Whether an expression may differ between the threads of one block: it reads the thread index,
/// a variable derived from it, or a per-thread Local buffer.
class ThreadDependence : public IRVisitor {
 public:
  explicit ThreadDependence(const std::unordered_set<const VarNode*>& tainted) : tainted_(tainted) {}
  bool found = false;
  void visit(const VarNode* op) override { found = found || tainted_.count(op); }
  void visit(const Load* op) override {
    found = found || op->buffer->scope == Scope::Local;
    IRVisitor::visit(op);
  }

 private:
  const std::unordered_set<const VarNode*>& tainted_;
};

const char* stmt_name(StmtKind k) {
  switch (k) {
    case StmtKind::Kernel: return "kernel";
    case StmtKind::For: return "loop";
    case StmtKind::Copy: return "copy";
    case StmtKind::Fill: return "fill";
    case StmtKind::Gemm: return "gemm";
    case StmtKind::Reduce: return "reduce";
    case StmtKind::Store: return "store";
    case StmtKind::Atomic: return "atomic";
    case StmtKind::If: return "if";
    case StmtKind::Let: return "let";
    case StmtKind::Barrier: return "barrier";
    case StmtKind::AsyncWait: return "async_wait";
    case StmtKind::LdMatrix: return "ldmatrix";
    case StmtKind::Prefetch: return "prefetch";
    case StmtKind::Hold: return "hold";
    case StmtKind::Seq: return "sequence";
    case StmtKind::Mma: return "mma";
    case StmtKind::MmaSync: return "mma_wait";
    case StmtKind::MBarrier: return "mbarrier";
    case StmtKind::BulkCopy: return "bulk_copy";
  }
  return "statement";
}

/// Where a gemm's interleaved hints are not hints only: a statement that is not a Prefetch (or
/// Seq, Let, If, non-parallel For around them), or an expression that differs between threads
/// (the hints run once for the block, as the gemm does). The message, empty when none.
class GemmHintCheck : public IRVisitor {
 public:
  explicit GemmHintCheck(const std::unordered_set<const VarNode*>& tainted) : tainted_(tainted) {}
  std::string problem;

  void visit(const Kernel*) override { bad("a kernel"); }
  void visit(const For* op) override {
    if (op->for_kind == ForKind::Parallel) return bad("a parallel loop");
    IRVisitor::visit(op);
  }
  void visit(const Copy*) override { bad("a copy"); }
  void visit(const Fill*) override { bad("a fill"); }
  void visit(const Gemm*) override { bad("a gemm"); }
  void visit(const Reduce*) override { bad("a reduce"); }
  void visit(const Store*) override { bad("a store"); }
  void visit(const Atomic*) override { bad("an atomic"); }
  void visit(const Barrier*) override { bad("a barrier"); }
  void visit(const AsyncWait*) override { bad("an async_wait"); }
  void visit(const MmaSync*) override { bad("an mma_fence, proxy_fence, mma_wait or set_max_registers"); }
  void visit(const MBarrier*) override { bad("an mbarrier statement"); }
  void visit(const BulkCopy*) override { bad("a bulk_copy"); }
  void visit(const LdMatrix*) override { bad("an ldmatrix"); }
  void visit(const Mma*) override { bad("an mma"); }
  void visit(const VarNode* op) override {
    if (tainted_.count(op) && problem.empty())
      problem = "reads the thread index (" + op->name +
                "), but they run once for the whole block, as the gemm does";
  }
  void visit(const Load* op) override {
    if (op->buffer && op->buffer->scope == Scope::Local && problem.empty())
      problem =
          "read the local " + op->buffer->name + ", but they run once for the whole block, as the gemm does";
    IRVisitor::visit(op);
  }

 private:
  void bad(const char* what) {
    if (problem.empty())
      problem = std::string("hold ") + what +
                ": they are hints (prefetch statements) and must not change what the gemm computes";
  }
  const std::unordered_set<const VarNode*>& tainted_;
};

class Verifier : public IRVisitor {
 public:
  Verifier(const Function& f, const VerifyOptions& opt) : f_(f), opt_(opt) {}
  void run();

  void visit(const VarNode* op) override;
  void visit(const Load* op) override;
  void visit(const AccessCheck* op) override;
  void visit(const Kernel* op) override;
  void visit(const For* op) override;
  void visit(const Copy* op) override;
  void visit(const Fill* op) override;
  void visit(const Gemm* op) override;
  void visit(const Reduce* op) override;
  void visit(const Store* op) override;
  void visit(const Atomic* op) override;
  void visit(const If* op) override;
  void visit(const Let* op) override;
  void visit(const Barrier* op) override;
  void visit(const AsyncWait* op) override;
  void visit(const MmaSync* op) override;
  void visit(const MBarrier* op) override;
  void visit(const BulkCopy* op) override;
  void visit(const LdMatrix* op) override;
  void check_placements(const Kernel& k);
  void visit(const Prefetch* op) override;
  void visit(const Mma* op) override;
  void visit(const Hold* op) override;

 private:
  /// Errors point at the innermost statement with a known call site.
  struct At {
    SourceLoc& slot;
    SourceLoc saved;
    At(SourceLoc& s, const SourceLoc& l) : slot(s), saved(s) {
      if (l.known()) slot = l;
    }
    ~At() { slot = saved; }
  };
  /// Control flow whose path depends on the thread index.
  struct Divergence {
    SourceLoc loc;
    const char* what;
  };

  [[noreturn]] void fail(const std::string& msg) const { throw Error(msg, loc_); }
  void check_params();
  void check_top_level(const Stmt& s);
  void check_shape(const Buffer& b, const std::string& who);
  void check_numel(const Buffer& b, const std::string& who);
  void check_index_var(const Var& v, const Expr& count, const char* what);
  void check_buffer_use(const Buffer& b, const std::string& what);
  void check_collective(const std::string& what, bool is_parallel_loop = false);
  void check_gemm_hints(const Gemm& op);
  void require_kernel(const std::string& what);
  bool thread_dependent(const Expr& e) const;
  void bind(const Var& v, const char* kind);
  void unbind(const Var& v, const char* kind);

  const Function& f_;
  VerifyOptions opt_;
  SourceLoc loc_;
  std::unordered_set<const VarNode*> sizes_, scalars_;
  std::unordered_set<const BufferNode*> tensors_;
  std::unordered_set<const VarNode*> bound_;
  std::unordered_map<const VarNode*, const char*> retired_;  // variables whose scope has closed
  const Kernel* kernel_ = nullptr;
  std::unordered_set<const BufferNode*> kernel_buffers_;
  std::unordered_set<const VarNode*> tainted_;
  std::vector<Divergence> divergent_;
  int parallel_depth_ = 0;
  int roles_ = 0;  // inside a branch of a concurrent if (warp roles)
  /// The accumulators held by the enclosing Holds, and their units.
  std::unordered_map<const BufferNode*, std::string> held_;
  bool in_param_shapes_ = false;
};

void Verifier::run() {
  loc_ = f_.loc;
  check_params();
  if (!f_.body) fail("function " + f_.name + " has no body; give it a kernel");
  check_top_level(f_.body);
}

void Verifier::check_params() {
  std::unordered_set<std::string> names;
  for (auto& p : f_.params) {
    bool tensor = p.kind == Param::Kind::Tensor;
    if (tensor ? !p.buffer : !p.var.defined()) fail("function " + f_.name + " has an empty parameter");
    At at(loc_, tensor ? p.buffer->loc : p.var->loc);
    if (!names.insert(p.name()).second)
      fail("two parameters of " + f_.name + " are named " + p.name() + "; give each parameter its own name");
    if (tensor && p.buffer->scope != Scope::Global)
      fail("parameter " + p.name() + " is a " + name_of(p.buffer->scope) +
           " buffer; tensor parameters are global");
    if (tensor)
      tensors_.insert(p.buffer.get());
    else if (p.kind == Param::Kind::Size)
      sizes_.insert(p.var.node());
    else
      scalars_.insert(p.var.node());
    if (p.kind == Param::Kind::Size && !p.var.dtype().is_int())
      fail("size " + p.name() + " has type " + std::string(p.var.dtype().name()) + "; sizes are integers");
  }
  in_param_shapes_ = true;
  for (auto& p : f_.params)
    if (p.kind == Param::Kind::Tensor) {
      At at(loc_, p.buffer->loc);
      check_shape(p.buffer, "tensor " + p.name());
    }
  in_param_shapes_ = false;
}

void Verifier::check_top_level(const Stmt& s) {
  if (auto* seq = s.as<Seq>()) {
    for (auto& x : seq->stmts) check_top_level(x);
    return;
  }
  if (!s) return;
  At at(loc_, s->loc);
  if (!s.as<Kernel>())
    fail(std::string(stmt_name(s->kind)) +
         " outside a kernel: a function's body is a sequence of kernels; move it into a kernel's body");
  visit_stmt(s);
}

void Verifier::check_shape(const Buffer& b, const std::string& who) {
  if (b.rank() == 0) fail(who + " has no dimensions; give it at least one (use {1} for a single value)");
  if (b.rank() > kMaxBufferRank)
    fail(who + " has " + std::to_string(b.rank()) + " dimensions; buffers have at most " +
         std::to_string(kMaxBufferRank) + " (merge dimensions that are indexed together)");
  for (std::size_t d = 0; d < b.rank(); ++d) {
    const Expr& e = b->shape[d];
    if (!e.defined() || !e.dtype().is_int())
      fail(who + ": dimension " + std::to_string(d) + " must be an integer");
    if (auto v = e.as_int(); v && *v <= 0)
      fail(who + ": dimension " + std::to_string(d) + " is " + std::to_string(*v) +
           "; every dimension must be at least 1" +
           (b->scope == Scope::Global ? std::string() : std::string(" (check the block sizes)")));
    visit_expr(e);
  }
  check_numel(b, who);
}

void Verifier::check_numel(const Buffer& b, const std::string& who) {
  std::vector<int64_t> dims;
  for (const Expr& e : b->shape)
    if (auto v = e.as_int()) dims.push_back(*v);
  if (dims.size() != b.rank() || checked_numel(dims.data(), dims.size(), b->dtype)) return;
  fail(who + " (" + std::string(b->dtype.name()) + " " + dims_str(b->shape) +
       "): its element count or byte size does not fit in 64 bits; make the shape smaller");
}

void Verifier::check_index_var(const Var& v, const Expr& count, const char* what) {
  if (!v.defined()) return;  // bind() names the missing variable
  if (!v.dtype().is_int())
    fail(std::string("the ") + what + " " + v.name() + " has type " + std::string(v.dtype().name()) +
         "; block and thread indices are integers (i32)");
  auto n = count.as_int();
  if (n && *n >= 1 && wrap_int_to(v.dtype(), *n - 1) != *n - 1)
    fail(std::string("the ") + what + " " + v.name() + " is " + std::string(v.dtype().name()) +
         ", which cannot hold " + std::to_string(*n - 1) + " (the last of " + std::to_string(*n) +
         "); give it a wider integer type (i32)");
}

void Verifier::bind(const Var& v, const char* kind) {
  if (!v.defined()) fail(std::string("a ") + kind + " has no variable");
  if (!bound_.insert(v.node()).second)
    fail("variable " + v.name() + " is bound twice in nested scopes; give the inner " + kind +
         " a new variable");
  retired_.erase(v.node());
}

void Verifier::unbind(const Var& v, const char* kind) {
  bound_.erase(v.node());
  retired_[v.node()] = kind;
}

bool Verifier::thread_dependent(const Expr& e) const {
  ThreadDependence t(tainted_);
  t.visit_expr(e);
  return t.found;
}

void Verifier::visit(const VarNode* op) {
  if (in_param_shapes_) {
    if (!sizes_.count(op))
      fail("the shape uses " + op->name + ", which is not a size parameter; declare it with k.size(...)");
    return;
  }
  if (sizes_.count(op)) {
    if (!opt_.allow_unbound_sizes)
      fail("size " + op->name +
           " is still symbolic here; bind sizes (the bind_sizes pass) before this stage");
    return;
  }
  if (scalars_.count(op)) return;
  if (!bound_.count(op)) {
    auto it = retired_.find(op);
    if (it == retired_.end())
      fail("variable " + op->name +
           " is not defined here; use a parameter, a block or thread index, a loop index "
           "or a let inside its scope");
    std::string kind = it->second;
    std::string scope = kind == "loop variable"     ? "loop"
                        : kind == "let variable"    ? "let's block"
                        : kind == "gemm step index" ? "gemm's interleaved hints"
                                                    : "kernel";
    fail(kind + " " + op->name + " is used outside its " + scope +
         "; use it inside, or store the value in a buffer");
  }
  if (kernel_ && op == kernel_->thread_var.node() && parallel_depth_ > 0)
    fail(
        "thread_index() inside a parallel loop: the loop's iterations are already spread over the threads; "
        "index with the loop variables instead");
}

void Verifier::check_buffer_use(const Buffer& b, const std::string& what) {
  if (!b) fail(what + " of an empty buffer");
  if (b->scope == Scope::Global) {
    if (!tensors_.count(b.get()))
      fail(what + " of global " + b->name + ", which is not a parameter of " + f_.name +
           "; declare it as a tensor parameter");
    return;
  }
  if (!kernel_)
    fail(describe(b) +
         " is used outside a kernel; shared, fragment and local buffers live inside the kernel "
         "that allocates them");
  if (!kernel_buffers_.count(b.get()))
    fail(describe(b) +
         " is used outside its kernel (this kernel does not allocate it); allocate it inside the "
         "body of the kernel that uses it");
  if (held_.count(b.get()))
    fail(what + " of " + b->name + ", which a hold keeps in the registers of " + held_.at(b.get()) +
         ", where lanes cannot address it; inside the hold it is only the C operand of that unit's mmas");
  if (b->scope == Scope::Local && parallel_depth_ > 0)
    fail("local " + b->name +
         " is used inside a parallel loop; locals are per thread, so use a fragment for a "
         "block-wide tile, or use the local in per-thread code outside parallel loops");
}

void Verifier::visit(const Load* op) {
  At at(loc_, op->loc);
  Buffer b(op->buffer);
  check_buffer_use(b, "load");
  check_indices(b, op->indices, "load", loc_);
  IRVisitor::visit(op);
}

void Verifier::visit(const AccessCheck* op) {
  At at(loc_, op->loc);
  require_kernel("access_check");
  if (!op->cond.defined() || !op->cond.dtype().is_bool()) fail("the condition of access_check must be bool");
  if (!op->thread.defined() || !op->thread.dtype().is_int())
    fail("the thread of access_check must be an integer");
  if (op->indices.size() != op->shape.size())
    fail("access_check of " + op->buffer + " has " + std::to_string(op->indices.size()) +
         " indices for a shape of rank " + std::to_string(op->shape.size()));
  if (op->block.size() != kernel_->grid.size())
    fail("access_check of " + op->buffer + " names " + std::to_string(op->block.size()) +
         " block indices; the kernel's grid has " + std::to_string(kernel_->grid.size()));
  const Param* record = find_access_record(f_);
  if (!record || record->buffer->dtype != u32 || record->buffer->shape.size() != 1 ||
      record->buffer->shape[0].as_int() != std::optional<int64_t>(kAccessRecordWords))
    fail(std::string("access_check needs the function's access record, a parameter ") + kAccessRecordName +
         ": u32[" + std::to_string(kAccessRecordWords) +
         "] global (the pass check_element_accesses adds both)");
  IRVisitor::visit(op);
}

void Verifier::require_kernel(const std::string& what) {
  if (!kernel_) fail(what + " outside a kernel; move it into a kernel body");
}

void Verifier::check_collective(const std::string& what, bool is_parallel_loop) {
  require_kernel(what);
  if (parallel_depth_ > 0 && !is_parallel_loop)
    fail(what + " inside a parallel loop: a parallel loop's body is per-element code; move the " + what +
         " out of the loop");
  if (roles_ > 0)
    fail(what + " inside a branch of warp roles (a concurrent if): tile statements are the whole block's; "
                "move it before or after the roles");
  if (!divergent_.empty()) {
    const Divergence& d = divergent_.back();
    fail(what + " under control flow that depends on the thread index (the " + d.what + " at " + d.loc.str() +
         "): collective statements are performed once by the whole block, so every thread must reach them; "
         "move it out of that " +
         d.what);
  }
}

// place_shared_memory's plan: every shared buffer of the kernel placed or none, each at a
// 16-byte-aligned offset with room for its elements.
void Verifier::check_placements(const Kernel& k) {
  std::size_t shared = 0, placed = 0;
  for (auto& b : k.buffers) {
    if (b->placed_offset < 0 && b->placed_offset != -1) fail(describe(b) + " has a negative placement offset");
    if (!b->placed()) {
      shared += b->scope == Scope::Shared;
      continue;
    }
    At bat(loc_, b->loc);
    if (b->scope != Scope::Shared) fail(describe(b) + " is placed in shared memory but is not a shared buffer");
    ++shared, ++placed;
    if (b->placed_offset % 16 != 0)
      fail(describe(b) + " is placed at byte " + std::to_string(b->placed_offset) +
           ", not a multiple of 16: shared buffers start 16-byte aligned");
    auto n = b.const_numel();
    int64_t need = n ? int64_t(storage_bytes(b->dtype, *n)) : 0;
    if (b->placed_bytes < need)
      fail(describe(b) + " is placed in " + std::to_string(b->placed_bytes) + " bytes but holds " +
           std::to_string(need));
  }
  if (placed != 0 && placed != shared)
    fail("the kernel places " + std::to_string(placed) + " of its " + std::to_string(shared) +
         " shared buffers; place_shared_memory places all or none");
}

void Verifier::visit(const Kernel* op) {
  At at(loc_, op->loc);
  if (kernel_) fail("a kernel inside a kernel; kernels run one after another at the top level of a function");
  if (op->grid.empty() || op->grid.size() > 3)
    fail("the kernel grid has " + std::to_string(op->grid.size()) + " dimensions; use 1 to 3");
  if (op->block_vars.size() != op->grid.size()) fail("the kernel needs one block index per grid dimension");
  for (std::size_t d = 0; d < op->grid.size(); ++d) {
    const Expr& g = op->grid[d];
    if (!g.defined() || !g.dtype().is_int())
      fail("grid dimension " + std::to_string(d) + " must be an integer");
    visit_expr(g);
    if (auto v = g.as_int(); v && *v <= 0)
      fail("grid dimension " + std::to_string(d) + " has " + std::to_string(*v) +
           " blocks; every grid dimension needs at least 1 block (e.g. tg::ceildiv(N, bn))");
  }
  if (op->threads < 1 || op->threads > opt_.max_threads)
    fail("threads(" + std::to_string(op->threads) + "): a block has 1 to " +
         std::to_string(opt_.max_threads) +
         " threads here; change the block size (and use a larger grid for more work)");
  kernel_ = op;
  for (auto& b : op->buffers) {
    if (!b) fail("the kernel allocates an empty buffer");
    At bat(loc_, b->loc);
    if (b->scope == Scope::Global)
      fail("the kernel allocates global " + b->name + "; global buffers are function parameters");
    if (!kernel_buffers_.insert(b.get()).second) fail(describe(b) + " is allocated twice by one kernel");
    check_shape(b, describe(b));
    if (b->layout.kind == Layout::Kind::Padded && (b->scope != Scope::Shared || b->layout.param < 1))
      fail("layout=padded(" + std::to_string(b->layout.param) + ") on " + describe(b) +
           ": padding is a number of elements (at least 1) added to each row of a shared tile");
  }
  check_placements(*op);
  for (std::size_t d = 0; d < op->block_vars.size(); ++d)
    check_index_var(op->block_vars[d], op->grid[d], "block index");
  check_index_var(op->thread_var, make_int(op->threads), "thread index");
  for (auto& v : op->block_vars) bind(v, "block index");
  bind(op->thread_var, "thread index");
  tainted_ = {op->thread_var.node()};
  visit_stmt(op->body);
  for (auto& v : op->block_vars) unbind(v, "block index");
  unbind(op->thread_var, "thread index");
  kernel_ = nullptr;
  kernel_buffers_.clear();
  tainted_.clear();
}

void Verifier::visit(const For* op) {
  At at(loc_, op->loc);
  std::string kind = name_of(op->for_kind);
  require_kernel(kind + " loop");
  if (!op->min.defined() || !op->extent.defined() || !op->min.dtype().is_int() ||
      !op->extent.dtype().is_int())
    fail(kind + " loop: the start and extent must be integers");
  visit_expr(op->min);
  visit_expr(op->extent);
  std::string var = op->var.defined() ? op->var.name() : "?";
  if (auto v = op->extent.as_int(); v && *v <= 0)
    fail(kind + " loop over " + var + " has extent " + std::to_string(*v) +
         "; a loop needs a positive extent");
  if (op->rolled && op->for_kind != ForKind::Serial)
    fail(std::string("'rolled' on a ") + name_of(op->for_kind) +
         " loop; only a serial loop is kept rolled (drop the hint or make the loop serial)");
  if (op->for_kind == ForKind::Pipelined && op->stages < 1)
    fail("pipelined loop with " + std::to_string(op->stages) +
         " stages; use at least 1 stage (2 to 4 overlap copies with compute)");
  bool needs_const = op->for_kind == ForKind::Unrolled || op->for_kind == ForKind::Vectorized;
  if (needs_const && !opt_.allow_unbound_sizes && !op->extent.as_int())
    fail(kind + " loop over " + var + " needs a constant extent; bind the sizes first, or use a serial loop");
  bool parallel = op->for_kind == ForKind::Parallel;
  if (parallel) check_collective("parallel loop", true);
  bool diverges = !parallel && (thread_dependent(op->min) || thread_dependent(op->extent));
  bind(op->var, "loop variable");
  if (diverges) {
    divergent_.push_back({loc_, "loop"});
    tainted_.insert(op->var.node());
  }
  parallel_depth_ += parallel;
  visit_stmt(op->body);
  parallel_depth_ -= parallel;
  if (diverges) divergent_.pop_back();
  unbind(op->var, "loop variable");
}

void Verifier::visit(const Copy* op) {
  At at(loc_, op->loc);
  check_collective("copy");
  check_buffer_use(op->src.buffer, "copy");
  check_buffer_use(op->dst.buffer, "copy");
  IRVisitor::visit(op);
  check_copy(*op, opt_.reject_empty_predicated_boxes);
}

void Verifier::visit(const Fill* op) {
  At at(loc_, op->loc);
  check_collective("fill");
  check_buffer_use(op->dst.buffer, "fill");
  IRVisitor::visit(op);
  check_fill(*op);
}

void Verifier::visit(const Gemm* op) {
  At at(loc_, op->loc);
  check_collective("gemm");
  for (auto* r : {&op->a, &op->b, &op->c}) {
    check_buffer_use(r->buffer, "gemm");
    visit_region(*r);
  }
  check_gemm(*op);
  check_gemm_hints(*op);
}

void Verifier::check_gemm_hints(const Gemm& op) {
  if (!op.each_step) {
    if (op.steps != 0 || op.step.defined())
      fail("gemm with a step count (" + std::to_string(op.steps) +
           ") or step index but no interleaved hints");
    return;
  }
  if (op.steps < 1)
    fail("gemm interleave in steps(" + std::to_string(op.steps) +
         "): a gemm with hints runs in at least 1 step");
  if (op.step.defined() && !op.step.dtype().is_int())
    fail("the gemm's step index " + op.step.name() + " has type " + std::string(op.step.dtype().name()) +
         "; step indices are integers");
  if (op.step.defined() && wrap_int_to(op.step.dtype(), op.steps - 1) != op.steps - 1)
    fail("the gemm's step index " + op.step.name() + " is " + std::string(op.step.dtype().name()) +
         ", which cannot hold " + std::to_string(op.steps - 1) + "; give it a wider integer type (i32)");
  GemmHintCheck hints(tainted_);
  hints.visit_stmt(op.each_step);
  if (!hints.problem.empty()) fail("the hints interleaved with a gemm " + hints.problem);
  bind(op.step, "gemm step index");
  visit_stmt(op.each_step);
  unbind(op.step, "gemm step index");
}

void Verifier::visit(const Reduce* op) {
  At at(loc_, op->loc);
  std::string what = std::string("reduce_") + name_of(op->op);
  check_collective(what);
  check_buffer_use(op->src, what);
  check_buffer_use(op->dst, what);
  check_reduce(*op);
}

void Verifier::visit(const Store* op) {
  At at(loc_, op->loc);
  require_kernel("store to " + (op->buffer ? op->buffer->name : std::string("?")));
  check_buffer_use(op->buffer, "store");
  check_indices(op->buffer, op->indices, "store", loc_);
  IRVisitor::visit(op);
  check_value_type(op->buffer->dtype, op->value, "store to " + op->buffer->name, loc_);
  if (op->async) {
    const auto* ld = op->value.as<Load>();
    if (op->buffer->scope != Scope::Shared || !ld || ld->buffer->scope != Scope::Global ||
        ld->buffer->dtype != op->buffer->dtype)
      fail("async store to " + op->buffer->name +
           ": an asynchronous copy moves one element of a global buffer into a shared buffer of the same "
           "dtype (async S[i] = G[j]); make it a plain store");
    if (parallel_depth_ > 0) fail("async store inside a parallel loop; async copies are per-thread code");
  }
  if (op->shuffle_xor < 0 || op->shuffle_width < 0 || (op->shuffle_xor == 0) != (op->shuffle_width == 0))
    fail("store to " + op->buffer->name + " has a malformed lane shuffle");
  if (op->shuffle()) {
    const int w = op->shuffle_width, x = op->shuffle_xor;
    if (op->async) fail("a store cannot be both async and a lane shuffle");
    if (w < 2 || (w & (w - 1)) != 0 || w > 64 || x >= w)
      fail("shuffle_xor(" + std::to_string(x) + " of " + std::to_string(w) +
           "): the group is 2, 4, ..., 64 lanes and the mask a lane number below it");
    if (op->buffer->scope != Scope::Local)
      fail("shuffle_xor stores into " + describe(op->buffer) + "; a lane shuffle writes each lane's own registers (a local buffer)");
    const DType t = op->buffer->dtype;
    if (t != f32 && t != i32 && t != u32)
      fail("shuffle_xor moves 32-bit values (f32, i32, u32); " + op->buffer->name + " is " + std::string(t.name()));
    if (parallel_depth_ > 0) fail("shuffle_xor inside a parallel loop; a lane shuffle is per-warp code");
  }
}

void Verifier::visit(const LdMatrix* op) {
  At at(loc_, op->loc);
  require_kernel("ldmatrix");
  if (parallel_depth_ > 0) fail("ldmatrix inside a parallel loop; it is per-warp code");
  if (op->matrices != 1 && op->matrices != 2 && op->matrices != 4)
    fail("ldmatrix x" + std::to_string(op->matrices) + ": it loads 1, 2 or 4 matrices");
  if (!op->regs || op->regs->scope != Scope::Local || !op->src || op->src->scope != Scope::Shared)
    fail("ldmatrix loads from a shared buffer into a local one");
  if (op->regs->dtype != op->src->dtype || op->src->dtype.bits() != 16)
    fail("ldmatrix moves 16-bit elements: " + op->src->name + " and " + op->regs->name +
         " must both be f16, bf16, i16 or u16 of one dtype");
  check_buffer_use(op->regs, "ldmatrix");
  check_buffer_use(op->src, "ldmatrix");
  check_indices(op->src, op->src_indices, "ldmatrix", loc_);
  if (!op->reg_base.defined() || !op->reg_base.dtype().is_int()) fail("ldmatrix needs an integer register index");
  IRVisitor::visit(op);
}

void Verifier::visit(const Prefetch* op) {
  At at(loc_, op->loc);
  require_kernel("prefetch");
  check_buffer_use(op->buffer, "prefetch");
  if (op->buffer->scope != Scope::Global)
    fail("prefetch of " + describe(op->buffer) +
         ": prefetches move lines of global tensors towards the core; the other buffers already live there");
  check_indices(op->buffer, op->indices, "prefetch", loc_);
  if (op->locality < 0 || op->locality > 3)
    fail("prefetch locality=" + std::to_string(op->locality) +
         ": the locality is 0 (none) to 3 (keep in every cache)");
  IRVisitor::visit(op);
}

void Verifier::visit(const AsyncWait* op) {
  At at(loc_, op->loc);
  require_kernel("async_wait");
  if (op->in_flight < 0 || op->in_flight > 7)
    fail("async_wait " + std::to_string(op->in_flight) + ": between 0 and 7 groups may stay in flight");
  if (parallel_depth_ > 0) fail("async_wait inside a parallel loop; put it in per-thread code");
}

void Verifier::visit(const MmaSync* op) {
  At at(loc_, op->loc);
  const char* what = op->op == MmaSync::Op::Fence        ? "mma_fence"
                     : op->op == MmaSync::Op::ProxyFence ? "proxy_fence"
                     : op->op == MmaSync::Op::Wait       ? "mma_wait"
                                                         : "set_max_registers";
  require_kernel(what);
  if (op->op == MmaSync::Op::Registers) {
    if (op->registers < 24 || op->registers > 256 || op->registers % 8 != 0)
      fail("set_max_registers " + std::to_string(op->registers) +
           ": a thread may hold a multiple of 8 registers from 24 to 256");
    if (roles_ == 0)
      fail(
          "set_max_registers outside warp roles: it moves registers between the roles of a concurrent if; "
          "put it first in each branch");
  }
  if (op->op == MmaSync::Op::Wait && (op->in_flight < 0 || op->in_flight > 7))
    fail("mma_wait " + std::to_string(op->in_flight) + ": between 0 and 7 groups may stay in flight");
  if (parallel_depth_ > 0) fail(std::string(what) + " inside a parallel loop; put it in per-thread code");
}

// An mbarrier is an element of a shared i64 buffer that only mbarrier statements use.
static void check_mbarrier_buffer(const Buffer& b, const std::string& what, const SourceLoc& at) {
  if (!b || b->scope != Scope::Shared || b->dtype != i64)
    throw Error(what + ": its barrier must be an element of a shared i64 buffer (one mbarrier an element), not " +
                    (b ? describe(b) : std::string("nothing")),
                at);
}

void Verifier::visit(const MBarrier* op) {
  At at(loc_, op->loc);
  const char* what = op->op == MBarrier::Op::Init       ? "mbarrier_init"
                     : op->op == MBarrier::Op::Arrive   ? "mbarrier_arrive"
                     : op->op == MBarrier::Op::ExpectTx ? "mbarrier_expect_tx"
                                                        : "mbarrier_wait";
  require_kernel(what);
  check_mbarrier_buffer(op->buffer, what, loc_);
  check_buffer_use(op->buffer, what);
  check_indices(op->buffer, op->indices, what, loc_);
  if ((op->op == MBarrier::Op::Arrive) == op->value.defined() ||
      (op->value.defined() && !op->value.dtype().is_int()))
    fail(std::string(what) + (op->op == MBarrier::Op::Arrive ? " takes no value"
                                                              : " needs an integer value (the arrivals, bytes or parity)"));
  if (auto v = op->value.defined() ? op->value.as_int() : std::nullopt) {
    if (op->op == MBarrier::Op::Init && (*v < 1 || *v > (1 << 20) - 1))
      fail("mbarrier_init with " + std::to_string(*v) + " arrivals: a barrier expects 1 to 2^20 - 1");
    if (op->op == MBarrier::Op::ExpectTx && (*v < 0 || *v > (1 << 20) - 1))
      fail("mbarrier_expect_tx of " + std::to_string(*v) + " bytes: a phase expects 0 to 2^20 - 1");
    if (op->op == MBarrier::Op::Wait && *v != 0 && *v != 1)
      fail("mbarrier_wait with parity " + std::to_string(*v) + ": the parity is 0 or 1");
  }
  if (parallel_depth_ > 0) fail(std::string(what) + " inside a parallel loop; put it in per-thread code");
  IRVisitor::visit(op);
}

void Verifier::visit(const BulkCopy* op) {
  At at(loc_, op->loc);
  require_kernel("bulk_copy");
  check_region(op->src, "bulk_copy", "source", loc_, /*predicated=*/true);
  check_region(op->dst, "bulk_copy", "destination", loc_);
  const Buffer &s = op->src.buffer, &d = op->dst.buffer;
  check_buffer_use(s, "bulk_copy");
  check_buffer_use(d, "bulk_copy");
  if (s->scope != Scope::Global || d->scope != Scope::Shared || s->dtype != d->dtype || s->dtype.is_packed())
    fail("bulk_copy from " + describe(s) + " into " + describe(d) +
         ": a bulk copy moves a box of a global tensor into a shared buffer of the same dtype (not packed)");
  if (s.rank() < 1 || s.rank() > 5) fail("bulk_copy: the source has " + std::to_string(s.rank()) + " dimensions; a box has 1 to 5");
  std::vector<Expr> sq = op->src.squeezed_extents(), de = op->dst.squeezed_extents();
  auto constant = [](const std::vector<Expr>& v) {
    return std::all_of(v.begin(), v.end(), [](const Expr& e) { return e.as_int().has_value(); });
  };
  if (!constant(op->src.extents) || !constant(de) || sq.size() != de.size())
    fail("bulk_copy: the box needs constant extents, the same in source and destination (unit dimensions dropped)");
  for (std::size_t i = 0; i < sq.size(); ++i)
    if (*sq[i].as_int() != *de[i].as_int())
      fail("bulk_copy: the source box is " + dims_str(sq) + " but the destination's is " + dims_str(de));
  for (const Expr& e : op->src.extents)
    if (*e.as_int() > 256) fail("bulk_copy: a box is at most 256 elements along each dimension");
  check_mbarrier_buffer(op->barrier, "bulk_copy", loc_);
  check_buffer_use(op->barrier, "bulk_copy");
  check_indices(op->barrier, op->barrier_indices, "bulk_copy", loc_);
  if (parallel_depth_ > 0) fail("bulk_copy inside a parallel loop; put it in per-thread code");
  IRVisitor::visit(op);
}

void Verifier::visit(const Atomic* op) {
  At at(loc_, op->loc);
  std::string what = std::string("atomic_") + name_of(op->op);
  require_kernel(what);
  check_buffer_use(op->buffer, what);
  check_indices(op->buffer, op->indices, what, loc_);
  IRVisitor::visit(op);
  check_atomic(*op);
}

void Verifier::visit(const If* op) {
  At at(loc_, op->loc);
  require_kernel("if");
  if (!op->cond.defined()) fail("if with an empty condition");
  if (!op->cond.dtype().is_bool())
    fail("if condition has type " + std::string(op->cond.dtype().name()) + "; compare it to get a bool");
  visit_expr(op->cond);
  if (op->concurrent) {
    if (!op->else_body)
      fail("a concurrent if (warp roles) without an else-branch: the threads the condition leaves out are "
           "the other role; give them their branch, or drop `concurrently`");
    if (roles_ > 0) fail("warp roles inside a branch of warp roles: roles do not nest");
    if (parallel_depth_ > 0) fail("warp roles inside a parallel loop; roles are per-thread code");
  }
  bool diverges = thread_dependent(op->cond);
  if (diverges) divergent_.push_back({loc_, op->concurrent ? "concurrent if" : "if"});
  roles_ += op->concurrent;
  visit_stmt(op->then_body);
  visit_stmt(op->else_body);
  roles_ -= op->concurrent;
  if (diverges) divergent_.pop_back();
}

void Verifier::visit(const Let* op) {
  At at(loc_, op->loc);
  require_kernel("let");
  if (!op->value.defined()) fail("let " + (op->var.defined() ? op->var.name() : "?") + " has an empty value");
  if (op->var.defined() && op->var.dtype() != op->value.dtype())
    fail("let " + op->var.name() + " is declared " + std::string(op->var.dtype().name()) +
         " but its value is " + std::string(op->value.dtype().name()) +
         "; give the variable the value's dtype");
  visit_expr(op->value);
  bind(op->var, "let variable");
  if (thread_dependent(op->value)) tainted_.insert(op->var.node());
  visit_stmt(op->body);
  unbind(op->var, "let variable");
}

void Verifier::visit(const Barrier* op) {
  At at(loc_, op->loc);
  require_kernel("barrier");
  if (parallel_depth_ > 0)
    fail(
        "barrier inside a parallel loop; put barriers in per-thread code, between loops and tile operations");
  if (roles_ > 0)
    fail("barrier inside a branch of warp roles (a concurrent if): the roles run side by side and meet only "
         "through mbarriers; order them with mbarrier_arrive/mbarrier_wait, or move the barrier after "
         "the roles");
  if (!divergent_.empty()) {
    const Divergence& d = divergent_.back();
    fail("barrier under control flow that depends on the thread index (the " + std::string(d.what) + " at " +
         d.loc.str() +
         "): every thread of the block must reach a barrier or the block hangs; move it out of that " +
         d.what);
  }
}

void Verifier::visit(const Mma* op) {
  At at(loc_, op->loc);
  require_kernel("mma");
  if (parallel_depth_ > 0) fail("mma inside a parallel loop; matrix-unit operations are per-warp code");
  check_mma(*op);
  for (auto* o : {&op->a, &op->b}) check_buffer_use(o->buffer, "mma");
  if (auto held = held_.find(op->c.buffer.get()); held != held_.end()) {
    if (held->second != op->unit)
      fail("mma " + text::quote(op->unit) + " accumulates into " + op->c.buffer->name +
           ", which a hold keeps in " + "the registers of " + held->second +
           "; use that unit, or end the hold before");
    if (auto offset = op->c.offset.as_int(); offset && *offset % find_matrix_unit(op->unit)->c_regs() != 0)
      fail("mma on the held " + op->c.buffer->name + " at offset " + std::to_string(*offset) +
           ", which is not the start of a unit tile (a multiple of " +
           std::to_string(find_matrix_unit(op->unit)->c_regs()) + ")");
  } else {
    check_buffer_use(op->c.buffer, "mma");
  }
  IRVisitor::visit(op);
}

void Verifier::visit(const Hold* op) {
  At at(loc_, op->loc);
  require_kernel("hold");
  if (parallel_depth_ > 0) fail("hold inside a parallel loop; it is per-warp code");
  check_buffer_use(op->buffer, "hold");
  const MatrixUnit* u = find_matrix_unit(op->unit);
  if (!u)
    fail("hold: no matrix unit named " + text::quote(op->unit) +
         "; use a registered one (matrix_unit_names())");
  if (op->buffer->scope != Scope::Local || op->buffer->dtype != u->c_type)
    fail("hold keeps a local accumulator of " + op->unit + "'s C type (" + std::string(u->c_type.name()) +
         ") in its registers; " + describe(op->buffer) + " is not one");
  if (auto n = op->buffer.const_numel(); n && *n % u->c_regs() != 0)
    fail("hold " + op->buffer->name + ": its " + std::to_string(*n) +
         " elements are not whole unit tiles of " + std::to_string(u->c_regs()) + " registers");
  if (!op->body) fail("hold " + op->buffer->name + " has no body");
  held_[op->buffer.get()] = op->unit;
  visit_stmt(op->body);
  held_.erase(op->buffer.get());
}

}  // namespace

void verify(const Function& f, const VerifyOptions& opt) {
  Verifier v(f, opt);
  v.run();
}

}  // namespace tg
