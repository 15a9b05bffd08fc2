// serialize_threads: SIMT block code → thread loops between barriers (see serialize_threads.h).
#include "tilegen/passes/serialize_threads.h"

#include <map>
#include <set>

#include "tilegen/ir/visitor.h"

namespace tg {

using namespace ir;

namespace {

/// Whether a statement holds a barrier or a collective statement anywhere inside.
class NeedsBlockLevel : public IRVisitor {
 public:
  bool found = false;
  void visit(const Barrier*) override { found = true; }
  void visit(const Copy*) override { found = true; }
  void visit(const Fill*) override { found = true; }
  void visit(const Gemm*) override { found = true; }
  void visit(const Reduce*) override { found = true; }
  void visit(const Mma*) override { found = true; }
  void visit(const For* op) override {
    if (op->for_kind == ForKind::Parallel)
      found = true;
    else
      IRVisitor::visit(op);
  }
};

bool needs_block_level(const Stmt& s) {
  NeedsBlockLevel v;
  v.visit_stmt(s);
  return v.found;
}

/// Whether an expression reads the thread index, a Local buffer or a per-thread let.
class ThreadDependent : public IRVisitor {
 public:
  ThreadDependent(const VarNode* tx, const std::set<const VarNode*>& per_thread)
      : tx_(tx), per_thread_(per_thread) {}
  bool found = false;
  void visit(const VarNode* op) override { found = found || op == tx_ || per_thread_.count(op); }
  void visit(const Load* op) override {
    found = found || op->buffer->scope == Scope::Local;
    IRVisitor::visit(op);
  }

 private:
  const VarNode* tx_;
  const std::set<const VarNode*>& per_thread_;
};

/// Thread code of one thread loop: the thread index becomes the loop variable, Local buffers
/// gain the thread dimension, per-thread lets become reads of their arrays.
class ThreadRewriter : public IRMutator {
 public:
  ThreadRewriter(const VarNode* tx, Expr t, const std::map<const BufferNode*, Buffer>& locals,
                 const std::map<const VarNode*, Buffer>& let_arrays)
      : tx_(tx), t_(std::move(t)), locals_(locals), let_arrays_(let_arrays) {}

  Expr visit(const VarNode* op, const Expr& self) override {
    if (op == tx_) return t_;
    auto it = let_arrays_.find(op);
    return it == let_arrays_.end() ? self : make_load(it->second.ptr(), {t_});
  }
  Expr visit(const Load* op, const Expr& self) override {
    auto it = locals_.find(op->buffer.get());
    if (it == locals_.end()) return IRMutator::visit(op, self);
    return make_load(it->second.ptr(), with_thread(op->indices));
  }
  Stmt visit(const Store* op, const Stmt& self) override { return rewrite_write(op, self); }
  Stmt visit(const Atomic* op, const Stmt& self) override { return rewrite_write(op, self); }

 private:
  std::vector<Expr> with_thread(const std::vector<Expr>& idx) {
    std::vector<Expr> out{t_};
    for (auto& i : idx) out.push_back(mutate(i));
    return out;
  }
  template <typename Node>
  Stmt rewrite_write(const Node* op, const Stmt& self) {
    auto it = locals_.find(op->buffer.get());
    if (it == locals_.end()) return IRMutator::visit(op, self);
    auto n = std::make_shared<Node>(*op);
    n->buffer = it->second;
    n->indices = with_thread(op->indices);
    n->value = mutate(op->value);
    return Stmt(std::move(n));
  }

  const VarNode* tx_;
  Expr t_;
  const std::map<const BufferNode*, Buffer>& locals_;
  const std::map<const VarNode*, Buffer>& let_arrays_;
};

Stmt make_for(const Var& v, int extent, Stmt body, const SourceLoc& loc) {
  auto n = std::make_shared<For>(loc);
  n->var = v;
  n->min = make_int(0);
  n->extent = make_int(extent);
  n->for_kind = ForKind::Serial;
  n->body = std::move(body);
  return Stmt(std::move(n));
}

class KernelSerializer {
 public:
  explicit KernelSerializer(const Kernel& k) : k_(k) {
    for (const Buffer& b : k.buffers) {
      if (b->scope != Scope::Local) continue;
      std::vector<Expr> shape{make_int(k.threads)};
      shape.insert(shape.end(), b->shape.begin(), b->shape.end());
      locals_[b.get()] = Buffer::make(b->name, shape, b->dtype, Scope::Local, b->layout, b->loc);
    }
  }

