// The interpreter's pre-pass: IR → Program. Variables become value slots (one per binding),
// buffers become ids, expressions and statements become flat nodes. Malformed IR that the
// executor cannot give a meaning to is rejected here, before anything runs:
//
//   for i in parallel(0, 64) { acc[0] = x }      // acc Local → "local buffer acc inside a parallel loop"
//   kernel ... { y = A[i] }                       // i not bound → "variable i is used where it is not bound"
#include <algorithm>
#include <set>
#include <unordered_map>

#include "interp_internal.h"
#include "tilegen/ir/access_check.h"

namespace tg::interp {

namespace {

using namespace ir;

class Compiler {
 public:
  explicit Compiler(const Function& f) : f_(f) {}
  Program run();

 private:
  // Which slots an expression or statement reads, to check that a value is uniform.
  struct Tracker {
    std::set<int32_t> reads, bound;
  };

  int32_t expr(const Expr& e, const SourceLoc& where);
  int32_t expr_as(const Expr& e, DType t, const SourceLoc& where);
  int32_t index(const Expr& e, const std::string& what, const SourceLoc& where);
  int32_t add_expr(XNode n) {
    p_.exprs.push_back(n);
    return int32_t(p_.exprs.size() - 1);
  }
  int32_t var(const VarNode* v, const SourceLoc& where);
  int32_t load(const Load* op, const SourceLoc& where);
  int32_t access_check(const AccessCheck* op, const SourceLoc& where);
  int32_t buffer(const Buffer& b, const SourceLoc& where);
  int32_t host_expr(const Expr& e, const std::string& what, const SourceLoc& where);
  int32_t bind(const Var& v, bool host = false);
  void unbind(const Var& v, int32_t previous);
  int32_t add_stmt(SNode n) {
    p_.stmts.push_back(std::move(n));
    return int32_t(p_.stmts.size() - 1);
  }
  int32_t stmt(const Stmt& s);
  int32_t kernel(const Kernel* op);
  int32_t for_loop(const For* op);
  XRegion region(const Region& r, SNode& n, const char* what);
  int32_t collective(const Stmt& s);
  int32_t mma(const ir::Mma* op);
  int32_t ldmatrix(const ir::LdMatrix* op);
  int32_t prefetch(const ir::Prefetch* op);
  void gemm_hints(const ir::Gemm* op, SNode& n);
  int32_t hold(const ir::Hold* op);
  int32_t mbarrier(const ir::MBarrier* op);
  int32_t bulk_copy(const ir::BulkCopy* op);
  int32_t barrier_of(const Buffer& b, const std::vector<Expr>& indices, SNode& n, const StmtNode* op);
  int32_t store(const Stmt& s);
  int32_t let(const Let* op);
  void need_kernel(const StmtNode* op, const char* what) const;
  void no_parallel(const StmtNode* op, const char* what) const;

