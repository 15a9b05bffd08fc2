// Per-operation checks of the verifier: regions, copy, fill, gemm, reduce, atomic, mma.
#include <optional>

#include "tilegen/ir/matrix_unit.h"
#include "verifier_internal.h"

namespace tg::verify_detail {

namespace {
std::string num(int64_t v) { return std::to_string(v); }
std::string dims_word(std::size_t n) { return num(int64_t(n)) + (n == 1 ? " dimension" : " dimensions"); }

std::string expr_str(const Expr& e) {
  if (auto v = e.as_int()) return num(*v);
  if (auto* var = e.as<ir::VarNode>()) return var->name;
  return "?";
}

bool all_const(const std::vector<Expr>& v) {
  for (auto& e : v)
    if (!e.as_int()) return false;
  return true;
}
}  // namespace

std::string describe(const Buffer& b) { return std::string(name_of(b->scope)) + " " + b->name; }

std::string dims_str(const std::vector<Expr>& dims) {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "x" : "") + expr_str(dims[i]);
  return out.empty() ? "a scalar" : out;
}

void check_indices(const Buffer& b, const std::vector<Expr>& idx, const std::string& what,
                   const SourceLoc& at) {
  if (idx.size() != b.rank())
    throw Error(what + ": " + describe(b) + " has " + dims_word(b.rank()) + " but " +
                    num(int64_t(idx.size())) + (idx.size() == 1 ? " index is" : " indices are") +
                    " given; give one index per dimension",
                at);
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d].defined())
      throw Error(what + ": index " + num(int64_t(d)) + " into " + b->name + " is empty", at);
    if (!idx[d].dtype().is_int())
      throw Error(what + ": index " + num(int64_t(d)) + " into " + b->name + " has type " +
                      std::string(idx[d].dtype().name()) +
                      "; indices must be integers (tg::cast(tg::i32, ...))",
                  at);
  }
}

void check_value_type(DType target, const Expr& value, const std::string& what, const SourceLoc& at) {
  if (!value.defined()) throw Error(what + ": the value is an empty expression", at);
  DType v = value.dtype();
  bool ok = v == target || (!v.is_bool() && !target.is_bool()) || (v.is_bool() && target.is_int());
  if (!ok)
    throw Error(what + ": a " + std::string(v.name()) + " value cannot be stored into a " +
                    std::string(target.name()) + " buffer; convert it with tg::cast or tg::select",
                at);
}

void check_region(const Region& r, const std::string& op, const std::string& role, const SourceLoc& at,
                  bool predicated, bool reject_empty) {
  if (!r.buffer) throw Error(op + ": the " + role + " region has no buffer", at);
  const Buffer& b = r.buffer;
  std::string who = "the " + role + " region of " + describe(b);
  if (r.offsets.size() != b.rank() || r.extents.size() != b.rank())
    throw Error(op + ": " + who + " has " + num(int64_t(r.offsets.size())) + " offsets and " +
                    num(int64_t(r.extents.size())) + " extents but " + b->name + " has " +
                    dims_word(b.rank()) + "; give one of each per dimension",
                at);
  for (std::size_t d = 0; d < b.rank(); ++d) {
    const Expr &off = r.offsets[d], &ext = r.extents[d];
    if (!off.defined() || !ext.defined() || !off.dtype().is_int() || !ext.dtype().is_int())
      throw Error(op + ": " + who + " needs integer offsets and extents (dim " + num(int64_t(d)) + ")", at);
    auto o = off.as_int(), e = ext.as_int(), n = b->shape[d].as_int();
    if (e && *e <= 0)
      throw Error(op + ": " + who + " has extent " + num(*e) + " in dim " + num(int64_t(d)) +
                      "; extents must be positive",
                  at);
    if (!o || !e || !n) continue;
    // A predicated copy may overhang a ragged edge, but a box with no element inside is a mistake.
    bool outside = predicated ? reject_empty && (*o >= *n || *o + *e <= 0) : (*o < 0 || *o + *e > *n);
    if (outside)
      throw Error(op + ": " + who + " covers [" + num(*o) + ", " + num(*o + *e) + ") in dim " +
                      num(int64_t(d)) + (predicated ? ", entirely outside " : ", outside ") + b->name +
                      "'s " + num(*n) + " there; keep the region inside the buffer",
                  at);
  }
}

