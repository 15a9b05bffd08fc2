// Misuses of the builder: each must be a tg::Error naming this file and the exact line of the
// offending call, with a sentence saying what to change. `line = __LINE__;` sits on the same
// line as the call it marks. Errors found by build() still point at the call that made the node.
#include <doctest/doctest.h>

#include <functional>

#include "tilegen/builder.h"

using namespace tg;

namespace {

void expect_misuse(const std::function<void()>& f, const int& line, const std::string& phrase) {
  try {
    f();
  } catch (const Error& e) {
    std::string what = e.what();
    INFO("what(): " << what);
    CHECK(line > 0);
    CHECK(what.find("test_misuse.cpp:" + std::to_string(line) + ":") != std::string::npos);
    CHECK(what.find(phrase) != std::string::npos);
    return;
  }
  FAIL("no tg::Error; expected one saying: " << phrase);
}

}  // namespace

// `line = __LINE__;` must stay on the line of the call it marks.
// clang-format off
TEST_CASE("misuse: gemm with mismatched K names both K's") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 32}, f16);
      auto Bs = k.shared({64, 64}, f16);
      auto Cf = k.fragment({64, 64}, f32);
      line = __LINE__; k.gemm(As, Bs, Cf);
    });
    k.build();
  }, line, "K of A shared_0 (32) differs from K of B shared_1 (64); make the tiles' K dimensions agree");
}

TEST_CASE("misuse: copy from global to global") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64, 64}, f32);
    auto C = k.tensor("C", {64, 64}, f32);
    k.grid(1).threads(128).body([&](Expr) {
      line = __LINE__; k.copy(A, C);
    });
    k.build();
  }, line, "copy from global A to global C: stage through a shared or fragment tile");
}

TEST_CASE("misuse: a fragment used after its kernel's body") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto C = k.tensor("C", {64, 64}, f32);
    Tensor Cf;
    k.grid(1).threads(128).body([&](Expr) {
      Cf = k.fragment({64, 64}, f32);
      k.clear(Cf);
    });
    line = __LINE__; k.copy(Cf, C);
  }, line, "fragment frag_0 lives only inside its kernel; move this call into the body lambda");
}

TEST_CASE("misuse: i32 accumulator for f16 inputs") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 32}, f16);
      auto Bs = k.shared({32, 64}, f16);
      auto Ci = k.fragment({64, 64}, i32, "Ci");
      line = __LINE__; k.gemm(As, Bs, Ci);
    });
    k.build();
  }, line, "accumulator Ci is i32, but f16 inputs need an f32 (or f16) accumulator");
}

TEST_CASE("misuse: zero block size in a shared shape") {
  int line = 0;
  int bk = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      line = __LINE__; auto As = k.shared({64, bk}, f16);
      k.clear(As);
    });
    k.build();
  }, line, "dimension 1 is 0; every dimension must be at least 1");
}

TEST_CASE("misuse: negative tensor dimension") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    line = __LINE__; auto A = k.tensor("A", {-4, 8}, f32);
    k.grid(1).threads(128).body([&](Expr) { k.parallel({4, 8}, [&](Expr i, Expr j) { A(i, j) = 0.0f; }); });
    k.build();
  }, line, "tensor A: dimension 0 is -4; every dimension must be at least 1");
}

TEST_CASE("misuse: more than 1024 threads") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    line = __LINE__; k.grid(4).threads(2048);
  }, line, "threads(2048): at most 1024 threads per block; use a larger grid");
}

TEST_CASE("misuse: a region out of a tensor's bounds names the dim") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {100, 64}, f32);
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 64}, f32);
      line = __LINE__; k.copy(A.at(128, 0), As);
    });
    k.build();
  }, line, "covers [128, 192) in dim 0, entirely outside A's 100 there; keep the region inside the buffer");
}

TEST_CASE("misuse: pipelined with fewer than 1 stage") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 64}, f32);
      line = __LINE__; k.pipelined(4, 0, [&](Expr) { k.clear(As); });
    });
    k.build();
  }, line, "pipelined loop with 0 stages; use at least 1 stage");
}

TEST_CASE("misuse: a grid with 0 blocks") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    line = __LINE__; k.grid(4, 0).threads(64).body([&](Expr, Expr) { k.parallel(A, [&](Expr i) { A(i) = 1.0f; }); });
    k.build();
  }, line, "grid dimension 1 has 0 blocks; every grid dimension needs at least 1 block");
}

TEST_CASE("misuse: index count differs from the buffer's rank") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto Cf = k.fragment({64, 64}, f32, "Cf");
      line = __LINE__; k.parallel({64}, [&](Expr i) { Cf(i) = 0.0f; });
    });
  }, line, "fragment Cf has 2 dimensions but 1 index was given; give one index per dimension");
}

