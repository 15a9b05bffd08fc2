// The verifier on hand-built IR: what passes and other producers (the parser, passes) can make
// but the builder never would. Each error must carry the offending node's location.
#include <doctest/doctest.h>

#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/verifier.h"

using namespace tg;

namespace {

SourceLoc at(int line) { return SourceLoc("hand.ir", line); }

Param tensor_param(const Buffer& b) {
  Param p;
  p.kind = Param::Kind::Tensor;
  p.buffer = b;
  return p;
}
Param var_param(const Var& v, Param::Kind kind) {
  Param p;
  p.kind = kind;
  p.var = v;
  return p;
}

Buffer global(const std::string& name, std::vector<Expr> shape, DType t = f32) {
  return Buffer::make(name, std::move(shape), t, Scope::Global, {}, at(1));
}
Buffer onchip(const std::string& name, std::vector<Expr> shape, Scope s, DType t = f32, int line = 3) {
  return Buffer::make(name, std::move(shape), t, s, {}, at(line));
}

Region box(const Buffer& b, std::vector<Expr> offsets, std::vector<Expr> extents) {
  return Region{b, std::move(offsets), std::move(extents)};
}

Stmt copy(Region src, Region dst, int line) {
  auto s = std::make_shared<ir::Copy>(at(line));
  s->src = std::move(src);
  s->dst = std::move(dst);
  return Stmt(s);
}
Stmt store(const Buffer& b, std::vector<Expr> idx, Expr v, int line) {
  auto s = std::make_shared<ir::Store>(at(line));
  s->buffer = b;
  s->indices = std::move(idx);
  s->value = std::move(v);
  return Stmt(s);
}
Stmt loop(const Var& v, Expr extent, ForKind kind, Stmt body, int line, int stages = 0) {
  auto s = std::make_shared<ir::For>(at(line));
  s->var = v;
  s->min = Expr(0);
  s->extent = std::move(extent);
  s->for_kind = kind;
  s->stages = stages;
  s->body = std::move(body);
  return Stmt(s);
}
Stmt if_(Expr cond, Stmt then, int line) {
  auto s = std::make_shared<ir::If>(at(line));
  s->cond = std::move(cond);
  s->then_body = std::move(then);
  return Stmt(s);
}
Stmt barrier(int line) { return Stmt(std::make_shared<ir::Barrier>(at(line))); }
Stmt seq(std::vector<Stmt> v) { return make_seq(std::move(v), at(2)); }

/// A one-dimensional kernel over `blocks` blocks.
struct KernelParts {
  Var bx{"bx"}, tx{"tx"};
  Stmt make(std::vector<Buffer> buffers, Stmt body, int threads = 128, Expr blocks = 1) const {
    auto k = std::make_shared<ir::Kernel>(at(2));
    k->grid = {blocks};
    k->block_vars = {bx};
    k->threads = threads;
    k->thread_var = tx;
    k->buffers = std::move(buffers);
    k->body = std::move(body);
    return Stmt(k);
  }
};

Function function(std::vector<Param> params, Stmt body) {
  Function f;
  f.name = "f";
  f.params = std::move(params);
  f.body = std::move(body);
  f.loc = at(1);
  return f;
}

void expect_error(const Function& f, int line, const std::string& phrase, VerifyOptions opt = {}) {
  try {
    verify(f, opt);
  } catch (const Error& e) {
    std::string what = e.what();
    INFO("what(): " << what);
    CHECK(what.rfind("hand.ir:" + std::to_string(line) + ": ", 0) == 0);
    CHECK(what.find(phrase) != std::string::npos);
    return;
  }
  FAIL("verify() passed; expected an error saying: " << phrase);
}

}  // namespace

