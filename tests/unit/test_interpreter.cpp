// The reference interpreter on hand-built IR: tile-level kernels (copy, gemm, reduce, fill,
// parallel loops), thread-level kernels (local buffers, barriers, shared memory) and the errors
// it must report instead of computing a wrong answer.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <source_location>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"

using namespace tg;

namespace {

SourceLoc here(std::source_location s = std::source_location::current()) { return SourceLoc::from(s); }

Region region(const Buffer& b, std::vector<Expr> off, std::vector<Expr> ext) {
  return Region{b, std::move(off), std::move(ext)};
}
Region full(const Buffer& b) { return Region::full(b); }
Buffer global(std::string n, std::vector<Expr> s, DType t = f32) {
  return Buffer::make(std::move(n), std::move(s), t, Scope::Global);
}
Buffer shared(std::string n, std::vector<Expr> s, DType t = f32) {
  return Buffer::make(std::move(n), std::move(s), t, Scope::Shared);
}
Buffer fragment(std::string n, std::vector<Expr> s, DType t = f32) {
  return Buffer::make(std::move(n), std::move(s), t, Scope::Fragment);
}
Buffer local(std::string n, std::vector<Expr> s, DType t = f32) {
  return Buffer::make(std::move(n), std::move(s), t, Scope::Local);
}

Stmt store(const Buffer& b, std::vector<Expr> idx, Expr v, SourceLoc loc = here()) {
  auto s = std::make_shared<ir::Store>(loc);
  s->buffer = b, s->indices = std::move(idx), s->value = std::move(v);
  return Stmt(s);
}
Stmt atomic_add(const Buffer& b, std::vector<Expr> idx, Expr v) {
  auto s = std::make_shared<ir::Atomic>(here());
  s->buffer = b, s->indices = std::move(idx), s->value = std::move(v);
  return Stmt(s);
}
Stmt loop(const Var& v, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial,
          SourceLoc loc = here()) {
  auto f = std::make_shared<ir::For>(loc);
  f->var = v, f->min = std::move(min), f->extent = std::move(extent), f->body = std::move(body),
  f->for_kind = kind;
  return Stmt(f);
}
Stmt when(Expr c, Stmt then, Stmt otherwise = {}) {
  auto s = std::make_shared<ir::If>(here());
  s->cond = std::move(c), s->then_body = std::move(then), s->else_body = std::move(otherwise);
  return Stmt(s);
}
Stmt let(const Var& v, Expr value, Stmt body) {
  auto s = std::make_shared<ir::Let>(here());
  s->var = v, s->value = std::move(value), s->body = std::move(body);
  return Stmt(s);
}
Stmt barrier(SourceLoc loc = here()) { return Stmt(std::make_shared<ir::Barrier>(loc)); }
Stmt copy(Region src, Region dst, bool check = true) {
  auto s = std::make_shared<ir::Copy>(here());
  s->src = std::move(src), s->dst = std::move(dst), s->check_bounds = check;
  return Stmt(s);
}
Stmt fill(Region dst, Expr v) {
  auto s = std::make_shared<ir::Fill>(here());
  s->dst = std::move(dst), s->value = std::move(v);
  return Stmt(s);
}
Stmt gemm(Region a, Region b, Region c, bool clear = false) {
  auto s = std::make_shared<ir::Gemm>(here());
  s->a = std::move(a), s->b = std::move(b), s->c = std::move(c), s->clear_c = clear;
  return Stmt(s);
}
Stmt reduce(ReduceOp op, const Buffer& src, const Buffer& dst, int axis, bool clear = true) {
  auto s = std::make_shared<ir::Reduce>(here());
  s->op = op, s->src = src, s->dst = dst, s->axis = axis, s->clear = clear;
  return Stmt(s);
}

/// A one-kernel function. Params: tensors, then sizes.
struct KernelFn {
  Var tid{"tid"}, bx{"bx"}, by{"by"};
  std::vector<Buffer> tensors, bufs;
  std::vector<Var> sizes, scalars;
  Function build(std::vector<Expr> grid, int threads, std::vector<Stmt> body) {
    auto k = std::make_shared<ir::Kernel>(here());
    k->grid = grid;
    k->block_vars = {bx, by};
    k->block_vars.resize(grid.size());
    k->threads = threads, k->thread_var = tid, k->buffers = bufs, k->body = make_seq(std::move(body));
    Function f{"test", {}, Stmt(k), here()};
    for (auto& t : tensors) f.params.push_back(Param{Param::Kind::Tensor, t, {}});
    for (auto& s : scalars) f.params.push_back(Param{Param::Kind::Scalar, {}, s});
    for (auto& s : sizes) f.params.push_back(Param{Param::Kind::Size, {}, s});
    return f;
  }
};

template <typename T>
HostArg arg(std::vector<T>& v, std::vector<int64_t> shape, DType t = f32) {
  HostArg a;
  a.data = v.data(), a.shape = std::move(shape), a.dtype = t;
  return a;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// C = A·B at the tile level: the kernel of the design brief, with a fragment accumulator of
// `acc` type and ragged edges handled by bounds-checked copies.
Function tiled_gemm(int bm, int bn, int bk, int threads, DType in = f32, DType acc = f32, DType out = f32) {
  KernelFn k;
  Var M("M"), N("N"), K("K"), ko("ko");
  Buffer A = global("A", {M, K}, in), B = global("B", {K, N}, in), C = global("C", {M, N}, out);
  Buffer As = shared("As", {bm, bk}, in), Bs = shared("Bs", {bk, bn}, in), Cf = fragment("Cf", {bm, bn}, acc);
  k.tensors = {A, B, C}, k.sizes = {M, N, K}, k.bufs = {As, Bs, Cf};
  Stmt step = make_seq({copy(region(A, {k.by * bm, ko * bk}, {bm, bk}), full(As)),
                        copy(region(B, {ko * bk, k.bx * bn}, {bk, bn}), full(Bs)),
                        gemm(full(As), full(Bs), full(Cf))});
  auto pipelined = loop(ko, 0, ceildiv(K, bk), step, ForKind::Pipelined);
  return k.build(
      {ceildiv(N, bn), ceildiv(M, bm)}, threads,
      {fill(full(Cf), 0.0), pipelined, copy(full(Cf), region(C, {k.by * bm, k.bx * bn}, {bm, bn}))});
}

// The interpreter's own rounding model of tiled_gemm: one rounding into `acc` per k-tile.
std::vector<double> gemm_model(const std::vector<float>& a, const std::vector<float>& b, int M, int N, int K,
                               int bk, DType acc) {
  std::vector<double> c(std::size_t(M * N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double cij = 0;
      for (int k0 = 0; k0 < K; k0 += bk) {
        double s = 0;
        for (int k = k0; k < std::min(K, k0 + bk); ++k)
          s += double(a[std::size_t(i * K + k)]) * b[std::size_t(k * N + j)];
        cij = round_float_to(acc, cij + s);
      }
      c[std::size_t(i * N + j)] = cij;
    }
  return c;
}

}  // namespace

TEST_CASE("tiled gemm with ragged M, N, K matches a double host loop") {
  const int M = 70, N = 45, K = 37;
  Function f = tiled_gemm(32, 32, 16, 128);
  auto a = random_floats(M * K, 1), b = random_floats(K * N, 2);
  std::vector<float> c(M * N, 42.0f);
  interpret(f, {arg(a, {M, K}), arg(b, {K, N}), arg(c, {M, N})}, {true, 3});
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      worst = std::max(worst, std::fabs(want - c[i * N + j]));
    }
  CHECK(worst < 1e-5);
  auto model = gemm_model(a, b, M, N, K, 16, f32);
  for (int i = 0; i < M * N; ++i) CHECK(c[i] == float(model[i]));  // bit-exact rounding model
}

// The interpreter's speed is measured by `tilegen bench gemm --target interp`, not by a timed test.
TEST_CASE("256^3 tile-level gemm matches the rounding model") {
  const int S = 256;
  Function f = tiled_gemm(64, 64, 32, 128);
  auto a = random_floats(S * S, 3), b = random_floats(S * S, 4);
  std::vector<float> c(S * S);
  interpret(f, {arg(a, {S, S}), arg(b, {S, S}), arg(c, {S, S})});
  auto model = gemm_model(a, b, S, S, S, 32, f32);
  for (int i = 0; i < S * S; i += 97) CHECK(c[i] == float(model[i]));
}

TEST_CASE("f16 accumulation rounds once per gemm, unlike f32") {
  const int M = 16, N = 16, K = 256;
  auto a = random_floats(M * K, 5), b = random_floats(K * N, 6);
  for (auto* v : {&a, &b})
    for (auto& x : *v) x = float(round_float_to(f16, x));  // inputs exact in f16
  auto to_half = [](const std::vector<float>& v) {
    std::vector<uint16_t> h;
    for (float x : v) h.push_back(float_to_half_bits(x));
    return h;
  };
  auto ah = to_half(a), bh = to_half(b);
  std::vector<uint16_t> c16(M * N);
  std::vector<float> c32(M * N);
  interpret(tiled_gemm(16, 16, 32, 32, f16, f16, f16),
            {arg(ah, {M, K}, f16), arg(bh, {K, N}, f16), arg(c16, {M, N}, f16)});
  interpret(tiled_gemm(16, 16, 32, 32, f16, f32, f32),
            {arg(ah, {M, K}, f16), arg(bh, {K, N}, f16), arg(c32, {M, N})});
  auto m16 = gemm_model(a, b, M, N, K, 32, f16), m32 = gemm_model(a, b, M, N, K, 32, f32);
  int differ = 0;
  for (int i = 0; i < M * N; ++i) {
    CHECK(half_bits_to_float(c16[i]) == float(m16[i]));
    CHECK(c32[i] == float(m32[i]));
    differ += half_bits_to_float(c16[i]) != c32[i];
  }
  CHECK(differ > M * N / 2);  // f16 accumulation visibly loses precision
}

TEST_CASE("copy predicates ragged edges only with check_bounds on a global side") {
  KernelFn k;
  Buffer A = global("A", {5, 7}), Out = global("Out", {5, 7}), S = shared("S", {4, 4});
  k.tensors = {A, Out}, k.bufs = {S};
  Function f = k.build({1}, 32,
                       {copy(region(A, {3, 4}, {4, 4}), full(S)), fill(region(Out, {0, 0}, {5, 7}), -1.0),
                        copy(full(S), region(Out, {2, 5}, {4, 4}))});
  std::vector<float> a(35), out(35);
  for (int i = 0; i < 35; ++i) a[i] = float(i);
  interpret(f, {arg(a, {5, 7}), arg(out, {5, 7})});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) {
      float want = -1;
      if (i >= 2 && j >= 5) {  // S[i-2][j-5] = A[i+1][j-1] when in range, else 0
        int si = i + 1, sj = j - 1;
        want = si < 5 && sj < 7 ? a[si * 7 + sj] : 0.0f;
      }
      CHECK(out[i * 7 + j] == want);
    }
  KernelFn u;
  u.tensors = {A}, u.bufs = {S};
  Function g = u.build({1}, 32, {copy(region(A, {3, 4}, {4, 4}), full(S), false)});
  CHECK_THROWS_WITH_AS(interpret(g, {arg(a, {5, 7})}),
                       doctest::Contains("copy reads A[3, 7], outside A of shape [5, 7]"), Error);
  KernelFn w;
  w.tensors = {A}, w.bufs = {S};
  Function h = w.build({1}, 32, {copy(region(A, {0, 0}, {4, 4}), region(S, {1, 0}, {4, 4}))});
  CHECK_THROWS_WITH_AS(interpret(h, {arg(a, {5, 7})}), doctest::Contains("outside S"), Error);
  // Unit dimensions do not count: a 1x4 row lands in a 4-vector, converted to i32.
  KernelFn v;
  Buffer V = global("V", {4}, i32);
  v.tensors = {A, V};
  Function row = v.build({1}, 1, {copy(region(A, {2, 1}, {1, 4}), full(V))});
  std::vector<int32_t> vv(4);
  interpret(row, {arg(a, {5, 7}), arg(vv, {4}, i32)});
  CHECK(vv == std::vector<int32_t>{15, 16, 17, 18});
}

