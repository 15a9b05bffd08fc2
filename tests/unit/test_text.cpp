// The IR text form: exact printed texts, print → parse → print identity over hand-built IR,
// exact literal values, name disambiguation, and parse errors with their lines.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"

using namespace tg;

namespace {

// ---- Small constructors for hand-built IR.
Region box(const Buffer& b, std::vector<Expr> off, std::vector<Expr> ext) {
  return Region{b, std::move(off), std::move(ext)};
}

Stmt loop(Var v, Expr extent, ForKind kind, Stmt body, int stages = 0) {
  auto f = std::make_shared<ir::For>(SourceLoc{});
  f->var = std::move(v);
  f->min = Expr(0);
  f->extent = std::move(extent);
  f->for_kind = kind;
  f->stages = stages;
  f->body = std::move(body);
  return Stmt(f);
}
Stmt copy(Region src, Region dst) {
  auto c = std::make_shared<ir::Copy>(SourceLoc{});
  c->src = std::move(src);
  c->dst = std::move(dst);
  return Stmt(c);
}
Stmt fill(const Buffer& b, Expr v) {
  auto f = std::make_shared<ir::Fill>(SourceLoc{});
  f->dst = Region::full(b);
  f->value = std::move(v);
  return Stmt(f);
}
Stmt store(const Buffer& b, std::vector<Expr> idx, Expr v) {
  auto s = std::make_shared<ir::Store>(SourceLoc{});
  s->buffer = b;
  s->indices = std::move(idx);
  s->value = std::move(v);
  return Stmt(s);
}
Stmt if_else(Expr c, Stmt t, Stmt e = {}) {
  auto s = std::make_shared<ir::If>(SourceLoc{});
  s->cond = std::move(c);
  s->then_body = std::move(t);
  s->else_body = std::move(e);
  return Stmt(s);
}
Stmt let(Var v, Expr value, Stmt body) {
  auto s = std::make_shared<ir::Let>(SourceLoc{});
  s->var = std::move(v);
  s->value = std::move(value);
  s->body = std::move(body);
  return Stmt(s);
}
Stmt kernel(std::vector<Expr> grid, std::vector<Var> bvars, Var tvar, int threads, std::vector<Buffer> bufs,
            Stmt body) {
  auto k = std::make_shared<ir::Kernel>(SourceLoc{});
  k->grid = std::move(grid);
  k->block_vars = std::move(bvars);
  k->thread_var = std::move(tvar);
  k->threads = threads;
  k->buffers = std::move(bufs);
  k->body = std::move(body);
  return Stmt(k);
}
Param tensor(const Buffer& b) { return Param{Param::Kind::Tensor, b, {}}; }
Param size(const Var& v) { return Param{Param::Kind::Size, {}, v}; }
Param scalar(const Var& v) { return Param{Param::Kind::Scalar, {}, v}; }
Stmt seq(std::vector<Stmt> s) { return make_seq(std::move(s)); }

// print → parse → print must give the same text; returns the parsed function.
Function round_trip(const Function& f) {
  std::string a = print(f);
  Function g = parse_function(a, "rt.tgir");
  std::string b = print(g);
  CHECK_MESSAGE(a == b, "first print:\n" << a << "\nsecond print:\n" << b);
  return g;
}

// The message of the tg::Error that parsing `text` throws ("" when it parses).
std::string parse_error(const std::string& text) {
  try {
    parse_function(text, "t.tgir");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Function tiled_gemm() {
  Var M("M"), N("N"), K("K"), bx("bx"), by("by"), tx("tx"), ko("ko"), i("i"), j("j");
  Buffer A = Buffer::make("A", {M, K}, f16, Scope::Global);
  Buffer B = Buffer::make("B", {K, N}, f16, Scope::Global);
  Buffer C = Buffer::make("C", {M, N}, f16, Scope::Global);
  Buffer As = Buffer::make("A_s", {128, 32}, f16, Scope::Shared, Layout{Layout::Kind::Swizzle, 3, {}});
  Buffer Bs = Buffer::make("B_s", {32, 128}, f16, Scope::Shared, Layout{Layout::Kind::Padded, 8, {}});
  Buffer Cf = Buffer::make("C_f", {128, 128}, f32, Scope::Fragment,
                           Layout{Layout::Kind::MatrixUnit, 0, "mma_m16n8k16_f16_f32"});
  auto g = std::make_shared<ir::Gemm>(SourceLoc{});
  g->a = Region::full(As);
  g->b = Region::full(Bs);
  g->c = Region::full(Cf);
  Stmt body = seq({
      copy(box(A, {by * 128, ko * 32}, {128, 32}), Region::full(As)),
      copy(box(B, {ko * 32, bx * 128}, {32, 128}), Region::full(Bs)),
      Stmt(g),
  });
  Stmt epilogue = loop(i, 128, ForKind::Parallel,
                       loop(j, 128, ForKind::Parallel, store(Cf, {i, j}, max(Cf.load({i, j}), 0.0f))));
  Stmt k = kernel({ceildiv(N, 128), ceildiv(M, 128)}, {bx, by}, tx, 128, {As, Bs, Cf},
                  seq({fill(Cf, make_float(0, f32)), loop(ko, ceildiv(K, 32), ForKind::Pipelined, body, 3),
                       epilogue, copy(Region::full(Cf), box(C, {by * 128, bx * 128}, {128, 128}))}));
  return Function{"gemm", {tensor(A), tensor(B), tensor(C), size(M), size(N), size(K)}, k, {}};
}

const char* kGemmText =
    R"(func gemm(A: f16[M, K] global, B: f16[K, N] global, C: f16[M, N] global, M: size, N: size, K: size) {
  kernel grid((N + 128 - 1) / 128, (M + 128 - 1) / 128) threads(128) -> (bx, by; tx) {
    shared A_s: f16[128, 32] layout=swizzle(3)
    shared B_s: f16[32, 128] layout=padded(8)
    fragment C_f: f32[128, 128] layout=matrix_unit("mma_m16n8k16_f16_f32")
    fill C_f = 0.0
    for ko in pipelined(0 +: (K + 32 - 1) / 32, stages=3) {
      copy A[by*128 +: 128, ko*32 +: 32] -> A_s
      copy B[ko*32 +: 32, bx*128 +: 128] -> B_s
      gemm(A_s, B_s -> C_f)
    }
    for i in parallel(0 +: 128) {
      for j in parallel(0 +: 128) {
        C_f[i, j] = max(C_f[i, j], 0.0)
      }
    }
    copy C_f -> C[by*128 +: 128, bx*128 +: 128]
  }
}
)";

// Thread-level code: thread index, Local and Shared buffers, let, if/else, barrier, atomics,
// reductions and a scalar parameter.
Function thread_level() {
  Var n("n"), alpha("alpha", f32), bx("bx"), tx("tx"), gi("gi"), s("s");
  Buffer X = Buffer::make("X", {n}, f32, Scope::Global);
  Buffer Out = Buffer::make("Out", {1}, f32, Scope::Global);
  Buffer acc = Buffer::make("acc", {4}, f32, Scope::Local);
  Buffer red = Buffer::make("red", {64}, f32, Scope::Shared);
  Buffer tot = Buffer::make("tot", {1}, f32, Scope::Fragment);
  auto r = std::make_shared<ir::Reduce>(SourceLoc{});
  r->op = ReduceOp::AbsMax;
  r->src = red;
  r->dst = tot;
  r->axis = 0;
  auto at = std::make_shared<ir::Atomic>(SourceLoc{});
  at->op = AtomicOp::Add;
  at->buffer = Out;
  at->indices = {Expr(0)};
  at->value = red.load({0});
  auto cpy = std::make_shared<ir::Copy>(SourceLoc{});
  cpy->src = Region::full(tot);
  cpy->dst = Region::full(Out);
  cpy->check_bounds = false;
  Stmt body = seq({
      if_else(gi < n, store(acc, {0}, X.load({gi}) * alpha), store(acc, {0}, make_float(0, f32))),
      store(red, {tx}, acc.load({0})),
      Stmt(std::make_shared<ir::Barrier>(SourceLoc{})),
      if_else(tx == 0, Stmt(at)),
      loop(s, 4, ForKind::Unrolled,
           store(acc, {s}, select(s < 2 && !(tx > 3), exp(acc.load({s})), -acc.load({s})))),
      Stmt(r),
      Stmt(cpy),
  });
  Stmt k = kernel({4}, {bx}, tx, 64, {acc, red, tot}, let(gi, bx * 64 + tx, body));
  return Function{"thread_level", {tensor(X), tensor(Out), scalar(alpha), size(n)}, k, {}};
}

const char* kThreadText = R"(func thread_level(X: f32[n] global, Out: f32[1] global, alpha: f32, n: size) {
  kernel grid(4) threads(64) -> (bx; tx) {
    local acc: f32[4]
    shared red: f32[64]
    fragment tot: f32[1]
    let gi: i32 = bx*64 + tx
    if gi < n {
      acc[0] = X[gi] * alpha
    } else {
      acc[0] = 0.0
    }
    red[tx] = acc[0]
    barrier
    if tx == 0 {
      atomic add(Out[0], red[0])
    }
    for s in unrolled(0 +: 4) {
      acc[s] = select(s < 2 && !(tx > 3), exp(acc[s]), -acc[s])
    }
    reduce absmax(red -> tot, axis=0, clear)
    copy tot -> Out unchecked
  }
}
)";

}  // namespace

