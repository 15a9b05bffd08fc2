// Small out-of-line pieces of the IR node types: names, buffers, regions, functions.
#include "tilegen/ir/function.h"

namespace tg {

const char* name_of(Scope s) {
  switch (s) {
    case Scope::Global: return "global"; case Scope::Shared: return "shared";
    case Scope::Fragment: return "fragment"; case Scope::Local: return "local";
  }
  return "?";
}
const char* name_of(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial"; case ForKind::Parallel: return "parallel";
    case ForKind::Pipelined: return "pipelined"; case ForKind::Unrolled: return "unrolled";
    case ForKind::Vectorized: return "vectorized";
  }
  return "?";
}
const char* name_of(ReduceOp k) {
  switch (k) {
    case ReduceOp::Sum: return "sum"; case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min"; case ReduceOp::AbsMax: return "absmax";
  }
  return "?";
}
const char* ir::name_of(ir::AccessKind k) {
  using ir::AccessKind;
  switch (k) {
    case AccessKind::Load: return "load";
    case AccessKind::Store: return "store";
    case AccessKind::Atomic: return "atomic";
  }
  return "?";
}
const char* name_of(AtomicOp k) {
  switch (k) { case AtomicOp::Add: return "add"; case AtomicOp::Max: return "max"; case AtomicOp::Min: return "min"; }
  return "?";
}

Buffer Buffer::make(std::string name, std::vector<Expr> shape, DType t, Scope s, Layout layout, SourceLoc loc) {
  auto n = std::make_shared<ir::BufferNode>();
  n->name = std::move(name);
  n->shape = std::move(shape);
  n->dtype = t;
  n->scope = s;
  n->layout = std::move(layout);
  n->loc = std::move(loc);
  return Buffer(std::move(n));
}

std::optional<int64_t> Buffer::const_numel() const {
  int64_t n = 1;
  for (auto& d : node_->shape) {
    auto v = d.as_int();
    if (!v || __builtin_mul_overflow(n, *v, &n)) return std::nullopt;
  }
  return n;
}

Expr Buffer::load(std::vector<Expr> indices) const { return make_load(node_, std::move(indices)); }

Region Region::full(const Buffer& b) {
  Region r;
  r.buffer = b;
  r.offsets.assign(b.rank(), Expr(0));
  r.extents = b->shape;
  return r;
}

std::vector<Expr> Region::squeezed_extents() const {
  std::vector<Expr> out;
  for (auto& e : extents)
    if (auto v = e.as_int(); !(v && *v == 1)) out.push_back(e);
  return out;
}

Stmt make_seq(std::vector<Stmt> stmts, SourceLoc loc) {
  if (stmts.size() == 1) return stmts[0];
  auto s = std::make_shared<ir::Seq>(std::move(loc));
  s->stmts = std::move(stmts);
  return Stmt(std::move(s));
}

const std::string& Param::name() const { return kind == Kind::Tensor ? buffer->name : var.name(); }

std::vector<Buffer> Function::tensors() const {
  std::vector<Buffer> out;
  for (auto& p : params)
    if (p.kind == Param::Kind::Tensor) out.push_back(p.buffer);
  return out;
}
std::vector<Var> Function::sizes() const {
  std::vector<Var> out;
  for (auto& p : params)
    if (p.kind == Param::Kind::Size) out.push_back(p.var);
  return out;
}
std::vector<Var> Function::scalars() const {
  std::vector<Var> out;
  for (auto& p : params)
    if (p.kind == Param::Kind::Scalar) out.push_back(p.var);
  return out;
}
const Param* Function::find_param(const std::string& name) const {
  for (auto& p : params)
    if (p.name() == name) return &p;
  return nullptr;
}

}  // namespace tg
