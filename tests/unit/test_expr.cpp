#include <doctest/doctest.h>

#include <cmath>

#include "tilegen/ir/expr.h"
#include "tilegen/ir/visitor.h"

using namespace tg;

TEST_CASE("integer constants fold and identities drop") {
  Expr e = Expr(3) * 4 + 5;
  REQUIRE(e.as_int());
  CHECK(*e.as_int() == 17);
  Var n("N");
  CHECK((n + 0).same_as(n));
  CHECK((n * 1).same_as(n));
  CHECK(*(n * 0).as_int() == 0);
  CHECK(*(Expr(-7) / 2).as_int() == -4);  // floor division
  CHECK(*(Expr(-7) % 2).as_int() == 1);   // floor modulo
}

TEST_CASE("weak float literals take the float type they meet") {
  Var h("h", f16);
  Expr e = h * 2.0;
  CHECK(e.dtype() == f16);
  Expr g = Var("x", f32) + 1;
  CHECK(g.dtype() == f32);
  Var i("i");
  CHECK((i + 1.5).dtype() == f32);
  CHECK((Var("a", f16) + Var("b", f32)).dtype() == f32);
  CHECK((Var("a", i32) + Var("b", i64)).dtype() == i64);
}

TEST_CASE("comparisons give bool; select promotes") {
  Var i("i");
  CHECK((i < 3).dtype() == boolean);
  Expr s = select(i < 3, Var("x", f16), 0.0);
  CHECK(s.dtype() == f16);
  CHECK(select(Expr(true), Expr(1), Expr(2)).as_int() == 1);
}

TEST_CASE("ceildiv and structural equality") {
  Var n("N");
  Expr a = ceildiv(n, 128), b = ceildiv(n, 128);
  CHECK(!a.same_as(b));
  CHECK(equal(a, b));
  CHECK(hash_expr(a) == hash_expr(b));
  CHECK(!equal(a, ceildiv(n, 64)));
  CHECK(*ceildiv(Expr(1000), Expr(128)).as_int() == 8);
}

TEST_CASE("bad operands are errors, not crashes") {
  CHECK_THROWS_AS(Var("x", f32) & Var("y", f32), Error);
  CHECK_THROWS_AS(make_call(ir::Intrinsic::Pow, {Expr(1.0)}), Error);
  CHECK_THROWS_AS(Expr() + 1, Error);
}

TEST_CASE("vars_in lists the variables an expression reads, by identity") {
  Var i("i"), j("j"), other_i("i");
  std::set<const ir::VarNode*> v = vars_in(i * 8 + select(j < 4, i, Expr(3)));
  CHECK(v == std::set<const ir::VarNode*>{i.node(), j.node()});
  CHECK_FALSE(v.count(other_i.node()));  // same name, another variable
  CHECK(vars_in(Expr(5)).empty());
}

TEST_CASE("substitute replaces variables by identity") {
  Var i("i"), j("j");
  Expr e = i * 4 + j;
  Expr r = substitute(e, {{i, Expr(2)}, {j, Expr(1)}});
  REQUIRE(r.as_int());
  CHECK(*r.as_int() == 9);
}

TEST_CASE("logical operators fold bool constants") {
  Var i("i");
  Expr c = i < 3;
  CHECK((c && Expr(true)).same_as(c));
  CHECK((Expr(true) && c).same_as(c));
  CHECK((c && Expr(false)).as<ir::IntImm>()->value == 0);
  CHECK((c || Expr(false)).same_as(c));
  CHECK((c || Expr(true)).as<ir::IntImm>()->value == 1);
}
