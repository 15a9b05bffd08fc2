// The builder records the IR the language reference describes: parameters in order, one kernel
// with its buffers, loop nests of the right kinds, Let scoping, If/else, and every node's call site.
#include <doctest/doctest.h>

#include "tilegen/builder.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"

using namespace tg;

namespace {

// `line = __LINE__;` must stay on the line of the call it marks.
// clang-format off
// Line numbers of the statements in matmul_relu, for the location checks.
int line_shared, line_clear, line_pipelined, line_copy_a, line_gemm, line_parallel, line_store, line_copy_c;

Kernel matmul_relu(Expr M, Expr N, Expr K, int bm, int bn, int bk, KernelBuilder& k) {
  auto A = k.tensor("A", {M, K}, f16);
  auto B = k.tensor("B", {K, N}, f16);
  auto C = k.tensor("C", {M, N}, f16);
  k.grid(ceildiv(N, bn), ceildiv(M, bm)).threads(128).body([&](Expr bx, Expr by) {
    line_shared = __LINE__; auto As = k.shared({bm, bk}, f16);
    auto Bs = k.shared({bk, bn}, f16);
    auto Cf = k.fragment({bm, bn}, f32);
    line_clear = __LINE__; k.clear(Cf);
    line_pipelined = __LINE__; k.pipelined(ceildiv(K, bk), /*stages=*/3, [&](Expr ko) {
      line_copy_a = __LINE__; k.copy(A.at(by * bm, ko * bk), As);
      k.copy(B.at(ko * bk, bx * bn), Bs);
      line_gemm = __LINE__; k.gemm(As, Bs, Cf);
    });
    line_parallel = __LINE__; k.parallel(Cf, [&](Expr i, Expr j) {
      line_store = __LINE__; Cf(i, j) = max(Cf(i, j), 0.0f);
    });
    line_copy_c = __LINE__; k.copy(Cf, C.at(by * bm, bx * bn));
  });
  return k.build();
}

// clang-format on

std::vector<Stmt> stmts_of(const Stmt& s) {
  if (auto* seq = s.as<ir::Seq>()) return seq->stmts;
  return {s};
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void check_loc(const SourceLoc& loc, int line) {
  CHECK(ends_with(loc.file, "test_builder.cpp"));
  CHECK(loc.line == line);
}

}  // namespace

TEST_CASE("builder: matmul_relu has the structure DESIGN.md describes") {
  KernelBuilder k("matmul_relu");
  Kernel kern = matmul_relu(256, 256, 128, 64, 64, 32, k);
  const Function& f = kern.function();
  CHECK(f.name == "matmul_relu");
  REQUIRE(f.params.size() == 3);
  CHECK(f.params[0].name() == "A");
  CHECK(f.params[2].name() == "C");
  CHECK(f.params[1].buffer->dtype == f16);
  CHECK(f.params[1].buffer->scope == Scope::Global);

  auto* kernel = f.body.as<ir::Kernel>();
  REQUIRE(kernel);
  REQUIRE(kernel->grid.size() == 2);
  CHECK(kernel->grid[0].as_int() == 4);
  CHECK(kernel->grid[1].as_int() == 4);
  CHECK(kernel->threads == 128);
  CHECK(kernel->block_vars[0].name() == "bx");
  CHECK(kernel->thread_var.name() == "tx");
  REQUIRE(kernel->buffers.size() == 3);
  CHECK(kernel->buffers[0]->scope == Scope::Shared);
  CHECK(kernel->buffers[0]->name == "shared_0");
  CHECK(kernel->buffers[1]->name == "shared_1");
  CHECK(kernel->buffers[2]->scope == Scope::Fragment);
  CHECK(kernel->buffers[2]->name == "frag_0");
  check_loc(kernel->buffers[0]->loc, line_shared);

  auto body = stmts_of(kernel->body);
  REQUIRE(body.size() == 4);
  auto* fill = body[0].as<ir::Fill>();
  REQUIRE(fill);
  CHECK(fill->value.dtype() == f32);
  check_loc(fill->loc, line_clear);

  auto* pipe = body[1].as<ir::For>();
  REQUIRE(pipe);
  CHECK(pipe->for_kind == ForKind::Pipelined);
  CHECK(pipe->stages == 3);
  CHECK(pipe->extent.as_int() == 4);
  check_loc(pipe->loc, line_pipelined);
  auto inner = stmts_of(pipe->body);
  REQUIRE(inner.size() == 3);
  auto* copy_a = inner[0].as<ir::Copy>();
  REQUIRE(copy_a);
  check_loc(copy_a->loc, line_copy_a);
  CHECK(copy_a->src.extents[0].as_int() == 64);  // inferred from the 64x32 shared tile
  CHECK(copy_a->src.extents[1].as_int() == 32);
  auto* gemm = inner[2].as<ir::Gemm>();
  REQUIRE(gemm);
  check_loc(gemm->loc, line_gemm);
  CHECK(gemm->c.buffer.same_as(kernel->buffers[2]));
  CHECK(!gemm->clear_c);

  auto* outer = body[2].as<ir::For>();
  REQUIRE(outer);
  CHECK(outer->for_kind == ForKind::Parallel);
  check_loc(outer->loc, line_parallel);
  auto* innerp = outer->body.as<ir::For>();
  REQUIRE(innerp);
  CHECK(innerp->for_kind == ForKind::Parallel);
  CHECK(innerp->extent.as_int() == 64);
  auto* store = innerp->body.as<ir::Store>();
  REQUIRE(store);
  check_loc(store->loc, line_store);
  CHECK(store->value.dtype() == f32);
  CHECK(store->indices[0].same_as(outer->var));
  CHECK(store->indices[1].same_as(innerp->var));

  auto* copy_c = body[3].as<ir::Copy>();
  REQUIRE(copy_c);
  check_loc(copy_c->loc, line_copy_c);
  CHECK(copy_c->dst.buffer->name == "C");
  CHECK(copy_c->dst.extents[1].as_int() == 64);  // inferred from the fragment
}

TEST_CASE("builder: symbolic sizes are Size params after tensors and scalars") {
  KernelBuilder k("scale");
  Expr n = k.size("N");
  auto X = k.tensor("X", {n}, f32);
  Expr alpha = k.scalar("alpha", f32);
  auto Y = k.tensor("Y", {n}, f32);
  k.grid(ceildiv(n, 256)).threads(256).body([&](Expr bx) {
    auto t = k.fragment({256}, f32, "t");
    k.copy(X.at(bx * 256), t);
    k.parallel(t, [&](Expr i) { t(i) = t(i) * alpha; });
    k.copy(t, Y.at(bx * 256));
  });
  Kernel kern = k.build();
  const Function& f = kern.function();
  REQUIRE(f.params.size() == 4);
  CHECK(f.params[0].name() == "X");
  CHECK(f.params[1].name() == "alpha");
  CHECK(f.params[1].kind == Param::Kind::Scalar);
  CHECK(f.params[2].name() == "Y");
  CHECK(f.params[3].name() == "N");
  CHECK(f.params[3].kind == Param::Kind::Size);
  CHECK(f.params[3].var.dtype() == i32);
  CHECK(f.params[0].buffer->shape[0].same_as(f.params[3].var));
  auto* kernel = f.body.as<ir::Kernel>();
  REQUIRE(kernel);
  CHECK(!kernel->grid[0].as_int());
  CHECK(kernel->buffers[0]->name == "t");
  // Symbolic sizes are fine while unbound, and an error once sizes must be bound.
  CHECK_THROWS_WITH_AS(verify(f, VerifyOptions{1024, false}), doctest::Contains("size N is still symbolic"),
                       Error);
}

TEST_CASE("builder: let scopes the rest of its block") {
  KernelBuilder k("lets");
  auto X = k.tensor("X", {128}, f32);
  k.grid(1).threads(128).body([&](Expr) {
    auto t = k.fragment({128}, f32);
    k.copy(X, t);
    k.serial(4, [&](Expr it) {
      Expr scale = k.let("scale", cast(f32, it) * 0.5f);
      k.parallel(t, [&](Expr i) { t(i) = t(i) * scale; });
      k.parallel(t, [&](Expr i) { t(i) = t(i) + scale; });
    });
    k.copy(t, X);
  });
  Kernel kern = k.build();
  auto* kernel = kern.function().body.as<ir::Kernel>();
  auto body = stmts_of(kernel->body);
  REQUIRE(body.size() == 3);
  auto* loop = body[1].as<ir::For>();
  REQUIRE(loop);
  CHECK(loop->for_kind == ForKind::Serial);
  auto* let = loop->body.as<ir::Let>();
  REQUIRE(let);
  CHECK(let->var.name() == "scale");
  CHECK(let->var.dtype() == f32);
  CHECK(stmts_of(let->body).size() == 2);  // both parallel loops are inside the let
}

TEST_CASE("builder: if_ and else_ record one If with both branches") {
  KernelBuilder k("branches");
  auto X = k.tensor("X", {64}, f32);
  Expr flag = k.scalar("flag", i32);
  k.grid(1).threads(64).body([&](Expr) {
    auto t = k.fragment({64}, f32);
    k.copy(X, t);
    k.if_(flag > 0, [&] { k.parallel(t, [&](Expr i) { t(i) = t(i) * 2.0f; }); }).else_([&] {
      k.parallel(t, [&](Expr i) { t(i) = 0.0f; });
    });
    k.if_(flag == 3, [&] { k.copy(t, X); });
  });
  Kernel kern = k.build();
  auto body = stmts_of(kern.function().body.as<ir::Kernel>()->body);
  REQUIRE(body.size() == 3);
  auto* first = body[1].as<ir::If>();
  REQUIRE(first);
  CHECK(first->then_body.as<ir::For>());
  REQUIRE(first->else_body);
  CHECK(first->else_body.as<ir::For>());
  auto* second = body[2].as<ir::If>();
  REQUIRE(second);
  CHECK(!second->else_body);
}

TEST_CASE("builder: a thread-level block reduction") {
  // Each thread sums a strided slice into a local, the block tree-reduces in shared memory with
  // barriers, and thread 0 adds the block's sum to the output atomically.
  KernelBuilder k("block_sum");
  Expr n = k.size("N");
  auto X = k.tensor("X", {n}, f32);
  auto Y = k.tensor("Y", {1}, f32);
  constexpr int threads = 128, per_block = 1024;
  k.grid(ceildiv(n, per_block)).threads(threads).body([&](Expr bx) {
    Expr tx = k.thread_index();
    auto acc = k.local({1}, f32, "acc");
    auto red = k.shared({threads}, f32, "red");
    acc(0) = 0.0f;
    k.serial(per_block / threads, [&](Expr it) {
      Expr idx = k.let("idx", bx * per_block + it * threads + tx);
      k.if_(idx < n, [&] { acc(0) += X(idx); });
    });
    red(tx) = acc(0);
    k.barrier();
    for (int s = threads / 2; s > 0; s /= 2) {
      k.if_(tx < s, [&] { red(tx) += red(tx + s); });
      k.barrier();
    }
    k.if_(tx == 0, [&] { k.atomic_add(Y(0), red(0)); });
  });
  Kernel kern = k.build();
  auto* kernel = kern.function().body.as<ir::Kernel>();
  REQUIRE(kernel);
  CHECK(kernel->buffers[0]->scope == Scope::Local);
  CHECK(kernel->buffers[1]->scope == Scope::Shared);
  struct Count : IRVisitor {
    int barriers = 0, atomics = 0, ifs = 0;
    void visit(const ir::Barrier*) override { ++barriers; }
    void visit(const ir::Atomic* op) override {
      ++atomics;
      IRVisitor::visit(op);
    }
    void visit(const ir::If* op) override {
      ++ifs;
      IRVisitor::visit(op);
    }
  } count;
  count.visit_stmt(kernel->body);
  CHECK(count.barriers == 8);
  CHECK(count.atomics == 1);
  CHECK(count.ifs == 9);
}

TEST_CASE("builder: copy infers 4-D extents and layouts are applied at build") {
  KernelBuilder k("attn_load");
  auto Q = k.tensor("Q", {2, 4, 256, 128}, f16);
  k.grid(4, 4, 2).threads(128).body([&](Expr bx, Expr by, Expr bz) {
    auto Qs = k.shared({64, 128}, f16, "Qs");
    k.annotate_layout(Qs, Layout{Layout::Kind::Swizzle, 3, ""});
    k.copy(Q.at(bz, by, bx * 64, 0), Qs);
    k.copy(Qs, Q.at(bz, by, bx * 64, 0));
  });
  Kernel kern = k.build();
  auto* kernel = kern.function().body.as<ir::Kernel>();
  REQUIRE(kernel->buffers.size() == 1);
  CHECK(kernel->buffers[0]->layout.kind == Layout::Kind::Swizzle);
  auto body = stmts_of(kernel->body);
  auto* copy = body[0].as<ir::Copy>();
  REQUIRE(copy);
  REQUIRE(copy->src.extents.size() == 4);
  CHECK(copy->src.extents[0].as_int() == 1);
  CHECK(copy->src.extents[1].as_int() == 1);
  CHECK(copy->src.extents[2].as_int() == 64);
  CHECK(copy->src.extents[3].as_int() == 128);
  // Every use of the tile refers to the rebuilt buffer with its layout.
  CHECK(copy->dst.buffer.same_as(kernel->buffers[0]));
  CHECK(body[1].as<ir::Copy>()->src.buffer.same_as(kernel->buffers[0]));
}

TEST_CASE("builder: gemm options, reductions and element assignment casts") {
  KernelBuilder k("gemm_nt");
  auto A = k.tensor("A", {64, 32}, bf16);
  auto B = k.tensor("B", {64, 32}, bf16);
  auto R = k.tensor("R", {64}, f32);
  k.grid(1).threads(128).body([&](Expr) {
    auto As = k.shared({64, 32}, bf16);
    auto Bs = k.shared({64, 32}, bf16);
    auto Cf = k.fragment({64, 64}, f32);
    auto Rf = k.fragment({64}, f32);
    k.copy(A, As);
    k.copy(B, Bs);
    k.gemm(As, Bs, Cf, {.trans_b = true, .clear = true});
    k.reduce_max(Cf, Rf, 1);
    k.parallel(Rf, [&](Expr i) { Rf(i) = 1; });
    k.copy(Rf, R);
  });
  Kernel kern = k.build();
  auto body = stmts_of(kern.function().body.as<ir::Kernel>()->body);
  auto* gemm = body[2].as<ir::Gemm>();
  REQUIRE(gemm);
  CHECK(gemm->trans_b);
  CHECK(gemm->clear_c);
  auto* red = body[3].as<ir::Reduce>();
  REQUIRE(red);
  CHECK(red->op == ReduceOp::Max);
  CHECK(red->axis == 1);
  auto* loop = body[4].as<ir::For>();
  auto* store = loop->body.as<ir::Store>();
  REQUIRE(store);
  CHECK(store->value.dtype() == f32);  // the int literal became the buffer's dtype
}

TEST_CASE("builder: an online-softmax row kernel uses the rest of the language") {
  KernelBuilder k("softmax_rows");
  Expr m = k.size("M");
  auto X = k.tensor("X", {m, 256}, f16);
  auto Y = k.tensor("Y", {m, 256}, f16);
  Expr scale = k.scalar("scale", f32);
  k.grid(ceildiv(m, 16)).threads(128).body([&]() {
    Expr row0 = k.let("row0", k.block_index(0) * 16);
    auto xs = k.fragment({16, 64}, f32, "xs");
    auto mx = k.fragment({16}, f32, "mx");
    auto sum = k.fragment({16}, f32, "sum");
    auto part = k.fragment({16}, f32, "part");
    auto tmp = k.local({4}, f32, "tmp");
    k.fill(mx, lowest(f32));
    k.clear(sum);
    k.serial(4, [&](Expr c) {
      k.copy(X.slice({row0, c * 64}, {16, 64}), xs);
      k.reduce_max(xs, mx, 1, /*clear=*/false);
      k.parallel(xs, [&](Expr i, Expr j) { xs(i, j) = exp2(xs(i, j) * scale - mx(i)); });
      k.reduce_sum(xs, part, 1);
      k.parallel(sum, [&](Expr i) { sum(i) += part(i); });
    });
    k.unrolled(4, [&](Expr u) { tmp(u) = 0.0f; });
    k.vectorized(4, [&](Expr v) { tmp(v) += 1.0f; });
    k.serial(4, [&](Expr c) {
      k.copy(X.at(row0, c * 64), xs);
      k.parallel(xs, [&](Expr i, Expr j) { xs(i, j) = exp2(xs(i, j) * scale - mx(i)) / sum(i); });
      k.copy(xs, Y.at(row0, c * 64));
    });
  });
  Kernel kern = k.build();
  auto* kernel = kern.function().body.as<ir::Kernel>();
  REQUIRE(kernel);
  auto* let = kernel->body.as<ir::Let>();  // the let takes the whole rest of the body
  REQUIRE(let);
  auto body = stmts_of(let->body);
  REQUIRE(body.size() == 6);
  auto* fill = body[0].as<ir::Fill>();
  REQUIRE(fill);
  CHECK(fill->value.as<ir::FloatImm>()->value < -1e38);
  auto first_loop = stmts_of(body[2].as<ir::For>()->body);
  auto* red = first_loop[1].as<ir::Reduce>();
  REQUIRE(red);
  CHECK(!red->clear);
  CHECK(body[3].as<ir::For>()->for_kind == ForKind::Unrolled);
  CHECK(body[4].as<ir::For>()->for_kind == ForKind::Vectorized);
  const Function& f = kern.function();
  REQUIRE(f.params.size() == 4);
  CHECK(f.params[2].name() == "scale");
  CHECK(f.params[3].name() == "M");
}

TEST_CASE("builder: Kernel::ir() is the text form of the built function") {
  KernelBuilder k("copy_rows");
  Expr n = k.size("N");
  auto X = k.tensor("X", {n, 64}, f32);
  auto Y = k.tensor("Y", {n, 64}, f32);
  k.grid(n).threads(64).body([&](Expr bx) {
    auto row = k.shared({64}, f32, "row");
    k.copy(X.at(bx, 0), row);
    k.copy(row, Y.at(bx, 0));
  });
  std::string text = k.build().ir();
  CHECK(text.find("copy_rows") != std::string::npos);
  CHECK(text.find("row") != std::string::npos);
  CHECK(text.find("threads(64)") != std::string::npos);
}

TEST_CASE("builder: built kernels read back from text still verify") {
  KernelBuilder k("matmul_relu");
  Function f = matmul_relu(k.size("M"), k.size("N"), k.size("K"), 64, 64, 32, k).function();
  Function back = parse_function(print(f), "matmul_relu.tg");
  CHECK_NOTHROW(verify(back));
  CHECK(print(back) == print(f));
}
