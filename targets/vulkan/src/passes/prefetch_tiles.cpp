// prefetch_tiles and double_buffer_tiles (see the header).
#include "passes/prefetch_tiles.h"

#include <map>
#include <set>
#include <tuple>

#include "tile_storage.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

constexpr int64_t kGroup = 8;         // 16-bit elements in a group copy
constexpr int64_t kMaxPrefetch = 16;  // uvec4 registers a copy nest may hold per thread

// ---- IR construction

Stmt barrier_at(const SourceLoc& loc) { return Stmt(std::make_shared<ir::Barrier>(loc)); }

// for v in vectorized(0 +: 8) { dst[dst_index + v] = src[src_index + v] }: the group copy of
// element 0's indices (the last index moves with v).
Stmt group_copy(const Buffer& dst, std::vector<Expr> dst_index, const Buffer& src,
                std::vector<Expr> src_index, const SourceLoc& loc) {
  Var v("v", i32, loc);
  dst_index.back() = dst_index.back() + v;
  src_index.back() = src_index.back() + v;
  auto st = std::make_shared<ir::Store>(loc);
  st->buffer = dst;
  st->indices = std::move(dst_index);
  st->value = src.load(std::move(src_index));
  auto f = std::make_shared<ir::For>(loc);
  f->var = v;
  f->min = Expr(0);
  f->extent = Expr(int(kGroup));
  f->for_kind = ForKind::Vectorized;
  f->body = Stmt(std::move(st));
  return Stmt(std::move(f));
}

Stmt let_stmt(const Var& var, const Expr& value, std::vector<Stmt> body, const SourceLoc& loc) {
  auto l = std::make_shared<ir::Let>(loc);
  l->var = var;
  l->value = value;
  l->body = make_seq(std::move(body), loc);
  return Stmt(std::move(l));
}

Stmt loop_with_body(const ir::For& op, std::vector<Stmt> body) {
  auto f = std::make_shared<ir::For>(op);
  f->body = make_seq(std::move(body), op.loc);
  return Stmt(std::move(f));
}

std::vector<Expr> substituted(const std::vector<Expr>& index, const std::vector<std::pair<Var, Expr>>& map) {
  std::vector<Expr> out;
  for (const Expr& e : index) out.push_back(simplify_expr(substitute(e, map)));
  return out;
}

// ---- prefetch_tiles

// One copy nest of a K loop: for it { let .. { <group copy> } }, and its registers.
struct CopyNest {
  const ir::For* outer = nullptr;
  std::vector<std::pair<Var, Expr>> lets;
  GroupCopy copy;
  Buffer dst, src, regs;
};

// Tensors the function writes (the access record included): reading them early could differ.
std::set<const ir::BufferNode*> written_tensors(const Function& f) {
  std::set<const ir::BufferNode*> out;
  for_each_buffer_access(f.body, [&](const Buffer& b, BufferAccess how) {
    if (b->scope == Scope::Global && is_write(how)) out.insert(b.get());
  });
  if (const Param* record = find_access_record(f)) out.insert(record->buffer.get());
  return out;
}

// The Buffer handles of a group copy's two sides, from its store.
std::pair<Buffer, Buffer> copy_buffers(const ir::For& copy) {
  Stmt s = copy.body;
  while (const auto* l = s.as<ir::Let>()) s = l->body;
  const auto* st = s.as<ir::Store>();
  return {st->buffer, Buffer(st->value.as<ir::Load>()->buffer)};
}