void check_copy(const ir::Copy& op, bool reject_empty_boxes) {
  // With check_bounds, global elements outside the tensor read as 0 and are not written.
  auto predicated = [&](const Region& r) {
    return op.check_bounds && r.buffer && r.buffer->scope == Scope::Global;
  };
  check_region(op.src, "copy", "source", op.loc, predicated(op.src), reject_empty_boxes);
  check_region(op.dst, "copy", "destination", op.loc, predicated(op.dst), reject_empty_boxes);
  const Buffer &s = op.src.buffer, &d = op.dst.buffer;
  for (const Buffer* b : {&s, &d})
    if ((*b)->scope == Scope::Local)
      throw Error("copy " + std::string(b == &s ? "from " : "into ") + describe(*b) +
                      ": a copy is shared out over the block's threads, but a local buffer is per thread; "
                      "copy into a fragment (k.fragment) instead, or move the elements with stores in "
                      "per-thread code",
                  op.loc);
  if (s->scope == Scope::Global && d->scope == Scope::Global)
    throw Error(
        "copy from global " + s->name + " to global " + d->name + ": stage through a shared or fragment tile",
        op.loc);
  auto se = op.src.squeezed_extents(), de = op.dst.squeezed_extents();
  bool mismatch = false;
  if (se.size() == de.size()) {
    for (std::size_t i = 0; i < se.size(); ++i)
      if (se[i].as_int() && de[i].as_int() && *se[i].as_int() != *de[i].as_int()) mismatch = true;
  } else {
    mismatch = all_const(se) && all_const(de);
  }
  if (mismatch)
    throw Error("copy: the source " + describe(s) + " box is " + dims_str(se) + " but the destination " +
                    describe(d) + " box is " + dims_str(de) +
                    " (unit dimensions dropped); make both boxes the same shape",
                op.loc);
}

void check_fill(const ir::Fill& op) {
  check_region(op.dst, "fill", "destination", op.loc);
  check_value_type(op.dst.buffer->dtype, op.value, "fill", op.loc);
}

namespace {
struct Matrix {
  Expr rows, cols;
};

Matrix matrix_of(const Region& r, const char* role, const SourceLoc& at) {
  const auto& e = r.extents;
  if (e.size() < 2)
    throw Error(std::string("gemm: ") + role + " (" + describe(r.buffer) + ") has " + dims_word(e.size()) +
                    "; gemm multiplies 2-D tiles",
                at);
  for (std::size_t d = 0; d + 2 < e.size(); ++d)
    if (e[d].as_int() != 1)
      throw Error(std::string("gemm: ") + role + " (" + describe(r.buffer) + ") is a " + dims_str(e) +
                      " box; gemm multiplies 2-D tiles, so leading dimensions must be 1",
                  at);
  return {e[e.size() - 2], e[e.size() - 1]};
}

void agree(const Expr& x, const Expr& y, const std::string& dim, const std::string& xs, const std::string& ys,
           const SourceLoc& at) {
  auto a = x.as_int(), b = y.as_int();
  if (a && b && *a != *b)
    throw Error("gemm: " + dim + " of " + xs + " (" + num(*a) + ") differs from " + dim + " of " + ys + " (" +
                    num(*b) + "); make the tiles' " + dim + " dimensions agree",
                at);
}

/// The accumulator types a matrix unit offers for an input type.
std::optional<std::string> accumulator_problem(DType in, DType acc) {
  auto need = [&](std::string what) { return "but " + std::string(in.name()) + " inputs need " + what; };
  switch (in.code) {
    case TypeCode::F16:
      if (acc == f32 || acc == f16) return std::nullopt;
      return need("an f32 (or f16) accumulator");
    case TypeCode::BF16:
    case TypeCode::F8E4M3:
    case TypeCode::F8E5M2:
    case TypeCode::F4E2M1:
    case TypeCode::F32:
      if (acc == f32) return std::nullopt;
      return need("an f32 accumulator");
    case TypeCode::F64:
      if (acc == f64) return std::nullopt;
      return need("an f64 accumulator");
    case TypeCode::I4:
    case TypeCode::U4:
    case TypeCode::I8:
    case TypeCode::U8:
    case TypeCode::I16:
      if (acc == i32) return std::nullopt;
      return need("an i32 accumulator");
    case TypeCode::I32:
    case TypeCode::U32:
      if (acc == i32 || acc == i64) return std::nullopt;
      return need("an i32 or i64 accumulator");
    case TypeCode::I64:
      if (acc == i64) return std::nullopt;
      return need("an i64 accumulator");
    case TypeCode::Bool:
      return std::string("but bool inputs cannot be multiplied; convert them to a numeric type");
  }
  return std::nullopt;
}
}  // namespace