TEST_CASE("reduce sum, max and absmax, with and without clear") {
  KernelFn k;
  Buffer A = global("A", {4, 6}), Out = global("Out", {3, 4}), F = fragment("F", {4, 6}),
         R = fragment("R", {4});
  Buffer Cm = fragment("Cm", {6});
  k.tensors = {A, Out}, k.bufs = {F, R, Cm};
  Function f = k.build(
      {1}, 64,
      {copy(full(A), full(F)), reduce(ReduceOp::Sum, F, R, 1), copy(full(R), region(Out, {0, 0}, {1, 4})),
       reduce(ReduceOp::AbsMax, F, R, 1), copy(full(R), region(Out, {1, 0}, {1, 4})),
       reduce(ReduceOp::Max, F, R, -1, false), copy(full(R), region(Out, {2, 0}, {1, 4}))});
  std::vector<float> a(24), out(12);
  for (int i = 0; i < 24; ++i) a[i] = float((i * 5) % 11) - 5.0f;
  interpret(f, {arg(a, {4, 6}), arg(out, {3, 4})});
  for (int i = 0; i < 4; ++i) {
    float sum = 0, absmax = 0, mx = -1e30f;
    for (int j = 0; j < 6; ++j)
      sum += a[i * 6 + j], absmax = std::max(absmax, std::fabs(a[i * 6 + j])),
                           mx = std::max(mx, a[i * 6 + j]);
    CHECK(out[i] == sum);
    CHECK(out[4 + i] == absmax);
    CHECK(out[8 + i] == std::max(absmax, mx));  // not cleared: combined with the absmax already there
  }
  KernelFn bad;
  bad.tensors = {A}, bad.bufs = {F, Cm};
  Function g = bad.build({1}, 32, {reduce(ReduceOp::Sum, F, Cm, 1)});
  CHECK_THROWS_WITH_AS(interpret(g, {arg(a, {4, 6})}), doctest::Contains("needs a destination of shape [4]"),
                       Error);
}

