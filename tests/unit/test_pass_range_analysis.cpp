#include <doctest/doctest.h>

#include "test_pass_ir.h"
#include "tilegen/passes/range_analysis.h"

using namespace tg;

namespace {
RangeContext ranges(std::initializer_list<std::pair<Var, Interval>> vars) {
  RangeContext c;
  for (auto& [v, r] : vars) c.set_range(v, r);
  return c;
}
}  // namespace

TEST_CASE("range analysis: bounds of index arithmetic") {
  Var i("i"), j("j");
  RangeContext c = ranges({{i, {0, 3}}, {j, {0, 127}}});
  CHECK(c.bounds(Expr(5)) == Interval::point(5));
  CHECK(c.bounds(i * 128 + j) == Interval{0, 511});
  CHECK(c.bounds((i * 128 + j) / 128) == Interval{0, 3});
  CHECK(c.bounds((i * 128 + j) % 128) == Interval{0, 127});
  CHECK(c.bounds(j % 128) == Interval{0, 127});
  CHECK(c.bounds(j - i) == Interval{-3, 127});
  CHECK(c.bounds(-j) == Interval{-127, 0});
  CHECK(c.bounds(i * j) == Interval{0, 381});
  CHECK(c.bounds(min(i, j)) == Interval{0, 3});
  CHECK(c.bounds(max(i, j - 200)) == Interval{0, 3});
  CHECK(c.bounds(select(i < 2, j, i)) == Interval{0, 127});
  CHECK(c.bounds((j - 64) / 32) == Interval{-2, 1});  // floor division rounds down
  CHECK(c.bounds((j - 64) % 32) == Interval{0, 31});
  CHECK(c.bounds(j % Expr(-32)) == Interval{-31, 0});  // floor modulo takes the divisor's sign
  CHECK(c.bounds(j >> 3) == Interval{0, 15});
  CHECK(c.bounds(j & 7) == Interval{0, 7});
}

TEST_CASE("range analysis: | and ^ of non-negative values stay below the wider one's next power of two") {
  Var i("i"), j("j"), z("z");
  RangeContext c = ranges({{i, {0, 3}}, {j, {0, 127}}, {z, {0, 0}}});
  CHECK(c.bounds(j | i) == Interval{0, 127});
  CHECK(c.bounds(i ^ 4) == Interval{0, 7});
  CHECK(c.bounds(j | 128) == Interval{0, 255});
  CHECK(c.bounds(z | z) == Interval{0, 0});
  CHECK(c.bounds(i | (j - 1)) ==
        Interval{INT32_MIN, INT32_MAX});  // an operand may be negative: the type's range
}

TEST_CASE("range analysis: unknown variables and types") {
  Var x("x"), y("y", i64), b("b", boolean);
  CHECK(bounds_of(x) == Interval{INT32_MIN, INT32_MAX});
  CHECK(bounds_of(y) == Interval::everything());
  CHECK(bounds_of(y * y) == Interval::everything());
  CHECK(bounds_of(y / 2).lo == Interval::kNegInf);
  CHECK(bounds_of(b) == Interval{0, 1});
  CHECK(bounds_of(cast(u8, x)) == Interval{0, 255});  // a narrowing cast may wrap
  CHECK(bounds_of(cast(i64, cast(u8, x))) == Interval{0, 255});
  CHECK(bounds_of(Var("f", f32) + 1.0) == Interval::everything());
  // Cancellation happens before bounds: x + 3 - x is 3 whatever x is.
  CHECK(bounds_of(x + 3 - x) == Interval::point(3));
  // Huge coefficients widen to infinity rather than overflow.
  Var z("z", i64);
  RangeContext c;
  c.set_range(z, {0, INT64_MAX / 2});
  CHECK(c.bounds(z * int64_t(4)).hi == Interval::kPosInf);
  CHECK(c.bounds(z * int64_t(4)).lo == 0);
}

TEST_CASE("range analysis: linear forms") {
  Var x("x"), y("y");
  LinearForm f = linear_form((x + 3) + 4);
  REQUIRE(f.terms.size() == 1);
  CHECK(f.terms[0].first.same_as(x));
  CHECK(f.terms[0].second == 1);
  CHECK(f.constant == 7);
  CHECK(equal(to_expr(linear_form((x * 4) * 8)), x * 32));
  CHECK(equal(to_expr(linear_form(x + y - x)), y));
  CHECK(equal(to_expr(linear_form((x + 3) * 4 - y)), x * 4 - y + 12));
  CHECK(equal(to_expr(linear_form(Expr(2) - x)), -x + 2));
  CHECK(to_expr(linear_form(x - x)).as_int() == 0);
  LinearForm d = linear_difference(x + 5, x + 2, 1);
  CHECK(d.is_constant());
  CHECK(d.constant == 4);
}

