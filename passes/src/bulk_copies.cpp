// bulk_copies (see the header).
#include "tilegen/passes/bulk_copies.h"

#include <optional>
#include <set>

#include "stmt_build.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/async_mma.h"

namespace tg {

namespace {

using namespace lower;

// One fill of a pipelined body as pipeline_shared writes it: `if cond { copy G[..] -> S[slot +: 1, ..] }`.
struct FillCopy {
  Expr cond;
  const ir::Copy* copy;
};

std::optional<FillCopy> as_fill(const Stmt& s) {
  const auto* g = s.as<ir::If>();
  const ir::Copy* c = g && !g->else_body ? g->then_body.as<ir::Copy>() : s.as<ir::Copy>();
  if (!c || c->src.buffer->scope != Scope::Global || c->dst.buffer->scope != Scope::Shared)
    return std::nullopt;
  return FillCopy{g ? g->cond : Expr(), c};
}

class BulkCopies : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    tx_ = op->thread_var;
    added_.clear();
    tiles_.clear();
    for (auto& [b, user] : lower::async_mma_tiles(op->body)) tiles_.insert(b);
    Stmt body = mutate(op->body);
    return added_.empty() ? self : kernel_with(*op, std::move(body), added_);
  }

  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (std::size_t i = 0; i < op->stmts.size(); ++i) {
      if (i + 1 < op->stmts.size()) {
        if (std::optional<Stmt> s = convert(op->stmts[i], op->stmts[i + 1])) {
          out.push_back(*s);
          changed = true;
          ++i;
          continue;
        }
      }
      Stmt m = mutate(op->stmts[i]);
      changed |= !m.same_as(op->stmts[i]);
      out.push_back(std::move(m));
    }
    if (!changed) return self;
    return make_seq(std::move(out), op->loc);
  }

 private:
  struct Box {
    Region src, dst;
  };

  // The boxes of one fill, a strip each where an async mma reads the tile (swizzle_shared_tiles'
  // strips of 16·2^bits bytes), or none when the copy engine cannot do it.
  std::optional<std::vector<Box>> boxes(const ir::Copy& c) const {
    const Buffer &g = c.src.buffer, &s = c.dst.buffer;
    if (g->dtype != s->dtype || g->dtype.is_packed() || g.rank() < 1 || g.rank() > 5) return std::nullopt;
    const int64_t elt = g->dtype.bits() / 8;
    auto inner = g->shape.back().as_int();
    if (!inner || (*inner * elt) % 16 != 0) return std::nullopt;  // the tensor map's row strides
    for (const Expr& d : g->shape)
      if (!d.as_int()) return std::nullopt;
    std::vector<int64_t> box;
    for (const Expr& e : c.src.extents) {
      auto v = e.as_int();
      if (!v || *v < 1 || *v > 256) return std::nullopt;
      box.push_back(*v);
    }
    // The destination: the whole slot (pipeline_shared's ToSlot): [slot +: 1, 0 +: d1, ...], the
    // box's last dimensions; the box's leading dimensions beyond the slot's are single elements
    // (K[b, h, s0 +: 64, 0 +: 128] → K_s[slot, 0 +: 64, 0 +: 128]: a rank-reducing box).
    if (c.dst.offsets.size() != s.rank() || s.rank() < 2 || g.rank() + 1 < s.rank()) return std::nullopt;
    const std::size_t lead = g.rank() + 1 - s.rank();
    for (std::size_t d = 0; d < lead; ++d)
      if (box[d] != 1) return std::nullopt;
    for (std::size_t d = 1; d < s.rank(); ++d)
      if (!is_const(c.dst.offsets[d], 0) || !equal(c.dst.extents[d], s->shape[d]) ||
          !equal(c.dst.extents[d], c.src.extents[lead + d - 1]))
        return std::nullopt;
    int64_t strip = box.back();  // elements of a box's rows
    if (tiles_.count(s.get()) && s.rank() >= 3) {
      const int64_t row_bytes = box.back() * elt;
      const int bits = swizzle_bits_for(row_bytes, box[box.size() - 2]);
      if (bits == 0) return std::nullopt;
      strip = std::min(row_bytes, int64_t(16) << bits) / elt;
    }
    if ((strip * elt) % 16 != 0 || box.back() % strip != 0) return std::nullopt;
    // Each box lands at a 128-byte aligned address (the copy engine's requirement): the slot, and
    // a strip of it, are whole multiples of 128 bytes (shared_memory_plan aligns the buffer).
    int64_t strip_bytes = strip * elt;
    for (std::size_t d = 0; d + 1 < box.size(); ++d) strip_bytes *= box[d];
    if (strip_bytes % 128 != 0) return std::nullopt;
    std::vector<Box> out;
    for (int64_t at = 0; at < box.back(); at += strip) {
      Box b{c.src, c.dst};
      if (at > 0) b.src.offsets.back() = c.src.offsets.back() + Expr(at);
      b.src.extents.back() = Expr(strip);
      b.dst.offsets.back() = Expr(at);
      b.dst.extents.back() = Expr(strip);
      out.push_back(std::move(b));
    }
    return out;
  }

  // A body's leading fills, as one thread's expect_tx and bulk copies on full[slot] under their
  // guard; nullopt where a fill cannot be converted or the fills disagree on guard or slot.
  std::optional<Stmt> issue(const std::vector<FillCopy>& fills, const Buffer& full,
                            const SourceLoc& loc) const {
    std::vector<Stmt> copies;
    int64_t bytes = 0;
    const Expr slot = fills.front().copy->dst.offsets[0];
    for (const FillCopy& f : fills) {
      if (!equal(f.copy->dst.offsets[0], slot) || f.cond.defined() != fills.front().cond.defined() ||
          (f.cond.defined() && !equal(f.cond, fills.front().cond)))
        return std::nullopt;
      std::optional<std::vector<Box>> bs = boxes(*f.copy);
      if (!bs) return std::nullopt;
      for (Box& b : *bs) {
        auto n = std::make_shared<ir::BulkCopy>(f.copy->loc);
        int64_t elems = 1;
        for (const Expr& e : b.src.extents) elems *= *e.as_int();
        bytes += elems * (f.copy->src.buffer->dtype.bits() / 8);
        n->src = std::move(b.src);
        n->dst = std::move(b.dst);
        n->barrier = full;
        n->barrier_indices = {slot};
        copies.push_back(Stmt(std::move(n)));
      }
    }
    if (bytes >= (int64_t(1) << 20)) return std::nullopt;
    copies.insert(copies.begin(), make_mbarrier(ir::MBarrier::Op::ExpectTx, full, slot, Expr(bytes), loc));
    Stmt one = make_if(tx_ == 0, make_seq(std::move(copies), loc), loc);
    return fills.front().cond.defined() ? make_if(fills.front().cond, one, loc) : one;
  }

  static std::vector<FillCopy> leading(const std::vector<Stmt>& stmts) {
    std::vector<FillCopy> out;
    for (const Stmt& s : stmts) {
      std::optional<FillCopy> f = as_fill(s);
      if (!f) break;
      out.push_back(*f);
    }
    return out;
  }

  // pipeline_shared's prologue and main loop → the mbarriers' init, then both with bulk copies.
  std::optional<Stmt> convert(const Stmt& a, const Stmt& b) {
    const auto* pro = a.as<ir::For>();
    const auto* main = b.as<ir::For>();
    if (!pro || !main || pro->for_kind != ForKind::Pipelined || main->for_kind != ForKind::Pipelined ||
        pro->stages != main->stages || pro->stages < 2 || !is_const(pro->min, 0) ||
        !is_const(pro->extent, pro->stages - 1) || !tx_.defined())
      return std::nullopt;
    const int S = main->stages;
    std::vector<Stmt> pro_body = stmts_of(pro->body), main_body = stmts_of(main->body);
    std::vector<FillCopy> pf = leading(pro_body), mf = leading(main_body);
    if (pf.empty() || pf.size() != pro_body.size() || mf.size() != pf.size()) return std::nullopt;
    for (std::size_t i = 0; i < pf.size(); ++i)
      if (!pf[i].copy->dst.buffer.same_as(mf[i].copy->dst.buffer)) return std::nullopt;
    const SourceLoc& loc = main->loc;
    Buffer full = Buffer::make("full" + (added_.empty() ? std::string() : std::to_string(added_.size())),
                               {Expr(S)}, i64, Scope::Shared, {}, loc);
    std::optional<Stmt> pro_issue = issue(pf, full, pro->loc), main_issue = issue(mf, full, loc);
    if (!pro_issue || !main_issue) return std::nullopt;
    added_.push_back(full);
    Var s("s");
    Stmt init = make_if(
        tx_ == 0,
        make_for(s, 0, S, make_mbarrier(ir::MBarrier::Op::Init, full, s, Expr(1), loc), ForKind::Serial, loc),
        loc);
    auto np = std::make_shared<ir::For>(*pro);
    np->body = *pro_issue;
    const Expr rel = is_const(main->min, 0) ? Expr(main->var) : main->var - main->min;
    std::vector<Stmt> body = {*main_issue, make_mbarrier(ir::MBarrier::Op::Wait, full, rel % S, rel / S % 2, loc)};
    for (std::size_t i = mf.size(); i < main_body.size(); ++i) body.push_back(mutate(main_body[i]));
    auto nm = std::make_shared<ir::For>(*main);
    nm->body = make_seq(std::move(body), main->body->loc);
    return make_seq({init, make_barrier(loc), Stmt(std::move(np)), Stmt(std::move(nm))}, loc);
  }

  Var tx_;
  std::vector<Buffer> added_;
  std::set<const ir::BufferNode*> tiles_;
};

}  // namespace

Function bulk_copies(const Function& f, const TargetInfo& info) {
  if (!info.bulk_copy) return f;
  BulkCopies pass;
  return pass.mutate_function(f);
}

}  // namespace tg
