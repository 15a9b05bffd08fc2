// lower_tile_ops: Copy, Fill, Reduce and Gemm as parallel loop nests (see lower_tile_ops.h).
#include "tilegen/passes/lower_tile_ops.h"

#include <limits>

#include "tilegen/ir/visitor.h"

namespace tg {

using namespace ir;

namespace {

Stmt make_for(const Var& v, Expr extent, Stmt body, ForKind kind, const SourceLoc& loc) {
  auto n = std::make_shared<For>(loc);
  n->var = v;
  n->min = make_int(0, v.dtype());
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt make_store(const Buffer& b, std::vector<Expr> idx, Expr value, const SourceLoc& loc) {
  auto n = std::make_shared<Store>(loc);
  n->buffer = b;
  n->indices = std::move(idx);
  n->value = make_cast(b->dtype, std::move(value));
  return Stmt(std::move(n));
}

Stmt make_if(Expr cond, Stmt then_body, const SourceLoc& loc) {
  if (!cond.defined()) return then_body;
  auto n = std::make_shared<If>(loc);
  n->cond = std::move(cond);
  n->then_body = std::move(then_body);
  return Stmt(std::move(n));
}

/// a && b, dropping conditions the constructors already folded to true.
Expr conjoin(const Expr& a, const Expr& b) {
  if (auto* c = b.as<IntImm>(); c && c->dtype.is_bool() && c->value != 0) return a;
  return a.defined() ? make_binary(BinOp::And, a, b) : b;
}

/// index >= 0 && index < shape for every dimension of a Global buffer.
Expr in_bounds(const Buffer& b, const std::vector<Expr>& idx) {
  Expr c;
  for (std::size_t d = 0; d < idx.size(); ++d) {
    c = conjoin(c, make_binary(BinOp::Ge, idx[d], make_int(0, idx[d].dtype())));
    c = conjoin(c, make_binary(BinOp::Lt, idx[d], b->shape[d]));
  }
  return c;
}

bool is_unit(const Expr& e) { return e.as_int() && *e.as_int() == 1; }
bool is_const_zero(const Expr& e) { return e.as_int() && *e.as_int() == 0; }

std::vector<int> non_unit_dims(const Region& r) {
  std::vector<int> dims;
  for (std::size_t d = 0; d < r.extents.size(); ++d)
    if (!is_unit(r.extents[d])) dims.push_back(int(d));
  return dims;
}

/// An i32 loop variable, i64 when the extent may not fit in 32 bits.
Var loop_var(const std::string& name, const Expr& extent) {
  auto c = extent.as_int();
  bool wide = extent.dtype().bits() > 32 && !(c && *c <= std::numeric_limits<int32_t>::max());
  return Var(name, wide ? i64 : i32);
}

/// The element of region r at loop variables `vars` placed on its non-unit dimensions.
std::vector<Expr> element(const Region& r, const std::vector<int>& dims, const std::vector<Var>& vars) {
  std::vector<Expr> idx = r.offsets;
  for (std::size_t j = 0; j < dims.size(); ++j)
    idx[std::size_t(dims[j])] = r.offsets[std::size_t(dims[j])] + vars[j];
  return idx;
}

/// Wrap `body` in parallel loops over `vars` (outermost first); with no loop at all, a parallel
/// loop of extent 1 keeps the statement collective (performed once by the block).
Stmt parallel_nest(const std::vector<Var>& vars, const std::vector<Expr>& extents, Stmt body,
                   const SourceLoc& loc) {
  if (vars.empty()) return make_for(Var("once", i32), make_int(1), std::move(body), ForKind::Parallel, loc);
  for (std::size_t j = vars.size(); j-- > 0;)
    body = make_for(vars[j], extents[j], std::move(body), ForKind::Parallel, loc);
  return body;
}

bool accumulates_in_place(DType t) { return t == f32 || t == f64 || (t.is_int() && !t.is_packed()); }

Expr lowest_of(DType t) {
  if (t.is_float()) return make_unary(UnOp::Neg, infinity(t));
  int64_t v = t.is_signed_int()
                  ? (t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits() - 1)))
                  : 0;
  return make_int(v, t);
}
Expr highest_of(DType t) {
  if (t.is_float()) return infinity(t);
  int bits = t.is_signed_int() ? t.bits() - 1 : t.bits();
  int64_t v = bits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << bits) - 1;
  return make_int(v, t);
}

Expr zero_of(DType t) {
  if (t.is_float()) return make_float(0.0, t);
  if (t.is_bool()) return make_bool(false);
  return make_int(0, t);
}