void check_gemm(const ir::Gemm& op) {
  check_region(op.a, "gemm", "A", op.loc);
  check_region(op.b, "gemm", "B", op.loc);
  check_region(op.c, "gemm", "C", op.loc);
  const Buffer &a = op.a.buffer, &b = op.b.buffer, &c = op.c.buffer;
  for (auto* x : {&a, &b})
    if ((*x)->scope == Scope::Global)
      throw Error("gemm: " + describe(*x) + " is in global memory; copy it into a shared tile first", op.loc);
  if (c->scope != Scope::Fragment && c->scope != Scope::Local)
    throw Error("gemm: the accumulator C is " + describe(c) +
                    "; accumulate into a fragment (k.fragment(...)) or a local buffer",
                op.loc);
  Matrix ma = matrix_of(op.a, "A", op.loc), mb = matrix_of(op.b, "B", op.loc),
         mc = matrix_of(op.c, "C", op.loc);
  Expr m = op.trans_a ? ma.cols : ma.rows, ka = op.trans_a ? ma.rows : ma.cols;
  Expr kb = op.trans_b ? mb.cols : mb.rows, n = op.trans_b ? mb.rows : mb.cols;
  agree(ka, kb, "K", "A " + a->name, "B " + b->name, op.loc);
  agree(m, mc.rows, "M", "A " + a->name, "C " + c->name, op.loc);
  agree(n, mc.cols, "N", "B " + b->name, "C " + c->name, op.loc);
  bool both_fp8 =
      (a->dtype == fp8_e4m3 || a->dtype == fp8_e5m2) && (b->dtype == fp8_e4m3 || b->dtype == fp8_e5m2);
  if (a->dtype != b->dtype && !both_fp8)
    throw Error("gemm: A " + a->name + " is " + std::string(a->dtype.name()) + " but B " + b->name + " is " +
                    std::string(b->dtype.name()) + "; copy one into a tile of the other's dtype",
                op.loc);
  if (auto problem = accumulator_problem(a->dtype, c->dtype))
    throw Error("gemm: the accumulator " + c->name + " is " + std::string(c->dtype.name()) + ", " + *problem +
                    "; allocate the accumulator with that dtype",
                op.loc);
}

void check_reduce(const ir::Reduce& op) {
  std::string what = std::string("reduce_") + name_of(op.op);
  if (!op.src || !op.dst) throw Error(what + " needs a source and a destination buffer", op.loc);
  const Buffer &s = op.src, &d = op.dst;
  if (op.axis < 0 || op.axis >= int(s.rank()))
    throw Error(what + ": axis " + num(op.axis) + " is out of range for " + describe(s) + " with " +
                    dims_word(s.rank()) + "; use an axis in 0.." + num(int64_t(s.rank()) - 1),
                op.loc);
  std::vector<Expr> want = s->shape;
  want.erase(want.begin() + op.axis);
  bool ok = d.rank() == want.size();
  for (std::size_t i = 0; ok && i < want.size(); ++i) {
    auto x = want[i].as_int(), y = d->shape[i].as_int();
    ok = (x && y) ? *x == *y : equal(want[i], d->shape[i]);
  }
  if (!ok)
    throw Error(what + ": " + describe(d) + " is " + dims_str(d->shape) + " but reducing " + describe(s) +
                    " (" + dims_str(s->shape) + ") over axis " + num(op.axis) + " gives " + dims_str(want) +
                    "; allocate the destination with that shape",
                op.loc);
  if (s->dtype.is_bool() || d->dtype.is_bool())
    throw Error(what + ": reductions need numeric buffers, not bool", op.loc);
}

void check_atomic(const ir::Atomic& op) {
  std::string what = std::string("atomic_") + name_of(op.op);
  const Buffer& b = op.buffer;
  if (b->scope != Scope::Global && b->scope != Scope::Shared)
    throw Error(
        what + " on " + describe(b) +
            ": atomics need a global or shared buffer; update a fragment with element code or a reduce",
        op.loc);
  if (b->dtype.is_bool() || b->dtype.is_packed())
    throw Error(what + " on " + describe(b) + " of type " + std::string(b->dtype.name()) +
                    ": atomics need a numeric type of at least 8 bits",
                op.loc);
  check_value_type(b->dtype, op.value, what, op.loc);
}

