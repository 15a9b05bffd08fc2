// The builder's statement-recording calls: element access, tiles, tile operations, loops,
// if/else, let, barrier and atomics. Each records one node with the user's call site; shape and
// scope rules are the verifier's, run by build(), so the same checks guard hand-written IR.
#include "builder_state.h"

namespace tg {

using builder_detail::describe;
using builder_detail::shape_str;

namespace {

std::string ordinal_dims(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " dimension" : " dimensions");
}

void check_indices(const Buffer& b, const std::vector<Expr>& idx, const char* what, const SourceLoc& at) {
  if (!b) throw Error(std::string(what) + " of an empty Tensor", at);
  if (idx.size() != b.rank())
    throw Error(std::string(what) + ": " + describe(b) + " has " + ordinal_dims(b.rank()) + " but " +
                    std::to_string(idx.size()) + (idx.size() == 1 ? " index was" : " indices were") +
                    " given; give one index per dimension",
                at);
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d].defined())
      throw Error(
          std::string(what) + ": index " + std::to_string(d) + " into " + b->name + " is an empty expression",
          at);
    if (!idx[d].dtype().is_int())
      throw Error(std::string(what) + ": index " + std::to_string(d) + " into " + b->name + " has type " +
                      std::string(idx[d].dtype().name()) +
                      "; indices must be integers (tg::cast(tg::i32, ...))",
                  at);
  }
}

ElementRef element(BuilderState* st, const Buffer& b, std::vector<Expr> idx, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  check_indices(b, idx, "element access", at);
  return ElementRef(st, b, std::move(idx), at);
}

Tile tile(const Buffer& b, std::vector<Expr> offsets, std::vector<Expr> extents, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  check_indices(b, offsets, "tile offsets", at);
  if (!extents.empty()) check_indices(b, extents, "tile extents", at);
  return Tile{b, std::move(offsets), std::move(extents), at};
}

Region region_of(const Tile& t) {
  Region r;
  r.buffer = t.buffer;
  r.offsets = t.offsets;
  r.extents = t.extents;
  return r;
}

/// A tile without extents takes the other side's extents, aligned on the trailing dimensions:
/// a bm×bk tile into a 2-D tensor gives {bm, bk}; a 64×128 tile into a 4-D tensor {1, 1, 64, 128}.
std::vector<Expr> fit_extents(const Buffer& b, std::vector<Expr> other, const SourceLoc& at) {
  while (other.size() > b.rank() && other.front().as_int() == 1) other.erase(other.begin());
  if (other.size() > b.rank())
    throw Error("copy: a " + shape_str(other) + " tile does not fit the " + ordinal_dims(b.rank()) + " of " +
                    describe(b) + "; give extents with .slice(offsets, extents)",
                at);
  other.insert(other.begin(), b.rank() - other.size(), Expr(1));
  return other;
}

void need_extents(const Tile& t, const char* op, const char* role, const SourceLoc& at) {
  if (t.extents.empty())
    throw Error(std::string(op) + ": the extents of " + role + " " + describe(t.buffer) +
                    " are unknown; pass the whole buffer or give them with .slice(offsets, extents)",
                at);
}

template <typename Node>
std::shared_ptr<Node> node(const SourceLoc& at) {
  return std::make_shared<Node>(at);
}

}  // namespace

// ---- Tensor, ElementRef

Expr Tensor::shape(std::size_t dim, Loc loc) const {
  if (!buf_)
    throw Error("shape(" + std::to_string(dim) +
                    ") of an empty Tensor: a default-constructed tg::Tensor has no buffer; make it with "
                    "KernelBuilder::tensor, shared, fragment or local",
                SourceLoc::from(loc));
  if (dim >= buf_->shape.size())
    throw Error("shape(" + std::to_string(dim) + ") of " + describe(buf_) + ", which has " +
                    ordinal_dims(buf_->shape.size()) + ": ask for a dimension below " +
                    std::to_string(buf_->shape.size()),
                SourceLoc::from(loc));
  return buf_->shape[dim];
}

ElementRef Tensor::operator()(Expr i0, Loc loc) const { return element(st_, buf_, {i0}, loc); }
ElementRef Tensor::operator()(Expr i0, Expr i1, Loc loc) const { return element(st_, buf_, {i0, i1}, loc); }
ElementRef Tensor::operator()(Expr i0, Expr i1, Expr i2, Loc loc) const {
  return element(st_, buf_, {i0, i1, i2}, loc);
}
ElementRef Tensor::operator()(Expr i0, Expr i1, Expr i2, Expr i3, Loc loc) const {
  return element(st_, buf_, {i0, i1, i2, i3}, loc);
}