TEST_CASE("verifier: a well-formed two-kernel function passes") {
  Var n("N");
  Buffer X = global("X", {n}), Y = global("Y", {n});
  KernelParts k1, k2;
  Buffer t1 = onchip("t1", {64}, Scope::Fragment), t2 = onchip("t2", {64}, Scope::Shared);
  Var i("i");
  Stmt body1 = seq({copy(box(X, {k1.bx * 64}, {64}), Region::full(t1), 10),
                    loop(i, 64, ForKind::Parallel, store(t1, {i}, t1.load({i}) * 2.0f, 12), 11),
                    copy(Region::full(t1), box(Y, {k1.bx * 64}, {64}), 13)});
  Stmt body2 = seq({copy(box(Y, {k2.bx * 64}, {64}), Region::full(t2), 20), barrier(21),
                    store(t2, {k2.tx % 64}, t2.load({(k2.tx + 1) % 64}), 22), barrier(23),
                    copy(Region::full(t2), box(X, {k2.bx * 64}, {64}), 24)});
  Function f =
      function({tensor_param(X), tensor_param(Y), var_param(n, Param::Kind::Size)},
               seq({k1.make({t1}, body1, 64, ceildiv(n, 64)), k2.make({t2}, body2, 64, ceildiv(n, 64))}));
  CHECK_NOTHROW(verify(f));
  expect_error(f, 2, "size N is still symbolic", VerifyOptions{1024, false});
}

TEST_CASE("verifier: a fragment used in another kernel") {
  Buffer X = global("X", {64});
  KernelParts k1, k2;
  Buffer t = onchip("t", {64}, Scope::Fragment);
  Stmt first = k1.make({t}, copy(Region::full(X), Region::full(t), 10));
  Stmt second = k2.make({}, copy(Region::full(t), Region::full(X), 20));
  expect_error(function({tensor_param(X)}, seq({first, second})), 20,
               "fragment t is used outside its kernel (this kernel does not allocate it)");
}

TEST_CASE("verifier: statements and on-chip buffers outside a kernel") {
  Buffer X = global("X", {64});
  Buffer s = onchip("s", {64}, Scope::Shared);
  expect_error(function({tensor_param(X)}, copy(Region::full(X), Region::full(s), 7)), 7,
               "copy outside a kernel: a function's body is a sequence of kernels");
}

TEST_CASE("verifier: undefined variables, foreign tensors, and let scope") {
  Buffer X = global("X", {64});
  KernelParts k;
  Var stray("q");
  expect_error(function({tensor_param(X)}, k.make({}, store(X, {stray}, 1.0f, 9))), 9,
               "variable q is not defined here");

  Buffer other = global("Z", {64});
  expect_error(function({tensor_param(X)}, k.make({}, store(other, {k.tx % 64}, 1.0f, 11))), 11,
               "global Z, which is not a parameter of f");

  Var x("x");
  auto let = std::make_shared<ir::Let>(at(12));
  let->var = x;
  let->value = k.tx + 1;
  let->body = store(X, {x % 64}, 1.0f, 13);
  Stmt body = seq({Stmt(let), store(X, {x % 64}, 2.0f, 14)});
  expect_error(function({tensor_param(X)}, k.make({}, body)), 14,
               "let variable x is used outside its let's block");

  auto bad_type = std::make_shared<ir::Let>(at(15));
  bad_type->var = Var("y", f16);
  bad_type->value = k.tx + 1;
  bad_type->body = barrier(16);
  expect_error(function({tensor_param(X)}, k.make({}, Stmt(bad_type))), 15,
               "give the variable the value's dtype");
}

TEST_CASE("verifier: parameters") {
  Buffer A = global("A", {64}), A2 = global("A", {32});
  KernelParts k;
  expect_error(function({tensor_param(A), tensor_param(A2)}, k.make({}, barrier(5))), 1,
               "two parameters of f are named A");

  Var s("s", i32);
  Buffer B = global("B", {s});
  expect_error(function({tensor_param(B), var_param(s, Param::Kind::Scalar)}, k.make({}, barrier(5))), 1,
               "the shape uses s, which is not a size parameter");
}

TEST_CASE("verifier: index count and index types of hand-made loads and stores") {
  Buffer X = global("X", {64, 64});
  KernelParts k;
  expect_error(function({tensor_param(X)}, k.make({}, store(X, {Expr(0)}, 1.0f, 30))), 30,
               "global X has 2 dimensions but 1 index is given");
  auto load = std::make_shared<ir::Load>(f32, X.ptr(), std::vector<Expr>{Expr(0), Var("h", f16)});
  expect_error(function({tensor_param(X)}, k.make({}, store(X, {0, 0}, Expr(load), 31))), 31,
               "index 1 into X has type f16");
}