TEST_CASE("text: a tiled gemm prints as documented and reads back") {
  Function f = tiled_gemm();
  CHECK(print(f) == kGemmText);
  Function g = round_trip(f);
  REQUIRE(g.params.size() == 6);
  CHECK(g.params[3].kind == Param::Kind::Size);
  // The tensor's shape refers to the size parameter declared after it.
  CHECK(g.params[0].buffer->shape[0].same_as(g.params[3].var));
  auto* k = g.body.as<ir::Kernel>();
  REQUIRE(k);
  CHECK(k->buffers[0]->layout == (Layout{Layout::Kind::Swizzle, 3, {}}));
  CHECK(k->buffers[2]->layout.matrix_unit == "mma_m16n8k16_f16_f32");
  CHECK(k->loc.file == "rt.tgir");
  CHECK(k->loc.line == 2);
}

TEST_CASE("text: thread-level code prints as documented and reads back") {
  Function f = thread_level();
  CHECK(print(f) == kThreadText);
  Function g = round_trip(f);
  auto* k = g.body.as<ir::Kernel>();
  REQUIRE(k);
  auto* l = k->body.as<ir::Let>();
  REQUIRE(l);
  CHECK(l->loc.line == 6);
  // The let's body is the rest of the block; its variable is the one the loads use.
  auto* body = l->body.as<ir::Seq>();
  REQUIRE(body);
  CHECK(body->stmts.size() == 7);
  auto* branch = body->stmts[0].as<ir::If>();
  REQUIRE(branch);
  CHECK(branch->cond.as<ir::Binary>()->a.same_as(l->var));
  CHECK(body->stmts[6].as<ir::Copy>()->check_bounds == false);
}

