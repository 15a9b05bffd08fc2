// Hand-built IR for the pass tests: one short constructor per statement kind, so a test reads
// as the IR it builds. Header-only; included by tests/unit/test_pass_*.cpp.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/ir/int_semantics.h"

namespace tg::test {

inline Stmt for_(const Var& v, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial) {
  auto n = std::make_shared<ir::For>(SourceLoc("pass_test.cpp", 1));
  n->var = v;
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->stages = kind == ForKind::Pipelined ? 2 : 0;
  n->body = std::move(body);
  return Stmt(std::move(n));
}

inline Stmt store(const Buffer& b, std::vector<Expr> idx, Expr value) {
  auto n = std::make_shared<ir::Store>(SourceLoc("pass_test.cpp", 2));
  n->buffer = b;
  n->indices = std::move(idx);
  n->value = std::move(value);
  return Stmt(std::move(n));
}

inline Stmt if_(Expr cond, Stmt then_body, Stmt else_body = {}) {
  auto n = std::make_shared<ir::If>(SourceLoc("pass_test.cpp", 3));
  n->cond = std::move(cond);
  n->then_body = std::move(then_body);
  n->else_body = std::move(else_body);
  return Stmt(std::move(n));
}

inline Stmt let(const Var& v, Expr value, Stmt body) {
  auto n = std::make_shared<ir::Let>(SourceLoc("pass_test.cpp", 4));
  n->var = v;
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

/// A Seq even of one statement (make_seq unwraps those), to test flattening.
inline Stmt seq(std::vector<Stmt> stmts) {
  auto n = std::make_shared<ir::Seq>(SourceLoc("pass_test.cpp", 5));
  n->stmts = std::move(stmts);
  return Stmt(std::move(n));
}

inline Stmt barrier() { return Stmt(std::make_shared<ir::Barrier>(SourceLoc("pass_test.cpp", 6))); }

inline Stmt copy(Region src, Region dst) {
  auto n = std::make_shared<ir::Copy>(SourceLoc("pass_test.cpp", 7));
  n->src = std::move(src);
  n->dst = std::move(dst);
  return Stmt(std::move(n));
}

inline Region region(const Buffer& b, std::vector<Expr> offsets, std::vector<Expr> extents) {
  return Region{b, std::move(offsets), std::move(extents)};
}

inline Stmt kernel(std::vector<Expr> grid, std::vector<Var> block_vars, int threads, const Var& tx, Stmt body,
                   std::vector<Buffer> buffers = {}) {
  auto n = std::make_shared<ir::Kernel>(SourceLoc("pass_test.cpp", 8));
  n->grid = std::move(grid);
  n->block_vars = std::move(block_vars);
  n->threads = threads;
  n->thread_var = tx;
  n->buffers = std::move(buffers);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

inline Buffer global(const std::string& name, std::vector<Expr> shape, DType t = f32) {
  return Buffer::make(name, std::move(shape), t, Scope::Global, {}, SourceLoc("pass_test.cpp", 9));
}
inline Buffer shared(const std::string& name, std::vector<Expr> shape, DType t = f32) {
  return Buffer::make(name, std::move(shape), t, Scope::Shared);
}

inline Param tensor_param(const Buffer& b) { return Param{Param::Kind::Tensor, b, {}}; }
inline Param size_param(const Var& v) { return Param{Param::Kind::Size, {}, v}; }

inline Function function(const std::string& name, std::vector<Param> params, Stmt body) {
  Function f;
  f.name = name;
  f.params = std::move(params);
  f.body = std::move(body);
  f.loc = SourceLoc("pass_test.cpp", 10);
  return f;
}

/// Integer value of an expression of IntImm, Var, Binary, Unary, Select and Cast nodes, with the
/// IR's floor Div/Mod: the reference the simplifier's rewrites are checked against.
inline int64_t eval_int(const Expr& e, const std::map<const ir::VarNode*, int64_t>& env) {
  using namespace ir;
  if (auto v = e.as<IntImm>()) return v->value;
  if (auto v = e.as<VarNode>()) return env.at(v);
  if (auto c = e.as<Cast>()) return eval_int(c->a, env);
  if (auto s = e.as<Select>()) return eval_int(s->cond, env) ? eval_int(s->t, env) : eval_int(s->f, env);
  if (auto u = e.as<Unary>()) {
    int64_t a = eval_int(u->a, env);
    return u->op == UnOp::Neg ? -a : u->op == UnOp::Not ? !a : ~a;
  }
  auto b = e.as<Binary>();
  int64_t x = eval_int(b->a, env), y = eval_int(b->b, env);
  switch (b->op) {
    case BinOp::Add: return x + y;
    case BinOp::Sub: return x - y;
    case BinOp::Mul: return x * y;
    case BinOp::Div: return ir::floor_div(x, y);  // int_semantics.h: the one definition (x / 0 = 0)
    case BinOp::Mod: return ir::floor_mod(x, y);
    case BinOp::Min: return std::min(x, y);
    case BinOp::Max: return std::max(x, y);
    case BinOp::Eq: return x == y;
    case BinOp::Ne: return x != y;
    case BinOp::Lt: return x < y;
    case BinOp::Le: return x <= y;
    case BinOp::Gt: return x > y;
    case BinOp::Ge: return x >= y;
    case BinOp::And: return x && y;
    case BinOp::Or: return x || y;
    case BinOp::BitAnd: return x & y;
    case BinOp::BitOr: return x | y;
    case BinOp::BitXor: return x ^ y;
    case BinOp::Shl: return x << y;
    case BinOp::Shr: return x >> y;
  }
  return 0;
}

}  // namespace tg::test