TEST_CASE("verifier: launch shape limits follow the options") {
  Buffer X = global("X", {64});
  KernelParts k;
  Function f = function({tensor_param(X)}, k.make({}, barrier(5), 512));
  CHECK_NOTHROW(verify(f));
  expect_error(f, 2, "threads(512): a block has 1 to 256 threads here", VerifyOptions{256, true});
  expect_error(function({tensor_param(X)}, k.make({}, barrier(5), 0)), 2, "threads(0)");
}

TEST_CASE("verifier: unrolled loops need constant extents once sizes are bound") {
  Var n("N");
  Buffer X = global("X", {n});
  KernelParts k;
  Var u("u");
  Stmt body = loop(u, n, ForKind::Unrolled, store(X, {u}, 0.0f, 41), 40);
  Function f = function({tensor_param(X), var_param(n, Param::Kind::Size)}, k.make({}, body));
  CHECK_NOTHROW(verify(f));
  // With sizes required bound, the symbolic extent is reported first at the loop.
  expect_error(f, 40, "size N is still symbolic", VerifyOptions{1024, false});
  Var s("s");
  Stmt by_scalar = loop(u, s, ForKind::Vectorized, store(X, {u}, 0.0f, 43), 42);
  Function g = function({tensor_param(X), var_param(s, Param::Kind::Scalar)}, k.make({}, by_scalar));
  Buffer X4 = global("X", {64});
  g.params[0].buffer = X4;  // a constant shape, so only the loop extent is left symbolic
  by_scalar = loop(u, s, ForKind::Vectorized, store(X4, {u}, 0.0f, 43), 42);
  g.body = k.make({}, by_scalar);
  CHECK_NOTHROW(verify(g));
  expect_error(g, 42, "vectorized loop over u needs a constant extent", VerifyOptions{1024, false});
}

TEST_CASE("verifier: store and atomic value types") {
  Buffer X = global("X", {64});
  Buffer M = global("M", {64}, boolean);
  KernelParts k;
  expect_error(function({tensor_param(X)}, k.make({}, store(X, {k.tx % 64}, k.tx < 3, 50))), 50,
               "a bool value cannot be stored into a f32 buffer");
  auto atomic = std::make_shared<ir::Atomic>(at(51));
  atomic->buffer = M;
  atomic->indices = {Expr(0)};
  atomic->value = make_bool(true);
  expect_error(function({tensor_param(M)}, k.make({}, Stmt(atomic))), 51,
               "atomics need a numeric type of at least 8 bits");
}

TEST_CASE("verifier: thread-dependent loops and control flow") {
  Buffer X = global("X", {128});
  KernelParts k;
  Buffer s = onchip("s", {128}, Scope::Shared);
  Var i("i");
  // A serial loop whose trip count depends on the thread is divergent: no barrier inside.
  Stmt body = loop(i, k.tx + 1, ForKind::Serial, barrier(61), 60);
  expect_error(function({tensor_param(X)}, k.make({s}, body)), 61, "(the loop at hand.ir:60)");
  // A uniform loop may hold barriers and collectives.
  Stmt ok = loop(i, 4, ForKind::Serial, seq({copy(Region::full(X), Region::full(s), 63), barrier(64)}), 62);
  CHECK_NOTHROW(verify(function({tensor_param(X)}, k.make({s}, ok))));
  // A value read from a Local buffer is per thread too.
  Buffer l = onchip("l", {1}, Scope::Local, i32);
  Stmt via_local =
      seq({store(l, {0}, k.tx, 65), if_(l.load({0}) == 0, copy(Region::full(X), Region::full(s), 67), 66)});
  expect_error(function({tensor_param(X)}, k.make({s, l}, via_local)), 67, "(the if at hand.ir:66)");
  // Collective statements inside a parallel loop's body.
  Var j("j");
  Stmt nested = loop(j, 4, ForKind::Parallel, copy(Region::full(X), Region::full(s), 69), 68);
  expect_error(function({tensor_param(X)}, k.make({s}, nested)), 69, "copy inside a parallel loop");
  Stmt non_bool = if_(k.tx, barrier(71), 70);
  expect_error(function({tensor_param(X)}, k.make({s}, non_bool)), 70, "if condition has type i32");
}