// The copy nests of a prefetchable K loop, and the index of the barrier after them:
//   for ko { barrier; for it { let .. { <group copy into a vector tile> } } ...; barrier; rest }
std::optional<std::pair<std::vector<CopyNest>, std::size_t>> match_k_loop(
    const ir::For& op, const std::set<const ir::BufferNode*>& tiles,
    const std::set<const ir::BufferNode*>& written) {
  const auto* seq = op.body.as<ir::Seq>();
  if (op.for_kind != ForKind::Serial || !op.min.as_int() || !op.extent.as_int() || *op.extent.as_int() < 1 ||
      !seq || seq->stmts.size() < 3 || !seq->stmts[0].as<ir::Barrier>())
    return std::nullopt;
  std::vector<CopyNest> nests;
  std::size_t i = 1;
  for (; i < seq->stmts.size(); ++i) {
    const auto* f = seq->stmts[i].as<ir::For>();
    if (!f) break;
    std::optional<int64_t> lo = f->min.as_int(), n = f->extent.as_int();
    if (f->for_kind == ForKind::Parallel || !lo || !n || *n < 1 || *n > kMaxPrefetch) return std::nullopt;
    CopyNest nest;
    nest.outer = f;
    Stmt s = f->body;
    while (const auto* l = s.as<ir::Let>()) nest.lets.push_back({l->var, l->value}), s = l->body;
    const auto* inner = s.as<ir::For>();
    std::optional<GroupCopy> g = inner ? match_group_copy(*inner) : std::nullopt;
    if (!g || g->src->scope != Scope::Global || g->dst->scope != Scope::Shared || written.count(g->src) ||
        !tiles.count(g->dst))
      return std::nullopt;
    nest.copy = *g;
    std::tie(nest.dst, nest.src) = copy_buffers(*inner);
    nests.push_back(std::move(nest));
  }
  if (nests.empty() || i + 1 >= seq->stmts.size() || !seq->stmts[i].as<ir::Barrier>()) return std::nullopt;
  return std::pair{std::move(nests), i};
}

class Prefetch : public IRMutator {
 public:
  explicit Prefetch(const Function& f) : written_(written_tensors(f)) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    tiles_ = vector_tiles(op->body);
    regs_.clear();
    Stmt out = IRMutator::visit(op, self);
    if (regs_.empty()) return out;
    auto k = std::make_shared<ir::Kernel>(*out.as<ir::Kernel>());
    k->buffers.insert(k->buffers.end(), regs_.begin(), regs_.end());
    return Stmt(std::move(k));
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    auto match = match_k_loop(*op, tiles_, written_);
    if (!match) return IRMutator::visit(op, self);
    auto& [nests, second_barrier] = *match;
    const auto& stmts = op->body.as<ir::Seq>()->stmts;
    for (CopyNest& n : nests) {
      n.regs = Buffer::make(n.dst->name + "_prefetch", {Expr(int(*n.outer->extent.as_int() * kGroup))},
                            n.dst->dtype, Scope::Local, {}, n.outer->loc);
      regs_.push_back(n.regs);
    }
    const Expr last = Expr(int(*op->min.as_int() + *op->extent.as_int() - 1));
    Var next(op->var.name() + "_next", op->var.dtype(), op->loc);
    // registers ← the tensors' tiles of step ko, one group copy an iteration of each nest
    auto loads = [&](const Expr& ko) {
      std::vector<Stmt> out;
      for (const CopyNest& n : nests)
        for (int64_t it = 0; it < *n.outer->extent.as_int(); ++it) {
          std::vector<Expr> src;
          for (const Expr& e : n.copy.src_index) src.push_back(through_lets(e, n.lets));
          src = substituted(src, {{n.outer->var, Expr(int(*n.outer->min.as_int() + it))}, {op->var, ko}});
          out.push_back(group_copy(n.regs, {Expr(int(it * kGroup))}, n.src, src, n.outer->loc));
        }
      return out;
    };
    std::vector<Stmt> body = {stmts[0]};  // the leading barrier
    for (const CopyNest& n : nests)       // Shared tiles ← registers
      for (int64_t it = 0; it < *n.outer->extent.as_int(); ++it) {
        std::vector<Expr> dst;
        for (const Expr& e : n.copy.dst_index) dst.push_back(through_lets(e, n.lets));
        dst = substituted(dst, {{n.outer->var, Expr(int(*n.outer->min.as_int() + it))}});
        body.push_back(group_copy(n.dst, dst, n.regs, {Expr(int(it * kGroup))}, n.outer->loc));
      }
    body.push_back(stmts[second_barrier]);
    std::vector<Stmt> after = loads(next);
    for (std::size_t j = second_barrier + 1; j < stmts.size(); ++j) after.push_back(mutate(stmts[j]));
    body.push_back(let_stmt(next, min(op->var + 1, last), std::move(after), op->loc));
    std::vector<Stmt> out = loads(op->min);
    out.push_back(loop_with_body(*op, std::move(body)));
    return make_seq(std::move(out), op->loc);
  }

 private:
  std::set<const ir::BufferNode*> written_, tiles_;
  std::vector<Buffer> regs_;
};

