// fuse_parallel_loops (see the header for the IR before and after).
#include "tilegen/passes/fuse_parallel_loops.h"

#include <algorithm>
#include <map>

#include "stmt_build.h"
#include "tilegen/ir/visitor.h"

namespace tg {
namespace {

/// A chain of directly nested parallel loops and the body of the innermost.
struct Nest {
  std::vector<const ir::For*> loops;
  Stmt body;
};

std::optional<Nest> nest_of(const Stmt& s) {
  Nest n;
  for (const ir::For* f = s.as<ir::For>(); f && f->for_kind == ForKind::Parallel; f = f->body.as<ir::For>()) {
    n.loops.push_back(f);
    n.body = f->body;
  }
  if (n.loops.empty()) return std::nullopt;
  return n;
}

/// Every element access of a nest body by buffer, and whether it holds what fusion cannot move.
struct Accesses : IRVisitor {
  struct Uses {
    std::vector<std::vector<Expr>> indices;
    bool written = false;
  };
  std::map<const ir::BufferNode*, Uses> uses;
  bool opaque = false;

  void visit(const ir::Load* op) override {
    uses[op->buffer.get()].indices.push_back(op->indices);
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    auto& u = uses[op->buffer.get()];
    u.indices.push_back(op->indices), u.written = true;
    IRVisitor::visit(op);
  }
  void visit(const ir::Atomic*) override { opaque = true; }
  void visit(const ir::Barrier*) override { opaque = true; }
  void visit(const ir::Copy*) override { opaque = true; }
  void visit(const ir::Fill*) override { opaque = true; }
  void visit(const ir::Gemm*) override { opaque = true; }
  void visit(const ir::Reduce*) override { opaque = true; }
  void visit(const ir::Mma*) override { opaque = true; }
  void visit(const ir::Kernel*) override { opaque = true; }

  static Accesses of(const Stmt& s) {
    Accesses a;
    a.visit_stmt(s);
    return a;
  }
};

bool uses_any(const Expr& e, const std::vector<Var>& vars) {
  std::set<const ir::VarNode*> used = vars_in(e);
  return std::any_of(vars.begin(), vars.end(), [&](const Var& v) { return used.count(v.node()) > 0; });
}

// idx takes each loop variable exactly once, as `v` or `v + invariant` in a dimension of its
// own: distinct iterations then touch distinct elements.
bool one_element_per_iteration(const std::vector<Expr>& idx, const std::vector<Var>& vars) {
  std::vector<bool> seen(vars.size(), false);
  for (const Expr& e : idx) {
    if (!uses_any(e, vars)) continue;
    const ir::Binary* add = e.as<ir::Binary>();
    std::vector<Expr> terms =
        add && add->op == ir::BinOp::Add ? std::vector<Expr>{add->a, add->b} : std::vector<Expr>{e};
    int var = -1, with_vars = 0;
    for (const Expr& t : terms)
      if (uses_any(t, vars)) {
        ++with_vars;
        for (std::size_t k = 0; k < vars.size(); ++k)
          if (t.as<ir::VarNode>() == vars[k].node()) var = int(k);
      }
    if (with_vars != 1 || var < 0 || seen[std::size_t(var)]) return false;
    seen[std::size_t(var)] = true;
  }
  for (bool s : seen)
    if (!s) return false;
  return true;
}

bool fusable(const Nest& a, const Nest& b_renamed, const std::vector<Var>& vars) {
  Accesses x = Accesses::of(a.body), y = Accesses::of(b_renamed.body);
  if (x.opaque || y.opaque) return false;
  for (auto& [buf, ux] : x.uses) {
    auto it = y.uses.find(buf);
    if (it == y.uses.end() || !(ux.written || it->second.written)) continue;
    const std::vector<Expr>& first = ux.indices.front();
    if (!one_element_per_iteration(first, vars)) return false;
    for (const auto* list : {&ux.indices, &it->second.indices})
      for (const std::vector<Expr>& idx : *list) {
        if (idx.size() != first.size()) return false;
        for (std::size_t d = 0; d < idx.size(); ++d)
          if (!equal(idx[d], first[d])) return false;
      }
  }
  return true;
}

bool same_space(const Nest& a, const Nest& b) {
  if (a.loops.size() != b.loops.size()) return false;
  for (std::size_t d = 0; d < a.loops.size(); ++d)
    if (!equal(a.loops[d]->min, b.loops[d]->min) || !equal(a.loops[d]->extent, b.loops[d]->extent) ||
        !a.loops[d]->extent.as_int())
      return false;
  return true;
}

// The nest's loops around a new innermost body.
Stmt rebuild(const Nest& n, Stmt body) {
  for (std::size_t d = n.loops.size(); d-- > 0;) {
    auto f = std::make_shared<ir::For>(*n.loops[d]);
    f->body = std::move(body);
    body = Stmt(std::move(f));
  }
  return body;
}

Stmt seq_of(std::vector<Stmt> stmts, const SourceLoc& loc) {
  auto s = std::make_shared<ir::Seq>(loc);
  s->stmts = std::move(stmts);
  return Stmt(std::move(s));
}

class Fuse : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    Stmt s = IRMutator::visit(op, self);
    auto* seq = s.as<ir::Seq>();
    if (!seq) return s;
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& st : seq->stmts) {
      if (!out.empty() && try_fuse(out.back(), st)) {
        changed = true;
        continue;
      }
      out.push_back(st);
    }
    return changed ? seq_of(std::move(out), op->loc) : s;
  }

 private:
  // On success `head` becomes the fused nest.
  static bool try_fuse(Stmt& head, const Stmt& next) {
    auto a = nest_of(head), b = nest_of(next);
    if (!a || !b || !same_space(*a, *b)) return false;
    std::vector<Var> vars;
    std::vector<std::pair<Var, Expr>> rename;
    for (std::size_t d = 0; d < a->loops.size(); ++d) {
      vars.push_back(a->loops[d]->var);
      rename.emplace_back(b->loops[d]->var, Expr(a->loops[d]->var));
    }
    Nest renamed{b->loops, substitute(b->body, rename)};
    if (!fusable(*a, renamed, vars)) return false;
    std::vector<Stmt> body;
    for (const Stmt* part : {&a->body, &renamed.body}) {
      if (auto* s = part->as<ir::Seq>())
        body.insert(body.end(), s->stmts.begin(), s->stmts.end());
      else
        body.push_back(*part);
    }
    head = rebuild(*a, seq_of(std::move(body), a->loops.back()->loc));
    return true;
  }
};

}  // namespace

Function fuse_parallel_loops(const Function& f, const TargetInfo&) { return Fuse().mutate_function(f); }

}  // namespace tg
