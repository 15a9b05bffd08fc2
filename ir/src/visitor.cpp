#include "tilegen/ir/visitor.h"

namespace tg {

using namespace ir;

// ---- IRVisitor

void IRVisitor::visit_expr(const Expr& e) {
  if (!e.defined()) return;
  switch (e->kind) {
    case ExprKind::IntImm: return visit(static_cast<const IntImm*>(e.get()));
    case ExprKind::FloatImm: return visit(static_cast<const FloatImm*>(e.get()));
    case ExprKind::Var: return visit(static_cast<const VarNode*>(e.get()));
    case ExprKind::Binary: return visit(static_cast<const Binary*>(e.get()));
    case ExprKind::Unary: return visit(static_cast<const Unary*>(e.get()));
    case ExprKind::Select: return visit(static_cast<const Select*>(e.get()));
    case ExprKind::Cast: return visit(static_cast<const Cast*>(e.get()));
    case ExprKind::Call: return visit(static_cast<const Call*>(e.get()));
    case ExprKind::Load: return visit(static_cast<const Load*>(e.get()));
    case ExprKind::AccessCheck: return visit(static_cast<const AccessCheck*>(e.get()));
  }
}

void IRVisitor::visit_stmt(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Kernel: return visit(static_cast<const Kernel*>(s.get()));
    case StmtKind::For: return visit(static_cast<const For*>(s.get()));
    case StmtKind::Copy: return visit(static_cast<const Copy*>(s.get()));
    case StmtKind::Fill: return visit(static_cast<const Fill*>(s.get()));
    case StmtKind::Gemm: return visit(static_cast<const Gemm*>(s.get()));
    case StmtKind::Reduce: return visit(static_cast<const Reduce*>(s.get()));
    case StmtKind::Store: return visit(static_cast<const Store*>(s.get()));
    case StmtKind::Atomic: return visit(static_cast<const Atomic*>(s.get()));
    case StmtKind::If: return visit(static_cast<const If*>(s.get()));
    case StmtKind::Let: return visit(static_cast<const Let*>(s.get()));
    case StmtKind::Barrier: return visit(static_cast<const Barrier*>(s.get()));
    case StmtKind::AsyncWait: return visit(static_cast<const AsyncWait*>(s.get()));
    case StmtKind::LdMatrix: return visit(static_cast<const LdMatrix*>(s.get()));
    case StmtKind::Prefetch: return visit(static_cast<const Prefetch*>(s.get()));
    case StmtKind::Hold: return visit(static_cast<const Hold*>(s.get()));
    case StmtKind::Seq: return visit(static_cast<const Seq*>(s.get()));
    case StmtKind::Mma: return visit(static_cast<const Mma*>(s.get()));
    case StmtKind::MmaSync: return visit(static_cast<const MmaSync*>(s.get()));
    case StmtKind::MBarrier: return visit(static_cast<const MBarrier*>(s.get()));
    case StmtKind::BulkCopy: return visit(static_cast<const BulkCopy*>(s.get()));
  }
}

void IRVisitor::visit_region(const Region& r) {
  for (auto& e : r.offsets) visit_expr(e);
  for (auto& e : r.extents) visit_expr(e);
}
void IRVisitor::visit_buffer(const Buffer& b) {
  for (auto& e : b->shape) visit_expr(e);
}

void IRVisitor::visit(const Binary* op) { visit_expr(op->a); visit_expr(op->b); }
void IRVisitor::visit(const Unary* op) { visit_expr(op->a); }
void IRVisitor::visit(const Select* op) { visit_expr(op->cond); visit_expr(op->t); visit_expr(op->f); }
void IRVisitor::visit(const Cast* op) { visit_expr(op->a); }
void IRVisitor::visit(const Call* op) { for (auto& a : op->args) visit_expr(a); }
void IRVisitor::visit(const Load* op) { for (auto& i : op->indices) visit_expr(i); }
void IRVisitor::visit(const AccessCheck* op) {
  visit_expr(op->cond);
  for (auto& i : op->indices) visit_expr(i);
  for (auto& i : op->shape) visit_expr(i);
  for (auto& b : op->block) visit_expr(b);
  visit_expr(op->thread);
}