// ---- double_buffer_tiles

// A loop as prefetch_tiles writes it: the stores into the tiles, the let of the next step and,
// in its body, the loads of the registers then the rest, which ends with a barrier.
struct Prefetched {
  std::vector<Stmt> stores;  // group copies registers → tiles
  const ir::Let* next = nullptr;
  std::vector<Stmt> loads, rest;
  std::set<const ir::BufferNode*> tiles;
};

std::optional<Prefetched> match_prefetched(const ir::For& op) {
  const auto* seq = op.body.as<ir::Seq>();
  if (op.for_kind != ForKind::Serial || !op.min.as_int() || !op.extent.as_int() || !seq ||
      seq->stmts.size() < 4 || !seq->stmts[0].as<ir::Barrier>())
    return std::nullopt;
  Prefetched p;
  std::set<const ir::BufferNode*> regs;
  std::size_t i = 1;
  for (; i < seq->stmts.size(); ++i) {
    const auto* f = seq->stmts[i].as<ir::For>();
    std::optional<GroupCopy> g = f ? match_group_copy(*f) : std::nullopt;
    if (!g) break;
    if (g->src->scope != Scope::Local || g->dst->scope != Scope::Shared) return std::nullopt;
    p.stores.push_back(seq->stmts[i]);
    p.tiles.insert(g->dst);
    regs.insert(g->src);
  }
  const int64_t last = *op.min.as_int() + *op.extent.as_int() - 1;
  if (p.stores.empty() || i + 2 != seq->stmts.size() || !seq->stmts[i].as<ir::Barrier>()) return std::nullopt;
  p.next = seq->stmts[i + 1].as<ir::Let>();
  const auto* step = p.next ? p.next->value.as<ir::Binary>() : nullptr;  // min(ko + 1, last)
  if (!step || step->op != ir::BinOp::Min || step->b.as_int() != std::optional<int64_t>(last))
    return std::nullopt;
  LinearForm plus_one = linear_difference(step->a, op.var + 1);
  if (!plus_one.is_constant() || plus_one.constant != 0) return std::nullopt;
  const auto* body = p.next->body.as<ir::Seq>();
  if (!body || !body->stmts.back().as<ir::Barrier>()) return std::nullopt;
  std::size_t j = 0;
  for (; j < body->stmts.size(); ++j) {
    const auto* f = body->stmts[j].as<ir::For>();
    std::optional<GroupCopy> g = f ? match_group_copy(*f) : std::nullopt;
    if (!g || g->src->scope != Scope::Global || !regs.count(g->dst)) break;
    p.loads.push_back(body->stmts[j]);
  }
  if (p.loads.empty() || j + 1 >= body->stmts.size()) return std::nullopt;
  p.rest.assign(body->stmts.begin() + std::ptrdiff_t(j), body->stmts.end());
  return p;
}

// Every reference to the tiles outside `loop`.
bool used_outside(const Stmt& kernel_body, const ir::For* loop,
                  const std::set<const ir::BufferNode*>& tiles) {
  struct Outside : BufferAccessVisitor {
    const ir::For* loop;
    const std::set<const ir::BufferNode*>* tiles;
    bool found = false;
    using BufferAccessVisitor::visit;
    void visit(const ir::For* op) override {
      if (op != loop) BufferAccessVisitor::visit(op);
    }
    void access(const Buffer& b, BufferAccess) override { found = found || tiles->count(b.get()); }
  } outside;
  outside.loop = loop;
  outside.tiles = &tiles;
  outside.visit_stmt(kernel_body);
  return outside.found;
}