// X[i] as well as X(i): operator[] cannot take a source_location default argument; its Index
// parameter captures the line where the index is converted, which must be this file's.
TEST_CASE("misuse: a float index") {
  for (bool brackets : {false, true}) {
    INFO((brackets ? "X[x]" : "X(x)"));
    int line = 0;
    expect_misuse([&] {
      KernelBuilder k("bad");
      auto X = k.tensor("X", {64}, f32);
      Expr x = k.scalar("x", f32);
      k.grid(1).threads(64).body([&](Expr) {
        line = __LINE__; if (brackets) X[x] = 1.0f; else X(x) = 1.0f;
      });
    }, line, "index 0 into X has type f32; indices must be integers");
  }
}

TEST_CASE("misuse: operator[] errors name the indexing line, not builder.h") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto Cf = k.fragment({64, 64}, f32, "Cf");
      line = __LINE__; k.parallel({64}, [&](Expr i) { Cf[i] = 0.0f; });
    });
  }, line, "fragment Cf has 2 dimensions but 1 index was given; give one index per dimension");
  try {
    KernelBuilder k("bad");
    auto X = k.tensor("X", {64}, f32);
    k.grid(1).threads(64).body([&](Expr) { X[1.5] = 1.0f; });
    FAIL("no tg::Error for a float index");
  } catch (const Error& e) {
    CHECK(e.where().file.find("builder.h") == std::string::npos);
  }
}

TEST_CASE("misuse: duplicate tensor name") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    line = __LINE__; auto A2 = k.tensor("A", {64}, f32);
  }, line, "tensor name A is already used in kernel bad; pick another name");
}

TEST_CASE("misuse: body() twice") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    k.grid(1).threads(64).body([&](Expr) { k.parallel(A, [&](Expr i) { A(i) = 1.0f; }); });
    line = __LINE__; k.body([&](Expr) {});
  }, line, "body() called twice: a KernelBuilder makes one kernel");
}

TEST_CASE("misuse: build() twice") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    k.grid(1).threads(64).body([&](Expr) { k.parallel(A, [&](Expr i) { A(i) = 1.0f; }); });
    k.build();
    line = __LINE__; k.build();
  }, line, "build() called twice: kernel bad is already built");
}

TEST_CASE("misuse: builder calls after build()") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    k.grid(1).threads(64).body([&](Expr) { k.parallel(A, [&](Expr i) { A(i) = 1.0f; }); });
    k.build();
    line = __LINE__; k.tensor("B", {64}, f32);
  }, line, "tensor() after build(): kernel bad is finished; start a new KernelBuilder");
}

TEST_CASE("misuse: barrier under an if that depends on the thread index") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      Expr tx = k.thread_index();
      auto s = k.shared({128}, f32);
      s(tx) = 0.0f;
      k.if_(tx < 64, [&] {
        line = __LINE__; k.barrier();
      });
    });
    k.build();
  }, line, "every thread of the block must reach a barrier or the block hangs; move it out of that if");
}

TEST_CASE("misuse: a copy under an if that depends on the thread index") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64}, f32);
    k.grid(1).threads(128).body([&](Expr) {
      Expr half = k.let("half", k.thread_index() / 64);
      auto s = k.shared({64}, f32);
      k.if_(half == 0, [&] {
        line = __LINE__; k.copy(A, s);
      });
    });
    k.build();
  }, line, "collective statements are performed once by the whole block, so every thread must reach them");
}

TEST_CASE("misuse: parallel lambda arity differs from the rank") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto Cf = k.fragment({64, 64}, f32);
      line = __LINE__; k.parallel(Cf, [&](Expr i) { (void)i; });
    });
  }, line, "parallel: the lambda takes 1 index but the loop has 2 dimensions; take one tg::Expr per dimension");
}

TEST_CASE("misuse: body lambda takes more block indices than the grid has") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    line = __LINE__; k.grid(8).threads(128).body([&](Expr, Expr) {});
  }, line, "take one tg::Expr per grid dimension");
}

TEST_CASE("misuse: reduce axis out of range") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto S = k.fragment({64, 128}, f32, "S");
      auto M = k.fragment({64}, f32, "M");
      k.clear(S);
      line = __LINE__; k.reduce_max(S, M, 2);
    });
    k.build();
  }, line, "reduce_max: axis 2 is out of range for fragment S with 2 dimensions; use an axis in 0..1");
}

TEST_CASE("misuse: reduce destination of the wrong shape") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto S = k.fragment({64, 128}, f32, "S");
      auto M = k.fragment({128}, f32, "M");
      k.clear(S);
      line = __LINE__; k.reduce_sum(S, M, 1);
    });
    k.build();
  }, line, "fragment M is 128 but reducing fragment S (64x128) over axis 1 gives 64; allocate the destination");
}

TEST_CASE("misuse: atomic on a fragment") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto Cf = k.fragment({64}, f32, "Cf");
      k.clear(Cf);
      line = __LINE__; k.atomic_add(Cf(0), 1.0f);
    });
    k.build();
  }, line, "atomic_add on fragment Cf: atomics need a global or shared buffer");
}

TEST_CASE("misuse: a local used inside a parallel loop") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto acc = k.local({4}, f32, "acc");
      auto Cf = k.fragment({64}, f32);
      k.parallel(Cf, [&](Expr i) {
        line = __LINE__; Cf(i) = acc(0);
      });
    });
    k.build();
  }, line, "local acc is used inside a parallel loop; locals are per thread");
}