TEST_CASE("text: mma, several kernels and sibling scopes") {
  Var bx("bx"), tx("tx"), bx2("bx"), tx2("tx");
  Buffer Al = Buffer::make("A_l", {8}, f16, Scope::Local);
  Buffer Bl = Buffer::make("B_l", {4}, f16, Scope::Local);
  Buffer Cl = Buffer::make("C_l", {4}, f32, Scope::Local);
  Buffer Cl2 = Buffer::make("C_l", {4}, f32, Scope::Local);
  auto m = std::make_shared<ir::Mma>(SourceLoc{});
  m->unit = "mma_m16n8k16_f16_f32";
  m->a = {Al, Expr(0)};
  m->b = {Bl, Expr(0)};
  m->c = {Cl, tx % 2 * 2};
  Stmt k1 = kernel({1}, {bx}, tx, 32, {Al, Bl, Cl}, Stmt(m));
  Stmt k2 = kernel({2}, {bx2}, tx2, 32, {Cl2}, fill(Cl2, make_float(1, f32)));
  Function f{"two", {}, seq({k1, k2}), {}};
  // Sibling kernels reuse their names: each kernel is a scope of its own.
  CHECK(print(f) == R"(func two() {
  kernel grid(1) threads(32) -> (bx; tx) {
    local A_l: f16[8]
    local B_l: f16[4]
    local C_l: f32[4]
    mma "mma_m16n8k16_f16_f32" a=A_l[0], b=B_l[0], c=C_l[tx % 2 * 2]
  }
  kernel grid(2) threads(32) -> (bx; tx) {
    local C_l: f32[4]
    fill C_l = 1.0
  }
}
)");
  round_trip(f);
}

