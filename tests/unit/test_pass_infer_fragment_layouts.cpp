// infer_fragment_layouts: gemm accumulators in matrix-unit registers, gemm as mma, epilogues and
// stores per thread; unsupported uses fall back to a block-wide tile. Results checked in the
// interpreter against the unlowered function.
#include "../../passes/src/lane_layout.h"
#include "gpu_pass_test_util.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/infer_fragment_layouts.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

namespace {

// 32×32×32 in f16, K in two tiles of 16, a relu epilogue, f32 accumulators.
const GemmKernel kGemmRelu{.name = "gemm_relu",
                           .m = 32,
                           .n = 32,
                           .k = 32,
                           .k_tile = 16,
                           .threads = 128,
                           .in = "f16",
                           .out = "f16",
                           .epilogue = R"(
    for i in parallel(0 +: 32) {
      for j in parallel(0 +: 32) {
        Cf[i, j] = max(Cf[i, j], 0.0)
      }
    }
)"};

// Evaluates a slot expression at constant lane and register.
int64_t at(const Expr& e, const Var& lane, const Var& reg, int l, int r) {
  return *simplify_expr(substitute(e, {{lane, Expr(l)}, {reg, Expr(r)}})).as_int();
}

}  // namespace

TEST_CASE("infer_fragment_layouts: gemm + relu + store run per warp on mma.sync registers") {
  PassRun r = run_pass(kGemmRelu.text(), infer_fragment_layouts);
  INFO(r.text);
  CHECK(contains(r.text, "local Cf: f32[8]"));  // 32×32 over a 2×2 warp grid: 1×2 tiles, 8 a thread
  CHECK(contains(r.text, "mma \"mma_m16n8k16_f16_f32\""));
  CHECK_FALSE(contains(r.text, "gemm("));
  CHECK_FALSE(contains(r.text, "fragment Cf"));
  check_same_results(r.before, r.after, 1e-3);
  check_same_results(r.before, partition_threads(r.after, test::sm80()), 1e-3);
}

TEST_CASE("infer_fragment_layouts: a fragment kept a tile still has its gemm on the matrix unit") {
  // A reduction along the columns (axis 0) is not done in registers: Cf stays a tile.
  std::string text = GemmKernel{.name = "colmax", .in = "f16", .reduce = "max"}.text();
  text.replace(text.find("axis=1"), 6, "axis=0");
  PassRun r = run_pass(text, infer_fragment_layouts);
  INFO(r.text);
  CHECK(contains(r.text, "fragment Cf: f32[16, 16]"));
  CHECK(contains(r.text, "local c_regs_"));  // the gemm goes through temporary registers
  CHECK(contains(r.text, "mma \"mma_m16n8k16_f16_f32\""));
  check_same_results(r.before, partition_threads(r.after, test::sm80()), 1e-3);
}

TEST_CASE("infer_fragment_layouts: nothing to do on a CPU target (warp size 1)") {
  Function f = parse_function(kGemmRelu.text());
  CHECK(infer_fragment_layouts(f, TargetInfo{}).body.same_as(f.body));
}

namespace {

std::string with_dtype(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  return text;
}

// A device without matrix units, like lavapipe: 8-lane subgroups, 32 KiB of workgroup memory.
TargetInfo no_units_target() {
  TargetInfo info;
  info.target = "vulkan";
  info.warp_size = 8;
  info.shared_mem_bytes = 32 * 1024;
  return info;
}

// The SIMT layout's signature: the accumulator in registers, gemm as per-thread FMA loops.
void check_simt(const Function& f, const TargetInfo& info, const std::string& local, double tol) {
  PassRun r = run_pass(f, infer_fragment_layouts, info);
  INFO(r.text);
  CHECK(contains(r.text, local));
  CHECK_FALSE(contains(r.text, "gemm("));
  CHECK_FALSE(contains(r.text, "mma "));
  CHECK_FALSE(contains(r.text, "fragment Cf"));
  check_same_results(f, partition_threads(r.after, info), tol);
}

}  // namespace

