// The tile IR → LLVM IR emitter of the cpu target (private to the plugin).
//
// Input: a function after the cpu pipeline (sizes bound, tile statements lowered to parallel
// loops, threads serialised: every Kernel has threads(1), no Barrier, no Copy/Fill/Reduce; Gemm
// may remain and gets the register-blocked micro-kernel of emit_gemm.cpp).
// Output, per kernel i of function f:
//
//   define void @f_k<i>(ptr %args, i64 %begin, i64 %end, ptr %scratch)
//     ; args[p] = tensor data pointer, or a pointer to an 8-byte scalar (double or int64)
//     ; runs the grid blocks begin..end-1 (linearised, block_vars[0] fastest)
//   @f_k<i>.scratch_bytes = constant i64   ; per-task scratch for its Shared/Fragment/Local buffers
//   @f.num_threads = constant i32          ; 0: oneTBB's default
//
// The work happens in an internal, always-inlined @f_k<i>.body whose tensors and scratch buffers
// are separate `noalias` parameters: tensors are distinct allocations in tilegen (two parameters
// never alias), and scratch buffers are disjoint slices of the task's arena. After inlining, LLVM
// keeps that knowledge as scoped alias metadata, which is what lets it vectorise the loops.
//
// Values in registers: bool i1; int4/uint4 i8 (sign- or zero-extended); i8..i64 and u32 their
// width; f16 `half`; f32 float; f64 double; bf16, fp8 and fp4 as float holding a value exactly
// representable in the narrow type (rounded after every operation, as the interpreter does).
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "micro_kernel.h"
#include "tilegen/ir/function.h"
#include "tilegen/ir/kernel_names.h"

namespace tg::cpu {

/// Names the host side and the JIT agree on: kernel i is ir::kernel_entry_names(f)[i] ("gemm_k0"),
/// the others its stem plus a suffix. The kernels themselves are ir::kernels_of(f).
std::string kernel_symbol(const Function& f, int index);
std::string scratch_symbol(const Function& f, int index);
std::string threads_symbol(const Function& f);

/// Lower a function to a module. Throws tg::Error for what the cpu target cannot run.
std::unique_ptr<llvm::Module> emit_module(const Function& f, llvm::LLVMContext& ctx, const EmitOptions& opt);

/// One kernel's emission state (emit_kernel.cpp, emit_expr.cpp, emit_gemm.cpp).
class Emitter {
 public:
  Emitter(llvm::Module& m, const EmitOptions& opt);
  void emit_kernel(const Function& f, const ir::Kernel& k, int index);

  // ---- Types and conversions (emit_expr.cpp)
  llvm::Type* reg_type(DType t);
  llvm::Type* mem_type(DType t);  // packed types: i8 (two per byte)
  llvm::Value* expr(const Expr& e);
  llvm::Value* convert(llvm::Value* v, DType from, DType to);
  /// A float register value rounded to t (bf16, fp8, fp4 held in float); others unchanged.
  llvm::Value* round_to(llvm::Value* v, DType t);
  llvm::Value* constant(DType t, double v);
  /// e^x (or 2^x) of an f32 value, inline and vectorisable (emit_math.cpp).
  llvm::Value* exp_f32(llvm::Value* x, bool base2);

  // ---- Memory (emit_expr.cpp)
  llvm::Value* flat_index(const Buffer& b, const std::vector<Expr>& idx);
  /// Element strides of b's dimensions (a padded row where emit_kernel chose one).
  const std::vector<int64_t>& strides(const Buffer& b);
  /// Bytes of b's storage, padding included.
  int64_t storage_size(const Buffer& b) const;
  llvm::Value* load(const Buffer& b, llvm::Value* flat);
  void store(const Buffer& b, llvm::Value* flat, llvm::Value* v);
  void atomic(AtomicOp op, const Buffer& b, llvm::Value* flat, llvm::Value* v, const SourceLoc& loc);
  llvm::Value* base(const Buffer& b);