namespace {

// Sum of A over blocks: grid-stride loads into a local accumulator, then a shared-memory tree.
Function block_sum(int threads, bool with_barrier) {
  KernelFn k;
  Var N("N"), i("i"), lvl("lvl"), s("s"), idx("idx"), G("G");
  Buffer A = global("A", {N}), Out = global("Out", {G}), acc = local("acc", {1}), S = shared("S", {threads});
  k.tensors = {A, Out}, k.sizes = {N, G}, k.bufs = {acc, S};
  Expr tid = k.tid;
  Stmt accumulate =
      let(idx, (i * G + k.bx) * threads + tid, when(idx < N, store(acc, {0}, acc.load({0}) + A.load({idx}))));
  Stmt step = when(tid < s, store(S, {tid}, S.load({tid}) + S.load({tid + s})));
  Stmt level = let(s, Expr(threads / 2) >> lvl, with_barrier ? make_seq({step, barrier()}) : step);
  int levels = 0;
  while ((1 << levels) < threads) ++levels;
  return k.build(
      {G}, threads,
      {store(acc, {0}, 0.0f), loop(i, 0, ceildiv(N, G * threads), accumulate), store(S, {tid}, acc.load({0})),
       barrier(), loop(lvl, 0, levels, level), when(tid == 0, store(Out, {k.bx}, S.load({0})))});
}

}  // namespace