TEST_CASE("infer_fragment_layouts: f32 gemm on sm_90 gets the SIMT register layout") {
  // 32×32 over 128 threads: an 8×16 thread grid, 4×2 accumulators a thread.
  Function f = parse_function(with_dtype(kGemmRelu.text(), "f16", "f32"));
  check_simt(f, test::sm90(), "local Cf: f32[8]", 1e-5);
}

TEST_CASE("infer_fragment_layouts: without a matching unit, f16 gemm runs as SIMT FMA loops") {
  Function f = parse_function(kGemmRelu.text());
  check_simt(f, no_units_target(), "local Cf: f32[8]", 1e-3);
  TargetInfo no_f16 = test::sm80();
  no_f16.matrix_units = {"mma_m16n8k16_bf16_f32"};
  check_simt(f, no_f16, "local Cf: f32[8]", 1e-3);
}

TEST_CASE("infer_fragment_layouts: SIMT on ragged tiles, transposed operands, fewer threads used") {
  // 24×20 over 64 threads: a 6×10 grid (60 threads; 4 idle), 4×2 accumulators a thread; an
  // accumulate-into gemm (no clear) after a copy in, K = 7.
  Function f = parse_function(R"(
func ragged(A: f32[7, 24] global, B: f32[20, 7] global, C0: f32[24, 20] global, C: f32[24, 20] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared As: f32[7, 24]
    shared Bs: f32[20, 7]
    fragment Cf: f32[24, 20]
    copy C0 -> Cf
    copy A -> As
    copy B -> Bs
    gemm(As, Bs -> Cf, trans_a, trans_b)
    for i in parallel(0 +: 24) {
      for j in parallel(0 +: 20) {
        Cf[i, j] = Cf[i, j] * 2.0
      }
    }
    copy Cf -> C
  }
})");
  check_simt(f, no_units_target(), "local Cf: f32[8]", 1e-5);
  check_simt(f, test::sm90(), "local Cf: f32[8]", 1e-5);
}

TEST_CASE("infer_fragment_layouts: SIMT leaves big per-thread tiles, f16 accumulators, reduced fragments") {
  // 64×64 over 16 threads would be 256 accumulators a thread: kept a tile.
  Function big = parse_function(GemmKernel{.name = "big", .m = 64, .n = 64, .k = 8, .threads = 16}.text());
  CHECK(contains(run_pass(big, infer_fragment_layouts, no_units_target()).text, "fragment Cf: f32[64, 64]"));
  // An f16 accumulator would round every K step: kept a tile.
  std::string big_text = print(big);
  Function half = parse_function(with_dtype(with_dtype(big_text, "f32", "f16"), "threads(16)", "threads(128)"));
  CHECK(contains(run_pass(half, infer_fragment_layouts, no_units_target()).text, "fragment Cf: f16[64, 64]"));
  // A reduced accumulator stays a tile, and its gemm stays block-cooperative.
  PassRun r = run_pass(GemmKernel{.name = "rowsum", .reduce = "sum"}.text(), infer_fragment_layouts,
                       no_units_target());
  INFO(r.text);
  CHECK(contains(r.text, "fragment Cf: f32[16, 16]"));
  CHECK(contains(r.text, "gemm("));
}

TEST_CASE("lane layouts: slot expressions reproduce every built-in linear table") {
  Var lane("lane"), reg("reg");
  for (const char* name : {"mma_m16n8k16_f16_f32", "mfma_f32_32x32x8_f16", "mfma_f32_16x16x16_f16",
                           "coopmat_16x16x16_f16_f32"}) {
    const MatrixUnit& u = *find_matrix_unit(name);
    INFO(name);
    for (auto [layout, regs] :
         {std::pair{&u.a_layout, u.a_regs()}, {&u.b_layout, u.b_regs()}, {&u.c_layout, u.c_regs()}}) {
      auto s = lower::slot_exprs(*layout, u.group_size, regs, lane, reg);
      REQUIRE(s);
      for (int l = 0; l < u.group_size; ++l)
        for (int r = 0; r < regs; ++r) {
          CHECK(at(s->row, lane, reg, l, r) == (*layout)[std::size_t(l * regs + r)].row);
          CHECK(at(s->col, lane, reg, l, r) == (*layout)[std::size_t(l * regs + r)].col);
        }
    }
  }
  // A table that is not linear in the lane bits (lane 3 breaks the pattern) is refused.
  std::vector<MatrixUnit::Slot> odd = {{0, 0}, {1, 0}, {2, 0}, {0, 1}};
  CHECK_FALSE(lower::slot_exprs(odd, 4, 1, lane, reg));
}