void IRVisitor::visit(const Kernel* op) {
  for (auto& g : op->grid) visit_expr(g);
  for (auto& b : op->buffers) visit_buffer(b);
  visit_stmt(op->body);
}
void IRVisitor::visit(const For* op) { visit_expr(op->min); visit_expr(op->extent); visit_stmt(op->body); }
void IRVisitor::visit(const Copy* op) { visit_region(op->src); visit_region(op->dst); }
void IRVisitor::visit(const Fill* op) { visit_region(op->dst); visit_expr(op->value); }
void IRVisitor::visit(const Gemm* op) {
  visit_region(op->a);
  visit_region(op->b);
  visit_region(op->c);
  visit_stmt(op->each_step);
}
void IRVisitor::visit(const Reduce*) {}
void IRVisitor::visit(const Store* op) { for (auto& i : op->indices) visit_expr(i); visit_expr(op->value); }
void IRVisitor::visit(const LdMatrix* op) {
  visit_expr(op->reg_base);
  for (auto& i : op->src_indices) visit_expr(i);
}
void IRVisitor::visit(const Prefetch* op) {
  for (auto& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const Hold* op) { visit_stmt(op->body); }
void IRVisitor::visit(const MBarrier* op) {
  for (auto& i : op->indices) visit_expr(i);
  visit_expr(op->value);
}
void IRVisitor::visit(const BulkCopy* op) {
  visit_region(op->src);
  visit_region(op->dst);
  for (auto& i : op->barrier_indices) visit_expr(i);
}
void IRVisitor::visit(const Atomic* op) { for (auto& i : op->indices) visit_expr(i); visit_expr(op->value); }
void IRVisitor::visit(const If* op) { visit_expr(op->cond); visit_stmt(op->then_body); visit_stmt(op->else_body); }
void IRVisitor::visit(const Let* op) { visit_expr(op->value); visit_stmt(op->body); }
void IRVisitor::visit(const Seq* op) { for (auto& s : op->stmts) visit_stmt(s); }
void IRVisitor::visit(const Mma* op) {
  for (const MmaOperand* o : {&op->a, &op->b, &op->c}) {
    if (o->offset.defined()) visit_expr(o->offset);
    for (const Expr& e : o->tile) visit_expr(e);
  }
}

// ---- IRMutator

namespace {
bool same(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!a[i].same_as(b[i])) return false;
  return true;
}
}  // namespace

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e->kind) {
    case ExprKind::IntImm: return visit(static_cast<const IntImm*>(e.get()), e);
    case ExprKind::FloatImm: return visit(static_cast<const FloatImm*>(e.get()), e);
    case ExprKind::Var: return visit(static_cast<const VarNode*>(e.get()), e);
    case ExprKind::Binary: return visit(static_cast<const Binary*>(e.get()), e);
    case ExprKind::Unary: return visit(static_cast<const Unary*>(e.get()), e);
    case ExprKind::Select: return visit(static_cast<const Select*>(e.get()), e);
    case ExprKind::Cast: return visit(static_cast<const Cast*>(e.get()), e);
    case ExprKind::Call: return visit(static_cast<const Call*>(e.get()), e);
    case ExprKind::Load: return visit(static_cast<const Load*>(e.get()), e);
    case ExprKind::AccessCheck: return visit(static_cast<const AccessCheck*>(e.get()), e);
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Kernel: return visit(static_cast<const Kernel*>(s.get()), s);
    case StmtKind::For: return visit(static_cast<const For*>(s.get()), s);
    case StmtKind::Copy: return visit(static_cast<const Copy*>(s.get()), s);
    case StmtKind::Fill: return visit(static_cast<const Fill*>(s.get()), s);
    case StmtKind::Gemm: return visit(static_cast<const Gemm*>(s.get()), s);
    case StmtKind::Reduce: return visit(static_cast<const Reduce*>(s.get()), s);
    case StmtKind::Store: return visit(static_cast<const Store*>(s.get()), s);
    case StmtKind::Atomic: return visit(static_cast<const Atomic*>(s.get()), s);
    case StmtKind::If: return visit(static_cast<const If*>(s.get()), s);
    case StmtKind::Let: return visit(static_cast<const Let*>(s.get()), s);
    case StmtKind::Barrier: return visit(static_cast<const Barrier*>(s.get()), s);
    case StmtKind::AsyncWait: return visit(static_cast<const AsyncWait*>(s.get()), s);
    case StmtKind::LdMatrix: return visit(static_cast<const LdMatrix*>(s.get()), s);
    case StmtKind::Prefetch: return visit(static_cast<const Prefetch*>(s.get()), s);
    case StmtKind::Hold: return visit(static_cast<const Hold*>(s.get()), s);
    case StmtKind::Seq: return visit(static_cast<const Seq*>(s.get()), s);
    case StmtKind::Mma: return visit(static_cast<const Mma*>(s.get()), s);
    case StmtKind::MmaSync: return visit(static_cast<const MmaSync*>(s.get()), s);
    case StmtKind::MBarrier: return visit(static_cast<const MBarrier*>(s.get()), s);
    case StmtKind::BulkCopy: return visit(static_cast<const BulkCopy*>(s.get()), s);
  }
  return s;
}

