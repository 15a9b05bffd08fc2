// thread_footprints (see the header).
#include "thread_footprint.h"

#include <limits>
#include <optional>

#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/int_semantics.h"

namespace tg::lower {

void Footprint::add(int64_t element, int32_t thread) {
  auto [it, fresh] = owner.emplace(element, thread);
  if (!fresh && it->second != thread) it->second = kMany;
}

void Footprint::merge(const Footprint& o) {
  exact = exact && o.exact;
  if (!exact) {
    owner.clear();
    return;
  }
  for (const auto& [e, t] : o.owner) add(e, t);
}

bool Footprint::crosses(const Footprint& o) const {
  if (!exact || !o.exact) return true;
  const Footprint& small = owner.size() <= o.owner.size() ? *this : o;
  const Footprint& large = &small == this ? o : *this;
  for (const auto& [e, t] : small.owner) {
    auto it = large.owner.find(e);
    if (it != large.owner.end() && (t == kMany || it->second == kMany || it->second != t)) return true;
  }
  return false;
}

void Footprints::merge(const Footprints& o) {
  for (const auto& [b, f] : o.reads) reads[b].merge(f);
  for (const auto& [b, f] : o.writes) writes[b].merge(f);
}

namespace {

bool block_visible(const ir::BufferNode* b) { return b->scope != Scope::Local; }

// Runs a statement's integer arithmetic for one thread at a time, recording the elements of
// block-visible buffers it reads and writes.
class Walker {
 public:
  Walker(Footprints& out, int64_t budget) : out_(out), budget_(budget) {}

  bool over_budget() const { return budget_ < 0; }

  void run(const Stmt& s, const ir::VarNode* tx, int32_t thread) {
    thread_ = thread;
    env_[tx] = thread;
    stmt(s);
    env_.erase(tx);
  }

