// use_ldmatrix (see the header). ldmatrix.m8n8.b16: lanes 8j .. 8j+7 give the addresses of
// rows 0..7 of matrix j (16 bytes each); lane t receives in register j the elements
// (row t/4, cols 2(t%4), 2(t%4)+1) of matrix j, or with .trans (rows 2(t%4), 2(t%4)+1, col t/4).
#include "tilegen/passes/use_ldmatrix.h"

#include <optional>

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_layout.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg {

namespace {

struct LdmatrixMatch {
  int matrices = 0;  // 8×8 b16 matrices: 1, 2 or 4
  bool trans = false;
  Buffer regs;
  Expr reg_base;  // element index of the first register written
  Buffer src;
  std::vector<Expr> src_indices;  // the first element of the row this lane supplies (in terms of the lane)
};

// The loop's single register store and the variables of its pair loop (h, when present).
struct Shape {
  const ir::Store* store = nullptr;
  const ir::Load* load = nullptr;
  Var r, h;  // r: the unrolled loop; h: the inner vectorized pair loop (undefined when absent)
  int64_t extent = 0;
};

std::optional<Shape> shape_of(const ir::For& loop) {
  if (loop.for_kind != ForKind::Unrolled || !loop.min.as_int() || *loop.min.as_int() != 0)
    return std::nullopt;
  Shape s;
  s.r = loop.var;
  s.extent = loop.extent.as_int().value_or(0);
  Stmt body = loop.body;
  if (const auto* inner = body.as<ir::For>()) {
    if (inner->for_kind != ForKind::Vectorized || inner->min.as_int() != 0 || inner->extent.as_int() != 2)
      return std::nullopt;
    s.h = inner->var;
    body = inner->body;
  }
  s.store = body.as<ir::Store>();
  s.load = s.store ? s.store->value.as<ir::Load>() : nullptr;
  if (!s.load) return std::nullopt;
  const Buffer& regs = s.store->buffer;
  const ir::BufferNode& src = *s.load->buffer;
  if (regs->scope != Scope::Local || src.scope != Scope::Shared || regs->dtype != src.dtype ||
      regs->dtype.bits() != 16)
    return std::nullopt;
  return s;
}

bool is_zero(const Expr& e) {
  auto v = simplify_expr(e).as_int();
  return v && *v == 0;
}

int64_t coefficient(const Expr& e, const Var& v) {
  int64_t c = 0;
  for (auto& [term, coeff] : linear_form(simplify_expr(e)).terms)
    if (term.same_as(v)) c += coeff;
  return c;
}

// The ldmatrix equivalent of `loop`, or nothing: a proof, lane by lane and register by register,
// that the loop moves exactly what ldmatrix moves, on the storage layout a GPU source target
// gives shared buffers (gpu::strides_of: padded rows), with 16-byte aligned rows.
std::optional<LdmatrixMatch> match_ldmatrix(const ir::For& loop, const Var& lane) {
  auto s = shape_of(loop);
  if (!s) return std::nullopt;
  const bool pairs = s->h.defined();
  const int64_t m = pairs ? s->extent : s->extent / 2;
  if ((m != 1 && m != 2 && m != 4) || (!pairs && s->extent % 2 != 0)) return std::nullopt;
  // Registers: pairs at base + 2p + h, or base + r; base even (32-bit words).
  const Expr dst = s->store->indices.at(0);
  if (coefficient(dst, s->r) != (pairs ? 2 : 1) || (pairs && coefficient(dst, s->h) != 1))
    return std::nullopt;
  Expr base = substitute(dst, {{s->r, Expr(0)}});
  if (pairs) base = substitute(base, {{s->h, Expr(0)}});
  if (!is_multiple_of(base, 2)) return std::nullopt;
  // F(lane, reg): the flat shared index one lane loads into one register.
  std::vector<int64_t> st = gpu::strides_of(*s->load->buffer);
  Expr flat = 0;
  for (std::size_t d = 0; d < s->load->indices.size(); ++d) flat = flat + s->load->indices[d] * Expr(st[d]);
  auto F = [&](int64_t t, int64_t reg) {
    std::vector<std::pair<Var, Expr>> at = {{lane, Expr(t)}};
    if (pairs)
      at.push_back({s->r, Expr(reg / 2)}), at.push_back({s->h, Expr(reg % 2)});
    else
      at.push_back({s->r, Expr(reg)});
    return substitute(flat, at);
  };
  const int64_t regs = 2 * m;
  for (int64_t t = 0; t < 32; ++t)
    for (int64_t reg = 0; reg < regs; ++reg) {
      // Non-transposed: rows from lanes with t%4 = 0, two neighbours a word. Transposed: rows
      // from lanes t%4 (g = 0), the lane's column t/4 along the row.
      Expr want =
          pairs ? F(4 * (t / 4), reg - reg % 2) + Expr(2 * (t % 4) + reg % 2) : F(t % 4, reg) + Expr(t / 4);
      if (!is_zero(F(t, reg) - want)) return std::nullopt;
    }
  // The address each lane supplies: row i of matrix j, for lane 8j + i (16-byte aligned).
  auto row_start = [&](int64_t l) {
    int64_t j = (l / 8) % m, i = l % 8;
    return pairs ? F(4 * i, 2 * j) : F(i / 2, 2 * j + i % 2);
  };
  for (int64_t l = 0; l < 32; ++l)
    if (!is_multiple_of(row_start(l), 8)) return std::nullopt;
  LdmatrixMatch out;
  out.matrices = int(m);
  out.trans = !pairs;
  out.regs = s->store->buffer;
  out.reg_base = base;
  out.src = Buffer(s->load->buffer);
  Expr j = lane / 8 % Expr(m), i = lane % 8;
  std::vector<std::pair<Var, Expr>> at = {{lane, pairs ? i * 4 : i / 2}};
  if (pairs)
    at.push_back({s->r, j}), at.push_back({s->h, Expr(0)});
  else
    at.push_back({s->r, j * 2 + i % 2});
  for (const Expr& idx : s->load->indices) out.src_indices.push_back(simplify_expr(substitute(idx, at)));
  return out;
}

// An unrolled loop of x2 ldmatrix whose registers follow on from one iteration to the next
//   for ni in unrolled(0 +: 8) { ldmatrix x2 B[f(ni, lane)] -> b_regs[ni*4 + c] }
// as x4 over pairs of iterations: lanes 0..15 address iteration 2q's two matrices, lanes 16..31
// iteration 2q+1's, whose registers are the next two words (an x2 reads addresses from lanes
// 0..15 only, so its src_indices hold for lane % 16):
//   for q in unrolled(0 +: 4) { ldmatrix x4 B[f(2q + lane/16, lane % 16)] -> b_regs[q*8 + c] }
std::optional<Stmt> pair_x2(const ir::For& loop, const Var& lane) {
  const auto* l = loop.body.as<ir::LdMatrix>();
  auto extent = loop.extent.as_int();
  if (!l || l->matrices != 2 || !extent || *extent < 2 || *extent % 2 != 0 || loop.min.as_int() != 0)
    return std::nullopt;
  const Var& ni = loop.var;
  if (coefficient(l->reg_base, ni) != 4 || !is_zero(substitute(l->reg_base, {{ni, Expr(1)}}) -
                                                    substitute(l->reg_base, {{ni, Expr(0)}}) - Expr(4)))
    return std::nullopt;
  Var q(ni.name() + "_pair", ni.dtype());
  auto x4 = std::make_shared<ir::LdMatrix>(*l);
  x4->matrices = 4;
  x4->reg_base = simplify_expr(substitute(l->reg_base, {{ni, q * 2}}));
  x4->src_indices.clear();
  for (const Expr& idx : l->src_indices)
    x4->src_indices.push_back(simplify_expr(substitute(idx, {{ni, q * 2 + lane / 16}, {lane, lane % 16}})));
  auto pairs = std::make_shared<ir::For>(loop);
  pairs->var = q;
  pairs->extent = Expr(*extent / 2);
  pairs->body = Stmt(std::move(x4));
  return Stmt(std::move(pairs));
}

// Lets of the thread index mod 32 are the lane; unrolled loops that match become LdMatrix.
struct UseLdmatrix : IRMutator {
  Var thread, lane;
  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    Var saved_thread = thread, saved_lane = lane;
    thread = op->thread_var, lane = Var();
    Stmt out = IRMutator::visit(op, self);
    thread = saved_thread, lane = saved_lane;
    return out;
  }
  Stmt visit(const ir::Let* op, const Stmt& self) override {
    const auto* m = op->value.as<ir::Binary>();
    if (!(m && m->op == ir::BinOp::Mod && thread.defined() && m->a.same_as(thread) && m->b.as_int() == 32))
      return IRMutator::visit(op, self);
    Var saved = lane;
    lane = op->var;
    Stmt out = IRMutator::visit(op, self);
    lane = saved;
    return out;
  }
  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (lane.defined() && op->for_kind == ForKind::Unrolled)
      if (std::optional<LdmatrixMatch> m = match_ldmatrix(*op, lane)) {
        auto l = std::make_shared<ir::LdMatrix>(op->loc);
        l->matrices = m->matrices, l->trans = m->trans;
        l->regs = m->regs, l->reg_base = m->reg_base;
        l->src = m->src, l->src_indices = m->src_indices;
        return Stmt(std::move(l));
      }
    Stmt out = IRMutator::visit(op, self);
    if (const auto* loop = out.as<ir::For>(); lane.defined() && loop && loop->for_kind == ForKind::Unrolled)
      if (std::optional<Stmt> x4 = pair_x2(*loop, lane)) return *x4;
    return out;
  }
};

}  // namespace

Function use_ldmatrix(const Function& f, const TargetInfo&) {
  UseLdmatrix pass;
  return pass.mutate_function(f);
}

}  // namespace tg