Buffer IRMutator::mutate_buffer(const Buffer& b) {
  if (!b) return b;
  for (auto& [node, out] : buffer_memo_)
    if (node == b.get()) return out;
  std::vector<Expr> shape;
  for (auto& d : b->shape) shape.push_back(mutate(d));
  Buffer out = b;
  if (!same(shape, b->shape)) {
    auto n = std::make_shared<BufferNode>(*b.get());
    n->shape = std::move(shape);
    out = Buffer(std::move(n));
  }
  buffer_memo_.emplace_back(b.get(), out);
  return out;
}

Region IRMutator::mutate_region(const Region& r) {
  Region out;
  out.buffer = mutate_buffer(r.buffer);
  for (auto& e : r.offsets) out.offsets.push_back(mutate(e));
  for (auto& e : r.extents) out.extents.push_back(mutate(e));
  return out;
}

namespace {
bool same_region(const Region& a, const Region& b) {
  return a.buffer.same_as(b.buffer) && same(a.offsets, b.offsets) && same(a.extents, b.extents);
}
}  // namespace

Function IRMutator::mutate_function(const Function& f) {
  Function out = f;
  for (auto& p : out.params) {
    if (p.kind == Param::Kind::Tensor) p.buffer = mutate_buffer(p.buffer);
    else if (Expr v = mutate(p.var); v.as<VarNode>()) p.var = Var(std::static_pointer_cast<const VarNode>(v.ptr()));
  }
  out.body = mutate(f.body);
  return out;
}

Expr IRMutator::visit(const Binary* op, const Expr& self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return make_binary(op->op, a, b);
}
Expr IRMutator::visit(const Unary* op, const Expr& self) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? self : make_unary(op->op, a);
}
Expr IRMutator::visit(const Select* op, const Expr& self) {
  Expr c = mutate(op->cond), t = mutate(op->t), f = mutate(op->f);
  if (c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f)) return self;
  return make_select(c, t, f);
}
Expr IRMutator::visit(const Cast* op, const Expr& self) {
  Expr a = mutate(op->a);
  return a.same_as(op->a) ? self : make_cast(op->dtype, a);
}
Expr IRMutator::visit(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  for (auto& a : op->args) args.push_back(mutate(a));
  if (same(args, op->args)) return self;
  return make_call(op->fn, std::move(args));
}
Expr IRMutator::visit(const Load* op, const Expr& self) {
  std::vector<Expr> idx;
  for (auto& i : op->indices) idx.push_back(mutate(i));
  Buffer b = mutate_buffer(Buffer(op->buffer));
  if (same(idx, op->indices) && b.get() == op->buffer.get()) return self;
  return make_load(b.ptr(), std::move(idx));
}
Expr IRMutator::visit(const AccessCheck* op, const Expr& self) {
  Expr cond = mutate(op->cond), thread = mutate(op->thread);
  std::vector<Expr> idx, shape, block;
  for (auto& i : op->indices) idx.push_back(mutate(i));
  for (auto& i : op->shape) shape.push_back(mutate(i));
  for (auto& b : op->block) block.push_back(mutate(b));
  if (cond.same_as(op->cond) && thread.same_as(op->thread) && same(idx, op->indices) &&
      same(shape, op->shape) && same(block, op->block))
    return self;
  auto n = std::make_shared<AccessCheck>(*op);
  n->cond = cond, n->thread = thread;
  n->indices = std::move(idx), n->shape = std::move(shape), n->block = std::move(block);
  return Expr(std::move(n));
}