TEST_CASE("thread-level block reduction with local, shared and barriers") {
  const int n = 1 << 20, G = 64;
  std::vector<float> a(n), out(G);
  for (int i = 0; i < n; ++i) a[i] = float(i % 7 - 3);
  interpret(block_sum(128, true), {arg(a, {n}), arg(out, {G})});
  for (int b = 0; b < G; ++b) {
    double want = 0;
    for (int i = 0; i < n; ++i)
      if ((i / 128) % G == b) want += a[i];
    CHECK(out[b] == float(want));
  }
}

TEST_CASE("removing the barrier of the tree reduction is reported as a race") {
  std::vector<float> a(1000, 1.0f), out(2);
  CHECK_THROWS_WITH_AS(interpret(block_sum(64, false), {arg(a, {1000}), arg(out, {2})}),
                       doctest::Contains("race on shared buffer S["), Error);
  CHECK_THROWS_WITH_AS(interpret(block_sum(64, false), {arg(a, {1000}), arg(out, {2})}),
                       doctest::Contains("add a barrier"), Error);
  InterpretOptions quiet;
  quiet.detect_races = false;
  CHECK_NOTHROW(interpret(block_sum(64, false), {arg(a, {1000}), arg(out, {2})}, quiet));
}

// Shared atomics: threads' atomics on one element are serialised, never a race; an atomic and
// another thread's plain read or write of the element between two barriers are (the read sees the
// value before or after the atomic, by scheduling). The fuzzer found the detector blind to them.
TEST_CASE("race detector: shared atomics race with other threads' plain reads and writes, not each other") {
  auto kernel = [](const std::string& middle) {
    return parse_function(
        "func atomics(W: f32[32] global) {\n"
        "  kernel grid(1) threads(32) -> (bx; tx) {\n"
        "    shared S: f32[4]\n"
        "    fill S = 1.0\n" +
        middle +
        "    W[tx] = S[tx % 4]\n"
        "  }\n"
        "}\n");
  };
  std::vector<float> w(32);
  // Atomics only, then a barrier before the reads: every thread adds 1 to S[tx % 4] (8 each).
  interpret(kernel("    atomic add(S[tx % 4], 1.0)\n    barrier\n"), {arg(w, {32})});
  for (int t = 0; t < 32; ++t) CHECK(w[t] == 9.0f);
  // The reads of W[tx] = S[tx % 4] in the same interval as other threads' atomics.
  CHECK_THROWS_WITH_AS(interpret(kernel("    atomic add(S[tx % 4], 1.0)\n"), {arg(w, {32})}),
                       doctest::Contains("(atomic) and thread"), Error);
  // A plain read of an element, then another thread's atomic on it.
  CHECK_THROWS_WITH_AS(
      interpret(kernel("    barrier\n    W[tx] = S[0]\n    atomic max(S[0], 2.0)\n    barrier\n"), {arg(w, {32})}),
      doctest::Contains("(read) and thread"), Error);
  // A plain write, then another thread's atomic.
  CHECK_THROWS_WITH_AS(
      interpret(kernel("    barrier\n    if tx == 0 {\n      S[1] = 5.0\n    }\n    atomic min(S[1], 0.0)\n"
                       "    barrier\n"),
                {arg(w, {32})}),
      doctest::Contains("(write) and 1 (atomic)"), Error);
  // One thread's own plain read after its own atomic is no race.
  CHECK_NOTHROW(interpret(
      kernel("    barrier\n    if tx == 3 {\n      atomic add(S[3], 1.0)\n      W[0] = S[3]\n    }\n    barrier\n"),
      {arg(w, {32})}));
}

