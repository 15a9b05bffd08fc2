#include <doctest/doctest.h>

#include "test_pass_ir.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

namespace {
RangeContext ranges(std::initializer_list<std::pair<Var, Interval>> vars) {
  RangeContext c;
  for (auto& [v, r] : vars) c.set_range(v, r);
  return c;
}
#define CHECK_SIMPLIFIES(in, ctx, out)                          \
  do {                                                          \
    Expr got_ = simplify_expr(in, ctx);                         \
    INFO("got " << print(got_) << ", expected " << print(out)); \
    CHECK(equal(got_, out));                                    \
  } while (0)
}  // namespace

TEST_CASE("simplify: constants reassociate and terms merge") {
  Var x("x"), y("y");
  RangeContext none;
  CHECK_SIMPLIFIES((x + 3) + 4, none, x + 7);
  CHECK_SIMPLIFIES((x * 4) * 8, none, x * 32);
  CHECK_SIMPLIFIES(x + y - x, none, Expr(y));
  CHECK_SIMPLIFIES((x + 3) - (x + 1), none, Expr(2));
  CHECK_SIMPLIFIES((x - 5) + (y + 5), none, x + y);
  CHECK_SIMPLIFIES(-(-x), none, Expr(x));
  CHECK_SIMPLIFIES(min(x + 3, x + 5), none, x + 3);
  CHECK_SIMPLIFIES(max(x + 3, x + 5), none, x + 5);
  CHECK_SIMPLIFIES(min(x, x), none, Expr(x));
  CHECK_SIMPLIFIES(x + 3 < x + 5, none, Expr(true));
  CHECK_SIMPLIFIES(!(x < y), none, x >= y);
  CHECK_SIMPLIFIES(select(x + 1 > x, y, x), none, Expr(y));
  CHECK_SIMPLIFIES(cast(i32, cast(i64, x)), none, Expr(x));
  // Logical identities with bool constants (make_binary leaves `x && true` alone).
  Expr t = make_bool(true), f = make_bool(false);
  CHECK_SIMPLIFIES(make_binary(ir::BinOp::And, x < y, t), none, x < y);
  CHECK_SIMPLIFIES(make_binary(ir::BinOp::And, t, x < y), none, x < y);
  CHECK_SIMPLIFIES(make_binary(ir::BinOp::Or, x < y, f), none, x < y);
  CHECK_SIMPLIFIES(make_binary(ir::BinOp::And, x < y, f), none, Expr(false));
  CHECK_SIMPLIFIES((x < y) && (x < y), none, x < y);
  Expr narrowing = cast(i32, cast(i8, x));  // the round trip through i8 wraps: must stay
  CHECK_SIMPLIFIES(narrowing, none, narrowing);
}

TEST_CASE("simplify: division and modulo by known ranges") {
  Var i("i"), j("j"), x("x");
  RangeContext c = ranges({{i, {0, 7}}, {j, {0, 127}}});
  CHECK_SIMPLIFIES((i * 128 + j) / 128, c, Expr(i));
  CHECK_SIMPLIFIES((i * 128 + j) % 128, c, Expr(j));
  CHECK_SIMPLIFIES((i * 128 + j + 256) / 128, c, i + 2);
  CHECK_SIMPLIFIES((j + 128) % 128, c, Expr(j));
  CHECK_SIMPLIFIES(j / 128, c, Expr(0));
  CHECK_SIMPLIFIES((i * 256 + j) / 128, c, i * 2);
  // Unknown x: the multiple of the divisor still comes out, the rest stays.
  CHECK_SIMPLIFIES((x * 128 + i) / 128, c, Expr(x));
  CHECK_SIMPLIFIES((i * 128 + x) / 128, c, i + x / 128);
  CHECK_SIMPLIFIES((i * 128 + x) % 128, c, x % 128);
  CHECK_SIMPLIFIES((x * 2) / 4, c, x / 2);
  CHECK_SIMPLIFIES((x / 4) / 8, c, x / 32);
  CHECK_SIMPLIFIES((x % 64) % 16, c, x % 16);
  CHECK_SIMPLIFIES((x * 130) % 128, c, (x * 2) % 128);
  // Negative values: floor semantics. (j - 128) ranges over [-128, -1], so / 128 is -1.
  CHECK_SIMPLIFIES((j - 128) / 128, c, Expr(-1));
  CHECK_SIMPLIFIES((j - 128) % 128, c, Expr(j));
  // ceildiv of a symbolic size must not change.
  Var n("N");
  CHECK_SIMPLIFIES((n + 127) / 128, c, (n + 127) / 128);
  // Comparisons and min/max decided by ranges.
  CHECK_SIMPLIFIES(i * 128 + j < 1024, c, Expr(true));
  CHECK_SIMPLIFIES(i < 4, c, i < 4);
  CHECK_SIMPLIFIES(min(j, 200), c, Expr(j));
  CHECK_SIMPLIFIES(max(i, j + 7), c, j + 7);
  CHECK_SIMPLIFIES(max(i, j + 6), c, max(i, j + 6));
}

