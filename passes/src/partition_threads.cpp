// partition_threads (see the header for the IR before and after).
#include "tilegen/passes/partition_threads.h"

#include <algorithm>
#include <bit>
#include <map>

#include "stmt_build.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

using namespace lower;

// An element-wise loop nest: for vars[d] in [mins[d], mins[d] + extents[d]) { body }.
struct Nest {
  std::vector<Var> vars;
  std::vector<Expr> mins, extents;
  Stmt body;
};

// The widest element stored by the body, in bits, and whether any store is packed.
struct StoreWidth : IRVisitor {
  int bits = 8;
  bool packed = false;
  bool loops = false;  // an element with its own loop (reduce, gemm) is not grouped
  void visit(const ir::For* op) override {
    loops = true;
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    bits = std::max(bits, op->buffer->dtype.bits());
    packed |= op->buffer->dtype.is_packed();
    IRVisitor::visit(op);
  }
};

// Parallel loops inside an element body run serially within the element's thread.
struct SerialInner : IRMutator {
  Stmt visit(const ir::For* op, const Stmt& self) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::Parallel && body.same_as(op->body)) return self;
    auto n = std::make_shared<ir::For>(*op);
    if (n->for_kind == ForKind::Parallel) n->for_kind = ForKind::Serial;
    n->body = std::move(body);
    return Stmt(std::move(n));
  }
};