TEST_CASE("barrier under a thread-dependent if is an error") {
  KernelFn k;
  Buffer Out = global("Out", {64});
  k.tensors = {Out};
  Function f =
      k.build({1}, 64, {when(k.tid < 32, barrier(SourceLoc("sync.cpp", 17))), store(Out, {k.tid}, 1.0f)});
  std::vector<float> out(64);
  CHECK_THROWS_WITH_AS(interpret(f, {arg(out, {64})}),
                       doctest::Contains("sync.cpp:17: barrier reached by 32 of 64"), Error);
  // A uniform condition keeps the full mask: fine.
  KernelFn u;
  u.tensors = {Out};
  Function g = u.build({1}, 64, {when(u.bx < 1, barrier()), store(Out, {u.tid}, 1.0f)});
  CHECK_NOTHROW(interpret(g, {arg(out, {64})}));
}

TEST_CASE("out-of-bounds store names buffer, index and location") {
  KernelFn k;
  Buffer Out = global("Out", {100});
  k.tensors = {Out};
  Function f = k.build({1}, 128, {store(Out, {k.tid}, 1.0f, SourceLoc("kernels/oob.cpp", 42))});
  std::vector<float> out(100);
  try {
    interpret(f, {arg(out, {100})});
    FAIL("no error");
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(m.find("kernels/oob.cpp:42") == std::string::npos);  // directories stripped
    CHECK(m.find("oob.cpp:42") != std::string::npos);
    CHECK(m.find("store to Out[100] by thread 100 is out of bounds") != std::string::npos);
    CHECK(e.where().line == 42);
  }
}