// `a=tile A_s[i.., r, c]`: a unit tile of a Shared buffer, rows along its second-last dimension.
void check_mma_tile(const ir::Mma& op, const MatrixUnit& unit, int i, const char* role, DType type) {
  const ir::MmaOperand& o = i == 0 ? op.a : op.b;
  const Buffer& b = o.buffer;
  const std::string what = std::string("mma: operand ") + role + " (tile " + b->name + ")";
  if (i == 2)
    throw Error("mma: the accumulator C is each lane's registers, never a shared tile; use a local buffer", op.loc);
  if (b->scope != Scope::Shared || b->shape.size() < 2)
    throw Error(what + " is " + describe(b) +
                    "; a tile operand is a shared buffer of rank 2 or more (rows, columns last)",
                op.loc);
  if (o.tile.size() != b->shape.size())
    throw Error(what + " has " + num(int64_t(o.tile.size())) + " indices for a buffer of rank " +
                    num(int64_t(b->shape.size())) + "; give the tile's first element, one index a dimension",
                op.loc);
  if (b->dtype != type)
    throw Error(what + " is " + std::string(b->dtype.name()) + " but unit " + unit.name + " takes " +
                    std::string(type.name()) + "; convert the tile or pick a unit of that dtype",
                op.loc);
  const int64_t rows = i == 0 ? unit.m : unit.k, cols = i == 0 ? unit.k : unit.n;
  for (std::size_t d = 0; d < o.tile.size(); ++d) {
    if (!o.tile[d].defined() || !o.tile[d].dtype().is_int())
      throw Error(what + " needs integer indices", op.loc);
    const int64_t second_last = o.trans ? cols : rows,
                  last = o.trans ? rows : cols;  // trans: stored columns-first
    const int64_t span = d + 2 == o.tile.size() ? second_last : d + 1 == o.tile.size() ? last : 1;
    auto at = o.tile[d].as_int();
    auto extent = b->shape[d].as_int();
    if (at && extent && (*at < 0 || *at + span > *extent))
      throw Error(what + " spans [" + num(*at) + ", " + num(*at + span) + ") of dimension " + num(int64_t(d)) +
                      ", which has " + num(*extent) + "; move the tile inside the buffer",
                  op.loc);
  }
}

void check_mma(const ir::Mma& op) {
  const MatrixUnit* unit = find_matrix_unit(op.unit);
  if (!unit)
    throw Error("mma: no matrix unit named \"" + op.unit + "\"; use a registered one (matrix_unit_names())",
                op.loc);
  const char* roles[] = {"A", "B", "C"};
  const ir::MmaOperand* ops[] = {&op.a, &op.b, &op.c};
  DType types[] = {unit->a_type, unit->b_type, unit->c_type};
  for (int i = 0; i < 3; ++i) {
    const Buffer& b = ops[i]->buffer;
    if (!b) throw Error(std::string("mma: operand ") + roles[i] + " has no buffer", op.loc);
    // An async unit (wgmma) reads B through a shared-memory descriptor; A from shared memory or,
    // the RS form, from registers.
    if (unit->async && i == 1 && !ops[i]->is_tile())
      throw Error("mma: operand B of the async unit " + unit->name + " (" + b->name +
                      ") is registers; this unit reads B from a shared tile (b=tile B_s[k, n])",
                  op.loc);
    if (ops[i]->is_tile()) {
      check_mma_tile(op, *unit, i, roles[i], types[i]);
      continue;
    }
    if (ops[i]->trans)
      throw Error(std::string("mma: operand ") + roles[i] + " (" + b->name +
                      ") is registers, marked trans; only a shared tile operand is stored transposed",
                  op.loc);
    if (b->scope != Scope::Local)
      throw Error(std::string("mma: operand ") + roles[i] + " is " + describe(b) +
                      "; matrix-unit operands are per-lane registers, so use a local buffer",
                  op.loc);
    if (b->dtype != types[i])
      throw Error(std::string("mma: operand ") + roles[i] + " (" + b->name + ") is " +
                      std::string(b->dtype.name()) + " but unit " + unit->name + " takes " +
                      std::string(types[i].name()) + "; convert the operand or pick a unit of that dtype",
                  op.loc);
    if (!ops[i]->offset.defined() || !ops[i]->offset.dtype().is_int())
      throw Error(std::string("mma: operand ") + roles[i] + " needs an integer element offset", op.loc);
    int regs = i == 0 ? unit->a_regs() : i == 1 ? unit->b_regs() : unit->c_regs();
    auto numel = b.const_numel();
    auto offset = ops[i]->offset.as_int();
    if (numel && offset && (*offset < 0 || *offset + regs > *numel))
      throw Error(std::string("mma: operand ") + roles[i] + " reads elements [" + num(*offset) + ", " +
                      num(*offset + regs) + ") of " + describe(b) + ", which holds " + num(*numel) +
                      "; make the local buffer larger or the offset smaller",
                  op.loc);
  }
}

}  // namespace tg::verify_detail