class Partition : public IRMutator {
 public:
  explicit Partition(const TargetInfo& info) : info_(info) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    tx_ = op->thread_var;
    threads_ = op->threads;
    added_.clear();
    Stmt body = drop_redundant_barriers(mutate(op->body), tx_, threads_);
    auto k = std::make_shared<ir::Kernel>(*op);
    k->body = std::move(body);
    for (const Buffer& b : added_) k->buffers.push_back(b);
    return Stmt(std::move(k));
  }

  // A collective under a (block-uniform) if is fenced outside the if, so that barriers never sit
  // in a branch: if (c) { copy ... }  →  barrier; if (c) { <per-thread copy> }; barrier
  Stmt visit(const ir::If* op, const Stmt& self) override {
    const Stmt& t = op->then_body;
    auto kind = t->kind;
    bool collective = kind == ir::StmtKind::Copy || kind == ir::StmtKind::Fill ||
                      kind == ir::StmtKind::Reduce || kind == ir::StmtKind::Gemm ||
                      (t.as<ir::For>() && t.as<ir::For>()->for_kind == ForKind::Parallel);
    if (op->else_body || !collective || !fence_) return IRMutator::visit(op, self);
    fence_ = false;
    Stmt inner = mutate(t);
    fence_ = true;
    auto n = std::make_shared<ir::If>(*op);
    n->then_body = std::move(inner);
    return fenced(Stmt(std::move(n)), op->loc);
  }

  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (op->for_kind != ForKind::Parallel) return IRMutator::visit(op, self);
    Nest n;
    const ir::For* f = op;
    for (;;) {
      n.vars.push_back(f->var), n.mins.push_back(f->min), n.extents.push_back(f->extent);
      const ir::For* inner = f->body.as<ir::For>();
      if (!inner || inner->for_kind != ForKind::Parallel) break;
      f = inner;
    }
    n.body = f->body;
    return lower(n, op->loc);
  }

  //   copy A[by*32 +: 32, ko*16 +: 16] -> A_shared
  //   → for i, j parallel { A_shared[i, j] = A[by*32 + i, ko*16 + j] }   (then partitioned)
  Stmt visit(const ir::Copy* op, const Stmt& self) override {
    auto ext = const_squeezed_extents(op->src);
    if (!ext)
      throw Error("copy: the tile's extents must be constants after bind_sizes; bind the sizes first",
                  op->loc);
    Nest n = element_nest(*ext, "c");
    std::vector<Expr> s = region_index(op->src, to_exprs(n.vars)),
                      d = region_index(op->dst, to_exprs(n.vars));
    const Buffer &src = op->src.buffer, &dst = op->dst.buffer;
    Expr v = cast(dst->dtype, src.load(s));
    if (op->check_bounds && src->scope == Scope::Global)
      v = select(in_bounds(src, s), v, cast(dst->dtype, 0));
    Expr ok = op->check_bounds && dst->scope == Scope::Global ? in_bounds(dst, d) : Expr(true);
    n.body = make_if(ok, make_store(dst, d, v, op->loc), op->loc);
    return lower(n, op->loc);
  }

  Stmt visit(const ir::Fill* op, const Stmt& self) override {
    auto ext = const_squeezed_extents(op->dst);
    if (!ext)
      throw Error("fill: the tile's extents must be constants after bind_sizes; bind the sizes first",
                  op->loc);
    Nest n = element_nest(*ext, "f");
    n.body = make_store(op->dst.buffer, region_index(op->dst, to_exprs(n.vars)),
                        cast(op->dst.buffer->dtype, op->value), op->loc);
    return lower(n, op->loc);
  }

  Stmt visit(const ir::Reduce* op, const Stmt&) override {
    int64_t rows = 1;
    for (const Expr& e : op->dst->shape) rows *= *e.as_int();
    const int64_t len = *op->src->shape[std::size_t(op->axis)].as_int();
    // Threads per output element: the largest power of two that the block's threads hold `rows`
    // times over and the axis has elements for (1 when none does).
    const int64_t fit = rows > 0 ? std::min<int64_t>(threads_ / rows, len) : len;
    const int64_t lanes = int64_t(std::bit_floor(uint64_t(std::max<int64_t>(fit, 1))));
    return lanes >= 4 ? cooperative_reduce(*op, rows, len, lanes) : serial_reduce(op);
  }

  //   reduce max(x -> m, axis=1, clear)
  //   → for i parallel { m[i] = x[i, 0]; for r in [1, 32) { m[i] = max(m[i], x[i, r]) } }
  Stmt serial_reduce(const ir::Reduce* op) {
    std::vector<int64_t> ext;
    for (const Expr& e : op->dst->shape) ext.push_back(*e.as_int());
    Nest n = element_nest(ext, "o");
    std::vector<Expr> out = to_exprs(n.vars);
    Var r("r");
    auto src_at = [&](const Expr& k) {
      std::vector<Expr> idx = out;
      idx.insert(idx.begin() + op->axis, k);
      return cast(op->dst->dtype, op->src.load(idx));
    };
    auto combine = [&](const Expr& acc, const Expr& x) {
      switch (op->op) {
        case ReduceOp::Sum: return acc + x;
        case ReduceOp::Max: return max(acc, x);
        case ReduceOp::Min: return min(acc, x);
        case ReduceOp::AbsMax: return max(acc, abs(x));
      }
      return acc;
    };
    const int64_t len = *op->src->shape[std::size_t(op->axis)].as_int();
    Expr acc = op->dst.load(out);
    Stmt first =
        op->clear ? make_store(op->dst, out, op->op == ReduceOp::AbsMax ? abs(src_at(0)) : src_at(0), op->loc)
                  : make_store(op->dst, out, combine(acc, src_at(0)), op->loc);
    Stmt rest = make_for(r, 1, len - 1, make_store(op->dst, out, combine(acc, src_at(r)), op->loc),
                         ForKind::Serial, op->loc);
    n.body = make_seq({first, rest}, op->loc);
    return lower(n, op->loc);
  }

  // Each output element gets `lanes` threads: strided partial results in a local, then a tree
  // through shared scratch with a barrier a level.
  //   reduce sum(x -> s, axis=1) with x: f32[4, 256], threads(128) → 32 lanes a row:
  //   let row = tx / 32 { let lane = tx % 32 {
  //     s_acc[0] = x[row, lane]; for j in serial(1 +: 7) { s_acc[0] = s_acc[0] + x[row, lane + j*32] }
  //     s_partial[row*32 + lane] = s_acc[0]
  //     barrier; if lane < 16 { s_partial[..] = s_partial[..] + s_partial[.. + 16] }; barrier; ... (to 1)
  //     if lane == 0 { s[row] = s[row] + s_partial[row*32] } } }
  Stmt cooperative_reduce(const ir::Reduce& op, int64_t rows, int64_t len, int64_t lanes) {
    const SourceLoc& loc = op.loc;
    const DType t = op.dst->dtype;
    Buffer acc = Buffer::make(op.dst->name + "_acc", {Expr(1)}, t, Scope::Local, {}, loc);
    Buffer part = Buffer::make(op.dst->name + "_partial", {Expr(rows * lanes)}, t, Scope::Shared, {}, loc);
    added_.push_back(acc), added_.push_back(part);
    Var row("row", tx_.dtype()), lane("lane", tx_.dtype()), j("j");
    std::vector<Expr> out;  // row → dst index, row-major
    int64_t stride = rows;
    for (const Expr& e : op.dst->shape) {
      stride /= *e.as_int();
      out.push_back(row / stride % *e.as_int());
    }
    auto src_at = [&](const Expr& k) {
      std::vector<Expr> idx = out;
      idx.insert(idx.begin() + op.axis, k);
      Expr x = cast(t, op.src.load(idx));
      return op.op == ReduceOp::AbsMax ? abs(x) : x;
    };
    auto merge = [&](const Expr& a, const Expr& b) {
      return op.op == ReduceOp::Sum ? a + b : op.op == ReduceOp::Min ? min(a, b) : max(a, b);
    };
    Expr live = row < rows;
    Expr k = lane + j * lanes;
    Stmt step = make_if(k < len, make_store(acc, {0}, merge(acc.load({0}), src_at(k)), loc), loc);
    std::vector<Stmt> body = {
        make_if(live,
                make_seq({make_store(acc, {0}, src_at(lane), loc),
                          make_for(j, 1, (len + lanes - 1) / lanes - 1, step, ForKind::Serial, loc),
                          make_store(part, {row * lanes + lane}, acc.load({0}), loc)},
                         loc),
                loc)};
    for (int64_t half = lanes / 2; half >= 1; half /= 2) {
      Expr at = row * lanes + lane;
      body.push_back(make_barrier(loc));
      body.push_back(make_if(live && lane < half,
                             make_store(part, {at}, merge(part.load({at}), part.load({at + half})), loc),
                             loc));
    }
    body.push_back(make_barrier(loc));
    Expr total = part.load({row * lanes});
    body.push_back(make_if(live && lane == 0,
                           make_store(op.dst, out, op.clear ? total : merge(op.dst.load(out), total), loc),
                           loc));
    Stmt s =
        make_let(row, tx_ / lanes, make_let(lane, tx_ % lanes, make_seq(std::move(body), loc), loc), loc);
    return fence_ ? fenced(s, loc) : s;
  }

  //   gemm(A_s, B_s -> C_f)  →  for i, j parallel { for k { C_f[i, j] = C_f[i, j] + A_s[i, k] * B_s[k, j] } }
  Stmt visit(const ir::Gemm* op, const Stmt& self) override {
    auto last = [](const Region& r, int from_end) {
      return r.extents[r.extents.size() - std::size_t(from_end)];
    };
    auto m = last(op->c, 2).as_int(), nn = last(op->c, 1).as_int();
    auto kx = (op->trans_a ? last(op->a, 2) : last(op->a, 1)).as_int();
    if (!m || !nn || !kx)
      throw Error("gemm: tile extents must be constants after bind_sizes; bind the sizes first", op->loc);
    Nest n = element_nest({*m, *nn}, "g");
    const Expr i = n.vars[0], j = n.vars[1];
    Var k("k");
    DType t = op->c.buffer->dtype;
    Expr a = op->a.buffer.load(op->trans_a ? matrix_index(op->a, k, i) : matrix_index(op->a, i, k));
    Expr b = op->b.buffer.load(op->trans_b ? matrix_index(op->b, j, k) : matrix_index(op->b, k, j));
    std::vector<Expr> c = matrix_index(op->c, i, j);
    Stmt acc = make_store(op->c.buffer, c, op->c.buffer.load(c) + cast(t, a) * cast(t, b), op->loc);
    Stmt body = make_for(k, 0, *kx, acc, ForKind::Serial, op->loc);
    if (op->clear_c) body = make_seq({make_store(op->c.buffer, c, cast(t, 0), op->loc), body}, op->loc);
    n.body = body;
    return lower(n, op->loc);
  }

 private:
  static std::vector<Expr> to_exprs(const std::vector<Var>& vs) { return {vs.begin(), vs.end()}; }

  static Nest element_nest(const std::vector<int64_t>& ext, const std::string& stem) {
    Nest n;
    for (std::size_t d = 0; d < ext.size(); ++d) {
      n.vars.emplace_back(stem + std::to_string(d));
      n.mins.push_back(0);
      n.extents.push_back(Expr(ext[d]));
    }
    if (ext.empty()) {  // a single element
      n.vars.emplace_back(stem + "0");
      n.mins.push_back(0);
      n.extents.push_back(1);
    }
    return n;
  }

  // Elements per thread-step along the innermost loop: the vector width in elements of the
  // widest store, when the innermost extent is a multiple of it; packed stores at least 2.
  int group_width(const Nest& n) const {
    auto inner = n.extents.back().as_int();
    StoreWidth w;
    w.visit_stmt(n.body);
    if (!inner) {
      if (w.packed)
        throw Error("a packed 4-bit tile needs constant extents; bind the sizes first", n.body->loc);
      return 1;
    }
    int v = w.loops ? 1 : std::max(1, info_.vector_bytes * 8 / w.bits);
    while (v > 1 && *inner % v != 0) v /= 2;
    if (w.packed && v < 2) v = *inner % 2 == 0 ? 2 : 1;
    if (w.packed && v < 2)
      throw Error("a packed 4-bit tile has an odd innermost extent (" + std::to_string(*inner) +
                      "); two elements share a byte, so make that extent even",
                  n.body->loc);
    return v;
  }

  // The nest, partitioned over the block's threads (see the header).
  Stmt lower(const Nest& n, const SourceLoc& loc) {
    const int v = group_width(n);
    const std::size_t d_in = n.vars.size() - 1;
    std::vector<Expr> ext = n.extents;
    ext[d_in] = ext[d_in] / v;
    Expr groups = 1;
    for (const Expr& e : ext) groups = groups * e;
    Var it("it"), flat("flat"), lane("v");
    // Innermost first: let vars[d] = mins[d] + flat / stride % extent.
    Stmt body = SerialInner().mutate(n.body);
    Expr stride = 1;
    std::vector<Expr> value(n.vars.size());
    for (std::size_t d = n.vars.size(); d-- > 0;) {
      Expr q = d == 0 ? flat / stride : flat / stride % ext[d];
      value[d] = d == d_in && v > 1 ? n.mins[d] + q * v + lane : n.mins[d] + q;
      stride = stride * ext[d];
    }
    body = make_let(n.vars[d_in], value[d_in], body, loc);
    if (v > 1) body = make_for(lane, 0, v, body, ForKind::Vectorized, loc);
    for (std::size_t d = d_in; d-- > 0;) body = make_let(n.vars[d], value[d], body, loc);
    Expr g = simplify_expr(groups);
    auto gc = g.as_int();
    if (!(gc && *gc % threads_ == 0)) body = make_if(flat < g, body, loc);
    body = make_let(flat, it * threads_ + tx_, body, loc);
    body = make_for(it, 0, (g + (threads_ - 1)) / threads_, body, ForKind::Serial, loc);
    return fence_ ? fenced(body, loc) : body;
  }

  const TargetInfo& info_;
  Var tx_;
  int threads_ = 1;
  std::vector<Buffer> added_;  // scratch buffers of lowered reductions
  bool fence_ = true;          // false while lowering the body of an if that is fenced as a whole
};

// Fragments left (not laid out in registers) are block-wide tiles: shared memory.
struct FragmentsToShared : IRMutator {
  Buffer mutate_buffer(const Buffer& b) override {
    Buffer m = IRMutator::mutate_buffer(b);
    if (!m || m->scope != Scope::Fragment) return m;
    auto it = done.find(b.get());
    if (it != done.end()) return it->second;
    auto n = std::make_shared<ir::BufferNode>(*m.get());
    n->scope = Scope::Shared;
    n->from_fragment = true;
    return done.emplace(b.get(), Buffer(std::move(n))).first->second;
  }
  std::map<const ir::BufferNode*, Buffer> done;
};

}  // namespace

Function partition_threads(const Function& f, const TargetInfo& info) {
  Function out = Partition(info).mutate_function(f);
  out = FragmentsToShared().mutate_function(out);
  out.body = simplify_stmt(out.body, RangeContext::for_function(out));
  return out;
}

}  // namespace tg
