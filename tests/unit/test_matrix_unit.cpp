#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <source_location>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/matrix_unit.h"

using namespace tg;

namespace {

const MatrixUnit& unit(const std::string& name) {
  const MatrixUnit* u = find_matrix_unit(name);
  REQUIRE_MESSAGE(u != nullptr, name);
  return *u;
}

MatrixUnit::Slot slot(const std::vector<MatrixUnit::Slot>& layout, int regs, int lane, int reg) {
  return layout[std::size_t(lane * regs + reg)];
}

}  // namespace

TEST_CASE("every registered matrix unit covers each operand exactly once") {
  auto names = matrix_unit_names();
  for (const char* want : {"mma_m16n8k16_f16_f32", "mma_m16n8k16_bf16_f32", "wgmma_m64n64k16_f16_f32",
                           "wgmma_m64n128k16_f16_f32", "wgmma_m64n256k16_f16_f32", "mfma_f32_16x16x16_f16",
                           "mfma_f32_32x32x8_f16", "mfma_f32_16x16x16_bf16", "mfma_f32_32x32x8_bf16",
                           "mfma_f32_16x16x32_fp8", "coopmat_16x16x16_f16_f32", "coopmat_16x16x16_f16_f16",
                           "coopmat_16x16x16_bf16_f32", "coopmat_16x16x32_i8_i32"})
    CHECK_MESSAGE(std::find(names.begin(), names.end(), want) != names.end(), want);
  for (auto& n : names) {
    const MatrixUnit& u = unit(n);
    CHECK_NOTHROW(u.check());
    CHECK(u.a_regs() * u.group_size == u.m * u.k);
    CHECK(u.c_regs() * u.group_size == u.m * u.n);
  }
  CHECK(unit("mma_m16n8k16_f16_f32").a_regs() == 8);
  CHECK(unit("mma_m16n8k16_f16_f32").b_regs() == 4);
  CHECK(unit("mma_m16n8k16_f16_f32").c_regs() == 4);
  CHECK(unit("wgmma_m64n128k16_f16_f32").c_regs() == 64);
  CHECK(unit("mfma_f32_32x32x8_f16").c_regs() == 16);
}

TEST_CASE("check() rejects a layout that holds an element twice or misses one") {
  MatrixUnit u = unit("mfma_f32_16x16x16_f16");
  u.name = "broken";
  u.c_layout[5] = u.c_layout[4];
  CHECK_THROWS_WITH_AS(u.check(), doctest::Contains("held by both"), Error);
  u = unit("mfma_f32_16x16x16_f16");
  u.a_layout.pop_back();
  CHECK_THROWS_AS(u.check(), Error);
  u = unit("mfma_f32_16x16x16_f16");
  u.b_layout[0] = {16, 0};
  CHECK_THROWS_WITH_AS(u.check(), doctest::Contains("outside"), Error);
  CHECK_THROWS_AS(register_matrix_unit(u), Error);
}

TEST_CASE("registering: identical data is idempotent, a different unit under a taken name is refused") {
  MatrixUnit u = unit("mfma_f32_16x16x16_f16");
  CHECK_NOTHROW(register_matrix_unit(u));
  u.name = "test_plugin_mfma_copy";
  register_matrix_unit(u);
  CHECK(find_matrix_unit("test_plugin_mfma_copy") != nullptr);
  std::swap(u.c_layout[0], u.c_layout[1]);
  CHECK_THROWS_WITH_AS(register_matrix_unit(u), doctest::Contains("already registered"), Error);
  CHECK(find_matrix_unit("no_such_unit") == nullptr);
}