namespace {

// C = row softmax of A·B for one 64×32 tile: two row reductions, a row vector read beside the
// tile, one computed alone, and the row maxima stored out.
const char* const kGemmSoftmax = R"(
func gemm_softmax(A: f16[64, 32] global, B: f16[32, 32] global, C: f32[64, 32] global, M: f32[64] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared As: f16[64, 32]
    shared Bs: f16[32, 32]
    fragment Cf: f32[64, 32]
    fragment mx: f32[64]
    fragment sm: f32[64]
    copy A -> As
    copy B -> Bs
    gemm(As, Bs -> Cf, clear)
    fill mx = 1.0
    reduce max(Cf -> mx, axis=1)
    for i in parallel(0 +: 64) {
      for j in parallel(0 +: 32) {
        Cf[i, j] = exp(Cf[i, j] - mx[i])
      }
    }
    reduce sum(Cf -> sm, axis=1, clear)
    for i in parallel(0 +: 64) {
      sm[i] = 1.0 / sm[i]
    }
    for i in parallel(0 +: 64) {
      for j in parallel(0 +: 32) {
        Cf[i, j] = Cf[i, j] * sm[i]
      }
    }
    copy Cf -> C
    copy mx -> M
  }
}
)";

}  // namespace

TEST_CASE("infer_fragment_layouts: row reductions and row vectors stay in registers (mma.sync, MFMA, SIMT)") {
  struct Case {
    const char* name;
    TargetInfo info;
    const char* regs;  // the tile's registers a thread
    const char* rows;  // a row vector's
    std::vector<const char*> shuffles;
  };
  TargetInfo simt = no_units_target();  // 8-lane groups; a 16×8 thread grid, 4×4 elements a thread
  simt.lane_shuffle = true;
  const std::vector<Case> cases = {
      // 4 warps of whole rows (16 each): 1×4 unit tiles, rows lane/4 and lane/4 + 8, lanes 4r..4r+3
      {"sm_80", test::sm80(), "local Cf: f32[16]", "local mx: f32[2]",
       {"shuffle_xor(1 of 32)", "shuffle_xor(2 of 32)"}},
      // 2 waves of 32 rows: 2×2 16x16 tiles, 4 rows of a tile a lane, 16 lanes a row
      {"gfx90a", test::gfx90a(), "local Cf: f32[16]", "local mx: f32[8]",
       {"shuffle_xor(1 of 64)", "shuffle_xor(8 of 64)"}},
      {"simt", simt, "local Cf: f32[16]", "local mx: f32[4]", {"shuffle_xor(1 of 8)", "shuffle_xor(4 of 8)"}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    PassRun r = run_pass(kGemmSoftmax, infer_fragment_layouts, c.info);
    INFO(r.text);
    CHECK(contains(r.text, c.regs));
    CHECK(contains(r.text, c.rows));
    CHECK(contains(r.text, "local sm: f32["));
    for (const char* s : c.shuffles) CHECK(contains(r.text, s));
    CHECK_FALSE(contains(r.text, "fragment "));
    CHECK_FALSE(contains(r.text, "reduce "));
    check_same_results(r.before, r.after, 1e-3);
    Function lowered = partition_threads(r.after, c.info);
    CHECK_FALSE(contains(print(lowered), "shared Cf"));
    check_same_results(r.before, lowered, 1e-3);
  }
}

TEST_CASE("infer_fragment_layouts: row vectors fall back to tiles where registers cannot serve them") {
  // A row vector read at another row than the nest's is not the thread's own: mx stays a tile, so
  // the reduction into it keeps Cf one too (sm, reduced from a tile, as well).
  std::string text = kGemmSoftmax;
  const std::string from = "Cf[i, j] = exp(Cf[i, j] - mx[i])";
  text.replace(text.find(from), from.size(), "Cf[i, j] = exp(Cf[i, j] - mx[63 - i])");
  PassRun r = run_pass(text, infer_fragment_layouts);
  INFO(r.text);
  CHECK(contains(r.text, "fragment mx: f32[64]"));
  CHECK(contains(r.text, "fragment sm: f32[64]"));
  CHECK(contains(r.text, "fragment Cf: f32[64, 32]"));
  check_same_results(r.before, partition_threads(r.after, test::sm80()), 1e-3);
  // Without lane shuffles (vulkan's cooperative matrices) nothing of this is laid out.
  TargetInfo opaque = test::sm80();
  opaque.lane_shuffle = false;
  PassRun v = run_pass(kGemmSoftmax, infer_fragment_layouts, opaque);
  CHECK(contains(v.text, "fragment mx: f32[64]"));
  CHECK(contains(v.text, "fragment Cf: f32[64, 32]"));
}

namespace {

// One attention tile: S = Q·Kᵀ, P = f16(S / 4), O = P·V. P is a fragment read as gemm A.
const char* const kAttentionTile = R"(
func attention_tile(Q: f16[64, 32] global, K: f16[32, 32] global, V: f16[32, 48] global, O: f32[64, 48] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared Qs: f16[64, 32]
    shared Ks: f16[32, 32]
    shared Vs: f16[32, 48]
    fragment Sf: f32[64, 32]
    fragment P: f16[64, 32]
    fragment Of: f32[64, 48]
    copy Q -> Qs
    copy K -> Ks
    copy V -> Vs
    gemm(Qs, Ks -> Sf, trans_b, clear)
    for i in parallel(0 +: 64) {
      for j in parallel(0 +: 32) {
        Sf[i, j] = Sf[i, j] * 0.25
      }
    }
    copy Sf -> P
    fill Of = 0.5
    gemm(P, Vs -> Of)
    copy Of -> O
  }
}
)";

}  // namespace

