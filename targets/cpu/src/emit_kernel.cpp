// Kernels and statements for the cpu emitter (see emitter.h for the calling convention).
//
//   kernel grid(8, 4) threads(1) -> (bx, by; tx) { for i in parallel(0 +: 64) { ... } }
// becomes
//   define void @f_k0(ptr %args, i64 %begin, i64 %end, ptr %scratch)   ; loads args, calls:
//   define internal void @f_k0.body(ptr noalias %A, ..., i64 %begin, i64 %end, ptr noalias %S)
//     for blk in [begin, end): bx = blk % 8; by = blk / 8; memset scratch; body
#include <llvm/IR/Intrinsics.h>

#include "emitter.h"
#include "scratch_zeroing.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/kernel_names.h"
#include "tilegen/ir/visitor.h"

namespace tg::cpu {

using namespace ir;
using llvm::Value;

namespace {

int64_t constant_or_throw(const Expr& e, const std::string& what, const SourceLoc& loc) {
  auto v = e.as_int();
  if (!v) throw Error("cpu: " + what + " must be a constant once sizes are bound", loc);
  return *v;
}

constexpr int64_t kScratchAlign = 64;

}  // namespace

std::string kernel_symbol(const Function& f, int index) {
  return kernel_entry_names(f).at(std::size_t(index));
}
std::string scratch_symbol(const Function& f, int index) {
  return kernel_symbol(f, index) + "_scratch_bytes";
}
std::string threads_symbol(const Function& f) { return kernel_stem(f) + "_num_threads"; }

std::unique_ptr<llvm::Module> emit_module(const Function& f, llvm::LLVMContext& ctx, const EmitOptions& opt) {
  auto m = std::make_unique<llvm::Module>(kernel_stem(f), ctx);
  std::vector<const Kernel*> ks = ir::kernels_of(f);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    Emitter e(*m, opt);
    e.emit_kernel(f, *ks[i], int(i));
  }
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  new llvm::GlobalVariable(*m, i32, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i32, uint64_t(opt.num_threads)), threads_symbol(f));
  return m;
}

Emitter::Emitter(llvm::Module& m, const EmitOptions& o)
    : ctx(m.getContext()), mod(m), B(m.getContext()), opt(o) {
  if (opt.fast_math) B.setFastMathFlags(llvm::FastMathFlags::getFast());
}

namespace {

/// The f32 B operands of micro-kernel gemms (row-major, not transposed) whose rows are a whole,
/// even number of cache lines long: their storage rows get one line of padding, so the K rows
/// of a 16-column strip fall in different L1 sets and the micro-kernel streams them in place,
/// without copying them into panels (emit_gemm.cpp).
//   shared B_shared: f32[128, 128]   → rows 576 bytes apart instead of 512
std::unordered_map<const ir::BufferNode*, int64_t> gemm_b_row_padding(const Kernel& k) {
  struct Find : IRVisitor {
    std::unordered_map<const ir::BufferNode*, int64_t> pad;
    void visit(const Gemm* g) override {
      const Buffer& b = g->b.buffer;
      if (g->trans_b || b->dtype != f32 || b->scope == Scope::Global || !gemm_has_microkernel(*g)) return;
      const int64_t row = *b->shape.back().as_int();
      if (row * 4 % kScratchAlign == 0 && (row * 4 / kScratchAlign) % 2 == 0)
        pad[b.get()] = kScratchAlign / 4;
    }
  } find;
  find.visit_stmt(k.body);
  return find.pad;
}

/// Scratch: every Shared, Fragment and Local buffer, 64-byte aligned slices of the task's arena.
/// Returns (buffer, offset) pairs and sets `bytes` to the arena size.
std::vector<std::pair<Buffer, int64_t>> scratch_layout(const Kernel& k, const Emitter& e, int64_t& bytes) {
  std::vector<std::pair<Buffer, int64_t>> scratch;
  bytes = 0;
  for (const Buffer& b : k.buffers) {
    if (!b.const_numel()) throw Error("cpu: buffer " + b->name + " needs a constant shape", b->loc);
    scratch.emplace_back(b, bytes);
    bytes += (e.storage_size(b) + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
    // Skew the next buffer off a 4 KiB multiple: tiles at equal offsets modulo 4 KiB alias in
    // the load/store unit (a store to one stalls loads from the other).
    bytes += 5 * kScratchAlign;
  }
  return scratch;
}

}  // namespace

void Emitter::emit_kernel(const Function& f, const Kernel& k, int index) {
  row_padding_ = gemm_b_row_padding(k);
  const Param* record = find_access_record(f);
  access_record_ = record ? record->buffer : Buffer();
  int64_t bytes = 0;
  std::vector<std::pair<Buffer, int64_t>> scratch = scratch_layout(k, *this, bytes);
  std::vector<llvm::Type*> body_params;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Size)
      throw Error("cpu: size " + p.name() + " is not bound; the runtime binds sizes before codegen", f.loc);
    body_params.push_back(p.kind == Param::Kind::Tensor ? B.getPtrTy() : reg_type(p.var.dtype()));
  }
  body_params.push_back(B.getInt64Ty());
  body_params.push_back(B.getInt64Ty());
  for (std::size_t i = 0; i < scratch.size(); ++i) body_params.push_back(B.getPtrTy());
  std::string name = kernel_symbol(f, index);
  auto* body_fn = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), body_params, false),
                                         llvm::GlobalValue::InternalLinkage, name + ".body", mod);
  body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
  body_fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned i = 0; i < body_params.size(); ++i)
    if (body_params[i]->isPointerTy()) body_fn->addParamAttr(i, llvm::Attribute::NoAlias);
  emit_wrapper(f, name, body_fn, scratch);
  new llvm::GlobalVariable(mod, B.getInt64Ty(), true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(B.getInt64Ty(), uint64_t(bytes)), scratch_symbol(f, index));

  // The body: parameters become buffer bases and scalar values, then the block loop.
  B.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", body_fn));
  unsigned a = 0;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Tensor)
      bases_[p.buffer.get()] = body_fn->getArg(a);
    else
      vars_[p.var.node()] = body_fn->getArg(a);
    ++a;
  }
  Value* begin = body_fn->getArg(a++);
  Value* end = body_fn->getArg(a++);
  // Zeroed at every block where the block may observe it (scratch_zeroing.h).
  const auto zeroed = scratch_needing_zero(k);
  for (auto& [b, off] : scratch) {
    bases_[b.get()] = body_fn->getArg(a++);
    if (zeroed.count(b.get())) scratch_.emplace_back(bases_[b.get()], storage_size(b));
  }
  emit_block_loop(k, begin, end);
  B.CreateRetVoid();
}

