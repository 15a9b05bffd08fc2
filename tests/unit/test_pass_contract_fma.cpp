#include <doctest/doctest.h>

#include "test_pass_ir.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/contract_fma.h"

using namespace tg;
using namespace tg::test;

namespace {
#define CHECK_CONTRACTS(in, out)                                \
  do {                                                          \
    Expr got_ = contract_fma_expr(in);                          \
    INFO("got " << print(got_) << ", expected " << print(out)); \
    CHECK(equal(got_, out));                                    \
  } while (0)
}  // namespace

TEST_CASE("contract_fma: f32 products fuse with the sum or difference they feed") {
  Var a("a", f32), b("b", f32), c("c", f32), d("d", f32);
  CHECK_CONTRACTS(a * b + c, fma(a, b, c));
  CHECK_CONTRACTS(c + a * b, fma(a, b, c));
  CHECK_CONTRACTS(a * b - c, fma(a, b, -c));
  CHECK_CONTRACTS(c - a * b, fma(-a, b, c));
  // Both sides products: the right one fuses, the left stays the addend.
  CHECK_CONTRACTS(a * b + c * d, fma(c, d, a * b));
  // Nested: the inner sum fuses first, then the outer one around it.
  CHECK_CONTRACTS((a * b + c) * d + a, fma(fma(a, b, c), d, a));
  // Inside calls and selects too (flash_attention's exp2 argument, with a constant scale).
  Expr scale = make_float(0.125, f32);
  CHECK_CONTRACTS(exp2(a * scale - c), exp2(fma(a, scale, -c)));
  CHECK_CONTRACTS(select(a < b, a * b + c, d), select(a < b, fma(a, b, c), d));
  // A negated constant addend folds into the literal.
  CHECK_CONTRACTS(a * b - 2.0f, fma(a, b, make_float(-2.0, f32)));
}

TEST_CASE("contract_fma: f64 fuses; f16, bf16, integers and lone products stay") {
  Var a("a", f64), b("b", f64), c("c", f64);
  CHECK_CONTRACTS(a * b + c, fma(a, b, c));
  for (DType t : {f16, bf16, i32}) {
    Var x("x", t), y("y", t), z("z", t);
    Expr e = x * y + z;
    CHECK_CONTRACTS(e, e);
  }
  Var x("x", f32), y("y", f32);
  Expr lone = x * y;
  CHECK_CONTRACTS(lone, lone);
  Expr quotient = x / y + x;
  CHECK_CONTRACTS(quotient, quotient);
}

TEST_CASE("contract_fma: the pass rewrites a function's stores and keeps the builder's line") {
  Buffer X = global("X", {Expr(64)}), Y = global("Y", {Expr(64)});
  Var i("i");
  Expr sum = Y.load({i}) + X.load({i}) * 2.0f;
  Function f = function("axpy", {tensor_param(X), tensor_param(Y)}, for_(i, 0, 64, store(Y, {i}, sum)));
  Function g = contract_fma(f, TargetInfo{});
  const auto* loop = g.body.as<ir::For>();
  REQUIRE(loop);
  const auto* st = loop->body.as<ir::Store>();
  REQUIRE(st);
  const auto* call = st->value.as<ir::Call>();
  REQUIRE(call);
  CHECK(call->fn == ir::Intrinsic::Fma);
  CHECK(equal(st->value, fma(X.load({i}), make_float(2.0, f32), Y.load({i}))));
  CHECK(call->loc.line == sum->loc.line);
  // Nothing to fuse: the same statement back.
  Function h = contract_fma(g, TargetInfo{});
  CHECK(h.body.same_as(g.body));
}