  Stmt run() {
    auto n = std::make_shared<Kernel>(k_);
    n->body = block(k_.body);
    n->threads = 1;
    n->thread_var = Var(k_.thread_var.name(), k_.thread_var.dtype());
    n->buffers.clear();
    for (const Buffer& b : k_.buffers)
      n->buffers.push_back(b->scope == Scope::Local ? locals_.at(b.get()) : b);
    for (const Buffer& b : let_buffers_) n->buffers.push_back(b);
    return Stmt(std::move(n));
  }

 private:
  // A statement at block level: collective, barrier, uniform control flow, or thread code.
  Stmt block(const Stmt& s) {
    if (!s) return s;
    if (!needs_block_level(s)) return thread_loop(s);
    switch (s->kind) {
      case StmtKind::Seq: return block_seq(*s.as<Seq>());
      case StmtKind::Barrier: return Stmt();
      case StmtKind::Mma:
        throw Error("serialize_threads: mma is per-warp code, which this target cannot run; use gemm",
                    s->loc);
      case StmtKind::For: {
        auto* f = s.as<For>();
        if (f->for_kind == ForKind::Parallel) return s;
        auto n = std::make_shared<For>(*f);
        n->body = block(f->body);
        if (!n->body) n->body = make_seq({}, f->loc);
        return Stmt(std::move(n));
      }
      case StmtKind::If: {
        auto* i = s.as<If>();
        auto n = std::make_shared<If>(*i);
        n->then_body = block(i->then_body);
        if (!n->then_body) n->then_body = make_seq({}, i->loc);
        n->else_body = block(i->else_body);
        return Stmt(std::move(n));
      }
      case StmtKind::Let: return block_let(*s.as<Let>());
      default: return s;  // Copy, Fill, Gemm, Reduce: performed once, as they are
    }
  }

  // Consecutive thread code shares one thread loop; barriers and block-level statements split it.
  Stmt block_seq(const Seq& seq) {
    std::vector<Stmt> out, pending;
    auto flush = [&] {
      if (!pending.empty()) out.push_back(thread_loop(make_seq(std::move(pending), seq.loc)));
      pending.clear();
    };
    for (const Stmt& c : seq.stmts) {
      if (!needs_block_level(c)) {
        pending.push_back(c);
        continue;
      }
      flush();
      if (Stmt b = block(c)) out.push_back(b);
    }
    flush();
    return make_seq(std::move(out), seq.loc);
  }

  // let x = v { ... barrier ... }: uniform v stays a let; a per-thread v is stored per thread.
  Stmt block_let(const Let& l) {
    ThreadDependent dep(k_.thread_var.node(), per_thread_);
    dep.visit_expr(l.value);
    if (!dep.found) {
      auto n = std::make_shared<Let>(l);
      n->body = block(l.body);
      if (!n->body) n->body = make_seq({}, l.loc);
      return Stmt(std::move(n));
    }
    Buffer arr = Buffer::make(l.var.name(), {make_int(k_.threads)}, l.var.dtype(), Scope::Local, {}, l.loc);
    let_buffers_.push_back(arr);
    auto st = std::make_shared<Store>(l.loc);
    st->buffer = arr;
    st->indices = {k_.thread_var};
    st->value = l.value;
    Stmt init = thread_loop(Stmt(std::move(st)));
    per_thread_.insert(l.var.node());
    let_arrays_[l.var.node()] = arr;
    Stmt body = block(l.body);
    return body ? make_seq({init, body}, l.loc) : init;
  }

  Stmt thread_loop(const Stmt& s) {
    Var t(k_.thread_var.name() + "_" + std::to_string(loops_++), i32);
    ThreadRewriter rw(k_.thread_var.node(), t, locals_, let_arrays_);
    return make_for(t, k_.threads, rw.mutate(s), s->loc);
  }

  const Kernel& k_;
  std::map<const BufferNode*, Buffer> locals_;
  std::map<const VarNode*, Buffer> let_arrays_;
  std::set<const VarNode*> per_thread_;
  std::vector<Buffer> let_buffers_;
  int loops_ = 0;
};

class Serializer : public IRMutator {
 public:
  Stmt visit(const Kernel* op, const Stmt& self) override { return KernelSerializer(*op).run(); }
};

}  // namespace

Function serialize_threads(const Function& f, const TargetInfo& info) {
  Serializer s;
  return s.mutate_function(f);
}

}  // namespace tg