TEST_CASE("expressions: floor division, wrapping, f32 rounding, lazy select, division by zero") {
  KernelFn k;
  Var d("d");
  Buffer I = global("I", {3}, i32), F = global("F", {3}), B = global("B", {1}, i8);
  k.tensors = {I, F, B}, k.scalars = {d};
  Expr hundred = cast(i8, d * 50);  // computed at run time, not folded
  Function f = k.build({1}, 1,
                       {store(I, {0}, Expr(-7) / d), store(I, {1}, Expr(-7) % d),
                        store(I, {2}, select(d > 100, I.load({d * 1000}), 5)),
                        store(B, {0}, hundred + hundred), store(F, {0}, cast(f32, d * 50000000) + 1.0f),
                        store(F, {1}, sqrt(cast(f32, d))), store(F, {2}, sigmoid(cast(f32, d - 2)))});
  std::vector<int32_t> iv(3);
  std::vector<float> fv(3);
  std::vector<int8_t> bv(1);
  HostArg dv;
  dv.is_tensor = false, dv.dtype = i32, dv.scalar = Scalar::of_int(2);
  interpret(f, {arg(iv, {3}, i32), arg(fv, {3}), arg(bv, {1}, i8), dv});
  CHECK(iv[0] == -4);
  CHECK(iv[1] == 1);
  CHECK(iv[2] == 5);             // the out-of-range load on the untaken side never runs
  CHECK(bv[0] == -56);           // 200 wraps in i8
  CHECK(fv[0] == 100000000.0f);  // 1e8 + 1 rounds back in f32
  CHECK(fv[1] == std::sqrt(2.0f));
  CHECK(fv[2] == 0.5f);
  dv.scalar = Scalar::of_int(0);  // x / 0 = 0 and x % 0 = x (int_semantics.h), on every target
  interpret(f, {arg(iv, {3}, i32), arg(fv, {3}), arg(bv, {1}, i8), dv});
  CHECK(iv[0] == 0);
  CHECK(iv[1] == -7);
  Function unbound = k.build({1}, 1, {store(I, {0}, Var("never", i32) + 1)});
  CHECK_THROWS_WITH_AS(interpret(unbound, {arg(iv, {3}, i32), arg(fv, {3}), arg(bv, {1}, i8), dv}),
                       doctest::Contains("variable never is used where it is not bound"), Error);
}