TEST_CASE("text: colliding and unusable names are made unique") {
  Var i("i"), i2("i"), n("copy"), x("x");
  Buffer A = Buffer::make("A s", {n}, f32, Scope::Global);
  Buffer B = Buffer::make("x", {4}, i32, Scope::Global);
  // Two loops over different variables both named i, nested, and a buffer named like a var.
  Stmt inner = loop(i2, 4, ForKind::Serial, store(A, {i * 4 + i2}, cast(f32, B.load({i2}) + x)));
  Function f{"names", {tensor(A), tensor(B), size(n), scalar(x)}, loop(i, n, ForKind::Serial, inner), {}};
  std::string text = print(f);
  CHECK(text == R"(func names(A_s: f32[copy_] global, x: i32[4] global, copy_: size, x_1: i32) {
  for i in serial(0 +: copy_) {
    for i_1 in serial(0 +: 4) {
      A_s[i*4 + i_1] = cast<f32>(x[i_1] + x_1)
    }
  }
}
)");
  Function g = round_trip(f);
  auto* outer = g.body.as<ir::For>();
  auto* in = outer->body.as<ir::For>();
  auto* st = in->body.as<ir::Store>();
  auto* sum = st->indices[0].as<ir::Binary>();
  CHECK(sum->a.as<ir::Binary>()->a.same_as(outer->var));
  CHECK(sum->b.same_as(in->var));
}

TEST_CASE("text: words used only inside statements stay free as names") {
  Var in("in"), sz("size"), axis("axis");
  Buffer sum = Buffer::make("sum", {sz}, f32, Scope::Global);
  Buffer func = Buffer::make("func", {4}, f32, Scope::Global);
  Stmt body = loop(in, sz, ForKind::Serial, let(axis, in + 1, store(sum, {in}, func.load({axis % 4}))));
  Function f{"func", {tensor(sum), tensor(func), size(sz)}, body, {}};
  CHECK(print(f) == R"(func func(sum: f32[size] global, func: f32[4] global, size: size) {
  for in in serial(0 +: size) {
    let axis: i32 = in + 1
    sum[in] = func[axis % 4]
  }
}
)");
  round_trip(f);
}

TEST_CASE("text: a let scopes over the rest of its block, even where the IR ended it earlier") {
  Var x("x"), y("x"), o("o");
  Buffer O = Buffer::make("O", {2}, i32, Scope::Global);
  // Seq[Let x = 1 in {O[0] = x}, Let x' = 2 in {O[1] = x'}]: in the text the first let reaches
  // the end of the block, so the second variable needs a name of its own.
  Stmt s = seq({let(x, 1, store(O, {0}, x)), let(y, 2, store(O, {1}, y + 1))});
  Function f{"lets", {tensor(O)}, s, {}};
  CHECK(print(f) == R"(func lets(O: i32[2] global) {
  let x: i32 = 1
  O[0] = x
  let x_1: i32 = 2
  O[1] = x_1 + 1
}
)");
  Function g = round_trip(f);
  auto* outer = g.body.as<ir::Let>();
  REQUIRE(outer);
  auto* rest = outer->body.as<ir::Seq>();
  REQUIRE(rest);
  auto* inner = rest->stmts[1].as<ir::Let>();
  REQUIRE(inner);
  CHECK(inner->body.as<ir::Store>()->value.as<ir::Binary>()->a.same_as(inner->var));
}

TEST_CASE("text: expressions print with minimal parentheses") {
  Var a("a"), b("b"), c("c"), p("p", boolean), q("q", boolean), h("h", f16);
  CHECK(print(a - (b - c)) == "a - (b - c)");
  CHECK(print(a - b - c) == "a - b - c");
  CHECK(print((a + b) * c) == "(a + b) * c");
  CHECK(print(a * b + c) == "a*b + c");
  CHECK(print(a * (b * c)) == "a * (b*c)");
  CHECK(print(a / b % c) == "a / b % c");
  CHECK(print(((a < b) && (c == a)) || p) == "a < b && c == a || p");
  CHECK(print((p || q) && p) == "(p || q) && p");
  CHECK(print(!(a < b)) == "!(a < b)");
  CHECK(print(-(a * b)) == "-(a*b)");
  CHECK(print(-a * b) == "-a * b");
  CHECK(print((a << 2) + (b >> 1)) == "(a << 2) + (b >> 1)");
  CHECK(print((a & b) | (c ^ a)) == "a & b | c ^ a");
  CHECK(print(make_unary(ir::UnOp::BitNot, a)) == "~a");
  CHECK(print(a * -3) == "a * -3");
  CHECK(print(a - -3) == "a - -3");
  CHECK(print(h * 2.0) == "h * 2.0:f16");
  CHECK(print(cast(f16, a) + h) == "cast<f16>(a) + h");
  CHECK(print(min(a, b * 2)) == "min(a, b*2)");
  CHECK(print(select(p, h, lowest(f16))) == "select(p, h, -65504.0:f16)");
  CHECK(print(Expr(std::make_shared<ir::Unary>(i32, ir::UnOp::Neg, Expr(5)))) == "-(5)");
  // Distinct free variables with one name are told apart.
  CHECK(print(a + Var("a")) == "a + a_1");
}

