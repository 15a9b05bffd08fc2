// pipeline_shared (see the header).
#include "tilegen/passes/pipeline_shared.h"

#include <map>
#include <set>

#include "stmt_build.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/passes/async_mma.h"

namespace tg {

namespace {

using namespace lower;
using BufferKey = const ir::BufferNode*;

// How each buffer is used: inside which loops (by node), and whether some use forbids
// multi-buffering (a reduce, an atomic).
struct SharedUses : BufferAccessVisitor {
  std::map<BufferKey, std::set<const ir::For*>> loops;  // the outermost loop around each use
  std::set<BufferKey> pinned;
  std::vector<const ir::For*> stack;

  using BufferAccessVisitor::visit;
  void access(const Buffer& b, BufferAccess) override {
    loops[b.get()].insert(stack.empty() ? nullptr : stack.front());
  }
  void visit(const ir::For* op) override {
    stack.push_back(op);
    BufferAccessVisitor::visit(op);
    stack.pop_back();
  }
  void visit(const ir::Atomic* op) override {
    pinned.insert(op->buffer.get());
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::Reduce* op) override {
    pinned.insert(op->src.get()), pinned.insert(op->dst.get());
    BufferAccessVisitor::visit(op);
  }
};

// Every access of a multi-buffered tile gains the slot as its leading index.
struct ToSlot : IRMutator {
  const std::map<BufferKey, Buffer>& staged;
  Expr slot;
  ToSlot(const std::map<BufferKey, Buffer>& s, Expr sl) : staged(s), slot(std::move(sl)) {}

  Region in_slot(const Region& r0) {
    Region r = mutate_region(r0);
    auto it = staged.find(r0.buffer.get());
    if (it == staged.end()) return r;
    r.buffer = it->second;
    r.offsets.insert(r.offsets.begin(), slot);
    r.extents.insert(r.extents.begin(), Expr(1));
    return r;
  }
  Expr visit(const ir::Load* op, const Expr& self) override {
    auto it = staged.find(op->buffer.get());
    if (it == staged.end()) return IRMutator::visit(op, self);
    std::vector<Expr> idx = {slot};
    for (const Expr& e : op->indices) idx.push_back(mutate(e));
    return it->second.load(idx);
  }
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    auto it = staged.find(op->buffer.get());
    if (it == staged.end()) return IRMutator::visit(op, self);
    std::vector<Expr> idx = {slot};
    for (const Expr& e : op->indices) idx.push_back(mutate(e));
    return make_store(it->second, idx, mutate(op->value), op->loc);
  }
  Stmt visit(const ir::Copy* op, const Stmt&) override {
    auto n = std::make_shared<ir::Copy>(*op);
    n->src = in_slot(op->src), n->dst = in_slot(op->dst);
    return Stmt(std::move(n));
  }
  Stmt visit(const ir::Fill* op, const Stmt&) override {
    auto n = std::make_shared<ir::Fill>(*op);
    n->dst = in_slot(op->dst);
    n->value = mutate(op->value);
    return Stmt(std::move(n));
  }
  Stmt visit(const ir::Gemm* op, const Stmt&) override {
    auto n = std::make_shared<ir::Gemm>(*op);
    n->a = in_slot(op->a), n->b = in_slot(op->b), n->c = in_slot(op->c);
    return Stmt(std::move(n));
  }
  // An mma's shared tile operand (async units: wgmma) names the tile by its first element.
  Stmt visit(const ir::Mma* op, const Stmt& self) override {
    Stmt out = IRMutator::visit(op, self);
    auto n = std::make_shared<ir::Mma>(*out.as<ir::Mma>());
    bool changed = false;
    for (ir::MmaOperand* o : {&n->a, &n->b, &n->c}) {
      auto it = staged.find(o->buffer.get());
      if (it == staged.end() || !o->is_tile()) continue;
      o->tile.insert(o->tile.begin(), slot);
      o->buffer = it->second;
      changed = true;
    }
    return changed ? Stmt(std::move(n)) : out;
  }
};

Stmt serial(const ir::For& op) {
  auto n = std::make_shared<ir::For>(op);
  n->for_kind = ForKind::Serial;
  n->stages = 0;
  return Stmt(std::move(n));
}

class Pipeline : public IRMutator {
 public:
  explicit Pipeline(const TargetInfo& info) : info_(info) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    uses_ = SharedUses();
    uses_.visit_stmt(op->body);
    shared_bytes_ = 0;
    swizzled_.clear();
    for (auto& [b, user] : async_mma_tiles(op->body))
      if (swizzle_bits_of(*b)) swizzled_.insert(b);
    for (const Buffer& b : op->buffers)
      if (b->scope == Scope::Shared || b->scope == Scope::Fragment) shared_bytes_ += planned(b, 1);
    staged_.clear();
    Stmt body = mutate(op->body);
    if (staged_.empty() && body.same_as(op->body)) return self;
    auto k = std::make_shared<ir::Kernel>(*op);
    k->body = std::move(body);
    for (Buffer& b : k->buffers)
      if (auto it = staged_.find(b.get()); it != staged_.end()) b = it->second;
    return Stmt(std::move(k));
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (op->for_kind != ForKind::Pipelined) return IRMutator::visit(op, self);
    std::vector<Stmt> stmts = stmts_of(op->body);
    std::vector<const ir::Copy*> leading;
    std::size_t i = 0;
    for (; i < stmts.size(); ++i) {
      const auto* c = stmts[i].as<ir::Copy>();
      if (!c || !eligible(*c, *op, leading)) break;
      leading.push_back(c);
    }
    std::set<BufferKey> written;  // by the statements after the leading copies
    for (std::size_t j = i; j < stmts.size(); ++j)
      for_each_buffer_access(stmts[j], [&](const Buffer& b, BufferAccess how) {
        if (is_write(how)) written.insert(b.get());
      });
    std::erase_if(leading, [&](const ir::Copy* c) { return written.count(c->dst.buffer.get()) > 0; });
    int stages = fit_stages(op->stages, leading);
    if (leading.empty() || stages < 2 || i != leading.size()) return serial(*op);
    return transform(*op, leading, std::vector<Stmt>(stmts.begin() + std::ptrdiff_t(i), stmts.end()), stages);
  }

