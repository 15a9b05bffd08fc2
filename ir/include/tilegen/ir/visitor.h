// Walking and rewriting IR, after Halide's IRVisitor/IRMutator: one virtual per node kind, with
// defaults that recurse, so a pass overrides only the nodes it cares about.
//
//   struct CountLoads : tg::IRVisitor {
//     int n = 0;
//     void visit(const tg::ir::Load* op) override { ++n; IRVisitor::visit(op); }
//   };
#pragma once
#include <set>

#include "tilegen/ir/function.h"

namespace tg {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void visit_expr(const Expr& e);
  void visit_stmt(const Stmt& s);
  virtual void visit_region(const Region& r);  // offsets and extents
  virtual void visit_buffer(const Buffer& b);  // shape

  virtual void visit(const ir::IntImm*) {}
  virtual void visit(const ir::FloatImm*) {}
  virtual void visit(const ir::VarNode*) {}
  virtual void visit(const ir::Binary* op);
  virtual void visit(const ir::Unary* op);
  virtual void visit(const ir::Select* op);
  virtual void visit(const ir::Cast* op);
  virtual void visit(const ir::Call* op);
  virtual void visit(const ir::Load* op);
  virtual void visit(const ir::AccessCheck* op);

  virtual void visit(const ir::Kernel* op);
  virtual void visit(const ir::For* op);
  virtual void visit(const ir::Copy* op);
  virtual void visit(const ir::Fill* op);
  virtual void visit(const ir::Gemm* op);
  virtual void visit(const ir::Reduce* op);
  virtual void visit(const ir::Store* op);
  virtual void visit(const ir::Atomic* op);
  virtual void visit(const ir::If* op);
  virtual void visit(const ir::Let* op);
  virtual void visit(const ir::Barrier*) {}
  virtual void visit(const ir::AsyncWait*) {}
  virtual void visit(const ir::MmaSync*) {}
  virtual void visit(const ir::MBarrier* op);
  virtual void visit(const ir::BulkCopy* op);
  virtual void visit(const ir::LdMatrix* op);
  virtual void visit(const ir::Prefetch* op);
  virtual void visit(const ir::Hold* op);
  virtual void visit(const ir::Seq* op);
  virtual void visit(const ir::Mma* op);
};

/// Rebuilds only what changed: a node whose children all come back identical is returned as is.
/// Buffers pass through mutate_buffer, so a pass that replaces a buffer (a new shape, a new
/// layout) overrides that one hook and every Load, Store, Region and Kernel allocation follows.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);
  virtual Buffer mutate_buffer(const Buffer& b);  // default: keep, unless its shape changed
  Region mutate_region(const Region& r);
  Function mutate_function(const Function& f);

  virtual Expr visit(const ir::IntImm* op, const Expr& self) { return self; }
  virtual Expr visit(const ir::FloatImm* op, const Expr& self) { return self; }
  virtual Expr visit(const ir::VarNode* op, const Expr& self) { return self; }
  virtual Expr visit(const ir::Binary* op, const Expr& self);
  virtual Expr visit(const ir::Unary* op, const Expr& self);
  virtual Expr visit(const ir::Select* op, const Expr& self);
  virtual Expr visit(const ir::Cast* op, const Expr& self);
  virtual Expr visit(const ir::Call* op, const Expr& self);
  virtual Expr visit(const ir::Load* op, const Expr& self);
  virtual Expr visit(const ir::AccessCheck* op, const Expr& self);

  virtual Stmt visit(const ir::Kernel* op, const Stmt& self);
  virtual Stmt visit(const ir::For* op, const Stmt& self);
  virtual Stmt visit(const ir::Copy* op, const Stmt& self);
  virtual Stmt visit(const ir::Fill* op, const Stmt& self);
  virtual Stmt visit(const ir::Gemm* op, const Stmt& self);
  virtual Stmt visit(const ir::Reduce* op, const Stmt& self);
  virtual Stmt visit(const ir::Store* op, const Stmt& self);
  virtual Stmt visit(const ir::Atomic* op, const Stmt& self);
  virtual Stmt visit(const ir::If* op, const Stmt& self);
  virtual Stmt visit(const ir::Let* op, const Stmt& self);
  virtual Stmt visit(const ir::Barrier* op, const Stmt& self) { return self; }
  virtual Stmt visit(const ir::AsyncWait* op, const Stmt& self) { return self; }
  virtual Stmt visit(const ir::MmaSync* op, const Stmt& self) { return self; }
  virtual Stmt visit(const ir::MBarrier* op, const Stmt& self);
  virtual Stmt visit(const ir::BulkCopy* op, const Stmt& self);
  virtual Stmt visit(const ir::LdMatrix* op, const Stmt& self);
  virtual Stmt visit(const ir::Prefetch* op, const Stmt& self);
  virtual Stmt visit(const ir::Hold* op, const Stmt& self);
  virtual Stmt visit(const ir::Seq* op, const Stmt& self);
  virtual Stmt visit(const ir::Mma* op, const Stmt& self);

 protected:
  /// self when every part is the one it already has, else a copy of op with these parts: for
  /// passes that mutate a loop's, let's or if's parts themselves (in a scope of their own).
  static Stmt rebuilt(const ir::For* op, const Stmt& self, const Expr& min, const Expr& extent,
                      const Stmt& body);
  static Stmt rebuilt(const ir::Let* op, const Stmt& self, const Expr& value, const Stmt& body);
  static Stmt rebuilt(const ir::If* op, const Stmt& self, const Expr& cond, const Stmt& then_body,
                      const Stmt& else_body);
  static Stmt rebuilt(const ir::Gemm* op, const Stmt& self, const Region& a, const Region& b, const Region& c,
                      const Stmt& each_step);

 private:
  // Buffers already mutated, so one buffer maps to one new node everywhere.
  std::vector<std::pair<const ir::BufferNode*, Buffer>> buffer_memo_;
};

/// Replace variables by expressions (by identity).
Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map);
Stmt substitute(const Stmt& s, const std::vector<std::pair<Var, Expr>>& map);

/// The variables e reads (by identity): vars_in(i * 8 + tx) = {i, tx}.
std::set<const ir::VarNode*> vars_in(const Expr& e);

}  // namespace tg