TEST_CASE("arguments are checked against the parameters") {
  Function f = tiled_gemm(16, 16, 16, 32);
  std::vector<float> a(6 * 4), b(4 * 5), c(6 * 5);
  std::vector<double> cd(6 * 5);
  CHECK_NOTHROW(interpret(f, {arg(a, {6, 4}), arg(b, {4, 5}), arg(c, {6, 5})}));
  CHECK_THROWS_WITH_AS(interpret(f, {arg(a, {6, 4}), arg(b, {4, 5})}),
                       doctest::Contains("takes 3 arguments (A, B, C)"), Error);
  CHECK_THROWS_WITH_AS(
      interpret(f, {arg(a, {6, 4}), arg(b, {3, 5}), arg(c, {6, 5})}),
      doctest::Contains("tensor B dimension 0 is 3, but size K is 4 from tensor A dimension 1"), Error);
  CHECK_THROWS_WITH_AS(interpret(f, {arg(a, {6, 4}), arg(b, {4, 5}), arg(cd, {6, 5}, f64)}),
                       doctest::Contains("(tensor C) has dtype f64, but C is declared f32"), Error);
  CHECK_THROWS_WITH_AS(interpret(f, {arg(a, {6, 4}), arg(b, {4, 5}), arg(c, {30})}),
                       doctest::Contains("has rank 1"), Error);
  KernelFn k;
  Var X("X");
  Buffer O = global("O", {4});
  k.tensors = {O}, k.sizes = {X};
  Function g = k.build({X}, 1, {store(O, {0}, 1.0f)});
  CHECK_THROWS_WITH_AS(interpret(g, {arg(c, {4})}),
                       doctest::Contains("size X is not the dimension of any tensor"), Error);
}

TEST_CASE("collective statements must be uniform over the block") {
  KernelFn k;
  Buffer A = global("A", {64}), S = shared("S", {64});
  k.tensors = {A}, k.bufs = {S};
  std::vector<float> a(64);
  Function under_if = k.build({1}, 32, {when(k.tid < 16, copy(full(A), full(S)))});
  CHECK_THROWS_WITH_AS(interpret(under_if, {arg(a, {64})}),
                       doctest::Contains("copy reached by 16 of 32 threads"), Error);
  Function per_thread = k.build({1}, 32, {copy(region(A, {k.tid}, {1}), region(S, {0}, {1}))});
  CHECK_THROWS_WITH_AS(interpret(per_thread, {arg(a, {64})}), doctest::Contains("depends on the thread"),
                       Error);
  Var i("i");
  Function reads_tid = k.build({1}, 32, {loop(i, 0, 64, store(S, {i}, cast(f32, k.tid)), ForKind::Parallel)});
  CHECK_THROWS_WITH_AS(interpret(reads_tid, {arg(a, {64})}), doctest::Contains("read inside a parallel loop"),
                       Error);
}

TEST_CASE("parallel loops, per-thread loop bounds and atomics") {
  KernelFn k;
  Var i("i"), j("j"), n("n");
  Buffer A = global("A", {4, 8}), Out = global("Out", {4, 8}), T = global("T", {64}, i32),
         Cnt = global("Cnt", {1}, i32);
  Buffer F = fragment("F", {4, 8}), acc = local("acc", {1}, i32);
  k.tensors = {A, Out, T, Cnt}, k.bufs = {F, acc};
  Stmt relu = loop(i, 0, 4, loop(j, 0, 8, store(F, {i, j}, max(F.load({i, j}), 0.0f)), ForKind::Parallel),
                   ForKind::Parallel);
  Function f = k.build({5}, 64,
                       {copy(full(A), full(F)), relu, copy(full(F), full(Out)), store(acc, {0}, 0),
                        loop(n, 0, k.tid, store(acc, {0}, acc.load({0}) + 1)),
                        when(k.bx == 0, store(T, {k.tid}, acc.load({0}))), atomic_add(Cnt, {0}, 1)});
  std::vector<float> a(32), out(32);
  for (int x = 0; x < 32; ++x) a[x] = float(x % 5) - 2.0f;
  std::vector<int32_t> t(64), cnt(1);
  interpret(f, {arg(a, {4, 8}), arg(out, {4, 8}), arg(t, {64}, i32), arg(cnt, {1}, i32)}, {true, 4});
  for (int x = 0; x < 32; ++x) CHECK(out[x] == std::max(a[x], 0.0f));
  for (int x = 0; x < 64; ++x) CHECK(t[x] == x);  // thread x looped x times
  CHECK(cnt[0] == 5 * 64);
}