 private:
  // The value of an integer (or bool) expression, when it follows from the bound variables.
  std::optional<int64_t> eval(const Expr& e) {
    if (!e.defined()) return std::nullopt;
    const DType t = e.dtype();
    if (t.is_float()) return std::nullopt;
    switch (e->kind) {
      case ir::ExprKind::IntImm: return e.as<ir::IntImm>()->value;
      case ir::ExprKind::Var: {
        auto it = env_.find(static_cast<const ir::VarNode*>(e.get()));
        if (it == env_.end()) return std::nullopt;
        return it->second;
      }
      case ir::ExprKind::Binary: {
        const auto* n = e.as<ir::Binary>();
        auto a = eval(n->a), b = eval(n->b);
        if (!a || !b) {
          // false && x, true || x: known without x
          if (n->op == ir::BinOp::And && ((a && !*a) || (b && !*b))) return 0;
          if (n->op == ir::BinOp::Or && ((a && *a) || (b && *b))) return 1;
          return std::nullopt;
        }
        const DType at = n->a.dtype();
        int64_t r = 0;
        switch (n->op) {
          case ir::BinOp::Add: r = *a + *b; break;
          case ir::BinOp::Sub: r = *a - *b; break;
          case ir::BinOp::Mul: r = *a * *b; break;
          case ir::BinOp::Div: r = ir::int_div(at, *a, *b); break;
          case ir::BinOp::Mod: r = ir::int_mod(at, *a, *b); break;
          case ir::BinOp::Min: r = std::min(*a, *b); break;
          case ir::BinOp::Max: r = std::max(*a, *b); break;
          case ir::BinOp::Eq: return *a == *b;
          case ir::BinOp::Ne: return *a != *b;
          case ir::BinOp::Lt: return *a < *b;
          case ir::BinOp::Le: return *a <= *b;
          case ir::BinOp::Gt: return *a > *b;
          case ir::BinOp::Ge: return *a >= *b;
          case ir::BinOp::And: return *a && *b;
          case ir::BinOp::Or: return *a || *b;
          default: return std::nullopt;  // bit operations: not index arithmetic the lowering makes
        }
        return fits(t, r) ? std::optional<int64_t>(r) : std::nullopt;
      }
      case ir::ExprKind::Unary: {
        const auto* n = e.as<ir::Unary>();
        auto a = eval(n->a);
        if (!a) return std::nullopt;
        if (n->op == ir::UnOp::Not) return !*a;
        if (n->op == ir::UnOp::Neg && fits(t, -*a)) return -*a;
        return std::nullopt;
      }
      case ir::ExprKind::Select: {
        const auto* n = e.as<ir::Select>();
        auto c = eval(n->cond);
        if (!c) return std::nullopt;
        return eval(*c ? n->t : n->f);
      }
      case ir::ExprKind::Cast: {
        const auto* n = e.as<ir::Cast>();
        auto a = eval(n->a);
        if (!a) return std::nullopt;
        if (t.is_bool()) return *a != 0;
        return fits(t, *a) ? a : std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  // Whether v is a value of t without wrapping (a wrapped index is left to the fallback).
  static bool fits(DType t, int64_t v) {
    if (t.is_bool()) return v == 0 || v == 1;
    if (t.bits() >= 64) return true;
    if (t.is_signed_int()) {
      const int64_t lim = int64_t(1) << (t.bits() - 1);
      return v >= -lim && v < lim;
    }
    return v >= 0 && v < (int64_t(1) << t.bits());
  }

  void inexact(const ir::BufferNode* b, bool write) {
    Footprint& f = (write ? out_.writes : out_.reads)[b];
    f.exact = false;
    f.owner.clear();
  }

  // Every access in s, inexact (a statement whose elements are not worked out here).
  void all_inexact(const Stmt& s) {
    for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
      if (!block_visible(b.get())) return;
      if (is_read(how)) inexact(b.get(), false);
      if (is_write(how)) inexact(b.get(), true);
    });
  }
  void all_inexact(const Expr& e) {
    struct Loads : IRVisitor {
      Walker* w;
      void visit(const ir::Load* op) override {
        if (block_visible(op->buffer.get())) w->inexact(op->buffer.get(), false);
        IRVisitor::visit(op);
      }
    } v;
    v.w = this;
    v.visit_expr(e);
  }

  void element(const ir::BufferNode* b, const std::vector<Expr>& indices, bool write) {
    if (!block_visible(b)) return;
    Footprint& f = (write ? out_.writes : out_.reads)[b];
    if (!f.exact) return;
    if (--budget_ < 0) return;
    int64_t flat = 0;
    for (std::size_t d = 0; d < indices.size(); ++d) {
      auto i = eval(indices[d]);
      auto n = d < b->shape.size() ? b->shape[d].as_int() : std::nullopt;
      // Out-of-range indices are not this analysis' business (bounds and the interpreter check
      // them), but they could alias another element's flat index: inexact.
      if (!i || !n || *i < 0 || *i >= *n ||
          flat > std::numeric_limits<int64_t>::max() / std::max<int64_t>(*n, 1)) {
        inexact(b, write);
        return;
      }
      flat = flat * *n + *i;
    }
    f.add(flat, thread_);
  }

  // The loads in e (and in their indices).
  void reads(const Expr& e) {
    struct Loads : IRVisitor {
      Walker* w;
      void visit(const ir::Load* op) override {
        w->element(op->buffer.get(), op->indices, false);
        IRVisitor::visit(op);  // loads in the indices
      }
    } v;
    v.w = this;
    v.visit_expr(e);
  }

  void stmt(const Stmt& s) {
    if (!s || over_budget()) return;
    switch (s->kind) {
      case ir::StmtKind::Seq:
        for (const Stmt& c : s.as<ir::Seq>()->stmts) stmt(c);
        return;
      case ir::StmtKind::Barrier:
      case ir::StmtKind::AsyncWait:
      case ir::StmtKind::MmaSync: return;
      case ir::StmtKind::Let: {
        const auto* n = s.as<ir::Let>();
        reads(n->value);
        const ir::VarNode* v = n->var.node();
        auto saved = env_.find(v) != env_.end() ? std::optional<int64_t>(env_[v]) : std::nullopt;
        if (auto x = eval(n->value))
          env_[v] = *x;
        else
          env_.erase(v);
        stmt(n->body);
        if (saved)
          env_[v] = *saved;
        else
          env_.erase(v);
        return;
      }
      case ir::StmtKind::If: {
        const auto* n = s.as<ir::If>();
        reads(n->cond);
        auto c = eval(n->cond);
        if (!c || *c) stmt(n->then_body);
        if (!c || !*c) stmt(n->else_body);
        return;
      }
      case ir::StmtKind::For: {
        const auto* n = s.as<ir::For>();
        reads(n->min);
        reads(n->extent);
        auto lo = eval(n->min), ext = eval(n->extent);
        // A parallel loop is the whole block's (not lowered to threads): every element is anyone's.
        if (n->for_kind == ForKind::Parallel || !lo || !ext || *ext > budget_) {
          all_inexact(n->body);
          return;
        }
        const ir::VarNode* v = n->var.node();
        for (int64_t i = 0; i < *ext && !over_budget(); ++i) {
          env_[v] = *lo + i;
          stmt(n->body);
        }
        env_.erase(v);
        return;
      }
      case ir::StmtKind::Store: {
        const auto* n = s.as<ir::Store>();
        for (const Expr& i : n->indices) reads(i);
        // A shuffle's value is read by another lane; an async store lands at a later wait.
        if (n->shuffle())
          all_inexact(n->value);
        else
          reads(n->value);
        if (n->async || n->shuffle())
          inexact(n->buffer.get(), true);
        else
          element(n->buffer.get(), n->indices, true);
        return;
      }
      default:  // tile statements, atomics, matrix units, prefetches: not per element here
        all_inexact(s);
        return;
    }
  }

  Footprints& out_;
  int64_t budget_;
  int32_t thread_ = 0;
  std::unordered_map<const ir::VarNode*, int64_t> env_;
};

// Elements recorded over all threads, at most: beyond it the statement is treated as touching
// every element (a few milliseconds of work per statement at the limit).
constexpr int64_t kBudget = int64_t(1) << 20;

}  // namespace

Footprints thread_footprints(const Stmt& s, const ThreadSpace& space) {
  Footprints out;
  Walker w(out, kBudget);
  if (space.tx && space.threads > 0)
    for (int32_t t = 0; t < space.threads && !w.over_budget(); ++t) w.run(s, space.tx, t);
  if (!space.tx || space.threads <= 0 || w.over_budget()) {
    // Start again, recording only which buffers are touched.
    out = Footprints();
    for_each_buffer_access(s, [&](const Buffer& b, BufferAccess how) {
      if (!block_visible(b.get())) return;
      if (is_read(how)) out.reads[b.get()].exact = false;
      if (is_write(how)) out.writes[b.get()].exact = false;
    });
  }
  return out;
}

}  // namespace tg::lower