TEST_CASE("MFMA 16x16x16 f16 layout is AMD's documented one") {
  const MatrixUnit& u = unit("mfma_f32_16x16x16_f16");
  CHECK(u.group_size == 64);
  for (int L = 0; L < 64; ++L)
    for (int i = 0; i < 4; ++i) {
      auto a = slot(u.a_layout, 4, L, i), b = slot(u.b_layout, 4, L, i), c = slot(u.c_layout, 4, L, i);
      CHECK(a.row == L % 16);
      CHECK(a.col == 4 * (L / 16) + i);
      CHECK(b.col == L % 16);
      CHECK(b.row == 4 * (L / 16) + i);
      CHECK(c.col == L % 16);
      CHECK(c.row == 4 * (L / 16) + i);
    }
  const MatrixUnit& w = unit("mfma_f32_32x32x8_f16");
  auto c = slot(w.c_layout, 16, 37, 6);  // rows 8*(i/4) + 4*(L/32) + i%4 = 8 + 4 + 2
  CHECK(c.row == 14);
  CHECK(c.col == 5);
  auto f = slot(unit("mfma_f32_16x16x32_fp8").a_layout, 8, 50, 7);  // row 50%16, k = 8*3 + 7
  CHECK(f.row == 2);
  CHECK(f.col == 31);
}

// AMD's matrix instruction calculator (gfx90a/gfx942, wave64), every lane and register:
//   32x32x8:   A lane L: row L%32, k = 4·⌊L/32⌋ + i;  C lane L: col L%32, row 8·⌊i/4⌋ + 4·⌊L/32⌋ + i%4
//   16x16x32 fp8 (gfx942): A lane L: row L%16, k = 8·⌊L/16⌋ + i (i < 8);  B transposed likewise
//   bf16 (_1k forms) lay out exactly as f16.
TEST_CASE("MFMA 32x32x8, 16x16x32 fp8 and bf16 layouts are AMD's documented ones, lane by lane") {
  const MatrixUnit& w = unit("mfma_f32_32x32x8_f16");
  const MatrixUnit& f = unit("mfma_f32_16x16x32_fp8");
  for (int L = 0; L < 64; ++L) {
    for (int i = 0; i < 4; ++i) {
      auto a = slot(w.a_layout, 4, L, i), b = slot(w.b_layout, 4, L, i);
      CHECK((a.row == L % 32 && a.col == 4 * (L / 32) + i));
      CHECK((b.col == L % 32 && b.row == 4 * (L / 32) + i));
    }
    for (int i = 0; i < 16; ++i) {
      auto c = slot(w.c_layout, 16, L, i);
      CHECK((c.col == L % 32 && c.row == 8 * (i / 4) + 4 * (L / 32) + i % 4));
    }
    for (int i = 0; i < 8; ++i) {
      auto a = slot(f.a_layout, 8, L, i), b = slot(f.b_layout, 8, L, i);
      CHECK((a.row == L % 16 && a.col == 8 * (L / 16) + i));
      CHECK((b.col == L % 16 && b.row == 8 * (L / 16) + i));
    }
  }
  for (auto [bf, fp] : {std::pair{"mfma_f32_16x16x16_bf16", "mfma_f32_16x16x16_f16"},
                        std::pair{"mfma_f32_32x32x8_bf16", "mfma_f32_32x32x8_f16"}}) {
    const MatrixUnit &x = unit(bf), &y = unit(fp);
    CHECK(x.a_type == bf16);
    for (std::size_t e = 0; e < y.c_layout.size(); ++e)
      CHECK((x.c_layout[e].row == y.c_layout[e].row && x.c_layout[e].col == y.c_layout[e].col));
    for (std::size_t e = 0; e < y.a_layout.size(); ++e)
      CHECK((x.a_layout[e].row == y.a_layout[e].row && x.a_layout[e].col == y.a_layout[e].col));
  }
  CHECK(f.a_type == fp8_e4m3);
  const MatrixUnit& s = unit("mfma_f32_16x16x4_f32");  // one k-value a lane: k = ⌊L/16⌋
  for (int L = 0; L < 64; ++L) {
    CHECK((slot(s.a_layout, 1, L, 0).row == L % 16 && slot(s.a_layout, 1, L, 0).col == L / 16));
    CHECK((slot(s.b_layout, 1, L, 0).col == L % 16 && slot(s.b_layout, 1, L, 0).row == L / 16));
    for (int i = 0; i < 4; ++i)
      CHECK((slot(s.c_layout, 4, L, i).col == L % 16 && slot(s.c_layout, 4, L, i).row == 4 * (L / 16) + i));
  }
}