TEST_CASE("infer_fragment_layouts: a cast fragment copy and a register gemm operand stay in registers") {
  // 4 warps of 16 whole rows: Sf and P 1×4 unit tiles (16 registers), Of 1×6 (24).
  PassRun r = run_pass(kAttentionTile, infer_fragment_layouts, test::sm80());
  INFO(r.text);
  CHECK(contains(r.text, "local P: f16[16]"));
  CHECK(contains(r.text, "local Of: f32[24]"));
  CHECK(contains(r.text, "cast<f16>(Sf["));
  CHECK_FALSE(contains(r.text, "fragment "));
  // K steps of P·V read A from P's registers: kk unrolled, n-tiles 2kk and 2kk + 1.
  CHECK(contains(r.text, "for kk in unrolled(0 +: 2)"));
  CHECK(contains(r.text, "= P[kk*8"));
  check_same_results(r.before, r.after, 1e-3);
  Function lowered = partition_threads(r.after, test::sm80());
  CHECK_FALSE(contains(print(lowered), "shared P"));
  check_same_results(r.before, lowered, 1e-3);
}

TEST_CASE("infer_fragment_layouts: a gemm operand the unit cannot read from registers goes through a tile") {
  // MFMA's A operand holds a row per lane, its accumulator a column: P stays a tile (shared
  // memory after partition_threads), Sf and Of stay in registers.
  for (const char* arch : {"gfx90a", "gfx942"}) {
    INFO(arch);
    PassRun r = run_pass(kAttentionTile, infer_fragment_layouts, test::cdna(arch));
    INFO(r.text);
    CHECK(contains(r.text, "fragment P: f16[64, 32]"));
    CHECK_FALSE(contains(r.text, "fragment Sf"));
    CHECK_FALSE(contains(r.text, "fragment Of"));
    check_same_results(r.before, partition_threads(r.after, test::cdna(arch)), 1e-3);
  }
  // A transposed register operand, or warps split along N (two warp columns of Of), also go
  // through the tile.
  std::string text = kAttentionTile;
  const std::string from = "gemm(P, Vs -> Of)";
  text.replace(text.find(from), from.size(), "gemm(P, Vs -> Of, trans_a)");
  text.replace(text.find("V: f16[32, 48]"), 14, "V: f16[64, 48]");
  text.replace(text.find("Vs: f16[32, 48]"), 15, "Vs: f16[64, 48]");
  text.replace(text.find("Of: f32[64, 48]"), 15, "Of: f32[32, 48]");
  text.replace(text.find("O: f32[64, 48]"), 14, "O: f32[32, 48]");
  PassRun t = run_pass(text, infer_fragment_layouts, test::sm80());
  INFO(t.text);
  CHECK(contains(t.text, "fragment P: f16[64, 32]"));
  check_same_results(t.before, partition_threads(t.after, test::sm80()), 1e-3);
}