TEST_CASE("simplify: float arithmetic is never reassociated") {
  Var a("a", f32), b("b", f32);
  RangeContext none;
  Expr sum = (a + 1.0) + 2.0;
  CHECK_SIMPLIFIES(sum, none, sum);
  Expr cancel = (a + b) - b;
  CHECK_SIMPLIFIES(cancel, none, cancel);
  Expr plus_zero = a + 0.0;  // -0 + 0 is +0: not an identity
  CHECK_SIMPLIFIES(plus_zero, none, plus_zero);
  CHECK_SIMPLIFIES(a * 1.0, none, Expr(a));
  CHECK_SIMPLIFIES(a - 0.0, none, Expr(a));
  CHECK_SIMPLIFIES(Expr(2.0f) * 3.0f + a, none, Expr(6.0f) + a);
}

// Every rewrite must keep the value: evaluate before and after over a grid of values.
TEST_CASE("simplify: rewrites keep values (exhaustive over small ranges)") {
  Var i("i"), j("j");
  RangeContext c = ranges({{i, {-3, 5}}, {j, {0, 12}}});
  std::vector<Expr> cases = {
      (i * 8 + j) / 8,      (i * 8 + j) % 8,
      (i * 6 + j + 13) / 6, (j * 3 - 7) % 4,
      (i * 4 + j) / 2 / 3,  (j % 12) % 4,
      (i * 10 + 3) / 4,     min(i * 2, j - 1) + max(j, i),
      (i - j) / -3,         (i - j) % -3,
      (j * 6) / 4,          select(i < j, i * 8 / 8, j % 13),
      (i + 3) * 2 - i - i,  (j + 1) / 14 + (i + 3) % 9,
  };
  for (auto& e : cases) {
    Expr s = simplify_expr(e, c);
    INFO(print(e) << "  →  " << print(s));
    for (int64_t iv = -3; iv <= 5; ++iv) {
      for (int64_t jv = 0; jv <= 12; ++jv) {
        std::map<const ir::VarNode*, int64_t> env{{i.node(), iv}, {j.node(), jv}};
        CHECK(eval_int(s, env) == eval_int(e, env));
      }
    }
  }
}

namespace {
// A deterministic stream of random integer expressions over i and j (constant divisors only, so
// nothing divides by zero).
struct RandomExprs {
  uint64_t state = 12345;
  Var i, j;
  int next(int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return int((state >> 33) % uint64_t(n));
  }
  Expr leaf() {
    switch (next(3)) {
      case 0: return i;
      case 1: return j;
      default: return Expr(next(19) - 9);
    }
  }
  Expr gen(int depth) {
    if (depth == 0) return leaf();
    Expr a = gen(depth - 1), b = gen(depth - 1);
    int divisors[] = {-4, -3, -1, 1, 2, 3, 4, 8, 16};
    Expr d = Expr(divisors[next(9)]);
    switch (next(10)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * Expr(next(9) - 4);
      case 3: return a / d;
      case 4: return a % d;
      case 5: return min(a, b);
      case 6: return max(a, b);
      case 7: return select(a < b, a, b + 1);
      case 8: return -a;
      default: return a * b;
    }
  }
};
}  // namespace

TEST_CASE("simplify: rewrites keep values (random expressions)") {
  RandomExprs r{12345, Var("i"), Var("j")};
  RangeContext c = ranges({{r.i, {-6, 9}}, {r.j, {0, 20}}});
  for (int n = 0; n < 500; ++n) {
    Expr e = r.gen(1 + n % 5);
    Expr s = simplify_expr(e, c);
    INFO(print(e) << "  →  " << print(s));
    bool same = true;
    for (int64_t iv = -6; iv <= 9 && same; ++iv)
      for (int64_t jv = 0; jv <= 20 && same; ++jv) {
        std::map<const ir::VarNode*, int64_t> env{{r.i.node(), iv}, {r.j.node(), jv}};
        same = eval_int(s, env) == eval_int(e, env);
      }
    CHECK(same);
  }
}