TEST_CASE("mma.sync m16n8k16 layout matches the PTX fragment figures") {
  const MatrixUnit& u = unit("mma_m16n8k16_f16_f32");
  // A: lane 0 a0 = (0,0); lane 5 (group 1, tid 1) a3 = (9,3); lane 31 a7 = (15,15); lane 6 a4 = (1,12).
  CHECK(slot(u.a_layout, 8, 0, 0).row == 0);
  CHECK(slot(u.a_layout, 8, 0, 0).col == 0);
  CHECK(slot(u.a_layout, 8, 5, 3).row == 9);
  CHECK(slot(u.a_layout, 8, 5, 3).col == 3);
  CHECK(slot(u.a_layout, 8, 31, 7).row == 15);
  CHECK(slot(u.a_layout, 8, 31, 7).col == 15);
  CHECK(slot(u.a_layout, 8, 6, 4).row == 1);
  CHECK(slot(u.a_layout, 8, 6, 4).col == 12);
  // B: lane 5 b2 = (row 2*1+0+8, col 1) = (10, 1); lane 30 b1 = (5, 7).
  CHECK(slot(u.b_layout, 4, 5, 2).row == 10);
  CHECK(slot(u.b_layout, 4, 5, 2).col == 1);
  CHECK(slot(u.b_layout, 4, 30, 1).row == 5);
  CHECK(slot(u.b_layout, 4, 30, 1).col == 7);
  // C: lane 31 c3 = (15, 7); lane 9 c1 = (2, 3).
  CHECK(slot(u.c_layout, 4, 31, 3).row == 15);
  CHECK(slot(u.c_layout, 4, 31, 3).col == 7);
  CHECK(slot(u.c_layout, 4, 9, 1).row == 2);
  CHECK(slot(u.c_layout, 4, 9, 1).col == 3);
  // wgmma accumulator: warp 2, lane 69 (group 1, tid 1), d5 = row 32+1+0, col 8 + 2 + 1.
  const MatrixUnit& w = unit("wgmma_m64n64k16_f16_f32");
  CHECK(slot(w.c_layout, 32, 69, 5).row == 33);
  CHECK(slot(w.c_layout, 32, 69, 5).col == 11);
}