Tile Tensor::at(Expr i0, Loc loc) const { return tile(buf_, {i0}, {}, loc); }
Tile Tensor::at(Expr i0, Expr i1, Loc loc) const { return tile(buf_, {i0, i1}, {}, loc); }
Tile Tensor::at(Expr i0, Expr i1, Expr i2, Loc loc) const { return tile(buf_, {i0, i1, i2}, {}, loc); }
Tile Tensor::at(Expr i0, Expr i1, Expr i2, Expr i3, Loc loc) const {
  return tile(buf_, {i0, i1, i2, i3}, {}, loc);
}
Tile Tensor::slice(std::vector<Expr> offsets, std::vector<Expr> extents, Loc loc) const {
  if (extents.empty()) throw Error("slice: give one extent per dimension", SourceLoc::from(loc));
  return tile(buf_, std::move(offsets), std::move(extents), loc);
}
Tensor::operator Tile() const {
  if (!buf_) return Tile{};
  Region r = Region::full(buf_);
  return Tile{buf_, r.offsets, r.extents, {}};
}

ElementRef::operator Expr() const {
  auto n = std::make_shared<ir::Load>(buf_->dtype, buf_.ptr(), idx_);
  n->loc = loc_;
  return Expr(std::move(n));
}

const ElementRef& ElementRef::operator=(const Expr& v) const {
  if (!st_) throw Error("element assignment to a Tensor that no builder made", loc_);
  st_->require_body("element assignment", loc_, {buf_});
  st_->check_owned(buf_, "element assignment", loc_);
  if (!v.defined()) throw Error("element assignment to " + buf_->name + " of an empty expression", loc_);
  auto s = node<ir::Store>(loc_);
  s->buffer = buf_;
  s->indices = idx_;
  s->value = make_cast(buf_->dtype, v);
  st_->record(Stmt(s));
  return *this;
}
const ElementRef& ElementRef::operator+=(const Expr& v) const { return *this = value() + v; }
const ElementRef& ElementRef::operator-=(const Expr& v) const { return *this = value() - v; }
const ElementRef& ElementRef::operator*=(const Expr& v) const { return *this = value() * v; }
const ElementRef& ElementRef::operator/=(const Expr& v) const { return *this = value() / v; }

// ---- Tile operations

void KernelBuilder::copy(const Tile& src, const Tile& dst, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("copy", at, {src.buffer, dst.buffer});
  st_->check_owned(src.buffer, "copy", at);
  st_->check_owned(dst.buffer, "copy", at);
  if (src.extents.empty() && dst.extents.empty())
    throw Error(
        "copy: the extents of both " + describe(src.buffer) + " and " + describe(dst.buffer) +
            " are unknown (both come from .at(...)); pass a whole buffer on one side or give extents with "
            ".slice(offsets, extents)",
        at);
  auto s = node<ir::Copy>(at);
  s->src = region_of(src);
  s->dst = region_of(dst);
  if (s->src.extents.empty()) s->src.extents = fit_extents(src.buffer, dst.extents, at);
  if (s->dst.extents.empty()) s->dst.extents = fit_extents(dst.buffer, src.extents, at);
  st_->record(Stmt(s));
}

namespace {
void record_fill(BuilderState& st, const Tile& dst, Expr value, const char* what, const SourceLoc& at) {
  st.require_body(what, at, {dst.buffer});
  st.check_owned(dst.buffer, what, at);
  need_extents(dst, what, "destination", at);
  if (!value.defined()) throw Error(std::string(what) + ": the value is an empty expression", at);
  auto s = std::make_shared<ir::Fill>(at);
  s->dst = region_of(dst);
  s->value = make_cast(dst.buffer->dtype, value);
  st.record(Stmt(s));
}
}  // namespace

void KernelBuilder::clear(const Tile& dst, Loc loc) {
  record_fill(*st_, dst, Expr(0), "clear", SourceLoc::from(loc));
}
void KernelBuilder::fill(const Tile& dst, Expr value, Loc loc) {
  record_fill(*st_, dst, std::move(value), "fill", SourceLoc::from(loc));
}