TEST_CASE("verifier: kernels and allocations") {
  Buffer X = global("X", {64});
  KernelParts outer, inner;
  Stmt nested = outer.make({}, inner.make({}, barrier(5)));
  expect_error(function({tensor_param(X)}, nested), 2, "a kernel inside a kernel");
  expect_error(function({tensor_param(X)}, outer.make({global("G", {4})}, barrier(5))), 1,
               "the kernel allocates global G");
  Buffer bad = onchip("bad", {Var("bx")}, Scope::Shared, f32, 8);
  expect_error(function({tensor_param(X)}, outer.make({bad}, barrier(5))), 8,
               "variable bx is not defined here");
  KernelParts k;
  auto k3 = std::make_shared<ir::Kernel>(*k.make({}, barrier(5)).as<ir::Kernel>());
  k3->grid = {1, 1, 1, 1};
  expect_error(function({tensor_param(X)}, Stmt(k3)), 2, "the kernel grid has 4 dimensions; use 1 to 3");
}

TEST_CASE("verifier: gemm shapes with transposes and region ranks") {
  KernelParts k;
  Buffer As = onchip("As", {32, 64}, Scope::Shared, f16), Bs = onchip("Bs", {64, 32}, Scope::Shared, f16);
  Buffer Cf = onchip("Cf", {64, 64}, Scope::Fragment);
  auto gemm = std::make_shared<ir::Gemm>(at(80));
  gemm->a = Region::full(As);
  gemm->b = Region::full(Bs);
  gemm->c = Region::full(Cf);
  gemm->trans_a = true;  // A^T is 64x32, B^T is 32x64
  gemm->trans_b = true;
  CHECK_NOTHROW(verify(function({}, k.make({As, Bs, Cf}, Stmt(gemm)))));
  auto wrong = std::make_shared<ir::Gemm>(*gemm);
  wrong->trans_b = false;  // B is now 64x32: K 64 against A's 32
  expect_error(function({}, k.make({As, Bs, Cf}, Stmt(wrong))), 80,
               "K of A As (32) differs from K of B Bs (64)");
  auto bad_region = std::make_shared<ir::Gemm>(*gemm);
  bad_region->a.extents = {32};
  expect_error(function({}, k.make({As, Bs, Cf}, Stmt(bad_region))), 80, "has 2 offsets and 1 extents");
}

TEST_CASE("verifier: reduce and fill on hand-made IR") {
  KernelParts k;
  Buffer S = onchip("S", {64, 32}, Scope::Fragment), M = onchip("M", {32}, Scope::Fragment);
  auto red = std::make_shared<ir::Reduce>(at(90));
  red->src = S;
  red->dst = M;
  red->axis = 0;
  CHECK_NOTHROW(verify(function({}, k.make({S, M}, Stmt(red)))));
  red->axis = -1;
  expect_error(function({}, k.make({S, M}, Stmt(red))), 90, "axis -1 is out of range");
  auto fill = std::make_shared<ir::Fill>(at(91));
  fill->dst = box(S, {0, 16}, {64, 32});
  fill->value = make_float(0, f32);
  expect_error(function({}, k.make({S, M}, Stmt(fill))), 91,
               "covers [16, 48) in dim 1, outside S's 32 there");
}