// ---- Executing ir::Mma in the interpreter: each lane gathers its registers through index
// tables computed from the description, the mma runs, the lanes scatter C; the result must be
// the plain matrix product.
namespace {

SourceLoc here(std::source_location s = std::source_location::current()) { return SourceLoc::from(s); }

Stmt store(const Buffer& b, std::vector<Expr> idx, Expr v) {
  auto s = std::make_shared<ir::Store>(here());
  s->buffer = b, s->indices = std::move(idx), s->value = std::move(v);
  return Stmt(s);
}

Stmt mma_sync(ir::MmaSync::Op op) {
  auto n = std::make_shared<ir::MmaSync>(here());
  n->op = op;
  return Stmt(std::move(n));
}

Stmt loop(const Var& v, Expr extent, Stmt body) {
  auto f = std::make_shared<ir::For>(here());
  f->var = v, f->min = 0, f->extent = std::move(extent), f->body = std::move(body);
  return Stmt(f);
}

Stmt when(Expr cond, Stmt body) {
  auto n = std::make_shared<ir::If>(here());
  n->cond = std::move(cond), n->then_body = std::move(body);
  return Stmt(std::move(n));
}

// C (m×n, f32) = A (m×k) · B (k×n) through unit `name`, with `threads` threads (several groups
// each do the same product) and the lanes' register tables given as i32 tensors.
std::vector<float> run_mma(const MatrixUnit& u, int threads, const std::vector<float>& a,
                           const std::vector<float>& b) {
  auto gidx = [&](const std::vector<MatrixUnit::Slot>& layout, int cols) {
    std::vector<int32_t> t;
    for (auto& s : layout) t.push_back(s.row * cols + s.col);
    return t;
  };
  std::vector<int32_t> ai = gidx(u.a_layout, u.k), bi = gidx(u.b_layout, u.n), ci = gidx(u.c_layout, u.n);
  int ra = u.a_regs(), rb = u.b_regs(), rc = u.c_regs(), G = u.group_size;
  Buffer A = Buffer::make("A", {u.m * u.k}, u.a_type, Scope::Global),
         B = Buffer::make("B", {u.k * u.n}, u.b_type, Scope::Global);
  Buffer C = Buffer::make("C", {threads / G, u.m * u.n}, f32, Scope::Global);
  Buffer AI = Buffer::make("AI", {G, ra}, i32, Scope::Global),
         BI = Buffer::make("BI", {G, rb}, i32, Scope::Global),
         CI = Buffer::make("CI", {G, rc}, i32, Scope::Global);
  Buffer Ar = Buffer::make("Ar", {ra}, u.a_type, Scope::Local),
         Br = Buffer::make("Br", {rb}, u.b_type, Scope::Local),
         Cr = Buffer::make("Cr", {rc}, u.c_type, Scope::Local);
  // An async unit (wgmma) reads B from a shared tile, staged by the lanes of the layout's model
  // and published with a proxy fence; A from registers (the RS form).
  Buffer Bs = Buffer::make("Bs", {u.k, u.n}, u.b_type, Scope::Shared);
  Var tid("tid"), bx("bx"), r("r");
  Expr lane = tid % G, group = tid / G;
  auto mma = std::make_shared<ir::Mma>(here());
  mma->unit = u.name;
  mma->a = {Ar, Expr(0)}, mma->b = {Br, Expr(0)}, mma->c = {Cr, Expr(0)};
  if (u.async) mma->b = {Bs, Expr(), {Expr(0), Expr(0)}};
  Expr b_at = BI.load({lane, r});
  Stmt body = make_seq({
      loop(r, ra, store(Ar, {r}, A.load({AI.load({lane, r})}))),
      u.async ? make_seq({when(group == 0, loop(r, rb, store(Bs, {b_at / u.n, b_at % u.n}, B.load({b_at})))),
                          mma_sync(ir::MmaSync::Op::ProxyFence), Stmt(std::make_shared<ir::Barrier>(here()))})
              : loop(r, rb, store(Br, {r}, B.load({b_at}))),
      loop(r, rc, store(Cr, {r}, 0.0f)),
      u.async ? mma_sync(ir::MmaSync::Op::Fence) : make_seq({}),  // wgmma: fenced, issued, waited for
      Stmt(mma),
      u.async ? mma_sync(ir::MmaSync::Op::Wait) : make_seq({}),
      loop(r, rc, store(C, {group, CI.load({lane, r})}, Cr.load({r}))),
  });
  auto k = std::make_shared<ir::Kernel>(here());
  k->grid = {1}, k->block_vars = {bx}, k->threads = threads, k->thread_var = tid, k->buffers = {Ar, Br, Cr};
  if (u.async) k->buffers.push_back(Bs);
  k->body = body;
  Function f{"mma_test", {}, Stmt(k), here()};
  for (const Buffer& t : {A, B, C, AI, BI, CI}) f.params.push_back(Param{Param::Kind::Tensor, t, {}});
  std::vector<uint8_t> abytes(storage_bytes(u.a_type, int64_t(a.size()))),
      bbytes(storage_bytes(u.b_type, int64_t(b.size())));
  for (std::size_t i = 0; i < a.size(); ++i)
    store_element(u.a_type, abytes.data(), int64_t(i), Scalar::of_float(a[i]));
  for (std::size_t i = 0; i < b.size(); ++i)
    store_element(u.b_type, bbytes.data(), int64_t(i), Scalar::of_float(b[i]));
  std::vector<float> c(std::size_t(threads / G * u.m * u.n), -1.0f);
  auto arg = [](void* p, std::vector<int64_t> shape, DType t) {
    HostArg h;
    h.data = p, h.shape = std::move(shape), h.dtype = t;
    return h;
  };
  interpret(f, {arg(abytes.data(), {u.m * u.k}, u.a_type), arg(bbytes.data(), {u.k * u.n}, u.b_type),
                arg(c.data(), {threads / G, u.m * u.n}, f32), arg(ai.data(), {G, ra}, i32),
                arg(bi.data(), {G, rb}, i32), arg(ci.data(), {G, rc}, i32)});
  return c;
}

void check_against_matmul(const std::string& name, int threads) {
  const MatrixUnit& u = unit(name);
  std::vector<float> a(std::size_t(u.m * u.k)), b(std::size_t(u.k * u.n));
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = float(int(i * 7 % 11) - 5) / 8.0f;  // exact in f16/bf16/fp8
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 13) - 6) / 4.0f;
  std::vector<float> c = run_mma(u, threads, a, b);
  for (int g = 0; g < threads / u.group_size; ++g)
    for (int i = 0; i < u.m; ++i)
      for (int j = 0; j < u.n; ++j) {
        double want = 0;
        for (int k = 0; k < u.k; ++k)
          want += double(a[std::size_t(i * u.k + k)]) * b[std::size_t(k * u.n + j)];
        CHECK_MESSAGE(c[std::size_t(g * u.m * u.n + i * u.n + j)] == float(want), name, " C(", i, ",", j,
                      ")");
      }
}

}  // namespace