TEST_CASE("text: literals of every dtype print with their type and read back exactly") {
  std::vector<DType> all = {boolean, int4,     uint4,    i8,       u8,  i16,  i32, i64,
                            u32,     fp4_e2m1, fp8_e4m3, fp8_e5m2, f16, bf16, f32, f64};
  std::vector<Param> params;
  std::vector<Stmt> stores;
  for (DType t : all) {
    Buffer b = Buffer::make("b_" + std::string(t.name()), {3}, t, Scope::Global);
    Var s("s_" + std::string(t.name()), t);
    params.push_back(tensor(b));
    params.push_back(scalar(s));
    Expr lit = t.is_bool()    ? make_bool(true)
               : t.is_float() ? make_float(-1.5, t)
                              : make_int(t.is_signed_int() ? -3 : 3, t);
    stores.push_back(store(b, {0}, lit));
    stores.push_back(store(b, {1}, s));
    stores.push_back(store(b, {Expr(2)}, cast(t, Var("unused", f32))));  // free var: printed, not parsed
  }
  Function f{"dtypes", params, seq(stores), {}};
  std::string text = print(f);
  CHECK(text.find("b_int4[0] = -3:int4") != std::string::npos);
  CHECK(text.find("b_u32[0] = 3:u32") != std::string::npos);
  CHECK(text.find("b_bool[0] = true") != std::string::npos);
  CHECK(text.find("b_fp4[0] = -1.5:fp4") != std::string::npos);
  CHECK(text.find("b_bf16[0] = -1.5:bf16") != std::string::npos);
  CHECK(text.find("b_f32[0] = -1.5\n") != std::string::npos);
  CHECK(text.find("s_e4m3: e4m3") != std::string::npos);
  // Without the free variable every dtype reads back.
  std::vector<Stmt> bound;
  for (std::size_t i = 0; i < stores.size(); i += 3)
    bound.push_back(stores[i]), bound.push_back(stores[i + 1]);
  Function g = round_trip(Function{"dtypes", params, seq(bound), {}});
  auto* first = g.body.as<ir::Seq>()->stmts[0].as<ir::Store>();
  CHECK(first->value.dtype() == boolean);
  CHECK(parse_error(text).find("unknown name 'unused'") != std::string::npos);
}