// The exported function: unpack args (tensor pointers; scalars from 8-byte double/int64 slots),
// carve the scratch arena, call the body.
void Emitter::emit_wrapper(const Function& f, const std::string& name, llvm::Function* body_fn,
                           const std::vector<std::pair<Buffer, int64_t>>& scratch) {
  auto* i64 = B.getInt64Ty();
  auto* ptr = B.getPtrTy();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(B.getVoidTy(), {ptr, i64, i64, ptr}, false),
                                    llvm::GlobalValue::ExternalLinkage, name, mod);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  B.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  std::vector<Value*> call_args;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    Value* slot = B.CreateLoad(ptr, B.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i));
    if (p.kind == Param::Kind::Tensor) {
      call_args.push_back(slot);
      continue;
    }
    bool fl = p.var.dtype().is_float();
    Value* raw = B.CreateLoad(fl ? B.getDoubleTy() : static_cast<llvm::Type*>(i64), slot);
    call_args.push_back(convert(raw, fl ? tg::f64 : tg::i64, p.var.dtype()));
  }
  call_args.push_back(fn->getArg(1));
  call_args.push_back(fn->getArg(2));
  for (auto& [b, off] : scratch)
    call_args.push_back(B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), fn->getArg(3), uint64_t(off)));
  B.CreateCall(body_fn, call_args);
  B.CreateRetVoid();
}

// Blocks begin..end-1 of the grid, block_vars[0] varying fastest. Scratch starts zeroed in every
// block, as the interpreter's does.
void Emitter::emit_block_loop(const Kernel& k, Value* begin, Value* end) {
  std::vector<int64_t> grid;
  for (auto& g : k.grid) grid.push_back(constant_or_throw(g, "the grid", k.loc));
  loop(begin, B.CreateSub(end, begin), nullptr, [&](Value* blk) {
    Value* rest = blk;
    for (std::size_t d = 0; d < grid.size(); ++d) {
      Value* v = rest;
      if (d + 1 < grid.size()) {
        v = B.CreateURem(rest, B.getInt64(uint64_t(grid[d])));
        rest = B.CreateUDiv(rest, B.getInt64(uint64_t(grid[d])));
      }
      vars_[k.block_vars[d].node()] = B.CreateTrunc(v, reg_type(k.block_vars[d].dtype()));
    }
    if (k.thread_var.defined())
      vars_[k.thread_var.node()] = llvm::ConstantInt::get(reg_type(k.thread_var.dtype()), 0);
    for (auto& [p, n] : scratch_)
      B.CreateMemSet(p, B.getInt8(0), uint64_t(n), llvm::MaybeAlign(kScratchAlign));
    stmt(k.body);
  });
}

