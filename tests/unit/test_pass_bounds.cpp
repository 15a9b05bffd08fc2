#include <doctest/doctest.h>

#include "test_pass_ir.h"
#include "tilegen/passes/bounds.h"

using namespace tg;
using namespace tg::test;

namespace {
const ir::Kernel& kernel_of(const Function& f) { return *f.body.as<ir::Kernel>(); }
const std::vector<Stmt>& stmts_of(const Function& f) { return kernel_of(f).body.as<ir::Seq>()->stmts; }
const ir::Copy& copy_at(const Function& f, std::size_t n) { return *stmts_of(f).at(n).as<ir::Copy>(); }
}  // namespace

TEST_CASE("bounds: copies proven in range lose check_bounds, ragged ones keep it") {
  // grid(8) -> bx; A is f32[1000, 256] (ragged rows), B is f32[256, 64] (exact).
  Var bx("bx"), tx("tx"), ko("ko");
  Buffer a = global("A", {Expr(1000), Expr(256)}), b = global("B", {Expr(256), Expr(64)});
  Buffer as = shared("As", {Expr(128), Expr(32)}), bs = shared("Bs", {Expr(32), Expr(64)});
  Buffer s2 = shared("S2", {Expr(128), Expr(32)});
  Stmt body = seq({
      copy(region(a, {bx * 128, Expr(0)}, {Expr(128), Expr(32)}),
           region(as, {Expr(0), Expr(0)}, {Expr(128), Expr(32)})),
      copy(region(b, {Expr(0), Expr(0)}, {Expr(32), Expr(64)}),
           region(bs, {Expr(0), Expr(0)}, {Expr(32), Expr(64)})),
      for_(ko, 0, 8,
           copy(region(b, {ko * 32, Expr(0)}, {Expr(32), Expr(64)}),
                region(bs, {Expr(0), Expr(0)}, {Expr(32), Expr(64)})),
           ForKind::Pipelined),
      copy(region(as, {Expr(0), Expr(0)}, {Expr(128), Expr(32)}),
           region(s2, {Expr(0), Expr(0)}, {Expr(128), Expr(32)})),
      copy(region(a, {bx * 125, Expr(0)}, {Expr(125), Expr(256)}),
           region(as, {Expr(0), Expr(0)}, {Expr(125), Expr(256)})),
      copy(region(b, {Expr(0), Expr(-1)}, {Expr(32), Expr(64)}),
           region(bs, {Expr(0), Expr(0)}, {Expr(32), Expr(64)})),
  });
  Function f =
      function("k", {tensor_param(a), tensor_param(b)}, kernel({Expr(8)}, {bx}, 128, tx, body, {as, bs, s2}));
  Function g = insert_bounds_checks(f, TargetInfo{});
  CHECK(copy_at(g, 0).check_bounds);   // rows 1000..1023 of the last block stick out
  CHECK(!copy_at(g, 1).check_bounds);  // B[0:32, 0:64] inside f32[256, 64]
  CHECK(!stmts_of(g)[2].as<ir::For>()->body.as<ir::Copy>()->check_bounds);  // ko*32 + 32 <= 256
  CHECK(!copy_at(g, 3).check_bounds);  // shared to shared: no Global side to check
  CHECK(!copy_at(g, 4).check_bounds);  // bx*125 + 125 <= 1000 for bx < 8
  CHECK(copy_at(g, 5).check_bounds);   // a negative offset
}

TEST_CASE("bounds: element stores and loads in loops get guards") {
  // M = 1000, grid(8): for i in [0, 128) parallel { C[bx*128 + i] = A[bx*128 + i, 0] * 2 + B[i] }
  Var bx("bx"), tx("tx"), i("i");
  Buffer a = global("A", {Expr(1000), Expr(4)}), c = global("C", {Expr(1000)}), bb = global("B", {Expr(128)});
  Expr row = bx * 128 + i;
  Stmt loop =
      for_(i, 0, 128, store(c, {row}, a.load({row, Expr(0)}) * 2.0f + bb.load({i})), ForKind::Parallel);
  Function f = function("k", {tensor_param(a), tensor_param(c), tensor_param(bb)},
                        kernel({Expr(8)}, {bx}, 128, tx, loop));
  Function g = insert_bounds_checks(f, TargetInfo{});
  auto* lp = kernel_of(g).body.as<ir::For>();
  REQUIRE(lp);
  auto* guard = lp->body.as<ir::If>();
  REQUIRE(guard);
  CHECK(equal(guard->cond, row < 1000));  // row >= 0 is proven: only the upper bound is tested
  auto* st = guard->then_body.as<ir::Store>();
  REQUIRE(st);
  // A's row index is the store's own: implied by the guard, so the value is left as it was.
  CHECK(equal(st->value, a.load({row, Expr(0)}) * 2.0f + bb.load({i})));
}