TEST_CASE("simplify: statements") {
  Buffer c = shared("C", {Expr(64)});
  Var i("i"), k("k"), t("t"), x("x");
  SUBCASE("if with a constant condition") {
    Stmt s = simplify_stmt(if_(Expr(3) < 4, store(c, {Expr(0)}, 1.0f), store(c, {Expr(1)}, 2.0f)));
    auto* st = s.as<ir::Store>();
    REQUIRE(st);
    CHECK(*st->indices[0].as_int() == 0);
  }
  SUBCASE("if decided by a loop range, and an else-only if inverted") {
    Stmt s = simplify_stmt(
        for_(i, 0, 16, seq({if_(i < 16, store(c, {i}, 1.0f)), if_(i < x, seq({}), store(c, {i}, 2.0f))})));
    auto* loop = s.as<ir::For>();
    REQUIRE(loop);
    auto* body = loop->body.as<ir::Seq>();
    REQUIRE(body);
    REQUIRE(body->stmts.size() == 2);
    CHECK(body->stmts[0].as<ir::Store>());
    auto* inv = body->stmts[1].as<ir::If>();
    REQUIRE(inv);
    CHECK(equal(inv->cond, i >= x));
    CHECK(!inv->else_body);
  }
  SUBCASE("loops of extent 0 vanish, of extent 1 become their body") {
    Stmt s = simplify_stmt(seq({for_(i, 0, 0, store(c, {i}, 1.0f)), for_(k, 5, 1, store(c, {k + 2}, 2.0f))}));
    auto* st = s.as<ir::Store>();
    REQUIRE(st);
    CHECK(*st->indices[0].as_int() == 7);
  }
  SUBCASE("a parallel loop of extent 1 stays, its variable folded") {
    Stmt s = simplify_stmt(for_(i, 0, 1, store(c, {i + 3}, 1.0f), ForKind::Parallel));
    auto* loop = s.as<ir::For>();
    REQUIRE(loop);
    CHECK(loop->for_kind == ForKind::Parallel);
    CHECK(*loop->body.as<ir::Store>()->indices[0].as_int() == 3);
  }
  SUBCASE("lets of constants and variables are substituted; unused lets dropped") {
    Var u("u"), w("w");
    Stmt s = simplify_stmt(for_(i, 0, 8, let(t, Expr(4), let(u, i, let(w, i * i, store(c, {t + u}, 1.0f))))));
    auto* loop = s.as<ir::For>();
    REQUIRE(loop);
    auto* st = loop->body.as<ir::Store>();
    REQUIRE(st);
    CHECK(equal(st->indices[0], i + 4));
  }
  SUBCASE("a let of an expression stays and gives its range") {
    Stmt s = simplify_stmt(for_(i, 0, 8, let(t, i * 16, store(c, {t / 16}, 1.0f))));
    auto* l = s.as<ir::For>()->body.as<ir::Let>();
    REQUIRE(l);
    CHECK(equal(l->body.as<ir::Store>()->indices[0], t / 16));  // not linear through the let, but kept exact
  }
  SUBCASE("nested seqs flatten and empty ones disappear") {
    Stmt s =
        simplify_stmt(seq({seq({barrier(), seq({})}), seq({seq({barrier()})}), if_(Expr(1) > 2, barrier())}));
    auto* q = s.as<ir::Seq>();
    REQUIRE(q);
    CHECK(q->stmts.size() == 2);
    CHECK(q->stmts[0].as<ir::Barrier>());
    CHECK(q->stmts[1].as<ir::Barrier>());
  }
  SUBCASE("an unchanged statement is returned as is") {
    Stmt in = for_(i, 0, x, store(c, {i}, 1.0f));
    CHECK(simplify_stmt(in).same_as(in));
  }
}

TEST_CASE("simplify: a function, with block and thread ranges") {
  Var n("N"), bx("bx"), tx("tx"), i("i");
  Buffer a = global("A", {n}), out = global("C", {n});
  Buffer s = shared("S", {Expr(128)});
  // kernel grid((N + 127) / 128) threads(128):
  //   for i in [0, 128) parallel { S[(bx*128 + i) % 128] = A[(i + bx*128 + 0) ...] }
  //   if (tx < 128) { C[((bx * 128 + tx) / 128) * 0 + tx] = 1 }
  Stmt body = seq({
      for_(i, 0, 128, store(s, {(bx * 128 + i) % 128}, a.load({(i + 1) + bx * 128 - 1})), ForKind::Parallel),
      if_(tx < 128, store(out, {(bx * 128 + tx) / 128 - bx + tx}, 1.0f)),
  });
  Function f = function("k", {tensor_param(a), tensor_param(out), size_param(n)},
                        kernel({(n + 127) / 128}, {bx}, 128, tx, body, {s}));
  Function g = simplify(f, TargetInfo{});
  auto* k = g.body.as<ir::Kernel>();
  REQUIRE(k);
  auto* q = k->body.as<ir::Seq>();
  REQUIRE(q);
  REQUIRE(q->stmts.size() == 2);
  auto* st = q->stmts[0].as<ir::For>()->body.as<ir::Store>();
  REQUIRE(st);
  CHECK(st->indices[0].same_as(i));
  CHECK(equal(st->value, a.load({i + bx * 128})));
  auto* st2 = q->stmts[1].as<ir::Store>();  // tx < 128 always holds: the If is gone
  REQUIRE(st2);
  CHECK(st2->indices[0].same_as(tx));
  CHECK(equal(k->grid[0], (n + 127) / 128));
  CHECK(g.params.size() == 3);
}

TEST_CASE("simplify: a decided conjunct folds away and leaves the other comparison intact") {
  // row in [0, 3] decides row < 4; folding `true && lane == 0` returns the comparison node,
  // whose own operands must not be mistaken for an && (it once came back as `lane`).
  Var row("row"), lane("lane");
  RangeContext ctx;
  ctx.set_range(row, {0, 3});
  CHECK(print(simplify_expr(row < 4 && lane == 0, ctx)) == "lane == 0");
  CHECK(print(simplify_expr(row >= 4 || lane != 0, ctx)) == "lane != 0");
}