void KernelBuilder::gemm(const Tile& a, const Tile& b, const Tile& c, GemmOptions opt, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("gemm", at, {a.buffer, b.buffer, c.buffer});
  const char* roles[] = {"A", "B", "C"};
  const Tile* tiles[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    st_->check_owned(tiles[i]->buffer, "gemm", at);
    need_extents(*tiles[i], "gemm", roles[i], at);
  }
  auto s = node<ir::Gemm>(at);
  s->a = region_of(a);
  s->b = region_of(b);
  s->c = region_of(c);
  s->trans_a = opt.trans_a;
  s->trans_b = opt.trans_b;
  s->clear_c = opt.clear;
  st_->record(Stmt(s));
}

namespace {
void record_reduce(BuilderState& st, ReduceOp op, const Tensor& src, const Tensor& dst, int axis, bool clear,
                   const SourceLoc& at) {
  std::string what = std::string("reduce_") + name_of(op);
  st.require_body(what.c_str(), at, {src.buffer(), dst.buffer()});
  st.check_owned(src.buffer(), what.c_str(), at);
  st.check_owned(dst.buffer(), what.c_str(), at);
  auto s = std::make_shared<ir::Reduce>(at);
  s->op = op;
  s->src = src.buffer();
  s->dst = dst.buffer();
  s->axis = axis;
  s->clear = clear;
  st.record(Stmt(s));
}
}  // namespace

void KernelBuilder::reduce_sum(const Tensor& src, const Tensor& dst, int axis, bool clear, Loc loc) {
  record_reduce(*st_, ReduceOp::Sum, src, dst, axis, clear, SourceLoc::from(loc));
}
void KernelBuilder::reduce_max(const Tensor& src, const Tensor& dst, int axis, bool clear, Loc loc) {
  record_reduce(*st_, ReduceOp::Max, src, dst, axis, clear, SourceLoc::from(loc));
}
void KernelBuilder::reduce_min(const Tensor& src, const Tensor& dst, int axis, bool clear, Loc loc) {
  record_reduce(*st_, ReduceOp::Min, src, dst, axis, clear, SourceLoc::from(loc));
}
void KernelBuilder::reduce_absmax(const Tensor& src, const Tensor& dst, int axis, bool clear, Loc loc) {
  record_reduce(*st_, ReduceOp::AbsMax, src, dst, axis, clear, SourceLoc::from(loc));
}

// ---- Loops

namespace {
const char* loop_var_name(ForKind kind) {
  switch (kind) {
    case ForKind::Serial: return "i";
    case ForKind::Parallel: return "i";
    case ForKind::Pipelined: return "ko";
    case ForKind::Unrolled: return "u";
    case ForKind::Vectorized: return "v";
  }
  return "i";
}

void check_bound(const Expr& e, const char* what, const char* role, const SourceLoc& at) {
  if (!e.defined()) throw Error(std::string(what) + ": the loop " + role + " is an empty expression", at);
  if (!e.dtype().is_int())
    throw Error(std::string(what) + ": the loop " + role + " has type " + std::string(e.dtype().name()) +
                    "; loop bounds must be integers",
                at);
}

Stmt make_for(Var v, Expr min, Expr extent, ForKind kind, int stages, Stmt body, const SourceLoc& at) {
  auto s = std::make_shared<ir::For>(at);
  s->var = std::move(v);
  s->min = std::move(min);
  s->extent = std::move(extent);
  s->for_kind = kind;
  s->stages = stages;
  s->body = std::move(body);
  return Stmt(s);
}
}  // namespace

void KernelBuilder::loop(ForKind kind, Expr begin, Expr extent, int stages, std::function<void(Expr)> f,
                         Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  const char* what = name_of(kind);
  st_->require_body(what, at);
  check_bound(begin, what, "start", at);
  check_bound(extent, what, "extent", at);
  Var v(loop_var_name(kind), extent.dtype(), at);
  Stmt body = st_->collect(what, at, [&] { f(v); });
  st_->record(make_for(v, begin, extent, kind, stages, body, at));
}