TEST_CASE("a function of two kernels runs them in order; top-level lets and scalars reach both") {
  Var N("N"), alpha("alpha", f32), half("half"), bx("bx"), tid("tid"), bx2("bx2"), tid2("tid2");
  Buffer A = global("A", {N}), Tmp = global("Tmp", {N}), Out = global("Out", {N});
  auto first = std::make_shared<ir::Kernel>(here());
  first->grid = {ceildiv(N, 32)}, first->block_vars = {bx}, first->threads = 32, first->thread_var = tid;
  Expr i = bx * 32 + tid;
  first->body = when(i < N, store(Tmp, {i}, A.load({i}) * alpha));
  auto second = std::make_shared<ir::Kernel>(here());
  second->grid = {half}, second->block_vars = {bx2}, second->threads = 2, second->thread_var = tid2;
  Expr j = bx2 * 2 + tid2;  // reads Tmp written by other blocks of the first kernel
  second->body = when(j < N, store(Out, {j}, Tmp.load({N - 1 - j}) + 1.0f));
  Stmt body = let(half, ceildiv(N, 2), make_seq({Stmt(first), Stmt(second)}));
  Function f{"two",
             {{Param::Kind::Tensor, A, {}},
              {Param::Kind::Tensor, Tmp, {}},
              {Param::Kind::Tensor, Out, {}},
              {Param::Kind::Scalar, {}, alpha},
              {Param::Kind::Size, {}, N}},
             body,
             here()};
  const int n = 77;
  std::vector<float> a(n), tmp(n), out(n);
  for (int x = 0; x < n; ++x) a[x] = float(x);
  HostArg s;
  s.is_tensor = false, s.dtype = f64, s.scalar = Scalar::of_float(0.5);
  interpret(f, {arg(a, {n}), arg(tmp, {n}), arg(out, {n}), s});
  for (int x = 0; x < n; ++x) CHECK(out[x] == float(n - 1 - x) * 0.5f + 1.0f);
  HostArg wrong = s;
  wrong.is_tensor = true;
  CHECK_THROWS_WITH_AS(interpret(f, {arg(a, {n}), arg(tmp, {n}), arg(out, {n}), wrong}),
                       doctest::Contains("(scalar alpha) is a tensor"), Error);
}

TEST_CASE("malformed kernels are rejected before they run") {
  KernelFn k;
  Var i("i");
  Buffer A = global("A", {64}), L = local("L", {4}), Big = shared("Big", {1 << 20, 1 << 20});
  k.tensors = {A}, k.bufs = {L};
  std::vector<float> a(64);
  Function local_in_parallel = k.build({1}, 32, {loop(i, 0, 4, store(L, {i}, 1.0f), ForKind::Parallel)});
  CHECK_THROWS_WITH_AS(interpret(local_in_parallel, {arg(a, {64})}),
                       doctest::Contains("local buffer L is written inside a parallel loop"), Error);
  Function float_index = k.build({1}, 32, {store(A, {cast(f32, k.tid)}, 1.0f)});
  CHECK_THROWS_WITH_AS(interpret(float_index, {arg(a, {64})}), doctest::Contains("must be an integer"),
                       Error);
  KernelFn b;
  b.tensors = {A}, b.bufs = {Big};
  Function huge = b.build({1}, 32, {fill(full(Big), 0.0)});
  CHECK_THROWS_WITH_AS(interpret(huge, {arg(a, {64})}), doctest::Contains("too large"), Error);
  Function outside = b.build({1}, 32, {});
  outside.body = barrier();
  CHECK_THROWS_WITH_AS(interpret(outside, {arg(a, {64})}), doctest::Contains("outside a kernel"), Error);
}