namespace {

// Row softmax of 4 rows a block, the rows read once: no gemm gives x a layout.
const char* const kRowSoftmax = R"(
func row_softmax(X: f32[8, 64] global, Y: f32[8, 64] global) {
  kernel grid(2) threads(64) -> (bx; tx) {
    fragment x: f32[4, 64]
    fragment e: f32[4, 64]
    fragment mx: f32[4]
    fragment sm: f32[4]
    copy X[bx*4 +: 4, 0 +: 64] -> x
    reduce max(x -> mx, axis=1, clear)
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 64) {
        e[i, j] = exp(x[i, j] - mx[i])
      }
    }
    reduce sum(e -> sm, axis=1, clear)
    for i in parallel(0 +: 4) {
      for j in parallel(0 +: 64) {
        e[i, j] = e[i, j] / sm[i]
      }
    }
    copy e -> Y[bx*4 +: 4, 0 +: 64]
  }
}
)";

}  // namespace

TEST_CASE("infer_fragment_layouts: a tile copied in from memory gets the SIMT layout; its rows reduce by shuffles") {
  // 64 threads as a 2×32 grid (rows a shuffle butterfly spans: 32 lanes), 2×2 elements a thread;
  // e, written beside x in a nest, takes the same layout.
  for (const char* arch : {"sm_80", "gfx90a"}) {
    INFO(arch);
    const TargetInfo info = arch[0] == 's' ? test::sm80() : test::cdna(arch);
    PassRun r = run_pass(kRowSoftmax, infer_fragment_layouts, info);
    INFO(r.text);
    CHECK(contains(r.text, "local x: f32[4]"));
    CHECK(contains(r.text, "local e: f32[4]"));
    CHECK(contains(r.text, "local mx: f32[2]"));
    CHECK(contains(r.text, arch[0] == 's' ? "shuffle_xor(16 of 32)" : "shuffle_xor(16 of 64)"));
    CHECK_FALSE(contains(r.text, "fragment "));
    check_same_results(r.before, r.after, 1e-5);
    Function lowered = partition_threads(r.after, info);
    CHECK_FALSE(contains(print(lowered), "shared "));
    check_same_results(r.before, lowered, 1e-5);
  }
  // Without lane shuffles the rows cannot be reduced in registers: everything stays a tile.
  TargetInfo opaque = test::sm80();
  opaque.lane_shuffle = false;
  PassRun v = run_pass(kRowSoftmax, infer_fragment_layouts, opaque);
  CHECK(contains(v.text, "fragment x: f32[4, 64]"));
  CHECK(contains(v.text, "fragment e: f32[4, 64]"));
}

TEST_CASE("infer_fragment_layouts: rows split over warps along N reduce through shared scratch") {
  // 256 threads on a 64×32 tile: a 4×2 warp grid, each warp holding half of its 16 rows' columns.
  std::string text = kGemmSoftmax;
  text.replace(text.find("threads(128)"), 12, "threads(256)");
  PassRun r = run_pass(text, infer_fragment_layouts, test::sm80());
  INFO(r.text);
  CHECK(contains(r.text, "local Cf: f32[8]"));
  CHECK(contains(r.text, "shared row_scratch_"));
  CHECK(contains(r.text, "shuffle_xor(2 of 32)"));
  CHECK_FALSE(contains(r.text, "fragment "));
  check_same_results(r.before, r.after, 1e-3);
  Function lowered = partition_threads(r.after, test::sm80());
  CHECK_FALSE(contains(print(lowered), "shared Cf"));
  check_same_results(r.before, lowered, 1e-3);
}