class TileOpLowerer : public IRMutator {
 public:
  explicit TileOpLowerer(const LowerTileOpsOptions& opt) : opt_(opt) {}

  Stmt visit(const Kernel* op, const Stmt& self) override {
    std::vector<Buffer> saved = std::move(new_buffers_);
    new_buffers_.clear();
    Stmt s = IRMutator::visit(op, self);
    if (!new_buffers_.empty()) {
      auto n = std::make_shared<Kernel>(*s.as<Kernel>());
      for (auto& b : new_buffers_) n->buffers.push_back(b);
      s = Stmt(std::move(n));
    }
    new_buffers_ = std::move(saved);
    return s;
  }

  Stmt visit(const Copy* op, const Stmt& self) override { return lower_copy(*op); }
  Stmt visit(const Fill* op, const Stmt& self) override { return lower_fill(*op); }
  Stmt visit(const Reduce* op, const Stmt& self) override { return lower_reduce(*op); }
  Stmt visit(const Gemm* op, const Stmt& self) override {
    bool keep = !opt_.lower_gemm || (opt_.keep_gemm && opt_.keep_gemm(*op));
    return keep ? IRMutator::visit(op, self) : lower_gemm(*op);
  }

 private:
  // copy src -> dst: dst[off + v] = cast(src[off + v]), guarded on the Global sides.
  Stmt lower_copy(const Copy& c) {
    std::vector<int> sd = non_unit_dims(c.src), dd = non_unit_dims(c.dst);
    if (sd.size() != dd.size())
      throw Error(
          "copy from " + c.src.buffer->name + " to " + c.dst.buffer->name +
              ": the regions have different ranks once unit dimensions are dropped; make the extents match",
          c.loc);
    std::vector<Var> vars;
    std::vector<Expr> extents;
    for (std::size_t j = 0; j < sd.size(); ++j) {
      Expr es = c.src.extents[std::size_t(sd[j])], ed = c.dst.extents[std::size_t(dd[j])];
      if (es.as_int() && ed.as_int() && *es.as_int() != *ed.as_int())
        throw Error("copy from " + c.src.buffer->name + " to " + c.dst.buffer->name +
                        ": extents differ in dimension " + std::to_string(j) + "; make the extents match",
                    c.loc);
      vars.push_back(loop_var("c" + std::to_string(j), es));
      extents.push_back(es);
    }
    std::vector<Expr> si = element(c.src, sd, vars), di = element(c.dst, dd, vars);
    Expr value = make_load(c.src.buffer.ptr(), si);
    if (c.check_bounds && c.src.buffer->scope == Scope::Global)
      value = make_select(in_bounds(c.src.buffer, si), value, zero_of(value.dtype()));
    Stmt st = make_store(c.dst.buffer, di, value, c.loc);
    if (c.check_bounds && c.dst.buffer->scope == Scope::Global)
      st = make_if(in_bounds(c.dst.buffer, di), st, c.loc);
    return parallel_nest(vars, extents, st, c.loc);
  }

  Stmt lower_fill(const Fill& f) {
    std::vector<int> dd = non_unit_dims(f.dst);
    std::vector<Var> vars;
    std::vector<Expr> extents;
    for (std::size_t j = 0; j < dd.size(); ++j) {
      extents.push_back(f.dst.extents[std::size_t(dd[j])]);
      vars.push_back(loop_var("f" + std::to_string(j), extents.back()));
    }
    std::vector<Expr> di = element(f.dst, dd, vars);
    Stmt st = make_store(f.dst.buffer, di, f.value, f.loc);
    if (f.dst.buffer->scope == Scope::Global) st = make_if(in_bounds(f.dst.buffer, di), st, f.loc);
    return parallel_nest(vars, extents, st, f.loc);
  }

  /// Where an accumulation into `dst` runs: dst itself, or an f32 fragment of dst's shape when
  /// dst is too narrow to hold a running sum.
  Buffer accumulator(const Buffer& dst) {
    if (accumulates_in_place(dst->dtype)) return dst;
    Buffer acc = Buffer::make(dst->name + "_acc", dst->shape, f32, Scope::Fragment, {}, dst->loc);
    new_buffers_.push_back(acc);
    return acc;
  }