void KernelBuilder::loop_nest(ForKind kind, const std::vector<Expr>& extents, int stages, NdBody f, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  const char* what = name_of(kind);
  st_->require_body(what, at);
  if (extents.empty() || extents.size() > 4)
    throw Error(std::string(what) + ": loops of 1 to 4 dimensions are supported, not " +
                    std::to_string(extents.size()),
                at);
  static const char* names[] = {"i", "j", "k", "l"};
  std::vector<Var> vars;
  for (std::size_t d = 0; d < extents.size(); ++d) {
    check_bound(extents[d], what, "extent", at);
    vars.push_back(Var(names[d], extents[d].dtype(), at));
  }
  Stmt body = st_->collect(what, at, [&] { f(std::vector<Expr>(vars.begin(), vars.end())); });
  for (std::size_t d = extents.size(); d-- > 0;)
    body = make_for(vars[d], Expr(0), extents[d], kind, stages, body, at);
  st_->record(body);
}

// ---- Control and element code

std::size_t KernelBuilder::add_if(Expr cond, std::function<void()> then, SourceLoc loc) {
  st_->require_body("if_", loc);
  if (!cond.defined()) throw Error("if_: the condition is an empty expression", loc);
  if (cond.dtype().is_float())
    throw Error("if_: the condition has type " + std::string(cond.dtype().name()) +
                    "; compare it to get a bool (e.g. x > 0.0f)",
                loc);
  cond = make_cast(boolean, cond);
  auto s = node<ir::If>(loc);
  s->cond = cond;
  s->then_body = st_->collect("if_", loc, then);
  std::size_t index = st_->record(Stmt(s));
  st_->last_if = BuilderState::OpenIf{st_->frames.size() - 1, index};
  return index;
}

void KernelBuilder::add_else(std::size_t index, std::function<void()> f, SourceLoc loc) {
  st_->require_body("else_", loc);
  auto& open = st_->last_if;
  std::size_t depth = st_->frames.size() - 1;
  if (!open || open->depth != depth || open->index != index || st_->frames.back().entries.size() != index + 1)
    throw Error("else_ must follow its if_ directly, once: k.if_(cond, [&] { ... }).else_([&] { ... })", loc);
  open.reset();
  const ir::If* old = st_->entry(depth, index).stmt.as<ir::If>();
  auto s = std::make_shared<ir::If>(*old);
  s->else_body = st_->collect("else_", loc, f);
  st_->entry(depth, index).stmt = Stmt(s);
}

Expr KernelBuilder::let(std::string name, Expr value, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("let", at);
  if (!value.defined())
    throw Error("let(\"" + name + "\"): the value is an empty expression; bind a defined tg::Expr", at);
  if (!builder_detail::is_identifier(name))
    throw Error("let: name \"" + name + "\" is not an identifier; use letters, digits and _", at);
  if (auto* f = value.as<ir::FloatImm>(); f && f->weak) value = make_float(f->value, f32);
  auto marker = node<ir::Let>(at);
  marker->var = Var(std::move(name), value.dtype(), at);
  marker->value = std::move(value);
  Var v = marker->var;
  st_->record_let(std::move(marker));
  return v;
}

void KernelBuilder::barrier(Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("barrier", at);
  st_->record(Stmt(node<ir::Barrier>(at)));
}

namespace {
void record_atomic(BuilderState& st, AtomicOp op, const ElementRef& dst, Expr value, const SourceLoc& at) {
  std::string what = std::string("atomic_") + name_of(op);
  st.require_body(what.c_str(), at, {dst.buffer()});
  st.check_owned(dst.buffer(), what.c_str(), at);
  if (!value.defined()) throw Error(what + ": the value is an empty expression", at);
  auto s = std::make_shared<ir::Atomic>(at);
  s->op = op;
  s->buffer = dst.buffer();
  s->indices = dst.indices();
  s->value = make_cast(dst.buffer()->dtype, value);
  st.record(Stmt(s));
}
}  // namespace

void KernelBuilder::atomic_add(const ElementRef& dst, Expr value, Loc loc) {
  record_atomic(*st_, AtomicOp::Add, dst, std::move(value), SourceLoc::from(loc));
}
void KernelBuilder::atomic_max(const ElementRef& dst, Expr value, Loc loc) {
  record_atomic(*st_, AtomicOp::Max, dst, std::move(value), SourceLoc::from(loc));
}
void KernelBuilder::atomic_min(const ElementRef& dst, Expr value, Loc loc) {
  record_atomic(*st_, AtomicOp::Min, dst, std::move(value), SourceLoc::from(loc));
}

}  // namespace tg