TEST_CASE("misuse: thread_index() inside a parallel loop") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      Expr tx = k.thread_index();
      auto Cf = k.fragment({64, 128}, f32);
      k.parallel(Cf, [&](Expr i, Expr j) {
        (void)j;
        line = __LINE__; Cf(i, tx) = 0.0f;
      });
    });
    k.build();
  }, line, "thread_index() inside a parallel loop");
}

TEST_CASE("misuse: copy with both extents unknown") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {128, 128}, f16);
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({128, 128}, f16);
      line = __LINE__; k.copy(A.at(0, 0), As.at(0, 0));
    });
  }, line, "both come from .at(...)); pass a whole buffer on one side or give extents with .slice");
}

TEST_CASE("misuse: gemm accumulating into a shared tile") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 32}, f16);
      auto Bs = k.shared({32, 64}, f16);
      auto Cs = k.shared({64, 64}, f32, "Cs");
      line = __LINE__; k.gemm(As, Bs, Cs);
    });
    k.build();
  }, line, "the accumulator C is shared Cs; accumulate into a fragment");
}

TEST_CASE("misuse: gemm reading global memory directly") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {64, 32}, f16);
    k.grid(1).threads(128).body([&](Expr) {
      auto Bs = k.shared({32, 64}, f16);
      auto Cf = k.fragment({64, 64}, f32);
      line = __LINE__; k.gemm(A, Bs, Cf);
    });
    k.build();
  }, line, "global A is in global memory; copy it into a shared tile first");
}

TEST_CASE("misuse: if_ on a float condition") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    Expr x = k.scalar("x", f32);
    k.grid(1).threads(128).body([&](Expr) {
      line = __LINE__; k.if_(x, [&] { k.barrier(); });
    });
  }, line, "if_: the condition has type f32; compare it to get a bool");
}

TEST_CASE("misuse: let of an empty expression") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(128).body([&](Expr) {
      Expr nothing;
      line = __LINE__; k.let("x", nothing);
    });
  }, line, "let(\"x\"): the value is an empty expression");
}

TEST_CASE("misuse: a tensor with no dimensions") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    line = __LINE__; auto A = k.tensor("A", {}, f32);
    k.grid(1).threads(32).body([&](Expr) {});
    k.build();
  }, line, "tensor A has no dimensions; give it at least one");
}

TEST_CASE("misuse: a loop variable used after its loop") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto X = k.tensor("X", {16}, f32);
    k.grid(1).threads(32).body([&](Expr) {
      Expr saved;
      k.serial(16, [&](Expr i) { saved = i; });
      line = __LINE__; X(saved) = 1.0f;
    });
    k.build();
  }, line, "loop variable i is used outside its loop");
}

TEST_CASE("misuse: else_ that does not follow its if_") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    Expr n = k.scalar("n", i32);
    k.grid(1).threads(32).body([&](Expr) {
      auto chain = k.if_(n > 0, [&] {});
      k.barrier();
      line = __LINE__; chain.else_([&] {});
    });
  }, line, "else_ must follow its if_ directly");
}

TEST_CASE("misuse: on-chip memory outside body()") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    line = __LINE__; k.shared({64}, f32);
  }, line, "shared() outside body(): tile operations and element code belong inside");
}

TEST_CASE("misuse: copies of different shapes") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto A = k.tensor("A", {128, 128}, f32);
    k.grid(1).threads(128).body([&](Expr) {
      auto As = k.shared({64, 64}, f32, "As");
      line = __LINE__; k.copy(A.slice({0, 0}, {64, 32}), As);
    });
    k.build();
  }, line, "global A box is 64x32 but the destination shared As box is 64x64");
}

TEST_CASE("misuse: a tensor of another builder") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder other("other");
    auto A = other.tensor("A", {64}, f32);
    KernelBuilder k("bad");
    k.grid(1).threads(64).body([&](Expr) {
      auto s = k.shared({64}, f32);
      line = __LINE__; k.copy(A, s);
    });
  }, line, "global A belongs to another KernelBuilder");
}

TEST_CASE("misuse: a swizzle on a fragment") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    k.grid(1).threads(64).body([&](Expr) {
      auto f = k.fragment({64, 64}, f16);
      line = __LINE__; k.annotate_layout(f, Layout{Layout::Kind::Swizzle, 3, ""});
    });
  }, line, "swizzled and padded layouts apply to shared tiles");
}

TEST_CASE("misuse: a serial loop with a negative extent") {
  int line = 0;
  expect_misuse([&] {
    KernelBuilder k("bad");
    auto X = k.tensor("X", {16}, f32);
    k.grid(1).threads(32).body([&](Expr) {
      line = __LINE__; k.serial(-3, [&](Expr i) { X(i) = 0.0f; });
    });
    k.build();
  }, line, "serial loop over i has extent -3; a loop needs a positive extent");
}
// clang-format on