  // ---- Statements (emit_kernel.cpp) and gemm (emit_gemm.cpp)
  void stmt(const Stmt& s);
  void emit_gemm(const ir::Gemm& g);
  /// The gemm's interleaved hints before its step `step` (an i64 value; emit_prefetch.cpp).
  void gemm_hints(const ir::Gemm& g, llvm::Value* step);
  /// llvm.prefetch of the element's address (emit_prefetch.cpp).
  void prefetch(const ir::Prefetch& p);

  /// for iv in [lo, lo + n): body(iv). Returns after positioning the builder at the exit.
  template <typename Body>
  void loop(llvm::Value* lo, llvm::Value* n, llvm::MDNode* md, Body body);
  llvm::MDNode* loop_metadata(ForKind kind, llvm::MDNode* access_group);
  void tag_access(llvm::Instruction* i);

  llvm::LLVMContext& ctx;
  llvm::Module& mod;
  llvm::IRBuilder<> B;
  EmitOptions opt;

 private:
  llvm::Value* binary(const ir::Binary* op);
  llvm::Value* call(const ir::Call* op);
  llvm::Value* select(const ir::Select* op);
  llvm::Value* access_check(const ir::AccessCheck* op);  // emit_access_check.cpp
  llvm::Value* cast(const ir::Cast* op);
  llvm::Value* to_bits(llvm::Value* v, DType t);    // register value → memory integer bits
  llvm::Value* from_bits(llvm::Value* v, DType t);  // memory integer bits → register value
  llvm::Value* float_op(DType t, llvm::Value* a, llvm::Value* b, ir::BinOp op);
  llvm::Value* int_op(DType t, llvm::Value* a, llvm::Value* b, ir::BinOp op, std::optional<int64_t> known);
  llvm::Value* compare(DType t, llvm::Value* a, llvm::Value* b, ir::BinOp op);
  llvm::Value* wrap(llvm::Value* v, DType t);  // int4/uint4: back into 4 bits
  llvm::Value* fp8_table(DType t);
  llvm::Value* encode_small_float(llvm::Value* v, DType t);  // f32 → e4m3/e5m2/e2m1 bits (i8)
  void emit_for(const ir::For& f);
  void emit_if(const ir::If& i);
  void emit_block_loop(const ir::Kernel& k, llvm::Value* begin, llvm::Value* end);
  void emit_wrapper(const Function& f, const std::string& name, llvm::Function* body_fn,
                    const std::vector<std::pair<Buffer, int64_t>>& scratch);

  std::unordered_map<const ir::VarNode*, llvm::Value*> vars_;
  Buffer access_record_;  // the function's access record (access_check.h), where it checks accesses
  std::unordered_map<const ir::BufferNode*, llvm::Value*> bases_;
  std::unordered_map<const ir::BufferNode*, std::vector<int64_t>> strides_;
  std::unordered_map<const ir::BufferNode*, int64_t> row_padding_;  // elements added to each row
  int64_t row_pad(const Buffer& b) const;
  std::vector<llvm::MDNode*> access_groups_;               // of the enclosing parallel loops
  // Pointer, bytes: the scratch cleared per block (those scratch_needing_zero names).
  std::vector<std::pair<llvm::Value*, int64_t>> scratch_;
};

template <typename Body>
void Emitter::loop(llvm::Value* lo, llvm::Value* n, llvm::MDNode* md, Body body) {
  llvm::Function* fn = B.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* bodyb = llvm::BasicBlock::Create(ctx, "body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  llvm::Value* hi = B.CreateAdd(lo, n);
  B.CreateBr(header);
  B.SetInsertPoint(header);
  llvm::PHINode* iv = B.CreatePHI(lo->getType(), 2);
  iv->addIncoming(lo, pre);
  B.CreateCondBr(B.CreateICmpSLT(iv, hi), bodyb, exit);
  B.SetInsertPoint(bodyb);
  body(static_cast<llvm::Value*>(iv));
  llvm::Value* next = B.CreateAdd(iv, llvm::ConstantInt::get(lo->getType(), 1), "", true, true);
  llvm::BranchInst* back = B.CreateBr(header);
  if (md) back->setMetadata(llvm::LLVMContext::MD_loop, md);
  iv->addIncoming(next, B.GetInsertBlock());
  B.SetInsertPoint(exit);
}

}  // namespace tg::cpu