  // dst[o] = op over r of src[o with r at axis] (see the header's example).
  Stmt lower_reduce(const Reduce& r) {
    const Buffer &src = r.src, &dst = r.dst;
    int rank = int(src.rank());
    int axis = r.axis < 0 ? r.axis + rank : r.axis;
    if (axis < 0 || axis >= rank)
      throw Error("reduce axis " + std::to_string(r.axis) + " is out of range for " + src->name, r.loc);
    bool keep = dst.rank() == src.rank();
    std::vector<Var> vars;
    std::vector<Expr> extents, dst_idx;
    for (int d = 0; d < rank; ++d) {
      if (d == axis) {
        if (keep) dst_idx.push_back(make_int(0));
        continue;
      }
      extents.push_back(src->shape[std::size_t(d)]);
      vars.push_back(loop_var("r" + std::to_string(d), extents.back()));
      dst_idx.push_back(vars.back());
    }
    // src[o..., at] for the outer variables and a position on the axis.
    auto src_at = [&](const Expr& at) {
      std::vector<Expr> idx;
      for (int d = 0, v = 0; d < rank; ++d) idx.push_back(d == axis ? at : Expr(vars[std::size_t(v++)]));
      return make_load(src.ptr(), idx);
    };
    Buffer acc = accumulator(dst);
    DType at = acc->dtype;
    // combine(cur, x): x a source element (AbsMax takes |x|) or, with partial, a partial result.
    auto combine = [&](const Expr& cur, const Expr& x, bool partial) {
      switch (r.op) {
        case ReduceOp::Sum: return make_binary(BinOp::Add, cur, x);
        case ReduceOp::Max: return make_binary(BinOp::Max, cur, x);
        case ReduceOp::Min: return make_binary(BinOp::Min, cur, x);
        case ReduceOp::AbsMax:
          return make_binary(BinOp::Max, cur, partial ? x : make_call(Intrinsic::Abs, {x}));
      }
      return cur;
    };
    Expr identity = r.op == ReduceOp::Max   ? lowest_of(at)
                    : r.op == ReduceOp::Min ? highest_of(at)
                                            : zero_of(at);
    Expr init = r.clear ? identity : make_cast(at, make_load(dst.ptr(), dst_idx));
    Expr cur = make_load(acc.ptr(), dst_idx);
    std::vector<Stmt> body;
    body.push_back(make_store(acc, dst_idx, init, r.loc));
    auto len = src->shape[std::size_t(axis)].as_int();
    int64_t W = opt_.reduce_lanes;
    int64_t whole = 0;  // elements of the axis reduced through the lanes
    if (W > 1 && axis == rank - 1 && len && *len >= W) {
      // W partial results, each over a strided subset of the row: the inner loop is parallel
      // (contiguous, vectorisable), the rows' order of combination changes, not the result's
      // tolerance (the interpreter's reference sums in double).
      whole = *len / W * W;
      std::vector<Expr> part_shape = extents;
      part_shape.push_back(make_int(W));
      Buffer part = Buffer::make(dst->name + "_lanes", part_shape, at, Scope::Fragment, {}, dst->loc);
      new_buffers_.push_back(part);
      auto part_idx = [&](const Expr& l) {
        std::vector<Expr> idx(vars.begin(), vars.end());
        idx.push_back(l);
        return idx;
      };
      Var l0("l", i32), l1("l", i32), l2("l", i32), kb("kb", i32);
      body.push_back(make_for(l0, make_int(W), make_store(part, part_idx(l0), identity, r.loc),
                              ForKind::Parallel, r.loc));
      Expr lane = make_load(part.ptr(), part_idx(l1));
      Stmt step = make_store(part, part_idx(l1),
                             combine(lane, make_cast(at, src_at(kb * make_int(W) + l1)), false), r.loc);
      body.push_back(make_for(kb, make_int(whole / W),
                              make_for(l1, make_int(W), step, ForKind::Parallel, r.loc), ForKind::Serial,
                              r.loc));
      body.push_back(
          make_for(l2, make_int(W),
                   make_store(acc, dst_idx, combine(cur, make_load(part.ptr(), part_idx(l2)), true), r.loc),
                   ForKind::Serial, r.loc));
    }
    Var k = loop_var("r", src->shape[std::size_t(axis)]);
    Expr rest = whole ? make_int(*len - whole) : src->shape[std::size_t(axis)];
    Stmt tail =
        make_store(acc, dst_idx, combine(cur, make_cast(at, src_at(k + make_int(whole))), false), r.loc);
    if (!is_const_zero(rest)) body.push_back(make_for(k, rest, tail, ForKind::Serial, r.loc));
    if (!acc.same_as(dst)) body.push_back(make_store(dst, dst_idx, make_load(acc.ptr(), dst_idx), r.loc));
    return parallel_nest(vars, extents, make_seq(std::move(body), r.loc), r.loc);
  }