TEST_CASE("interpreted mma equals a plain matmul") {
  check_against_matmul("mma_m16n8k16_f16_f32", 64);  // two warps
  check_against_matmul("mma_m16n8k16_bf16_f32", 32);
  check_against_matmul("mfma_f32_16x16x16_f16", 64);
  check_against_matmul("mfma_f32_32x32x8_bf16", 64);
  check_against_matmul("mfma_f32_16x16x32_fp8", 64);
  check_against_matmul("wgmma_m64n64k16_f16_f32", 128);
  check_against_matmul("coopmat_16x16x16_f16_f32", 32);
}

TEST_CASE("mma needs whole groups and matching register types") {
  const MatrixUnit& u = unit("mma_m16n8k16_f16_f32");
  Buffer Ar = Buffer::make("Ar", {8}, f16, Scope::Local), Br = Buffer::make("Br", {4}, f16, Scope::Local),
         Cr = Buffer::make("Cr", {4}, f32, Scope::Local), Cbad = Buffer::make("Cbad", {4}, f16, Scope::Local);
  Var tid("tid"), bx("bx");
  auto make = [&](const Buffer& c, Expr cond, Expr a_off, std::string name = "") {
    auto mma = std::make_shared<ir::Mma>(here());
    mma->unit = name.empty() ? u.name : name;
    mma->a = {Ar, a_off}, mma->b = {Br, Expr(0)}, mma->c = {c, Expr(0)};
    auto iff = std::make_shared<ir::If>(here());
    iff->cond = cond, iff->then_body = Stmt(mma);
    auto k = std::make_shared<ir::Kernel>(here());
    k->grid = {1}, k->block_vars = {bx}, k->threads = 64, k->thread_var = tid, k->buffers = {Ar, Br, c};
    k->body = Stmt(iff);
    return Function{"mma_errors", {}, Stmt(k), here()};
  };
  CHECK_NOTHROW(interpret(make(Cr, tid < 32, 0), {}));  // warp 1 skips the mma as a whole: fine
  CHECK_THROWS_WITH_AS(interpret(make(Cr, tid < 16, 0), {}),
                       doctest::Contains("reached by 16 of the 32 lanes of group 0"), Error);
  CHECK_THROWS_WITH_AS(interpret(make(Cbad, tid < 64, 0), {}),
                       doctest::Contains("holds f32 registers, but Cbad is f16"), Error);
  CHECK_THROWS_WITH_AS(interpret(make(Cr, tid < 64, tid % 2), {}),
                       doctest::Contains("thread 1 reads Ar[1 .. 8]"), Error);
  CHECK_THROWS_WITH_AS(
      interpret(make(Cr, tid < 64, 0, "mma_m16n8k99"), {}),
      doctest::Contains("unknown matrix unit \"mma_m16n8k99\"; known units: mma_m16n8k16_f16_f32"), Error);
}