// Loads and stores of the tiles, with their slot as a new leading index.
class IntoSlot : public IRMutator {
 public:
  IntoSlot(const std::map<const ir::BufferNode*, Buffer>& slotted, Expr slot)
      : slotted_(slotted), slot_(slot) {}
  Expr visit(const ir::Load* op, const Expr& self) override {
    auto it = slotted_.find(op->buffer.get());
    Expr e = IRMutator::visit(op, self);
    if (it == slotted_.end()) return e;
    std::vector<Expr> idx = {slot_};
    const auto* ld = e.as<ir::Load>();
    idx.insert(idx.end(), ld->indices.begin(), ld->indices.end());
    return it->second.load(std::move(idx));
  }
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    auto it = slotted_.find(op->buffer.get());
    Stmt s = IRMutator::visit(op, self);
    if (it == slotted_.end()) return s;
    auto n = std::make_shared<ir::Store>(*s.as<ir::Store>());
    n->buffer = it->second;
    n->indices.insert(n->indices.begin(), slot_);
    return Stmt(std::move(n));
  }

 private:
  const std::map<const ir::BufferNode*, Buffer>& slotted_;
  Expr slot_;
};

class DoubleBuffer : public IRMutator {
 public:
  explicit DoubleBuffer(const Features& device) : device_(device) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    body_ = op->body;
    slotted_.clear();
    Stmt out = IRMutator::visit(op, self);
    if (slotted_.empty()) return self;
    auto k = std::make_shared<ir::Kernel>(*out.as<ir::Kernel>());
    for (Buffer& b : k->buffers)  // the declarations
      if (auto it = slotted_.find(b.get()); it != slotted_.end()) b = it->second;
    if (workgroup_bytes(*k, device_, vector_tiles(k->body)) > int64_t(device_.max_shared_bytes)) return self;
    return Stmt(std::move(k));
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    std::optional<Prefetched> p = match_prefetched(*op);
    if (!p || used_outside(body_, op, p->tiles)) return IRMutator::visit(op, self);
    for (const ir::BufferNode* t : p->tiles) {
      std::vector<Expr> shape = {Expr(2)};
      shape.insert(shape.end(), t->shape.begin(), t->shape.end());
      auto node = std::make_shared<ir::BufferNode>(*t);
      node->shape = std::move(shape);
      slotted_[t] = Buffer(node);
    }
    const Expr lo = op->min, last = Expr(int(*op->min.as_int() + *op->extent.as_int() - 1));
    auto in_slot = [&](const std::vector<Stmt>& stmts, const Expr& slot,
                       const std::vector<std::pair<Var, Expr>>& values) {
      std::vector<Stmt> out;
      IntoSlot into(slotted_, slot);
      for (const Stmt& s : stmts)
        out.push_back(into.mutate(values.empty() ? s : simplify_stmt(substitute(s, values))));
      return out;
    };
    // before the loop: slot 0 ← registers (tile min); registers ← tile min + 1; barrier
    std::vector<Stmt> out = in_slot(p->stores, Expr(0), {{op->var, lo}});
    for (const Stmt& s : p->loads)
      out.push_back(simplify_stmt(substitute(s, {{p->next->var, min(lo + 1, last)}})));
    out.push_back(barrier_at(op->loc));
    // each step: the other slot ← registers; registers ← tile ko + 2; the rest reads slot ko - min
    std::vector<Stmt> body = in_slot(p->stores, (op->var - lo + 1) % 2, {});
    std::vector<Stmt> after = p->loads;
    for (const Stmt& s : in_slot(p->rest, (op->var - lo) % 2, {})) after.push_back(mutate(s));
    body.push_back(let_stmt(p->next->var, min(op->var + 2, last), std::move(after), p->next->loc));
    out.push_back(loop_with_body(*op, std::move(body)));
    return make_seq(std::move(out), op->loc);
  }

 private:
  const Features& device_;
  Stmt body_;
  std::map<const ir::BufferNode*, Buffer> slotted_;
};

}  // namespace

Function prefetch_tiles(const Function& f, const Features&) {
  Prefetch pass(f);
  return pass.mutate_function(f);
}

Function double_buffer_tiles(const Function& f, const Features& device) {
  DoubleBuffer pass(device);
  return pass.mutate_function(f);
}

}  // namespace tg::vulkan