  /// The last two dimensions of a gemm operand region; the others must have extent 1.
  struct Operand {
    const Region* r;
    int row_dim, col_dim;
  };
  static Operand operand(const Region& r, const char* name, const SourceLoc& loc) {
    int rank = int(r.extents.size());
    if (rank < 2)
      throw Error(std::string("gemm operand ") + name + " must have at least two dimensions", loc);
    for (int d = 0; d + 2 < rank; ++d)
      if (!is_unit(r.extents[std::size_t(d)]))
        throw Error(std::string("gemm operand ") + name + " (" + r.buffer->name +
                        ") is not a matrix: all but the last two extents must be 1",
                    loc);
    return {&r, rank - 2, rank - 1};
  }
  static Expr at(const Operand& o, const Expr& row, const Expr& col) {
    std::vector<Expr> idx = o.r->offsets;
    idx[std::size_t(o.row_dim)] = idx[std::size_t(o.row_dim)] + row;
    idx[std::size_t(o.col_dim)] = idx[std::size_t(o.col_dim)] + col;
    return make_load(o.r->buffer.ptr(), idx);
  }
  static std::vector<Expr> at_idx(const Operand& o, const Expr& row, const Expr& col) {
    std::vector<Expr> idx = o.r->offsets;
    idx[std::size_t(o.row_dim)] = idx[std::size_t(o.row_dim)] + row;
    idx[std::size_t(o.col_dim)] = idx[std::size_t(o.col_dim)] + col;
    return idx;
  }

  // C[i, j] (+)= Σ_k op(A)[i, k] · op(B)[k, j], ordered i-k-j so the j loop streams rows of B and C.
  Stmt lower_gemm(const Gemm& g) {
    Operand A = operand(g.a, "A", g.loc), B = operand(g.b, "B", g.loc), C = operand(g.c, "C", g.loc);
    Expr M = C.r->extents[std::size_t(C.row_dim)], N = C.r->extents[std::size_t(C.col_dim)];
    Expr K = g.trans_a ? A.r->extents[std::size_t(A.row_dim)] : A.r->extents[std::size_t(A.col_dim)];
    Var i = loop_var("gi", M), j = loop_var("gj", N), k = loop_var("gk", K);
    const Buffer& cb = g.c.buffer;
    bool in_place = accumulates_in_place(cb->dtype);
    Buffer acc = in_place ? cb : Buffer::make(cb->name + "_acc", {M, N}, f32, Scope::Fragment, {}, cb->loc);
    if (!in_place) new_buffers_.push_back(acc);
    auto acc_idx = [&](const Expr& r, const Expr& c) {
      return in_place ? at_idx(C, r, c) : std::vector<Expr>{r, c};
    };
    DType t = acc->dtype;
    Expr a = make_cast(t, g.trans_a ? at(A, k, i) : at(A, i, k));
    Expr b = make_cast(t, g.trans_b ? at(B, j, k) : at(B, k, j));
    Expr cur = make_load(acc.ptr(), acc_idx(i, j));
    std::vector<Stmt> out;
    Expr init = g.clear_c ? zero_of(t) : make_cast(t, at(C, i, j));
    if (g.clear_c || !in_place) {
      Var i0 = loop_var("gi", M), j0 = loop_var("gj", N);
      Expr init0 = substitute(init, {{i, i0}, {j, j0}});
      out.push_back(parallel_nest({i0, j0}, {M, N}, make_store(acc, acc_idx(i0, j0), init0, g.loc), g.loc));
    }
    Stmt update =
        make_store(acc, acc_idx(i, j), make_binary(BinOp::Add, cur, make_binary(BinOp::Mul, a, b)), g.loc);
    Stmt kj = make_for(k, K, make_for(j, N, update, ForKind::Parallel, g.loc), ForKind::Serial, g.loc);
    out.push_back(make_for(i, M, kj, ForKind::Parallel, g.loc));
    if (!in_place) {
      Var i1 = loop_var("gi", M), j1 = loop_var("gj", N);
      out.push_back(parallel_nest(
          {i1, j1}, {M, N}, make_store(cb, at_idx(C, i1, j1), make_load(acc.ptr(), {i1, j1}), g.loc), g.loc));
    }
    return make_seq(std::move(out), g.loc);
  }

  LowerTileOpsOptions opt_;
  std::vector<Buffer> new_buffers_;
};

}  // namespace

Function lower_tile_ops(const Function& f, const TargetInfo& info, const LowerTileOpsOptions& opt) {
  TileOpLowerer m(opt);
  return m.mutate_function(f);
}

Function lower_tile_ops(const Function& f, const TargetInfo& info) { return lower_tile_ops(f, info, {}); }

}  // namespace tg