TEST_CASE("text: float literals keep their exact value") {
  auto reparse = [](Expr lit) {
    Buffer b = Buffer::make("o", {1}, lit.dtype(), Scope::Global);
    Function f{"lit", {tensor(b)}, store(b, {0}, lit), {}};
    Function g = round_trip(f);
    return g.body.as<ir::Store>()->value;
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> ex(-40, 40);
  for (DType t : {fp4_e2m1, fp8_e4m3, fp8_e5m2, f16, bf16, f32, f64}) {
    std::vector<double> values = {
        0.0,      -0.0,     0.1,    1.0 / 3, 65504,
        1e-7,     448,      3.0e38, 1e300,   std::numeric_limits<double>::denorm_min(),
        INFINITY, -INFINITY};
    for (int k = 0; k < 200; ++k) values.push_back(std::ldexp(mant(rng), ex(rng)));
    for (double v : values) {
      Expr lit = make_float(v, t);
      double want = lit.as<ir::FloatImm>()->value;
      Expr back = reparse(lit);
      REQUIRE(back.as<ir::FloatImm>());
      double got = back.as<ir::FloatImm>()->value;
      CHECK_MESSAGE(std::memcmp(&got, &want, sizeof got) == 0, t.name()
                                                                   << " " << want << " read back as " << got);
    }
    CHECK(std::isnan(reparse(make_float(NAN, t)).as<ir::FloatImm>()->value));
  }
  CHECK(print(make_float(0.1, f16)) == "0.1:f16");
  CHECK(print(make_float(0.1, f32)) == "0.1");
  CHECK(print(make_float(0.1, f64)) == "0.1:f64");
  CHECK(print(make_float(1e20, f64)) == "1e+20:f64");
  CHECK(print(make_float(-0.0, f32)) == "-0.0");
  CHECK(print(infinity(f16)) == "inf:f16");
  CHECK(print(make_float(NAN, bf16)) == "nan:bf16");
  CHECK(print(-infinity(f32)) == "-inf");
  CHECK(print(highest(f32)) == "3.4028235e+38");
  // A weak literal (not yet typed by the builder) prints as f32 and reads back typed.
  Expr weak = Expr(0.1);
  CHECK(print(weak) == "0.1");
  Expr typed = reparse(weak);
  CHECK(typed.as<ir::FloatImm>()->weak == false);
  CHECK(typed.as<ir::FloatImm>()->value == double(0.1f));
}

TEST_CASE("text: integer literal edges") {
  auto text_of = [](Expr lit) {
    Buffer b = Buffer::make("o", {1}, lit.dtype(), Scope::Global);
    Function f{"lit", {tensor(b)}, store(b, {0}, lit), {}};
    round_trip(f);
    return print(lit);
  };
  CHECK(text_of(make_int(INT64_MIN, i64)) == "-9223372036854775808:i64");
  CHECK(text_of(make_int(INT64_MAX, i64)) == "9223372036854775807:i64");
  CHECK(text_of(make_int(4294967295LL, u32)) == "4294967295:u32");
  CHECK(text_of(make_int(-8, int4)) == "-8:int4");
  CHECK(text_of(make_int(INT32_MIN, i32)) == "-2147483648");
  CHECK(text_of(make_bool(false)) == "false");
}

TEST_CASE("text: every intrinsic prints by name and reads back") {
  Var x("x", f32), y("y", f32), z("z", f32);
  Buffer o = Buffer::make("o", {17}, f32, Scope::Global);
  std::vector<Stmt> stmts;
  for (int i = 0; i <= int(ir::Intrinsic::Fma); ++i) {
    auto fn = ir::Intrinsic(i);
    std::vector<Expr> args = {x, y, z};
    args.resize(std::size_t(ir::arity_of(fn)));
    stmts.push_back(store(o, {i}, make_call(fn, args)));
  }
  Function f{"intrinsics", {tensor(o), scalar(x), scalar(y), scalar(z)}, seq(stmts), {}};
  std::string text = print(f);
  CHECK(text.find("o[5] = rsqrt(x)") != std::string::npos);
  CHECK(text.find("o[15] = pow(x, y)") != std::string::npos);
  CHECK(text.find("o[16] = fma(x, y, z)") != std::string::npos);
  Function g = round_trip(f);
  auto* s = g.body.as<ir::Seq>();
  for (int i = 0; i <= int(ir::Intrinsic::Fma); ++i)
    CHECK(s->stmts[std::size_t(i)].as<ir::Store>()->value.as<ir::Call>()->fn == ir::Intrinsic(i));
}

TEST_CASE("text: size types, block variables without names, gemm flags and locations") {
  Var M("M", i64), bx("bx", i64), tx("tx");
  Buffer A = Buffer::make("A", {M, 64}, bf16, Scope::Global);
  Buffer S = Buffer::make("S", {64, 64}, bf16, Scope::Shared);
  Buffer F = Buffer::make("F", {64, 64}, f32, Scope::Fragment);
  auto g = std::make_shared<ir::Gemm>(SourceLoc("kernels/attn.cpp", 42));
  g->a = Region::full(S);
  g->b = box(S, {0, 0}, {64, 32});
  g->c = box(F, {0, 0}, {64, 32});
  g->trans_a = g->trans_b = g->clear_c = true;
  Stmt k = kernel({make_int(2, i64), 1}, {bx, Var()}, Var(), 256, {S, F}, Stmt(g));
  Function f{"flags", {tensor(A), size(M)}, k, {}};
  std::string text = print(f);
  CHECK(text == R"(func flags(A: bf16[M, 64] global, M: i64 size) {
  kernel grid(2:i64, 1) threads(256) -> (bx: i64, _) {
    shared S: bf16[64, 64]
    fragment F: f32[64, 64]
    gemm(S, S[0 +: 64, 0 +: 32] -> F[0 +: 64, 0 +: 32], trans_a, trans_b, clear)
  }
}
)");
  Function back = round_trip(f);
  auto* kk = back.body.as<ir::Kernel>();
  CHECK(!kk->thread_var.defined());
  CHECK(!kk->block_vars[1].defined());
  CHECK(kk->block_vars[0].dtype() == i64);
  PrintOptions with_locs;
  with_locs.locations = true;
  std::string located = print(f, with_locs);
  CHECK(located.find("clear)  # attn.cpp:42\n") != std::string::npos);
  CHECK(print(parse_function(located)) == text);  // comments are skipped
}

