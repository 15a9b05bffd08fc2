// scratch_needing_zero (see scratch_zeroing.h).
#include "scratch_zeroing.h"

#include "tilegen/ir/visitor.h"

namespace tg::cpu {

using namespace ir;

namespace {

using BufferSet = std::unordered_set<const BufferNode*>;

/// Every buffer a statement or expression names.
struct Named : IRVisitor {
  BufferSet names;
  void visit_region(const Region& r) override {
    names.insert(r.buffer.get());
    IRVisitor::visit_region(r);
  }
  void visit(const Load* op) override {
    names.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    names.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Atomic* op) override {
    names.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override { names.insert(op->src.get()), names.insert(op->dst.get()); }
  void visit(const Mma* op) override {
    for (const MmaOperand* o : {&op->a, &op->b, &op->c}) names.insert(o->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const LdMatrix* op) override {
    names.insert(op->src.get()), names.insert(op->regs.get());
    IRVisitor::visit(op);
  }
  void visit(const Hold* op) override {
    names.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
};

bool is_const(const Expr& e, int64_t v) { return e.as_int() && *e.as_int() == v; }

/// The buffer a perfect nest `for v0 in (0 +: s0) { ... X[v0, ...] = value }` overwrites whole
/// (s its shape, value not reading X), or null.
const BufferNode* whole_store_nest(const Stmt& s, const Expr** value) {
  std::vector<const For*> nest;
  Stmt at = s;
  while (auto* f = at.as<For>()) nest.push_back(f), at = f->body;
  auto* st = at.as<Store>();
  if (nest.empty() || !st || st->shuffle() || st->indices.size() != nest.size()) return nullptr;
  const Buffer& b = st->buffer;
  for (std::size_t d = 0; d < nest.size(); ++d) {
    auto n = b->shape[d].as_int();
    auto* v = st->indices[d].as<VarNode>();
    if (!n || !is_const(nest[d]->min, 0) || !is_const(nest[d]->extent, *n) || v != nest[d]->var.node())
      return nullptr;
  }
  *value = &st->value;
  return st->buffer.get();
}

class Walk {
 public:
  explicit Walk(const Kernel& k) {
    for (const Buffer& b : k.buffers) scratch_.insert(b.get());
  }
  BufferSet needs_zero;

  void stmt(const Stmt& s) {
    if (!s) return;
    if (auto* q = s.as<Seq>()) {
      for (const Stmt& x : q->stmts) stmt(x);
    } else if (auto* l = s.as<Let>()) {
      uses(l->value);
      stmt(l->body);
    } else if (auto* f = s.as<For>()) {
      loop(s, *f);
    } else if (auto* i = s.as<If>()) {
      // Overwritten afterwards: what both branches overwrite (version_edge_copies' two nests).
      uses(i->cond);
      const BufferSet before = defined_;
      stmt(i->then_body);
      BufferSet after_then = std::move(defined_);
      defined_ = before;
      stmt(i->else_body);
      BufferSet both;
      for (const BufferNode* b : defined_)
        if (after_then.count(b)) both.insert(b);
      defined_ = std::move(both);
    } else if (auto* g = s.as<Gemm>(); g && g->clear_c && whole(g->c)) {
      uses_region(g->a), uses_region(g->b);
      defined_.insert(g->c.buffer.get());
    } else {
      uses(s);
    }
  }

 private:
  void loop(const Stmt& s, const For& f) {
    const Expr* value = nullptr;
    if (const BufferNode* b = whole_store_nest(s, &value)) {
      uses(*value);
      defined_.insert(b);
      return;
    }
    uses(f.min), uses(f.extent);
    if (f.extent.as_int() && *f.extent.as_int() >= 1)
      stmt(f.body);
    else
      tentatively(f.body);
  }
  // What the statement overwrites may not happen: only its uses count afterwards.
  void tentatively(const Stmt& s) {
    BufferSet before = defined_;
    stmt(s);
    defined_ = std::move(before);
  }
  template <typename T>
  void uses(const T& x) {
    Named n;
    if constexpr (std::is_same_v<T, Stmt>)
      n.visit_stmt(x);
    else
      n.visit_expr(x);
    mark(n.names);
  }
  void uses_region(const Region& r) {
    Named n;
    n.visit_region(r);
    mark(n.names);
  }
  void mark(const BufferSet& names) {
    for (const BufferNode* b : names)
      if (scratch_.count(b) && !defined_.count(b)) needs_zero.insert(b);
  }
  static bool whole(const Region& r) {
    for (std::size_t d = 0; d < r.offsets.size(); ++d) {
      auto n = r.buffer->shape[d].as_int();
      if (!is_const(r.offsets[d], 0) || !n || !is_const(r.extents[d], *n)) return false;
    }
    return r.offsets.size() == r.buffer->shape.size();
  }

  BufferSet scratch_, defined_;
};

}  // namespace

std::unordered_set<const BufferNode*> scratch_needing_zero(const Kernel& k) {
  Walk w(k);
  w.stmt(k.body);
  return w.needs_zero;
}

}  // namespace tg::cpu
