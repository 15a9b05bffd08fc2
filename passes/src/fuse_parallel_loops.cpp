// fuse_parallel_loops (see the header for the IR before and after).
#include "tilegen/passes/fuse_parallel_loops.h"

#include <algorithm>
#include <map>
#include <optional>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
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

// ---- Iteration-private buffers become values.
//
// After fusion a tile's element often lives one iteration: written, read back, overwritten in
// the same body and never read elsewhere (softmax's `x`). Stored, such a buffer costs a store per
// element per walk that no later code reads — LLVM cannot delete a store that a later loop
// overwrites — and a slice of scratch cleared per block. As values, nothing is stored:
//   for c0 in parallel(0 +: 4) { for c1 in parallel(0 +: 256) {
//     x[c0, c1] = X[bx*4 + c0, i*256 + c1]
//     x[c0, c1] = exp(x[c0, c1] - row_max[c0])
//     Y[bx*4 + c0, i*256 + c1] = x[c0, c1] } }
// becomes
//   for c0 in parallel(0 +: 4) { for c1 in parallel(0 +: 256) {
//     let x_0 = X[bx*4 + c0, i*256 + c1]
//     let x_1 = exp(x_0 - row_max[c0])
//     Y[bx*4 + c0, i*256 + c1] = x_1 } }
// A buffer qualifies when, in every parallel nest body that touches it, all its accesses use one
// same index (no loads in it), the first is a plain statement of the body storing it, and no
// store to it sits inside an if or a loop; and when nothing else in the kernel touches it. Each
// read then sees the value its own iteration stored last, and no value outlives the iteration.

/// Any access to `b` in `s`, element or tile (BufferAccessVisitor's list of statements).
bool mentions(const Stmt& s, const ir::BufferNode* b) {
  bool found = false;
  for_each_buffer_access(s, [&](const Buffer& buf, BufferAccess) { found = found || buf.get() == b; });
  return found;
}

struct HasLoad : IRVisitor {
  bool found = false;
  void visit(const ir::Load*) override { found = true; }
};

/// Loads of `b` (at `index`) become `value`; any other access to `b` is a failure.
class ReplaceLoads : public IRMutator {
 public:
  ReplaceLoads(const ir::BufferNode* b, std::vector<Expr>& index, Expr value)
      : b_(b), index_(index), value_(std::move(value)) {}
  bool failed = false;
  using IRMutator::visit;
  Expr visit(const ir::Load* op, const Expr& self) override {
    if (op->buffer.get() != b_) return IRMutator::visit(op, self);
    if (!value_.defined() || !same_index(op->indices)) failed = true;
    return failed ? self : value_;
  }
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    failed |= op->buffer.get() == b_;
    return IRMutator::visit(op, self);
  }
  Stmt visit(const ir::Atomic* op, const Stmt& self) override {
    failed |= op->buffer.get() == b_;
    return IRMutator::visit(op, self);
  }
  /// The first access fixes the index; every other must equal it.
  bool same_index(const std::vector<Expr>& idx) {
    if (index_.empty()) {
      for (const Expr& e : idx) {
        HasLoad h;
        h.visit_expr(e);
        if (h.found) return false;
      }
      index_ = idx;
      return true;
    }
    if (idx.size() != index_.size()) return false;
    for (std::size_t d = 0; d < idx.size(); ++d)
      if (!equal(idx[d], index_[d])) return false;
    return true;
  }

 private:
  const ir::BufferNode* b_;
  std::vector<Expr>& index_;
  Expr value_;
};

/// The body with `b`'s stores as lets and its loads as their values; nullopt when it does not
/// qualify (see above). A body that does not mention `b` comes back as is.
std::optional<Stmt> privatize_body(const Stmt& body, const Buffer& b) {
  if (!mentions(body, b.get())) return body;
  std::vector<Stmt> stmts;
  if (auto* seq = body.as<ir::Seq>())
    stmts = seq->stmts;
  else
    stmts = {body};
  std::vector<Expr> index;
  Expr current;
  // Statements in order; each store of b opens a let whose body holds the statements after it.
  std::vector<std::pair<Var, Expr>> lets;  // (var, value) at the position of each store
  std::vector<std::vector<Stmt>> runs(1);  // statements after the i-th let
  int made = 0;
  for (const Stmt& s : stmts) {
    auto* st = s.as<ir::Store>();
    const bool stores_b = st && st->buffer.get() == b.get();
    ReplaceLoads rl(b.get(), index, current);
    if (stores_b) {
      if (!rl.same_index(st->indices)) return std::nullopt;
      Expr v = rl.mutate(st->value);
      if (rl.failed) return std::nullopt;
      if (v.dtype() != b->dtype) v = cast(b->dtype, v);
      Var x(b->name + "_" + std::to_string(made++), b->dtype);
      lets.emplace_back(x, v);
      runs.emplace_back();
      current = Expr(x);
      continue;
    }
    Stmt r = rl.mutate(s);
    if (rl.failed) return std::nullopt;
    runs.back().push_back(r);
  }
  auto block = [&](std::vector<Stmt> v) { return v.size() == 1 ? v[0] : seq_of(std::move(v), body->loc); };
  Stmt out = block(runs.back());
  for (std::size_t i = lets.size(); i-- > 0;) {
    out = lower::make_let(lets[i].first, lets[i].second, out, body->loc);
    std::vector<Stmt> before = runs[i];
    before.push_back(out);
    out = block(std::move(before));
  }
  return out;
}

/// Rewrites every parallel nest body that touches `b`; `ok` turns false when one does not qualify.
class Privatize : public IRMutator {
 public:
  explicit Privatize(Buffer b) : b_(std::move(b)) {}
  bool ok = true;
  using IRMutator::visit;
  Stmt visit(const ir::For* op, const Stmt& self) override {
    auto n = nest_of(self);
    if (!n || !mentions(n->body, b_.get()) || nested_loop_mentions(n->body))
      return IRMutator::visit(op, self);
    std::optional<Stmt> body = privatize_body(n->body, b_);
    if (!body) {
      ok = false;
      return self;
    }
    return rebuild(*n, *body);
  }

 private:
  // A body whose own loops touch b is not one iteration's straight-line code: leave it to the
  // recursion (its inner nests), and the final check rejects b if a mention remains.
  bool nested_loop_mentions(const Stmt& body) const {
    struct Loops : IRVisitor {
      const ir::BufferNode* b;
      bool found = false;
      void visit(const ir::For* f) override { found |= mentions(f->body, b); }
    } loops;
    loops.b = b_.get();
    loops.visit_stmt(body);
    return loops.found;
  }
  Buffer b_;
};

class PrivatizeKernels : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    Stmt body = op->body;
    std::vector<Buffer> kept;
    for (const Buffer& b : op->buffers) {
      if (b->scope == Scope::Global || b->dtype.is_packed()) {
        kept.push_back(b);
        continue;
      }
      Privatize p(b);
      Stmt rewritten = p.mutate(body);
      if (!p.ok || mentions(rewritten, b.get())) {
        kept.push_back(b);
        continue;
      }
      body = rewritten;
    }
    if (kept.size() == op->buffers.size()) return self;
    auto k = std::make_shared<ir::Kernel>(*op);
    k->buffers = std::move(kept);
    k->body = std::move(body);
    return Stmt(std::move(k));
  }
};

}  // namespace

Function fuse_parallel_loops(const Function& f, const TargetInfo&) {
  return PrivatizeKernels().mutate_function(Fuse().mutate_function(f));
}

}  // namespace tg