TEST_CASE("text: parse errors name the line and what to change") {
  auto err = [](const std::string& body) {
    return parse_error("func f(A: f32[4] global, n: size) {\n" + body + "\n}");
  };
  CHECK(err("  A[0, 1] = 1.0") == "t.tgir:2: A has rank 1 but is given 2 indices");
  CHECK(err("  A[0 1] = 1.0") == "t.tgir:2: expected ']' after indices of A, found number 1");
  CHECK(err("  A[q] = 1.0") == "t.tgir:2: unknown name 'q'");
  CHECK(
      err("  A[n + 1:i64] = 1.0") ==
      "t.tgir:2: operands of '+' have different types i32 and i64; convert one with cast<i32>(...) or give a "
      "literal its type, as in 1:i32");
  CHECK(err("  A[0] = 300:u8") == "t.tgir:2: literal 300 does not fit in u8");
  CHECK(err("  A[0] = 99999999999999999999") ==
        "t.tgir:2: integer literal 99999999999999999999 is too large (the limit is 64-bit)");
  CHECK(err("  A[0] = 9223372036854775808:i64") ==
        "t.tgir:2: integer literal 9223372036854775808 does not fit in 64 bits");
  CHECK(err("  A[0] = 1e999") == "t.tgir:2: float literal 1e999 is out of range");
  CHECK(err("  A[0] = 1.5:i32") ==
        "t.tgir:2: float literal 1.5 cannot have type i32; write an integer or cast");
  CHECK(err("  A[0] = A") == "t.tgir:2: buffer 'A' is used as a value; read an element with A[...]");
  CHECK(err("  A[0.5] = 1.0") == "t.tgir:2: index 0 of A has type f32; indices must be integers");
  CHECK(err("\n\n  A[0] = $") == "t.tgir:4: unexpected character '$'");
  CHECK(err("  for i in serial(0, 4) {\n  }") ==
        "t.tgir:2: expected '+:' between the loop's start and its trip count, as in (0 +: n), found ','");
  CHECK(err("  for copy in serial(0 +: 4) {\n  }") ==
        "t.tgir:2: expected a loop variable after for, found 'copy', which is a reserved word");
  CHECK(err("  kernel grid(1) threads(32) -> (bx; tx) {\n    A[0] = 1.0\n    local L: f32[2]\n  }") ==
        "t.tgir:4: buffer declarations must come first in a kernel body, before any statement");
  CHECK(err("  kernel grid(1) threads(32) -> (bx; bx) {\n  }") ==
        "t.tgir:2: 'bx' is already declared here; give it another name");
  CHECK(err("  A[0] = exp(1)") ==
        "t.tgir:2: exp needs float arguments, not i32; convert with cast<f32>(...)");
  CHECK(err("  A[0] = \"s\"") == "t.tgir:2: expected an expression, found a string");
  CHECK(parse_error("func f() {\n  barrier\n") ==
        "t.tgir:3: expected '}' to close the block of function f, found end of text");
  CHECK(parse_error("func f() {\n}\nfunc g() {\n}") ==
        "t.tgir:3: expected end of text after the function, found 'func'");
  CHECK(parse_error("func f(n: size, n: f32) {\n}") == "t.tgir:1: parameter 'n' is declared twice");
  CHECK(parse_error("func f(A: f32[m] global) {\n}") == "t.tgir:1: unknown name 'm'");
  CHECK(parse_error("") == "t.tgir:1: expected 'func' at the start of the text, found end of text");
  CHECK(parse_error("func f() {\n  mma \"u\" a=A[0]\n}").find("t.tgir:2: unknown buffer 'A'") == 0);
}