Stmt IRMutator::visit(const Kernel* op, const Stmt& self) {
  std::vector<Expr> grid;
  for (auto& g : op->grid) grid.push_back(mutate(g));
  std::vector<Buffer> bufs;
  bool bufs_same = true;
  for (auto& b : op->buffers) {
    bufs.push_back(mutate_buffer(b));
    bufs_same = bufs_same && bufs.back().same_as(b);
  }
  Stmt body = mutate(op->body);
  if (same(grid, op->grid) && bufs_same && body.same_as(op->body)) return self;
  auto n = std::make_shared<Kernel>(*op);
  n->grid = std::move(grid);
  n->buffers = std::move(bufs);
  n->body = std::move(body);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const For* op, const Stmt& self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  return rebuilt(op, self, mn, ext, body);
}
Stmt IRMutator::visit(const Copy* op, const Stmt& self) {
  Region s = mutate_region(op->src), d = mutate_region(op->dst);
  if (same_region(s, op->src) && same_region(d, op->dst)) return self;
  auto n = std::make_shared<Copy>(*op);
  n->src = std::move(s);
  n->dst = std::move(d);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const Fill* op, const Stmt& self) {
  Region d = mutate_region(op->dst);
  Expr v = mutate(op->value);
  if (same_region(d, op->dst) && v.same_as(op->value)) return self;
  auto n = std::make_shared<Fill>(*op);
  n->dst = std::move(d);
  n->value = v;
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const Gemm* op, const Stmt& self) {
  Region a = mutate_region(op->a), b = mutate_region(op->b), c = mutate_region(op->c);
  return rebuilt(op, self, a, b, c, mutate(op->each_step));
}
Stmt IRMutator::visit(const Reduce* op, const Stmt& self) {
  Buffer s = mutate_buffer(op->src), d = mutate_buffer(op->dst);
  if (s.same_as(op->src) && d.same_as(op->dst)) return self;
  auto n = std::make_shared<Reduce>(*op);
  n->src = s;
  n->dst = d;
  return Stmt(std::move(n));
}
namespace {
// Store and Atomic: buffer[indices] (op)= value.
template <typename Node>
Stmt mutate_write(IRMutator& m, const Node* op, const Stmt& self) {
  Buffer b = m.mutate_buffer(op->buffer);
  std::vector<Expr> idx;
  for (auto& i : op->indices) idx.push_back(m.mutate(i));
  Expr v = m.mutate(op->value);
  if (b.same_as(op->buffer) && same(idx, op->indices) && v.same_as(op->value)) return self;
  auto n = std::make_shared<Node>(*op);
  n->buffer = b;
  n->indices = std::move(idx);
  n->value = v;
  return Stmt(std::move(n));
}
}  // namespace
Stmt IRMutator::visit(const Store* op, const Stmt& self) { return mutate_write(*this, op, self); }
Stmt IRMutator::visit(const Atomic* op, const Stmt& self) { return mutate_write(*this, op, self); }
Stmt IRMutator::visit(const Prefetch* op, const Stmt& self) {
  Buffer b = mutate_buffer(op->buffer);
  std::vector<Expr> idx;
  for (auto& i : op->indices) idx.push_back(mutate(i));
  if (b.same_as(op->buffer) && same(idx, op->indices)) return self;
  auto n = std::make_shared<Prefetch>(*op);
  n->buffer = b;
  n->indices = std::move(idx);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const MBarrier* op, const Stmt& self) {
  Buffer b = mutate_buffer(op->buffer);
  std::vector<Expr> idx;
  for (auto& i : op->indices) idx.push_back(mutate(i));
  Expr v = mutate(op->value);
  if (b.same_as(op->buffer) && same(idx, op->indices) && v.same_as(op->value)) return self;
  auto n = std::make_shared<MBarrier>(*op);
  n->buffer = b;
  n->indices = std::move(idx);
  n->value = std::move(v);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const BulkCopy* op, const Stmt& self) {
  Region s = mutate_region(op->src), d = mutate_region(op->dst);
  Buffer b = mutate_buffer(op->barrier);
  std::vector<Expr> idx;
  for (auto& i : op->barrier_indices) idx.push_back(mutate(i));
  if (same_region(s, op->src) && same_region(d, op->dst) && b.same_as(op->barrier) &&
      same(idx, op->barrier_indices))
    return self;
  auto n = std::make_shared<BulkCopy>(*op);
  n->src = std::move(s);
  n->dst = std::move(d);
  n->barrier = b;
  n->barrier_indices = std::move(idx);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const LdMatrix* op, const Stmt& self) {
  Buffer r = mutate_buffer(op->regs), s = mutate_buffer(op->src);
  Expr base = mutate(op->reg_base);
  std::vector<Expr> idx;
  for (auto& i : op->src_indices) idx.push_back(mutate(i));
  if (r.same_as(op->regs) && s.same_as(op->src) && base.same_as(op->reg_base) && same(idx, op->src_indices))
    return self;
  auto n = std::make_shared<LdMatrix>(*op);
  n->regs = r, n->src = s, n->reg_base = base, n->src_indices = std::move(idx);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const Hold* op, const Stmt& self) {
  Buffer b = mutate_buffer(op->buffer);
  Stmt body = mutate(op->body);
  if (b.same_as(op->buffer) && body.same_as(op->body)) return self;
  auto n = std::make_shared<Hold>(*op);
  n->buffer = b, n->body = body;
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const If* op, const Stmt& self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_body), e = mutate(op->else_body);
  return rebuilt(op, self, c, t, e);
}
Stmt IRMutator::visit(const Let* op, const Stmt& self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  return rebuilt(op, self, v, b);
}