namespace {

// Row softmax with one row a block over 128 threads (4 warps), f16 in and out: x's row is wider
// than a warp.
const char* const kWideRowSoftmax = R"(
func wide_row_softmax(X: f16[3, 1024] global, Y: f16[3, 1024] global) {
  kernel grid(3) threads(128) -> (bx; tx) {
    fragment x: f32[1, 1024]
    fragment mx: f32[1]
    fragment sm: f32[1]
    copy X[bx +: 1, 0 +: 1024] -> x unchecked
    reduce max(x -> mx, axis=1, clear)
    for i in parallel(0 +: 1) {
      for j in parallel(0 +: 1024) {
        x[i, j] = exp(x[i, j] - mx[i])
      }
    }
    reduce sum(x -> sm, axis=1, clear)
    for i in parallel(0 +: 1) {
      for j in parallel(0 +: 1024) {
        x[i, j] = x[i, j] / sm[i]
      }
    }
    copy x -> Y[bx +: 1, 0 +: 1024] unchecked
  }
}
)";

}  // namespace

TEST_CASE("infer_fragment_layouts: a SIMT row wider than a warp reduces by shuffles, then shared scratch") {
  // 128 threads on one row of 1024: a 1×128 grid, 8 columns a thread in one run of 8 (a 16-byte
  // move of f16), each warp's part through row_scratch after its butterfly over 32 lanes.
  for (const char* arch : {"sm_80", "gfx90a"}) {
    INFO(arch);
    const TargetInfo info = arch[0] == 's' ? test::sm80() : test::cdna(arch);
    PassRun r = run_pass(kWideRowSoftmax, infer_fragment_layouts, info);
    INFO(r.text);
    CHECK(contains(r.text, "local x: f32[8]"));
    CHECK(contains(r.text, "local mx: f32[1]"));
    CHECK(contains(r.text, "local x_stage_"));
    CHECK(contains(r.text, "vectorized(0 +: 8)"));
    CHECK(contains(r.text, arch[0] == 's' ? "shuffle_xor(16 of 32)" : "shuffle_xor(32 of 64)"));
    CHECK(contains(r.text, "shared row_scratch_"));
    CHECK(contains(r.text, arch[0] == 's' ? ": f32[4, 1]" : ": f32[2, 1]"));  // a part per warp
    CHECK_FALSE(contains(r.text, "fragment "));
    check_same_results(r.before, r.after, 1e-5);
    Function lowered = partition_threads(r.after, info);
    CHECK_FALSE(contains(print(lowered), "shared x"));
    check_same_results(r.before, lowered, 1e-5);
  }
  // Where one warp can hold the rows with every thread busy, no scratch: 4 rows of 256 over 128
  // threads are a 4×32 grid.
  std::string four = kWideRowSoftmax;
  for (auto [from, to] : {std::pair<std::string, std::string>{"f16[3, 1024]", "f16[12, 256]"},
                          {"f32[1, 1024]", "f32[4, 256]"},
                          {"0 +: 1024", "0 +: 256"},
                          {"f32[1]", "f32[4]"},
                          {"0 +: 1)", "0 +: 4)"},
                          {"bx +: 1", "bx*4 +: 4"}})
    for (std::size_t at; (at = four.find(from)) != std::string::npos;) four.replace(at, from.size(), to);
  PassRun q = run_pass(four, infer_fragment_layouts, test::sm80());
  INFO(q.text);
  CHECK(contains(q.text, "local x: f32[8]"));
  CHECK_FALSE(contains(q.text, "row_scratch"));
  check_same_results(q.before, q.after, 1e-5);
}

TEST_CASE("infer_fragment_layouts: up to 8 K steps of a gemm are unrolled, more stay a serial loop") {
  // m16n8k16: K = 128 is 8 steps (flash_attention's Q·Kᵀ at D = 128), K = 256 is 16.
  for (auto [k, unrolled] : {std::pair<int, bool>{128, true}, {256, false}}) {
    INFO(k);
    PassRun r = run_pass(GemmKernel{.name = "ksteps", .k = k, .in = "f16"}.text(), infer_fragment_layouts);
    INFO(r.text);
    const std::string steps = "(0 +: " + std::to_string(k / 16) + ")";
    CHECK(contains(r.text, "for kk in " + std::string(unrolled ? "unrolled" : "serial") + steps));
    check_same_results(r.before, partition_threads(r.after, test::sm80()), 1e-2);
  }
}