 private:
  // A copy from global memory into a whole shared tile used only inside this loop.
  bool eligible(const ir::Copy& c, const ir::For& loop, const std::vector<const ir::Copy*>& seen) {
    const Buffer& dst = c.dst.buffer;
    if (c.src.buffer->scope != Scope::Global || dst->scope != Scope::Shared || !dst.const_numel())
      return false;
    for (std::size_t d = 0; d < c.dst.offsets.size(); ++d)
      if (!is_const(c.dst.offsets[d], 0) || !equal(c.dst.extents[d], dst->shape[d])) return false;
    for (const ir::Copy* s : seen)
      if (s->dst.buffer.same_as(dst)) return false;
    const auto& in = uses_.loops[dst.get()];
    return !uses_.pinned.count(dst.get()) && in.size() == 1 && *in.begin() == &loop;
  }

  // What `copies` copies of b may take in shared memory: a quarter more for the target's row
  // padding (pad_shared_tiles), but for a tile an async mma reads, which swizzle_shared_tiles
  // swizzles instead (no padding; 1024 bytes for its alignment).
  int64_t planned(const Buffer& b, int copies) const {
    const int64_t bytes = int64_t(storage_bytes(b->dtype, b.const_numel().value_or(0))) * copies;
    return swizzled_.count(b.get()) ? bytes + 1024 : bytes * 5 / 4;
  }

  // The deepest pipeline (at most `stages`) whose extra copies of the tiles fit in shared memory.
  int fit_stages(int stages, const std::vector<const ir::Copy*>& leading) const {
    auto need = [&](int s) {
      int64_t bytes = shared_bytes_;
      for (const ir::Copy* c : leading) bytes += planned(c->dst.buffer, s) - planned(c->dst.buffer, 1);
      return bytes;
    };
    while (stages >= 2 && need(stages) > info_.shared_mem_bytes) --stages;
    return stages;
  }

  Stmt transform(const ir::For& op, const std::vector<const ir::Copy*>& leading,
                 const std::vector<Stmt>& rest, int stages) {
    std::map<BufferKey, Buffer> staged;
    for (const ir::Copy* c : leading) {
      const Buffer& b = c->dst.buffer;
      std::vector<Expr> shape = {Expr(stages)};
      shape.insert(shape.end(), b->shape.begin(), b->shape.end());
      Buffer nb = Buffer::make(b->name, shape, b->dtype, Scope::Shared, b->layout, b->loc);
      staged.emplace(b.get(), nb), staged_.emplace(b.get(), nb);
    }
    const Expr n = op.extent;
    // The copies that fill the slot of iteration `it` (relative to the loop start), guarded.
    auto fill = [&](const Expr& it, const Expr& slot) {
      std::vector<Stmt> out;
      for (const ir::Copy* c : leading) {
        auto nc = std::make_shared<ir::Copy>(*c);
        Region src = c->src;
        for (Expr& o : src.offsets) o = substitute(o, {{op.var, op.min + it}});
        nc->src = src;
        nc->dst = ToSlot(staged, slot).in_slot(c->dst);
        out.push_back(make_if(it < n, Stmt(std::move(nc)), c->loc));
      }
      return out;
    };
    Var p(op.var.name() + "_pre", op.var.dtype());
    auto pro = std::make_shared<ir::For>(op);
    pro->var = p;
    pro->min = 0;
    pro->extent = stages - 1;
    pro->stages = stages;
    pro->body = make_seq(fill(p, p), op.loc);
    const Expr rel = op.var - op.min;
    std::vector<Stmt> body = fill(rel + (stages - 1), (rel + (stages - 1)) % stages);
    ToSlot reads(staged, rel % stages);
    for (const Stmt& s : rest) body.push_back(reads.mutate(s));
    auto main = std::make_shared<ir::For>(op);
    main->stages = stages;
    main->body = make_seq(std::move(body), op.loc);
    return make_seq({Stmt(std::move(pro)), Stmt(std::move(main))}, op.loc);
  }

  const TargetInfo& info_;
  std::set<BufferKey> swizzled_;  // tiles async mmas read (swizzle_shared_tiles swizzles them)
  SharedUses uses_;
  int64_t shared_bytes_ = 0;
  std::map<BufferKey, Buffer> staged_;
};

}  // namespace

Function pipeline_shared(const Function& f, const TargetInfo& info) {
  return Pipeline(info).mutate_function(f);
}

}  // namespace tg