Stmt IRMutator::rebuilt(const For* op, const Stmt& self, const Expr& min, const Expr& extent,
                                   const Stmt& body) {
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
  auto n = std::make_shared<For>(*op);
  n->min = min;
  n->extent = extent;
  n->body = body;
  return Stmt(std::move(n));
}

Stmt IRMutator::rebuilt(const Let* op, const Stmt& self, const Expr& value, const Stmt& body) {
  if (value.same_as(op->value) && body.same_as(op->body)) return self;
  auto n = std::make_shared<Let>(*op);
  n->value = value;
  n->body = body;
  return Stmt(std::move(n));
}

Stmt IRMutator::rebuilt(const If* op, const Stmt& self, const Expr& cond, const Stmt& then_body,
                                   const Stmt& else_body) {
  if (cond.same_as(op->cond) && then_body.same_as(op->then_body) && else_body.same_as(op->else_body))
    return self;
  auto n = std::make_shared<If>(*op);
  n->cond = cond;
  n->then_body = then_body;
  n->else_body = else_body;
  return Stmt(std::move(n));
}

Stmt IRMutator::rebuilt(const Gemm* op, const Stmt& self, const Region& a, const Region& b, const Region& c,
                        const Stmt& each_step) {
  if (same_region(a, op->a) && same_region(b, op->b) && same_region(c, op->c) &&
      each_step.same_as(op->each_step))
    return self;
  auto n = std::make_shared<Gemm>(*op);
  n->a = a;
  n->b = b;
  n->c = c;
  n->each_step = each_step;
  return Stmt(std::move(n));
}

Stmt IRMutator::visit(const Seq* op, const Stmt& self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (auto& s : op->stmts) {
    Stmt m = mutate(s);
    changed = changed || !m.same_as(s);
    if (m) stmts.push_back(m);  // a pass may delete a statement by returning null
  }
  if (!changed) return self;
  auto n = std::make_shared<Seq>(*op);
  n->stmts = std::move(stmts);
  return Stmt(std::move(n));
}
Stmt IRMutator::visit(const Mma* op, const Stmt& self) {
  auto operand = [&](const MmaOperand& o) {
    MmaOperand n{mutate_buffer(o.buffer), o.offset.defined() ? mutate(o.offset) : o.offset, {}};
    n.trans = o.trans;
    for (const Expr& e : o.tile) n.tile.push_back(mutate(e));
    return n;
  };
  MmaOperand a = operand(op->a), b = operand(op->b), c = operand(op->c);
  auto same_op = [](const MmaOperand& x, const MmaOperand& y) {
    if (!x.buffer.same_as(y.buffer) || !x.offset.same_as(y.offset) || x.tile.size() != y.tile.size()) return false;
    for (std::size_t i = 0; i < x.tile.size(); ++i)
      if (!x.tile[i].same_as(y.tile[i])) return false;
    return true;
  };
  if (same_op(a, op->a) && same_op(b, op->b) && same_op(c, op->c)) return self;
  auto n = std::make_shared<Mma>(*op);
  n->a = a;
  n->b = b;
  n->c = c;
  return Stmt(std::move(n));
}

// ---- Substitution

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::vector<std::pair<Var, Expr>>& m) : map_(m) {}
  Expr visit(const VarNode* op, const Expr& self) override {
    for (auto& [v, e] : map_)
      if (v.get() == op) return e;
    return self;
  }

 private:
  const std::vector<std::pair<Var, Expr>>& map_;
};
}  // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map) {
  Substituter s(map);
  return s.mutate(e);
}
Stmt substitute(const Stmt& st, const std::vector<std::pair<Var, Expr>>& map) {
  Substituter s(map);
  return s.mutate(st);
}

std::set<const ir::VarNode*> vars_in(const Expr& e) {
  struct Collect : IRVisitor {
    std::set<const ir::VarNode*> vars;
    void visit(const ir::VarNode* v) override { vars.insert(v); }
  } c;
  c.visit_expr(e);
  return c.vars;
}

}  // namespace tg