TEST_CASE("text: deep nesting is an error, not a crash") {
  std::string deep =
      "func f(A: i32[1] global) {\n  A[0] = " + std::string(300, '(') + "1" + std::string(300, ')') + "\n}";
  CHECK(parse_error(deep).find("nests deeper than 256") != std::string::npos);
  std::string chain = "func f(A: i32[1] global) {\n  A[0] = 1";
  for (int i = 0; i < 300; ++i) chain += " + 1";
  CHECK(parse_error(chain + "\n}").find("expression nests deeper than 256 levels") != std::string::npos);
  std::string minus = "func f(A: i32[1] global) {\n  A[0] = " + std::string(300, '-') + "A[0]\n}";
  CHECK(parse_error(minus).find("nests deeper than 256") != std::string::npos);
  std::string lets = "func f(A: i32[1] global) {\n";
  for (int i = 0; i < 300; ++i) lets += "  let x: i32 = 1\n";
  CHECK(parse_error(lets + "}").find("nests deeper than 256") != std::string::npos);
  std::string loops = "func f() {\n";
  for (int i = 0; i < 300; ++i) loops += "for i in serial(0 +: 1) {\n";
  CHECK(parse_error(loops).find("nests deeper than 256") != std::string::npos);
}

// Damaged texts either read back (and then print → parse → print is the identity) or throw
// tg::Error; nothing else. A quick, deterministic cousin of the libFuzzer target.
TEST_CASE("text: damaged texts are rejected cleanly") {
  std::mt19937 rng(1234);
  const std::string alphabet = "()[]{},:;=+-*/%<>!~&|^#\" \n0123456789.eaxiAN_";
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string t = iter % 2 ? print(tiled_gemm()) : print(thread_level());
    int edits = 1 + int(rng() % 3);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      std::size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0: t.erase(at, 1 + rng() % 8); break;
        case 1: t.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: t[at] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    try {
      Function f = parse_function(t, "damaged");
      std::string a = print(f);
      CHECK(print(parse_function(a, "again")) == a);
      ++parsed;
    } catch (const Error&) {
    }
  }
  CHECK(parsed > 0);
}

TEST_CASE("text: fragments print with their free names") {
  Var i("i"), n("n");
  Buffer A = Buffer::make("A", {n}, f32, Scope::Global);
  Buffer B = Buffer::make("A", {n}, f32, Scope::Global);  // another buffer of the same name
  Stmt s = loop(i, n, ForKind::Vectorized, store(A, {i}, B.load({i}) * 2.0f));
  CHECK(print(s) == "for i in vectorized(0 +: n) {\n  A[i] = A_1[i] * 2.0\n}\n");
  CHECK(print(B.load({n - 1})) == "A[n - 1]");
  CHECK(print(Expr()) == "<null>");
  CHECK(print(Stmt()) == "");
}

TEST_CASE("text: a serial loop's rolled hint prints, reads back and is refused on other loops") {
  Var i("i");
  Buffer O = Buffer::make("O", {4}, f32, Scope::Global);
  Stmt body = loop(i, 4, ForKind::Serial, store(O, {i}, 1.0f));
  auto f0 = std::make_shared<ir::For>(*body.as<ir::For>());
  f0->rolled = true;
  Function f{"r", {tensor(O)}, Stmt(f0), {}};
  CHECK(print(f) == R"(func r(O: f32[4] global) {
  for i in serial(0 +: 4, rolled) {
    O[i] = 1.0
  }
}
)");
  Function g = round_trip(f);
  CHECK(g.body.as<ir::For>()->rolled);
  CHECK(parse_error("func r(O: f32[4] global) {\n  for i in serial(0 +: 4, rolled, rolled) {\n    O[i] = 1.0\n  }\n}")
            .find("'rolled' is given twice") != std::string::npos);
  std::string err;
  try {
    verify(parse_function(R"(func r(O: f32[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    for i in unrolled(0 +: 4, rolled) {
      O[i] = 1.0
    }
  }
}
)"));
  } catch (const Error& e) {
    err = e.what();
  }
  INFO(err);
  CHECK(err.find("'rolled' on a unrolled loop") != std::string::npos);
}