TEST_CASE("verifier: mma operands") {
  // A one-lane 1x1x1 unit registered by the test, so the check does not depend on core's list.
  MatrixUnit unit;
  unit.name = "verifier_test_unit_1x1x1";
  unit.family = "test";
  unit.m = unit.n = unit.k = 1;
  unit.group_size = 1;
  unit.a_type = f16;
  unit.b_type = f16;
  unit.c_type = f32;
  unit.a_layout = unit.b_layout = unit.c_layout = {MatrixUnit::Slot{0, 0}};
  register_matrix_unit(unit);

  KernelParts k;
  Buffer a = onchip("a", {1}, Scope::Local, f16), b = onchip("b", {1}, Scope::Local, f16);
  Buffer c = onchip("c", {1}, Scope::Local, f32);
  auto mma = std::make_shared<ir::Mma>(at(100));
  mma->unit = unit.name;
  mma->a = {a, Expr(0)};
  mma->b = {b, Expr(0)};
  mma->c = {c, Expr(0)};
  CHECK_NOTHROW(verify(function({}, k.make({a, b, c}, Stmt(mma)))));

  auto unknown = std::make_shared<ir::Mma>(*mma);
  unknown->unit = "no_such_unit";
  expect_error(function({}, k.make({a, b, c}, Stmt(unknown))), 100, "no matrix unit named \"no_such_unit\"");

  Buffer cs = onchip("cs", {1}, Scope::Shared, f32);
  auto shared_c = std::make_shared<ir::Mma>(*mma);
  shared_c->c = {cs, Expr(0)};
  expect_error(function({}, k.make({a, b, cs}, Stmt(shared_c))), 100, "so use a local buffer");

  Buffer c16 = onchip("c16", {1}, Scope::Local, f16);
  auto wrong_type = std::make_shared<ir::Mma>(*mma);
  wrong_type->c = {c16, Expr(0)};
  expect_error(function({}, k.make({a, b, c16}, Stmt(wrong_type))), 100,
               "operand C (c16) is f16 but unit verifier_test_unit_1x1x1 takes f32");

  auto past_end = std::make_shared<ir::Mma>(*mma);
  past_end->a = {a, Expr(1)};
  expect_error(function({}, k.make({a, b, c}, Stmt(past_end))), 100, "reads elements [1, 2) of local a");
}

TEST_CASE("verifier: a bounds-checked copy may overhang a ragged edge of a global tensor") {
  // After bind_sizes, N = 1000 with a 1024-wide tile at column 0: legal, the copy is predicated.
  Buffer X = global("X", {4, 1000});
  KernelParts k;
  Buffer s = onchip("s", {1, 1024}, Scope::Shared);
  Stmt load = copy(box(X, {0, 0}, {1, 1024}), Region::full(s), 110);
  CHECK_NOTHROW(verify(function({tensor_param(X)}, k.make({s}, load))));
  // Without predication (the bounds pass cleared it), the same box is out of range.
  auto unchecked = std::make_shared<ir::Copy>(*load.as<ir::Copy>());
  unchecked->check_bounds = false;
  expect_error(function({tensor_param(X)}, k.make({s}, Stmt(unchecked))), 110,
               "covers [0, 1024) in dim 1, outside X's 1000 there");
  // On-chip boxes are never predicated.
  Buffer t = onchip("t", {1, 1000}, Scope::Shared);
  expect_error(
      function({tensor_param(X)}, k.make({s, t}, copy(box(t, {0, 0}, {1, 1024}), Region::full(s), 111))), 111,
      "the source region of shared t covers [0, 1024) in dim 1");
}

// The kernel fuzzer's case verify-copy-region-outside-after-simplify: a box entirely outside its
// tensor is a user's mistake in the builder's IR, but after passes specialise the block index it
// is a legal bounds-checked copy of nothing (zeros in, nothing written).
TEST_CASE("verifier: an empty predicated copy box is an error for the user's IR only") {
  Buffer X = global("X", {64});
  KernelParts k;
  Buffer t = onchip("t", {64}, Scope::Fragment);
  Stmt body = seq({copy(box(X, {Expr(64)}, {64}), Region::full(t), 10), copy(Region::full(t), box(X, {Expr(0)}, {64}), 11)});
  Function f = function({tensor_param(X)}, k.make({t}, body, 64, 1));
  expect_error(f, 10, "covers [64, 128) in dim 0, entirely outside X's 64 there");
  VerifyOptions after_passes;
  after_passes.reject_empty_predicated_boxes = false;
  CHECK_NOTHROW(verify(f, after_passes));
}