  const Function& f_;
  Program p_;
  std::unordered_map<const VarNode*, int32_t> slots_;
  std::unordered_map<const BufferNode*, int32_t> bufs_;
  std::vector<bool> host_slot_;  // parameters and top-level lets: the same in every block and thread
  std::vector<Tracker*> trackers_;
  const VarNode* thread_var_ = nullptr;
  int kernel_ = -1;
  int parallel_depth_ = 0;
  SourceLoc parallel_loc_;
};

int32_t Compiler::bind(const Var& v, bool host) {
  int32_t slot = p_.nslots++;
  host_slot_.push_back(host);
  slots_[v.node()] = slot;
  for (auto* t : trackers_) t->bound.insert(slot);
  return slot;
}

void Compiler::unbind(const Var& v, int32_t previous) {
  if (previous >= 0)
    slots_[v.node()] = previous;
  else
    slots_.erase(v.node());
}

int32_t Compiler::var(const VarNode* v, const SourceLoc& where) {
  if (v == thread_var_) {
    if (parallel_depth_ > 0)
      throw Error(
          "the thread index " + v->name + " is read inside a parallel loop (" + parallel_loc_.str() +
              "): a parallel loop is run by the block as a whole; use a serial loop for per-thread code",
          where);
    XNode n;
    n.kind = XKind::ThreadIdx;
    n.type = v->dtype;
    return add_expr(n);
  }
  auto it = slots_.find(v);
  if (it == slots_.end())
    throw Error("variable " + v->name +
                    " is used where it is not bound (no enclosing loop, let, kernel or "
                    "parameter defines it)",
                where.known() ? where : v->loc);
  for (auto* t : trackers_) t->reads.insert(it->second);
  XNode n;
  n.kind = XKind::Var;
  n.type = v->dtype;
  n.a = it->second;
  return add_expr(n);
}

// Element indices live in fixed arrays of kMaxBufferRank (interp_expr.cpp); unverified IR (the
// interpreter runs any stage) must not reach them with more dimensions.
void require_rank_limit(const Buffer& b, const SourceLoc& where) {
  if (b.rank() > kMaxBufferRank)
    throw Error(std::string(name_of(b->scope)) + " buffer " + b->name + " has " + std::to_string(b.rank()) +
                    " dimensions; buffers have at most " + std::to_string(kMaxBufferRank),
                where);
}

int32_t Compiler::buffer(const Buffer& b, const SourceLoc& where) {
  if (!b) throw Error("statement refers to an empty buffer", where);
  auto it = bufs_.find(b.get());
  if (it != bufs_.end()) return it->second;
  require_rank_limit(b, b->loc.known() ? b->loc : where);
  if (b->scope == Scope::Global)
    throw Error("global buffer " + b->name + " is not a tensor parameter of function " + f_.name +
                    "; add it with k.tensor(...)",
                where);
  if (kernel_ < 0) throw Error("buffer " + b->name + " is used outside a kernel", where);
  int32_t id = int32_t(p_.bufs.size());
  bufs_[b.get()] = id;
  p_.bufs.push_back(BufInfo{b.get(), {}, -1});
  std::vector<int32_t> shape;
  for (std::size_t d = 0; d < b->shape.size(); ++d)
    shape.push_back(host_expr(
        b->shape[d],
        "dimension " + std::to_string(d) + " of " + std::string(name_of(b->scope)) + " buffer " + b->name,
        b->loc.known() ? b->loc : where));
  p_.bufs[id].shape = std::move(shape);
  p_.kernels[kernel_].local_bufs.push_back(id);
  return id;
}

// An expression every block and thread evaluates alike: grid sizes and buffer shapes.
int32_t Compiler::host_expr(const Expr& e, const std::string& what, const SourceLoc& where) {
  Tracker t;
  trackers_.push_back(&t);
  if (e.defined() && !e.dtype().is_int())
    throw Error(what + " has type " + std::string(e.dtype().name()) + "; it must be an integer", where);
  const VarNode* saved = thread_var_;
  thread_var_ = nullptr;
  int32_t id;
  try {
    id = expr(e, where);
  } catch (...) {
    trackers_.pop_back();
    thread_var_ = saved;
    throw;
  }
  trackers_.pop_back();
  thread_var_ = saved;
  for (int32_t s : t.reads)
    if (!host_slot_[s])
      throw Error(what +
                      " depends on a loop, block or thread variable; it may use only sizes, scalar "
                      "parameters and constants",
                  where);
  return id;
}

int32_t Compiler::access_check(const AccessCheck* op, const SourceLoc& where) {
  if (kernel_ < 0) throw Error("access_check outside a kernel", where);
  if (!find_access_record(f_)) throw Error("access_check without the function's access record", where);
  std::vector<int32_t> operands;
  for (auto& i : op->indices) operands.push_back(index(i, "checked index into " + op->buffer, where));
  for (auto& b : op->block) operands.push_back(index(b, "block index of a check", where));
  operands.push_back(index(op->thread, "thread of a check", where));
  XNode n;
  n.kind = XKind::AccessCheck;
  n.type = boolean;
  n.a = expr_as(op->cond, boolean, where);
  n.b = int32_t(p_.lists.size());
  n.c = int32_t(operands.size());
  n.imm = Scalar::of_int(int64_t(p_.checks.size()));
  p_.checks.push_back(op);
  p_.lists.insert(p_.lists.end(), operands.begin(), operands.end());
  return add_expr(n);
}

int32_t Compiler::load(const Load* op, const SourceLoc& where) {
  Buffer b(op->buffer);
  int32_t buf = buffer(b, where);
  if (op->indices.size() != b.rank())
    throw Error("load from " + b->name + " has " + std::to_string(op->indices.size()) + " indices; " +
                    b->name + " has rank " + std::to_string(b.rank()),
                where);
  if (b->scope == Scope::Local && parallel_depth_ > 0)
    throw Error("local buffer " + b->name + " is read inside a parallel loop (" + parallel_loc_.str() +
                    "); local buffers belong to one thread, use a fragment or shared buffer",
                where);
  std::vector<int32_t> idx;
  for (auto& i : op->indices) idx.push_back(index(i, "index into " + b->name, where));
  XNode n;
  n.kind = XKind::Load;
  n.type = op->dtype;
  n.a = buf;
  n.b = int32_t(p_.lists.size());
  n.c = int32_t(idx.size());
  p_.lists.insert(p_.lists.end(), idx.begin(), idx.end());
  return add_expr(n);
}

int32_t Compiler::expr(const Expr& e, const SourceLoc& where) {
  if (!e.defined()) throw Error("statement has an empty expression", where);
  XNode n;
  n.type = e.dtype();
  switch (e->kind) {
    case ExprKind::IntImm: n.imm = Scalar::of_int(e.as<IntImm>()->value); return add_expr(n);
    case ExprKind::FloatImm: n.imm = Scalar::of_float(e.as<FloatImm>()->value); return add_expr(n);
    case ExprKind::Var: return var(e.as<VarNode>(), where);
    case ExprKind::Binary: {
      auto* op = e.as<Binary>();
      n.kind = XKind::Binary, n.op = uint8_t(op->op), n.arg_type = op->a.dtype();
      // The constructors give both operands one type; hand-built nodes may not, so convert.
      n.a = expr(op->a, where), n.b = expr_as(op->b, op->a.dtype(), where);
      return add_expr(n);
    }
    case ExprKind::Unary: {
      auto* op = e.as<Unary>();
      n.kind = XKind::Unary, n.op = uint8_t(op->op), n.arg_type = op->a.dtype();
      n.a = expr(op->a, where);
      return add_expr(n);
    }
    case ExprKind::Select: {
      auto* op = e.as<Select>();
      n.kind = XKind::Select;
      n.a = expr_as(op->cond, boolean, where), n.b = expr_as(op->t, n.type, where),
      n.c = expr_as(op->f, n.type, where);
      return add_expr(n);
    }
    case ExprKind::Cast: {
      auto* op = e.as<Cast>();
      n.kind = XKind::Cast, n.arg_type = op->a.dtype();
      n.a = expr(op->a, where);
      return add_expr(n);
    }
    case ExprKind::Call: {
      auto* op = e.as<Call>();
      if (op->args.empty() || op->args.size() > 3) throw Error("intrinsic with a bad argument count", where);
      n.kind = XKind::Call, n.op = uint8_t(op->fn);
      if (!n.type.is_float())
        throw Error(std::string(name_of(op->fn)) + " must compute in a float type", where);
      n.a = expr_as(op->args[0], n.type, where);
      if (op->args.size() > 1) n.b = expr_as(op->args[1], n.type, where);
      if (op->args.size() > 2) n.c = expr_as(op->args[2], n.type, where);
      return add_expr(n);
    }
    case ExprKind::Load: return load(e.as<Load>(), where);
    case ExprKind::AccessCheck: return access_check(e.as<AccessCheck>(), where);
  }
  throw Error("unknown expression kind", where);
}

// The value converted to `t` where the IR left the conversion implicit (a let of another type, an
// integer condition).
int32_t Compiler::expr_as(const Expr& e, DType t, const SourceLoc& where) {
  int32_t id = expr(e, where);
  if (p_.exprs[std::size_t(id)].type == t) return id;
  XNode n;
  n.kind = XKind::Cast, n.type = t, n.arg_type = p_.exprs[std::size_t(id)].type, n.a = id;
  return add_expr(n);
}

int32_t Compiler::index(const Expr& e, const std::string& what, const SourceLoc& where) {
  if (e.defined() && !e.dtype().is_int())
    throw Error(what + " has type " + std::string(e.dtype().name()) +
                    "; it must be an integer (cast with "
                    "tg::cast(tg::i32, ...))",
                where);
  return expr(e, where);
}

void Compiler::need_kernel(const StmtNode* op, const char* what) const {
  if (kernel_ < 0)
    throw Error(std::string(what) + " outside a kernel: a function body is a kernel or a sequence of kernels",
                op->loc);
}

void Compiler::no_parallel(const StmtNode* op, const char* what) const {
  if (parallel_depth_ > 0)
    throw Error(std::string(what) + " inside a parallel loop (" + parallel_loc_.str() +
                    "): a parallel loop body is element code; move it out of the loop",
                op->loc);
}

int32_t Compiler::kernel(const Kernel* op) {
  if (kernel_ >= 0)
    throw Error("a kernel inside a kernel; kernels run one after another at the top level", op->loc);
  if (op->grid.size() != op->block_vars.size())
    throw Error("kernel has " + std::to_string(op->grid.size()) + " grid dimensions but " +
                    std::to_string(op->block_vars.size()) + " block variables",
                op->loc);
  if (op->threads <= 0 || op->threads > 4096)
    throw Error("kernel has " + std::to_string(op->threads) + " threads; use 1 to 1024", op->loc);
  KernelInfo k;
  k.node = op;
  k.threads = op->threads;
  for (std::size_t d = 0; d < op->grid.size(); ++d)
    k.grid.push_back(host_expr(op->grid[d], "grid dimension " + std::to_string(d), op->loc));
  kernel_ = int(p_.kernels.size());
  p_.kernels.push_back(std::move(k));
  std::vector<int32_t> block_slots;
  for (auto& v : op->block_vars) block_slots.push_back(bind(v));
  thread_var_ = op->thread_var.defined() ? op->thread_var.node() : nullptr;
  for (auto& b : op->buffers) buffer(b, op->loc);
  if (!op->body) throw Error("kernel without a body", op->loc);
  int32_t body = stmt(op->body);
  for (auto& v : op->block_vars) slots_.erase(v.node());
  thread_var_ = nullptr;
  KernelInfo& ki = p_.kernels[kernel_];
  ki.block_slots = std::move(block_slots);
  ki.body = body;
  SNode n(StmtKind::Kernel, op);
  n.kernel = kernel_;
  n.body = body;
  kernel_ = -1;
  return add_stmt(std::move(n));
}

int32_t Compiler::for_loop(const For* op) {
  need_kernel(op, "a loop");
  SNode n(StmtKind::For, op);
  n.e0 = index(op->min, "loop start", op->loc);
  n.e1 = index(op->extent, "loop extent", op->loc);
  if (!op->var.dtype().is_int())
    throw Error("loop variable " + op->var.name() + " has type " + std::string(op->var.dtype().name()) +
                    "; loop variables are integers",
                op->loc);
  auto old = slots_.find(op->var.node());
  int32_t previous = old == slots_.end() ? -1 : old->second;
  bool parallel = op->for_kind == ForKind::Parallel;
  Tracker t;
  if (parallel) {
    n.operands = {n.e0, n.e1};
    if (parallel_depth_++ == 0) parallel_loc_ = op->loc;
    trackers_.push_back(&t);
  }
  n.slot = bind(op->var);
  if (!op->body) throw Error("loop without a body", op->loc);
  try {
    n.body = stmt(op->body);
  } catch (...) {
    if (parallel) trackers_.pop_back(), --parallel_depth_;
    throw;
  }
  unbind(op->var, previous);
  if (parallel) {
    trackers_.pop_back();
    --parallel_depth_;
    for (int32_t s : t.reads)
      if (!t.bound.count(s) && !host_slot_[s]) n.uniform_slots.push_back(s);
  }
  return add_stmt(std::move(n));
}

XRegion Compiler::region(const Region& r, SNode& n, const char* what) {
  XRegion x;
  x.buf = buffer(r.buffer, n.src->loc);
  if (r.buffer->scope == Scope::Local)
    throw Error(
        std::string(what) + " of local buffer " + r.buffer->name +
            ": tile statements are collective over the "
            "block and work on global, shared and fragment buffers; use element stores for local ones",
        n.src->loc);
  if (r.offsets.size() != r.buffer.rank() || r.extents.size() != r.buffer.rank())
    throw Error(std::string(what) + ": region of " + r.buffer->name + " has " +
                    std::to_string(r.offsets.size()) + " offsets and " + std::to_string(r.extents.size()) +
                    " extents; the buffer has rank " + std::to_string(r.buffer.rank()),
                n.src->loc);
  for (auto& o : r.offsets)
    x.offsets.push_back(index(o, std::string(what) + " offset into " + r.buffer->name, n.src->loc));
  for (auto& e : r.extents)
    x.extents.push_back(index(e, std::string(what) + " extent of " + r.buffer->name, n.src->loc));
  n.operands.insert(n.operands.end(), x.offsets.begin(), x.offsets.end());
  n.operands.insert(n.operands.end(), x.extents.begin(), x.extents.end());
  return x;
}

int32_t Compiler::collective(const Stmt& s) {
  SNode n(s->kind, s.get());
  const char* what = s->kind == StmtKind::Copy   ? "copy"
                     : s->kind == StmtKind::Fill ? "fill"
                     : s->kind == StmtKind::Gemm ? "gemm"
                                                 : "reduce";
  need_kernel(s.get(), what);
  no_parallel(s.get(), what);
  if (auto* op = s.as<ir::Copy>()) {
    n.regions = {region(op->src, n, what), region(op->dst, n, what)};
  } else if (auto* op = s.as<ir::Fill>()) {
    n.regions = {region(op->dst, n, what)};
    n.e0 = expr(op->value, op->loc);
    n.operands.push_back(n.e0);
  } else if (auto* op = s.as<ir::Gemm>()) {
    n.regions = {region(op->a, n, what), region(op->b, n, what), region(op->c, n, what)};
    gemm_hints(op, n);
  } else if (auto* op = s.as<ir::Reduce>()) {
    n.regions = {region(Region::full(op->src), n, what), region(Region::full(op->dst), n, what)};
  }
  return add_stmt(std::move(n));
}

// The hints interleaved with a gemm: slot, the step index; body, the hints (run once per step).
void Compiler::gemm_hints(const ir::Gemm* op, SNode& n) {
  if (!op->each_step) return;
  if (!op->step.defined()) throw Error("gemm hints without a step index", op->loc);
  if (!op->step.dtype().is_int())
    throw Error("the gemm's step index " + op->step.name() + " has type " +
                    std::string(op->step.dtype().name()) + "; step indices are integers",
                op->loc);
  if (op->steps < 1) throw Error("gemm hints in " + std::to_string(op->steps) + " steps", op->loc);
  auto old = slots_.find(op->step.node());
  int32_t previous = old == slots_.end() ? -1 : old->second;
  n.slot = bind(op->step);
  n.body = stmt(op->each_step);
  unbind(op->step, previous);
}

// buf and idx: the element whose line it hints at; the indices are evaluated, nothing is accessed.
int32_t Compiler::prefetch(const ir::Prefetch* op) {
  need_kernel(op, "a prefetch");
  SNode n(StmtKind::Prefetch, op);
  n.buf = buffer(op->buffer, op->loc);
  if (op->indices.size() != op->buffer.rank())
    throw Error("prefetch of " + op->buffer->name + " has " + std::to_string(op->indices.size()) +
                    " indices; " + op->buffer->name + " has rank " + std::to_string(op->buffer.rank()),
                op->loc);
  for (auto& i : op->indices) n.idx.push_back(index(i, "prefetch index into " + op->buffer->name, op->loc));
  return add_stmt(std::move(n));
}

// regions[0]: the registers, offsets[0] the lane's first one; buf and idx: the row it supplies.
int32_t Compiler::ldmatrix(const ir::LdMatrix* op) {
  need_kernel(op, "ldmatrix");
  no_parallel(op, "ldmatrix");
  if (op->regs->scope != Scope::Local || op->src->scope != Scope::Shared)
    throw Error("ldmatrix loads a shared buffer into each lane's registers (a local buffer)", op->loc);
  SNode n(StmtKind::LdMatrix, op);
  XRegion regs;
  regs.buf = buffer(op->regs, op->loc);
  regs.offsets.push_back(index(op->reg_base, "ldmatrix register index into " + op->regs->name, op->loc));
  n.regions.push_back(std::move(regs));
  n.buf = buffer(op->src, op->loc);
  if (op->src_indices.size() != op->src.rank())
    throw Error("ldmatrix from " + op->src->name + " has " + std::to_string(op->src_indices.size()) +
                    " indices; " + op->src->name + " has rank " + std::to_string(op->src.rank()),
                op->loc);
  for (auto& i : op->src_indices) n.idx.push_back(index(i, "ldmatrix index into " + op->src->name, op->loc));
  return add_stmt(std::move(n));
}

// buf, idx: the mbarrier element (a shared i64 buffer's, marked as holding mbarriers).
int32_t Compiler::barrier_of(const Buffer& b, const std::vector<Expr>& indices, SNode& n, const StmtNode* op) {
  if (!b || b->scope != Scope::Shared || b->dtype != i64)
    throw Error("an mbarrier is an element of a shared i64 buffer", op->loc);
  n.buf = buffer(b, op->loc);
  p_.bufs[std::size_t(n.buf)].mbarrier = true;
  if (indices.size() != b.rank())
    throw Error("the mbarrier " + b->name + " has rank " + std::to_string(b.rank()) + "; " +
                    std::to_string(indices.size()) + " indices given",
                op->loc);
  for (auto& i : indices) n.idx.push_back(index(i, "mbarrier index into " + b->name, op->loc));
  return n.buf;
}

int32_t Compiler::mbarrier(const ir::MBarrier* op) {
  need_kernel(op, "an mbarrier statement");
  no_parallel(op, "an mbarrier statement");
  SNode n(StmtKind::MBarrier, op);
  barrier_of(op->buffer, op->indices, n, op);
  if (op->value.defined()) n.e0 = index(op->value, "the mbarrier statement's value", op->loc);
  return add_stmt(std::move(n));
}

int32_t Compiler::bulk_copy(const ir::BulkCopy* op) {
  need_kernel(op, "a bulk_copy");
  no_parallel(op, "a bulk_copy");
  SNode n(StmtKind::BulkCopy, op);
  n.regions = {region(op->src, n, "bulk_copy"), region(op->dst, n, "bulk_copy")};
  barrier_of(op->barrier, op->barrier_indices, n, op);
  return add_stmt(std::move(n));
}

// buf: the held accumulator; body: the statements that see it held.
int32_t Compiler::hold(const ir::Hold* op) {
  need_kernel(op, "hold");
  no_parallel(op, "hold");
  SNode n(StmtKind::Hold, op);
  n.unit = find_matrix_unit(op->unit);
  if (!n.unit) throw Error("hold uses unknown matrix unit \"" + op->unit + "\"", op->loc);
  if (op->buffer->scope != Scope::Local || op->buffer->dtype != n.unit->c_type)
    throw Error("hold keeps a local accumulator of " + op->unit + "'s C type (" +
                    std::string(n.unit->c_type.name()) + "); " + op->buffer->name + " is a " +
                    name_of(op->buffer->scope) + " " + std::string(op->buffer->dtype.name()) + " buffer",
                op->loc);
  n.buf = buffer(op->buffer, op->loc);
  if (!op->body) throw Error("hold without a body", op->loc);
  n.body = stmt(op->body);
  return add_stmt(std::move(n));
}

int32_t Compiler::mma(const ir::Mma* op) {
  need_kernel(op, "mma");
  no_parallel(op, "mma");
  SNode n(StmtKind::Mma, op);
  n.unit = find_matrix_unit(op->unit);
  if (!n.unit) {
    std::string known;
    for (auto& name : matrix_unit_names()) known += (known.empty() ? "" : ", ") + name;
    throw Error("mma uses unknown matrix unit \"" + op->unit + "\"; known units: " + known, op->loc);
  }
  for (const MmaOperand* o : {&op->a, &op->b, &op->c}) {
    XRegion x;
    x.buf = buffer(o->buffer, op->loc);
    if (o->is_tile() && o != &op->c && o->buffer->scope == Scope::Shared &&
        o->tile.size() == o->buffer->shape.size() && o->tile.size() >= 2) {
      // a unit tile of a Shared buffer: the indices of its first element (exec_mma reads it by
      // the layout); told apart from registers by the buffer's scope
      for (const Expr& e : o->tile)
        x.offsets.push_back(index(e, "mma tile index into " + o->buffer->name, op->loc));
      n.regions.push_back(std::move(x));
      continue;
    }
    if (o->is_tile())
      throw Error("mma tile operand " + o->buffer->name +
                      " must be A or B, of a shared buffer of rank 2 or more, with one index a dimension",
                  op->loc);
    if (o->buffer->scope != Scope::Local)
      throw Error("mma operand " + o->buffer->name + " is a " + name_of(o->buffer->scope) +
                      " buffer; mma operands are each lane's registers, a local buffer",
                  op->loc);
    x.offsets.push_back(
        index(o->offset.defined() ? o->offset : Expr(0), "mma offset into " + o->buffer->name, op->loc));
    n.regions.push_back(std::move(x));
  }
  return add_stmt(std::move(n));
}

int32_t Compiler::let(const Let* op) {
  SNode n(StmtKind::Let, op);
  if (!op->var.defined()) throw Error("let without a variable", op->loc);
  n.e0 = expr_as(op->value, op->var.dtype(), op->loc);
  auto old = slots_.find(op->var.node());
  int32_t previous = old == slots_.end() ? -1 : old->second;
  n.slot = bind(op->var, kernel_ < 0);
  if (!op->body) throw Error("let without a body", op->loc);
  n.body = stmt(op->body);
  unbind(op->var, previous);
  return add_stmt(std::move(n));
}

int32_t Compiler::store(const Stmt& s) {
  bool atomic = s->kind == StmtKind::Atomic;
  const Buffer& b = atomic ? s.as<ir::Atomic>()->buffer : s.as<ir::Store>()->buffer;
  const auto& indices = atomic ? s.as<ir::Atomic>()->indices : s.as<ir::Store>()->indices;
  const Expr& value = atomic ? s.as<ir::Atomic>()->value : s.as<ir::Store>()->value;
  need_kernel(s.get(), atomic ? "an atomic" : "a store");
  SNode n(s->kind, s.get());
  n.buf = buffer(b, s->loc);
  if (indices.size() != b.rank())
    throw Error("store to " + b->name + " has " + std::to_string(indices.size()) + " indices; " + b->name +
                    " has rank " + std::to_string(b.rank()),
                s->loc);
  if (b->scope == Scope::Local && parallel_depth_ > 0)
    throw Error("local buffer " + b->name + " is written inside a parallel loop (" + parallel_loc_.str() +
                    "); local buffers belong to one thread, use a fragment or shared buffer",
                s->loc);
  for (auto& i : indices) n.idx.push_back(index(i, "index into " + b->name, s->loc));
  n.e0 = expr(value, s->loc);
  return add_stmt(std::move(n));
}

int32_t Compiler::stmt(const Stmt& s) {
  if (!s) throw Error("empty statement");
  switch (s->kind) {
    case StmtKind::Kernel: return kernel(s.as<Kernel>());
    case StmtKind::For: return for_loop(s.as<For>());
    case StmtKind::Copy:
    case StmtKind::Fill:
    case StmtKind::Gemm:
    case StmtKind::Reduce: return collective(s);
    case StmtKind::Mma: return mma(s.as<ir::Mma>());
    case StmtKind::LdMatrix: return ldmatrix(s.as<ir::LdMatrix>());
    case StmtKind::Prefetch: return prefetch(s.as<ir::Prefetch>());
    case StmtKind::Hold: return hold(s.as<ir::Hold>());
    case StmtKind::MBarrier: return mbarrier(s.as<ir::MBarrier>());
    case StmtKind::BulkCopy: return bulk_copy(s.as<ir::BulkCopy>());
    case StmtKind::Store:
    case StmtKind::Atomic: return store(s);
    case StmtKind::If: {
      auto* op = s.as<If>();
      need_kernel(op, "an if");
      SNode n(StmtKind::If, op);
      n.e0 = expr_as(op->cond, boolean, op->loc);
      if (!op->then_body) throw Error("if without a then branch", op->loc);
      n.body = stmt(op->then_body);
      if (op->else_body) n.orelse = stmt(op->else_body);
      return add_stmt(std::move(n));
    }
    case StmtKind::Let: return let(s.as<Let>());
    case StmtKind::Barrier:
      need_kernel(s.get(), "a barrier");
      no_parallel(s.get(), "a barrier");
      return add_stmt(SNode(StmtKind::Barrier, s.get()));
    case StmtKind::AsyncWait:
      need_kernel(s.get(), "an async_wait");
      no_parallel(s.get(), "an async_wait");
      return add_stmt(SNode(StmtKind::AsyncWait, s.get()));
    case StmtKind::MmaSync:
      need_kernel(s.get(), "an mma_fence, proxy_fence or mma_wait");
      no_parallel(s.get(), "an mma_fence, proxy_fence or mma_wait");
      return add_stmt(SNode(StmtKind::MmaSync, s.get()));
    case StmtKind::Seq: {
      SNode n(StmtKind::Seq, s.get());
      for (auto& c : s.as<Seq>()->stmts) n.stmts.push_back(stmt(c));
      return add_stmt(std::move(n));
    }
  }
  throw Error("unknown statement kind", s->loc);
}

Program Compiler::run() {
  p_.param_slot.assign(f_.params.size(), -1);
  p_.param_buf.assign(f_.params.size(), -1);
  for (std::size_t i = 0; i < f_.params.size(); ++i) {
    const Param& prm = f_.params[i];
    if (prm.kind == Param::Kind::Tensor) {
      if (!prm.buffer || prm.buffer->scope != Scope::Global)
        throw Error("tensor parameter " + (prm.buffer ? prm.buffer->name : std::string("?")) +
                        " must be a global buffer",
                    f_.loc);
      require_rank_limit(prm.buffer, prm.buffer->loc.known() ? prm.buffer->loc : f_.loc);
      int32_t id = int32_t(p_.bufs.size());
      bufs_[prm.buffer.get()] = id;
      p_.bufs.push_back(BufInfo{prm.buffer.get(), {}, int(i)});
      p_.param_buf[i] = id;
      if (&prm == find_access_record(f_)) p_.access_record = id;
    } else {
      if (!prm.var.defined()) throw Error("parameter without a variable", f_.loc);
      p_.param_slot[i] = bind(prm.var, true);
    }
  }
  // Tensor shapes may name any size or scalar parameter, so they compile once all are bound.
  for (std::size_t i = 0; i < f_.params.size(); ++i) {
    if (p_.param_buf[i] < 0) continue;
    const Buffer& b = f_.params[i].buffer;
    std::vector<int32_t> shape;
    for (std::size_t d = 0; d < b->shape.size(); ++d)
      shape.push_back(host_expr(b->shape[d], "dimension " + std::to_string(d) + " of tensor " + b->name,
                                b->loc.known() ? b->loc : f_.loc));
    p_.bufs[std::size_t(p_.param_buf[i])].shape = std::move(shape);
  }
  if (!f_.body) throw Error("function " + f_.name + " has no body", f_.loc);
  p_.root = stmt(f_.body);
  return std::move(p_);
}

}  // namespace

Program compile(const Function& f) { return Compiler(f).run(); }

}  // namespace tg::interp