llvm::MDNode* Emitter::loop_metadata(ForKind kind, llvm::MDNode* access_group) {
  std::vector<llvm::Metadata*> ops{nullptr};
  auto flag = [&](const char* name) {
    ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, name)}));
  };
  auto on = [&](const char* name) {
    ops.push_back(
        llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, name), llvm::ConstantAsMetadata::get(B.getTrue())}));
  };
  flag("llvm.loop.mustprogress");
  if (kind == ForKind::Parallel || kind == ForKind::Vectorized) on("llvm.loop.vectorize.enable");
  if (kind == ForKind::Unrolled) flag("llvm.loop.unroll.full");
  if (access_group)
    ops.push_back(
        llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), access_group}));
  llvm::MDNode* md = llvm::MDNode::getDistinct(ctx, ops);
  md->replaceOperandWith(0, md);
  return md;
}

void Emitter::stmt(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Seq:
      for (const Stmt& c : s.as<Seq>()->stmts) stmt(c);
      return;
    case StmtKind::For: emit_for(*s.as<For>()); return;
    case StmtKind::If: emit_if(*s.as<If>()); return;
    case StmtKind::Let: {
      auto* l = s.as<Let>();
      vars_[l->var.node()] = convert(expr(l->value), l->value.dtype(), l->var.dtype());
      stmt(l->body);
      return;
    }
    case StmtKind::Store: {
      auto* st = s.as<Store>();
      Buffer b = st->buffer;
      Value* flat = flat_index(b, st->indices);
      store(b, flat, convert(expr(st->value), st->value.dtype(), b->dtype));
      return;
    }
    case StmtKind::Atomic: {
      auto* at = s.as<Atomic>();
      Buffer b = at->buffer;
      Value* flat = flat_index(b, at->indices);
      atomic(at->op, b, flat, convert(expr(at->value), at->value.dtype(), b->dtype), at->loc);
      return;
    }
    case StmtKind::Gemm: emit_gemm(*s.as<Gemm>()); return;
    case StmtKind::Prefetch: prefetch(*s.as<Prefetch>()); return;
    case StmtKind::MmaSync: return;    // no asynchronous matrix unit here: nothing to fence or wait for
    case StmtKind::AsyncWait: return;  // async stores are plain here: done at once, one legal schedule
    case StmtKind::Kernel: throw Error("cpu: a kernel inside a kernel", s->loc);
    default:
      throw Error(
          "cpu: this statement should have been lowered by the cpu pipeline (lower_tile_ops, "
          "serialize_threads); run codegen on the pipeline's output",
          s->loc);
  }
}

void Emitter::emit_for(const For& f) {
  llvm::Type* ty = reg_type(f.var.dtype());
  bool sg = f.var.dtype().is_signed_int();
  Value* lo = B.CreateIntCast(expr(f.min), ty, f.min.dtype().is_signed_int());
  Value* n = B.CreateIntCast(expr(f.extent), ty, f.extent.dtype().is_signed_int() || sg);
  llvm::MDNode* group = f.for_kind == ForKind::Parallel ? llvm::MDNode::getDistinct(ctx, {}) : nullptr;
  llvm::MDNode* md = f.for_kind == ForKind::Serial || f.for_kind == ForKind::Pipelined
                         ? nullptr
                         : loop_metadata(f.for_kind, group);
  loop(lo, n, md, [&](Value* iv) {
    vars_[f.var.node()] = iv;
    if (group) access_groups_.push_back(group);
    stmt(f.body);
    if (group) access_groups_.pop_back();
  });
}

void Emitter::emit_if(const If& i) {
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  auto* then_b = llvm::BasicBlock::Create(ctx, "then", fn);
  auto* else_b = i.else_body ? llvm::BasicBlock::Create(ctx, "else", fn) : nullptr;
  auto* done = llvm::BasicBlock::Create(ctx, "endif", fn);
  B.CreateCondBr(convert(expr(i.cond), i.cond.dtype(), boolean), then_b, else_b ? else_b : done);
  B.SetInsertPoint(then_b);
  stmt(i.then_body);
  B.CreateBr(done);
  if (else_b) {
    B.SetInsertPoint(else_b);
    stmt(i.else_body);
    B.CreateBr(done);
  }
  B.SetInsertPoint(done);
}

}  // namespace tg::cpu