TEST_CASE("range analysis: multiples, proven on the linear form") {
  Var i("i"), j("j");
  CHECK(is_multiple_of(i * 8 + j * 16, 8));
  CHECK(is_multiple_of((i + 2) * 8 - j * 24 + 40, 8));
  CHECK(is_multiple_of(Expr(0), 16));
  CHECK_FALSE(is_multiple_of(i + 8, 8));           // i may be odd
  CHECK_FALSE(is_multiple_of(i * 8 + 4, 8));       // the constant is not
  CHECK_FALSE(is_multiple_of(i * 16 + j * 12, 8)); // one coefficient is not
  CHECK(is_multiple_of(i * 8 + i * 4 + i * 4, 16)); // equal terms merged: 16·i
}

TEST_CASE("range analysis: deciding comparisons") {
  Var i("i"), j("j"), x("x");
  RangeContext c = ranges({{i, {0, 3}}, {j, {0, 127}}});
  CHECK(c.decide(i * 128 + j < 512) == true);
  CHECK(c.decide(i * 128 + j >= 512) == false);
  CHECK(c.decide(i < 2) == std::nullopt);
  CHECK(c.decide(i == 7) == false);
  CHECK(c.decide(i != 7) == true);
  CHECK(c.decide(x + 3 < x + 5) == true);  // x unknown: decided by cancellation
  CHECK(c.decide(i < 4 && j < 128) == true);
  CHECK(c.decide(i < 2 && j > 200) == false);
  CHECK(c.decide(i < 2 || j < 128) == true);
  CHECK(c.decide(!(i < 4)) == false);
  CHECK(c.decide(Var("f", f32) < 1.0) == std::nullopt);
}

TEST_CASE("range analysis: facts from loops, ifs and lets") {
  Var n("N"), i("i"), k("k"), v("v");
  RangeContext c;
  c.set_range(n, {0, Interval::kPosInf});
  c.enter_loop(i, Expr(0), n);
  CHECK(c.bounds(i).lo == 0);
  CHECK(c.decide(i < n) == true);  // symbolic: the loop's own bound
  CHECK(c.decide(i + 1 <= n) == true);
  CHECK(c.decide(i >= n) == false);
  CHECK(c.decide(i * 2 < n * 2) == true);  // a scaled fact
  CHECK(c.decide(i < n - 1) == std::nullopt);
  {
    RangeContext::Scope s(c);
    c.assume(k < 10 && k >= 2);
    CHECK(c.bounds(k) == Interval{2, 9});
    c.assume_not(v < 5);
    CHECK(c.bounds(v).lo == 5);
  }
  CHECK(c.bounds(k) == Interval{INT32_MIN, INT32_MAX});  // the scope restored it
  CHECK(c.bounds(v).lo == INT32_MIN);
  c.enter_let(k, i + 1);
  CHECK(c.decide(k <= n) == true);
  CHECK(c.decide(k == i + 1) == true);
}

TEST_CASE("range analysis: a fact on a let variable narrows it") {
  // let m = by*32 + i (by in [0, 1], i in [0, 32)); if (m < 40) { ... m / 20 < 2 ... }
  Var by("by"), i("i"), m("m");
  RangeContext c;
  c.set_range(by, {0, 1});
  c.enter_loop(i, Expr(0), Expr(32));
  c.enter_let(m, by * 32 + i);
  CHECK(c.bounds(m) == Interval{0, 63});
  CHECK(c.decide(m / 20 < 2) == std::nullopt);
  c.assume(m < 40);
  CHECK(c.bounds(m) == Interval{0, 39});
  CHECK(c.decide(m / 20 < 2) == true);
  CHECK(c.decide(by * 32 + i < 40) == true);  // the fact, expanded through the let
}

TEST_CASE("range analysis: kernel and loop ranges") {
  Var bx("bx"), tx("tx"), i("i");
  Stmt k = test::kernel({Expr(8)}, {bx}, 128, tx, test::barrier());
  RangeContext c;
  c.enter_kernel(*k.as<ir::Kernel>());
  CHECK(c.bounds(bx) == Interval{0, 7});
  CHECK(c.bounds(tx) == Interval{0, 127});
  CHECK(c.bounds(bx * 128 + tx) == Interval{0, 1023});
  c.enter_loop(i, bx * 4, Expr(4));
  CHECK(c.bounds(i) == Interval{0, 31});
  CHECK(c.decide(i < bx * 4 + 4) == true);
  CHECK(c.decide(i >= bx * 4) == true);
}