TEST_CASE("bounds: an unproven load becomes select(in_range, load, 0)") {
  Var bx("bx"), tx("tx"), i("i");
  Buffer a = global("A", {Expr(1000)}, f16), s = shared("S", {Expr(128)}, f16);
  Expr idx = bx * 128 + i - 4;
  Stmt loop = for_(i, 0, 128, store(s, {i}, a.load({idx})), ForKind::Parallel);
  Function f = function("k", {tensor_param(a)}, kernel({Expr(8)}, {bx}, 128, tx, loop, {s}));
  Function g = insert_bounds_checks(f, TargetInfo{});
  auto* st = kernel_of(g).body.as<ir::For>()->body.as<ir::Store>();
  REQUIRE(st);  // a Shared store: never guarded
  auto* sel = st->value.as<ir::Select>();
  REQUIRE(sel);
  CHECK(equal(sel->cond, idx >= 0 && idx < 1000));
  CHECK(equal(sel->t, a.load({idx})));
  CHECK(sel->f.as<ir::FloatImm>()->value == 0.0);
  CHECK(sel->dtype == f16);
}

TEST_CASE("bounds: what is proven or outside loops stays as written") {
  Var n("N"), bx("bx"), tx("tx"), i("i");
  Buffer a = global("A", {n}), c = global("C", {n}), d = global("D", {Expr(4096)});
  Stmt in_range = for_(i, 0, n, store(c, {i}, a.load({i})));          // i < N from the loop itself
  Stmt outside = store(c, {bx * 128 + tx}, a.load({bx * 128 + tx}));  // per-thread code: left to the author
  Stmt guarded = for_(i, 0, 128, if_(bx * 128 + i < n, store(c, {bx * 128 + i}, 1.0f)));  // guarded by hand
  Stmt exact = for_(i, 0, 128, store(d, {bx * 128 + i}, 1.0f), ForKind::Parallel);  // 32 blocks × 128 = 4096
  Stmt body = seq({in_range, outside, guarded, exact});
  Function f = function("k", {tensor_param(a), tensor_param(c), tensor_param(d), size_param(n)},
                        kernel({Expr(32)}, {bx}, 128, tx, body));
  Function g = insert_bounds_checks(f, TargetInfo{});
  CHECK(g.body.same_as(f.body));
}

TEST_CASE("bounds: atomics are guarded like stores; select branches know their condition") {
  Var bx("bx"), tx("tx"), i("i");
  Buffer c = global("C", {Expr(100)}), a = global("A", {Expr(100)});
  auto atomic = std::make_shared<ir::Atomic>(SourceLoc("pass_test.cpp", 11));
  atomic->buffer = c;
  atomic->indices = {bx * 16 + i};
  atomic->value = select(bx * 16 + i < 100, a.load({bx * 16 + i}), Expr(0.0f));
  Function f = function("k", {tensor_param(c), tensor_param(a)},
                        kernel({Expr(7)}, {bx}, 16, tx, for_(i, 0, 16, Stmt(atomic))));
  Function g = insert_bounds_checks(f, TargetInfo{});
  auto* guard = kernel_of(g).body.as<ir::For>()->body.as<ir::If>();
  REQUIRE(guard);
  CHECK(equal(guard->cond, bx * 16 + i < 100));
  auto* at = guard->then_body.as<ir::Atomic>();
  REQUIRE(at);
  CHECK(at->value.same_as(atomic->value));  // the hand-written select already guards its load
}
