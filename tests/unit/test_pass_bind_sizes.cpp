#include <doctest/doctest.h>

#include <functional>

#include "test_pass_ir.h"
#include "tilegen/passes/bind_sizes.h"

using namespace tg;
using namespace tg::test;

namespace {
// func add(A: f32[N, K], C: f32[N], N: size, K: size):
//   kernel grid((N + 127) / 128) threads(128) -> (bx; tx) {
//     for i in [0, 128) parallel { S[i] = A[bx * 128 + i, K - 1] }
//     for i in [0, 128) parallel { C[bx * 128 + i] = S[i] }
//   }
struct AddKernel {
  Var n{"N"}, k{"K"}, bx{"bx"}, tx{"tx"}, i{"i"};
  Buffer a = global("A", {n, k}), c = global("C", {n});
  Buffer s = shared("S", {Expr(128)});
  Function f =
      function("add", {tensor_param(a), tensor_param(c), size_param(n), size_param(k)},
               kernel({(n + 127) / 128}, {bx}, 128, tx,
                      seq({for_(i, 0, 128, store(s, {i}, a.load({bx * 128 + i, k - 1})), ForKind::Parallel),
                           for_(i, 0, 128, store(c, {bx * 128 + i}, s.load({i})), ForKind::Parallel)}),
                      {s}));
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("bind_sizes: sizes become constants everywhere") {
  AddKernel t;
  Function g = bind_sizes(t.f, {{"N", 1000}, {"K", 64}});
  REQUIRE(g.params.size() == 2);  // the sizes are gone
  CHECK(g.sizes().empty());
  Buffer a = g.params[0].buffer, c = g.params[1].buffer;
  CHECK(*a->shape[0].as_int() == 1000);
  CHECK(*a->shape[1].as_int() == 64);
  CHECK(*c->shape[0].as_int() == 1000);
  auto* k = g.body.as<ir::Kernel>();
  REQUIRE(k);
  CHECK(k->grid[0].as_int() == 8);  // (1000 + 127) / 128 folds as it is rebuilt
  auto* body = k->body.as<ir::Seq>();
  auto* load_store = body->stmts[0].as<ir::For>()->body.as<ir::Store>();
  auto* load = load_store->value.as<ir::Load>();
  REQUIRE(load);
  CHECK(load->buffer == a.ptr());  // the body's loads use the parameter's new buffer
  CHECK(*load->indices[1].as_int() == 63);
  auto* out = body->stmts[1].as<ir::For>()->body.as<ir::Store>();
  CHECK(out->buffer.same_as(c));
  CHECK(k->buffers[0].same_as(t.s));  // shapes without sizes keep their buffer
}

TEST_CASE("bind_sizes: binding some sizes keeps the others") {
  AddKernel t;
  Function g = bind_sizes(t.f, {{"K", 64}});
  REQUIRE(g.sizes().size() == 1);
  CHECK(g.sizes()[0].same_as(t.n));
  CHECK(g.params[0].buffer->shape[0].same_as(t.n));
  CHECK(*g.params[0].buffer->shape[1].as_int() == 64);
}

TEST_CASE("bind_sizes: errors") {
  AddKernel t;
  std::string unknown = error_of([&] { bind_sizes(t.f, {{"M", 3}}); });
  CHECK(unknown.find("no size parameter named 'M'") != std::string::npos);
  CHECK(unknown.find("N, K") != std::string::npos);
  CHECK(error_of([&] {
          bind_sizes(t.f, {{"A", 3}});
        }).find("no size parameter named 'A'") != std::string::npos);
  std::string zero = error_of([&] { bind_sizes(t.f, {{"N", 0}}); });
  CHECK(zero.find("size N = 0") != std::string::npos);
  CHECK(zero.find("positive") != std::string::npos);
  CHECK(error_of([&] { bind_sizes(t.f, {{"N", -5}}); }).find("positive") != std::string::npos);
  CHECK(error_of([&] {
          bind_sizes(t.f, {{"N", int64_t(1) << 40}});
        }).find("fit in i32") != std::string::npos);
}

TEST_CASE("infer_sizes: from tensor shapes") {
  AddKernel t;
  auto sizes = infer_sizes(t.f, {{1000, 64}, {1000}});
  CHECK(sizes.size() == 2);
  CHECK(sizes["N"] == 1000);
  CHECK(sizes["K"] == 64);
  Function g = bind_sizes(t.f, sizes);
  CHECK(g.sizes().empty());
}

TEST_CASE("infer_sizes: errors name the tensor and dimension") {
  AddKernel t;
  std::string mismatch = error_of([&] { infer_sizes(t.f, {{1000, 64}, {999}}); });
  CHECK(mismatch.find("tensor C: shape [999] does not match the kernel's [N] = [1000]") != std::string::npos);
  std::string count = error_of([&] { infer_sizes(t.f, {{1000, 64}}); });
  CHECK(count.find("takes 2 tensors (A, C) but 1 shapes") != std::string::npos);
  std::string rank = error_of([&] { infer_sizes(t.f, {{1000}, {1000}}); });
  CHECK(rank.find("tensor A of add has rank 2 but a shape of rank 1") != std::string::npos);
  CHECK(error_of([&] {
          infer_sizes(t.f, {{1000, -1}, {1000}});
        }).find("tensor A: dimension 1 is -1; dimensions cannot be negative") != std::string::npos);

  // A constant dimension must match.
  Var m("M");
  Buffer w = global("W", {m, Expr(32)});
  Function fixed = function("fixed", {tensor_param(w), size_param(m)}, seq({}));
  std::string constant = error_of([&] { infer_sizes(fixed, {{10, 16}}); });
  CHECK(constant.find("tensor W: shape [10, 16] does not match the kernel's [M, 32] = [10, 32]") !=
        std::string::npos);

  // A dimension computed from sizes must match once they are known.
  Buffer x = global("X", {m}), y = global("Y", {m * 2});
  Function twice = function("twice", {tensor_param(x), tensor_param(y), size_param(m)}, seq({}));
  CHECK(infer_sizes(twice, {{5}, {10}})["M"] == 5);
  std::string computed = error_of([&] { infer_sizes(twice, {{5}, {11}}); });
  CHECK(computed.find("tensor Y: shape [11] does not match the kernel's [M*2] = [10]") != std::string::npos);

  // A size that no tensor dimension is.
  Var unused("U");
  Function lonely = function("lonely", {tensor_param(x), size_param(m), size_param(unused)}, seq({}));
  std::string unbound = error_of([&] { infer_sizes(lonely, {{5}}); });
  CHECK(unbound.find("kernel 'lonely': size 'U' is not a dimension of any tensor parameter") !=
        std::string::npos);

  // A size bound to a value that is not positive names the tensor and the size.
  std::string zero = error_of([&] { infer_sizes(t.f, {{0, 64}, {0}}); });
  CHECK(zero.find("tensor A: dimension 0 is 0, which binds size 'N': a size must be positive") !=
        std::string::npos);
}

TEST_CASE("infer_sizes: a launch site names the arguments and is where errors point") {
  AddKernel t;
  LaunchSite site{SourceLoc("user.cpp", 42), {"argument 1 (A)", "argument 2 (C)"}};
  try {
    infer_sizes(t.f, {{1000, 64}, {999}}, site);
    FAIL("no error for a shape that does not match");
  } catch (const Error& e) {
    CHECK(e.where().line == 42);
    CHECK(e.message() == "argument 2 (C): shape [999] does not match the kernel's [N] = [1000]");
  }
}
