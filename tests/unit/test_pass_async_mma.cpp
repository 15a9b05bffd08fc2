// Hopper's wgmma as IR (issue 15's first step): on sm_90a a gemm of whole row-major shared tiles
// becomes async mmas of warpgroups on XOR-swizzled tiles, with mma_fence before them, mma_wait
// after, and a proxy_fence before each barrier; the interpreter executes the protocol exactly,
// so each of those left out is a reported error, and NVRTC compiles the result for sm_90a.
#include <doctest/doctest.h>

#include <random>

#include "gpu_targets.h"
#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/async_copies.h"
#include "tilegen/passes/async_mma.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/bulk_copies.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/issue_ahead.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/place_shared_memory.h"
#include "tilegen/passes/warp_roles.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

// cuda's passes for sm_90a, in its order (without ldmatrix and the checks).
std::vector<PassEntry> sm90a_passes() {
  std::vector<PassEntry> passes = gpu_pipeline();
  passes.push_back({"pad_shared_tiles", pad_shared_tiles});
  passes.push_back({"swizzle_shared_tiles", swizzle_shared_tiles});
  passes.push_back({"async_copies", async_copies});
  passes.push_back({"overlap_async_mma", overlap_async_mma});
  passes.push_back({"fence_async_proxy", fence_async_proxy});
  passes.push_back({"place_shared_memory", place_shared_memory});
  return passes;
}

// flash_attention's params for the sm_90a tests: B1, H2 over one kv head (grouped-query), block_N 64,
// 2 stages.
Params attention_shape(int64_t S, int64_t D, bool causal, int64_t bm, int64_t threads) {
  return Params{
      {"B", 1},        {"H", 2},        {"HKV", 1},           {"S", S},     {"D", D}, {"causal", causal},
      {"block_M", bm}, {"block_N", 64}, {"threads", threads}, {"stages", 2}};
}

// The gemm sample through cuda's pipeline for sm_90a.
Function lowered_gemm(int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk, int threads = 128,
                      DType t = f16, int stages = 2, bool bulk = false) {
  const Sample& s = *find("gemm");
  Params p = resolve(s, {{"M", M},
                         {"N", N},
                         {"K", K},
                         {"block_M", bm},
                         {"block_N", bn},
                         {"block_K", bk},
                         {"threads", threads},
                         {"stages", stages}});
  Function f = bind_sizes(s.build(p, t).function(), {});
  TargetInfo info = test::sm90a();
  info.bulk_copy = bulk;
  return PassManager(sm90a_passes()).run(f, info);
}

// C = A·B (f16 in, f16 out) on small random integers, exact in f16; "" when right, else the error.
std::string run_gemm(const Function& f, int64_t M, int64_t N, int64_t K) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> d(-2, 2);
  std::vector<uint16_t> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N), 0x7e00);
  std::vector<float> af(a.size()), bf(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) af[i] = float(d(rng)), a[i] = float_to_half_bits(af[i]);
  for (std::size_t i = 0; i < b.size(); ++i) bf[i] = float(d(rng)), b[i] = float_to_half_bits(bf[i]);
  std::vector<HostArg> args(3);
  args[0].data = a.data(), args[0].shape = {M, K};
  args[1].data = b.data(), args[1].shape = {K, N};
  args[2].data = c.data(), args[2].shape = {M, N};
  for (HostArg& x : args) x.dtype = f16;
  try {
    interpret(f, args);
  } catch (const Error& e) {
    return e.what();
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(af[std::size_t(i * K + k)]) * bf[std::size_t(k * N + j)];
      if (half_bits_to_float(c[std::size_t(i * N + j)]) != float(want))
        return "wrong C[" + std::to_string(i) + ", " + std::to_string(j) + "]";
    }
  return "";
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Drops every MmaSync of one kind; with `late`, moves each mma_wait after the barrier that
// follows it instead.
struct EditSyncs : IRMutator {
  ir::MmaSync::Op op = ir::MmaSync::Op::Wait;
  bool late = false;
  Stmt visit(const ir::Seq* seq, const Stmt&) override {
    std::vector<Stmt> out;
    for (std::size_t i = 0; i < seq->stmts.size(); ++i) {
      Stmt s = mutate(seq->stmts[i]);
      const auto* w = s.as<ir::MmaSync>();
      if (!w || w->op != op) {
        out.push_back(s);
        continue;
      }
      if (!late) continue;
      std::size_t j = i + 1;
      while (j < seq->stmts.size() && seq->stmts[j]->kind != ir::StmtKind::Barrier)
        out.push_back(seq->stmts[j++]);
      if (j < seq->stmts.size()) out.push_back(seq->stmts[j]);
      out.push_back(s);
      i = j;
    }
    return make_seq(std::move(out), seq->loc);
  }
};

}  // namespace

TEST_CASE("sm_90a gemm: async warpgroup mmas on swizzled shared tiles, fenced and waited") {
  Function f = lowered_gemm(128, 128, 128, 128, 128, 32);
  std::string ir = print(f);
  INFO(ir);
  // Twice: overlap_async_mma splits the K loop (its last step drains without fills).
  CHECK(count(ir, "mma \"wgmma_m64n128k16_f16_f32\" a=tile A_shared[") == 2);
  CHECK(ir.find("shared A_shared: f16[2, 128, 32] layout=swizzle(2)") != std::string::npos);  // 64-byte rows
  CHECK(ir.find("shared B_shared: f16[2, 32, 128] layout=swizzle(3)") !=
        std::string::npos);  // 128-byte strips
  CHECK(count(ir, "mma_fence") == 2);
  CHECK(count(ir, "mma_wait 0") == 1);
  // A proxy_fence where the cp.async writes have landed (async_wait) before the barrier that
  // publishes them to the mmas; none before the barrier after mma_wait 1 (nothing written since).
  CHECK(count(ir, "proxy_fence\n      barrier") == count(ir, "async_wait"));
  CHECK(count(ir, "proxy_fence") == 3);  // and one after the prologue's (synchronous) fills
  CHECK(ir.find("mma_wait 1\n      barrier") != std::string::npos);
  CHECK(ir.find("layout=padded") == std::string::npos);
  for (auto at = ir.find(" placed "); at != std::string::npos; at = ir.find(" placed ", at + 1))
    CHECK(std::stoll(ir.substr(at + 8)) % 1024 == 0);  // the swizzle's period
  CHECK(run_gemm(f, 128, 128, 128) == "");
  // The text form round-trips, and is what ran.
  CHECK(print(parse_function(ir, "g.tgir")) == ir);
}

TEST_CASE("sm_90a gemm: ragged shapes, two warpgroups and bf16 run right in the interpreter") {
  CHECK(run_gemm(lowered_gemm(200, 72, 96, 128, 64, 32), 200, 72, 96) == "");
  Function two = lowered_gemm(128, 256, 64, 128, 256, 64, 256);
  std::string ir = print(two);
  INFO(ir);
  CHECK(ir.find("wgmma_m64n256k16_f16_f32") !=
        std::string::npos);  // a warpgroup a 64-row half: 128 registers
  CHECK(ir.find("a=tile A_shared[warp*64, kk*16]") != std::string::npos);
  CHECK(run_gemm(two, 128, 256, 64) == "");
  CHECK(print(lowered_gemm(128, 128, 64, 128, 128, 64, 128, bf16)).find("wgmma_m64n128k16_bf16_f32") !=
        std::string::npos);
}

// pipeline_shared counts a swizzled tile (which pad_shared_tiles leaves unpadded) at its bytes:
// 128×256×64 f16 tiles, 48 KiB a stage, take 4 stages (194 KiB with the alignment) in sm_90a's
// 227 KiB, as CUTLASS's Hopper gemms do; 5 would not fit. The placement agrees.
TEST_CASE("sm_90a gemm: swizzled tiles are staged by their bytes, not with the padding's quarter") {
  for (bool bulk : {false, true}) {
    CAPTURE(bulk);
    Function f = lowered_gemm(256, 512, 256, 128, 256, 64, 256, f16, 5, bulk);
    std::string ir = print(f);
    INFO(ir);
    CHECK(ir.find("shared A_shared: f16[4, 128, 64] layout=swizzle(3) placed") != std::string::npos);
    CHECK(ir.find("shared B_shared: f16[4, 64, 256] layout=swizzle(3) placed") != std::string::npos);
    int64_t end = 0;
    for (auto at = ir.find(" placed "); at != std::string::npos; at = ir.find(" placed ", at + 1)) {
      const std::string rest = ir.substr(at + 8);
      end = std::max<int64_t>(end, std::stoll(rest) + std::stoll(rest.substr(rest.find("+: ") + 3)));
    }
    CHECK(end <= test::sm90a().shared_mem_bytes);
    CHECK(run_gemm(f, 256, 512, 256) == "");
  }
}

// B stored N×K (trans_B) on wgmma, where the target reads B K-major (TargetInfo::
// async_mma_trans_b; cuda's --param wgmma_trans_b=1): a transposed tile operand, swizzled like A,
// with cp.async or bulk copies; ragged and bf16 too, the interpreter against the reference.
TEST_CASE("sm_90a gemm with trans_B: wgmma reads B K-major, a transposed shared tile") {
  const Sample& s = *find("gemm");
  PassManager pm(sm90a_passes());
  std::mt19937_64 rng(3);
  for (bool bulk : {false, true}) {
    TargetInfo info = test::sm90a();
    info.async_mma_trans_b = true;
    info.bulk_copy = bulk;
    CAPTURE(bulk);
    std::string ir = testing::check_lowered_params(
        s, f16, {{"M", 200}, {"N", 136}, {"K", 328}, {"trans_B", 1}}, pm, info, rng);
    CHECK(ir.find("mma \"wgmma_m64n128k16_f16_f32\"") != std::string::npos);
    CHECK(ir.find("b=tile trans B_shared[") != std::string::npos);
    CHECK(ir.find("B_shared: f16[") != std::string::npos);
    CHECK(ir.find("layout=padded") == std::string::npos);
    CHECK(print(parse_function(ir, "t.tgir")) == ir);  // `tile trans` reads back
    testing::check_lowered_params(s, bf16, {{"M", 128}, {"N", 256}, {"K", 256}, {"trans_B", 1}}, pm, info,
                                  rng);
    testing::check_lowered_params(
        s, f16, {{"M", 256}, {"N", 264}, {"K", 136}, {"trans_B", 1}, {"block_N", 256}, {"threads", 256}}, pm,
        info, rng);
  }
  // Without the switch the gemm stays on mma.sync.
  std::string plain = testing::check_lowered_params(
      s, f16, {{"M", 128}, {"N", 128}, {"K", 64}, {"trans_B", 1}}, pm, test::sm90a(), rng);
  CHECK(plain.find("wgmma") == std::string::npos);
}

// fp8_gemm (A [M,K], B [N,K], e4m3/e5m2) on wgmma m64nNk32: both operands K-major shared tiles,
// K steps of 32 one-byte elements (the 32 bytes of the f16 units' k16), 128-byte swizzle at
// block_K=128 and 64-byte at 64; cp.async and bulk copies, ragged M/N/K, against the reference.
// Without the trans_b switch (B K-major), and for A from registers, the 8-bit wgmma units are not
// used: mma.sync m16n8k32 is.
TEST_CASE("sm_90a fp8_gemm: wgmma k32 reads e4m3/e5m2 A and B K-major from swizzled tiles") {
  const Sample& s = *find("fp8_gemm");
  PassManager pm(sm90a_passes());
  std::mt19937_64 rng(5);
  for (bool bulk : {false, true}) {
    TargetInfo info = test::sm90a();
    info.async_mma_trans_b = true;
    info.bulk_copy = bulk;
    CAPTURE(bulk);
    std::string ir = testing::check_lowered_params(
        s, fp8_e4m3, {{"M", 200}, {"N", 136}, {"K", 328}, {"block_K", 128}}, pm, info, rng);
    CHECK(ir.find("mma \"wgmma_m64n128k32_e4m3_f32\"") != std::string::npos);
    CHECK(ir.find("b=tile trans B_shared[") != std::string::npos);
    CHECK(ir.find("layout=swizzle(3)") != std::string::npos);
    testing::check_lowered_params(s, fp8_e5m2, {{"M", 130}, {"N", 257}, {"K", 136}, {"block_K", 64}}, pm,
                                  info, rng);
    testing::check_lowered_params(s, fp8_e4m3,
                                  {{"M", 256},
                                   {"N", 264},
                                   {"K", 256},
                                   {"block_K", 128},
                                   {"block_N", 256},
                                   {"threads", 256},
                                   {"out_f16", 1}},
                                  pm, info, rng);
  }
  // Without it, mma.sync m16n8k32 (sm_89+), its four bytes a register loaded as one 32-bit run.
  std::string plain = testing::check_lowered_params(s, fp8_e4m3, {{"M", 128}, {"N", 128}, {"K", 128}}, pm,
                                                    test::sm90a(), rng);
  CHECK(plain.find("wgmma") == std::string::npos);
  CHECK(plain.find("mma \"mma_m16n8k32_e4m3_f32\"") != std::string::npos);
  CHECK(plain.find("for h in vectorized(0 +: 4)") != std::string::npos);
  testing::check_lowered_params(s, fp8_e5m2,
                                {{"M", 50}, {"N", 37}, {"K", 45}, {"block_M", 32}, {"block_N", 32}}, pm,
                                test::sm90a(), rng);
}

// A gemm whose rows are then reduced (gemm_softmax) on wgmma, where the target allows it
// (TargetInfo::async_mma_rows; cuda's --param wgmma_rows=1): the scores stay in the warpgroup's
// registers, row vectors beside them (C register r in row slot r / 2 % 2 of each unit tile, as on
// mma.sync), the row reductions shuffles within each warp; ragged M, bf16, N narrower than the
// tile, and with bulk copies and warp roles, against the reference.
TEST_CASE("sm_90a gemm_softmax with wgmma_rows: row statistics beside wgmma accumulators in registers") {
  const Sample& s = *find("gemm_softmax");
  std::mt19937_64 rng(9);
  for (bool bulk : {false, true}) {
    CAPTURE(bulk);
    std::vector<PassEntry> passes = sm90a_passes();
    if (bulk) passes.insert(passes.end() - 1, {"warp_roles", warp_roles});
    PassManager pm(passes);
    TargetInfo info = test::sm90a();
    info.async_mma_rows = true;
    info.bulk_copy = bulk;
    std::string ir =
        testing::check_lowered_params(s, f16, {{"M", 136}, {"N", 128}, {"K", 256}}, pm, info, rng);
    CHECK(ir.find("mma \"wgmma_m64n128k16_f16_f32\"") != std::string::npos);
    CHECK(ir.find("local scores: f32[64]") != std::string::npos);
    CHECK(ir.find("shuffle_xor(1 of 32)") != std::string::npos);
    CHECK(ir.find("from_fragment") == std::string::npos);  // nothing fell back to a shared tile
    CHECK((ir.find(", concurrently {") != std::string::npos) == bulk);
    testing::check_lowered_params(s, bf16, {{"M", 64}, {"N", 100}, {"K", 96}}, pm, info, rng);
    testing::check_lowered_params(
        s, f16, {{"M", 200}, {"N", 128}, {"K", 64}, {"block_M", 128}, {"threads", 256}}, pm, info, rng);
  }
  // Off: mma.sync, as before.
  PassManager pm(sm90a_passes());
  CHECK(testing::check_lowered_params(s, f16, {{"M", 64}, {"N", 128}, {"K", 64}}, pm, test::sm90a(), rng)
            .find("wgmma") == std::string::npos);
}

// flash_attention on wgmma throughout (TargetInfo::async_mma_trans_b, async_mma_rows and
// async_mma_register_a; cuda's --param wgmma_trans_b=1,wgmma_rows=1): Q·Kᵀ with K K-major, the
// scores and row statistics in the warpgroup's registers, P cast in place and read by P·V in
// wgmma's RS form (a=P[kk*8]: the m64n64 scores' C registers 8·kk .. 8·kk + 7 are the A fragment
// of K step kk), no shared tile for scores or P; ragged S, causal, bf16, D = 64 and 128, two
// warpgroups, against the reference.
TEST_CASE("sm_90a flash_attention on wgmma: P read from registers (the RS form)") {
  const Sample& s = *find("flash_attention");
  std::mt19937_64 rng(21);
  PassManager pm(sm90a_passes());
  TargetInfo info = test::sm90a();
  info.async_mma_trans_b = info.async_mma_rows = info.async_mma_register_a = true;
  std::string ir =
      testing::check_lowered_params(s, f16, attention_shape(130, 64, false, 64, 128), pm, info, rng);
  CHECK(ir.find("mma \"wgmma_m64n64k16_f16_f32\" a=P[kk*8], b=tile V_shared[") != std::string::npos);
  CHECK(ir.find("b=tile trans K_shared[") != std::string::npos);
  CHECK(ir.find("local P: f16[32]") != std::string::npos);
  CHECK(ir.find("from_fragment") == std::string::npos);  // nothing fell back to a shared tile
  CHECK(ir.find("shared scores") == std::string::npos);
  CHECK(ir.find("mma_m16n8k16") == std::string::npos);
  testing::check_lowered_params(s, f16, attention_shape(100, 64, true, 64, 128), pm, info, rng);
  ir = testing::check_lowered_params(s, bf16, attention_shape(72, 128, true, 128, 256), pm, info, rng);
  CHECK(ir.find("a=P[kk*8], b=tile V_shared[") != std::string::npos);
  CHECK(ir.find("wgmma_m64n128k16_bf16_f32") != std::string::npos);
  // With bulk copies and warp roles: K and V as rank-reducing boxes (K[b, h, s0 +: 64, ..] into the
  // slot's rows), a producer warpgroup, the consumers arriving on the slots' empty mbarriers.
  {
    std::vector<PassEntry> passes = sm90a_passes();
    passes.insert(passes.end() - 1, {"warp_roles", warp_roles});
    PassManager roles(passes);
    TargetInfo bulk = info;
    bulk.bulk_copy = true;
    ir = testing::check_lowered_params(s, f16, attention_shape(200, 128, true, 64, 128), roles, bulk, rng);
    CHECK(ir.find("bulk_copy K[0 +: 1, ") != std::string::npos);
    CHECK(ir.find(", concurrently {") != std::string::npos);
    CHECK(ir.find("a=P[kk*8]") != std::string::npos);
    CHECK(ir.find("set_max_registers 216") != std::string::npos);  // one warpgroup: 2 blocks a multiprocessor
    // Two consumer warpgroups: 2 blocks (which the shared memory allows) would leave each consumer
    // 96 registers, fewer than its fragments hold, so 1 block and 232.
    ir = testing::check_lowered_params(s, bf16, attention_shape(130, 64, false, 128, 256), roles, bulk, rng);
    CHECK(ir.find("set_max_registers 232") != std::string::npos);
  }
  // Without register A the scores stay on wgmma but P·V does not: P goes to mma.sync registers
  // no wgmma reads, so everything stays as the mma.sync path has it.
  info.async_mma_register_a = false;
  ir = testing::check_lowered_params(s, f16, attention_shape(64, 64, false, 64, 128), pm, info, rng);
  CHECK(ir.find("a=P[") == std::string::npos);
}

// issue_ahead on flash_attention's consumers (after bulk copies and warp roles): the next tile's
// Q·Kᵀ is issued into scores_next before this tile's softmax and P·V, waited for at the end of
// the iteration and moved into the scores; ragged and causal S, one KV tile only (the prologue
// alone), two consumer warpgroups, bf16, against the reference. Without its wait the interpreter
// reports the move reading registers an async mma still accumulates into.
TEST_CASE("issue_ahead: flash_attention's next Q·Kᵀ in flight beside this tile's softmax") {
  const Sample& s = *find("flash_attention");
  std::mt19937_64 rng(33);
  std::vector<PassEntry> passes = sm90a_passes();
  passes.insert(passes.end() - 1, {"warp_roles", warp_roles});
  passes.insert(passes.end() - 1, {"issue_ahead", issue_ahead});
  PassManager pm(passes);
  TargetInfo info = test::sm90a();
  info.async_mma_trans_b = info.async_mma_rows = info.async_mma_register_a = info.bulk_copy = true;
  std::string ir =
      testing::check_lowered_params(s, f16, attention_shape(200, 128, true, 64, 128), pm, info, rng);
  CHECK(ir.find("local scores_next: f32[32]") != std::string::npos);
  CHECK(ir.find("b=tile trans K_shared[(ko + 1) % 2, 0, kk*16], c=scores_next[0]") != std::string::npos);
  CHECK(ir.find("scores[r] = scores_next[r]") != std::string::npos);
  testing::check_lowered_params(s, f16, attention_shape(60, 64, false, 64, 128), pm, info, rng);
  testing::check_lowered_params(s, bf16, attention_shape(330, 64, false, 128, 256), pm, info, rng);
  testing::check_lowered_params(s, bf16, attention_shape(130, 128, true, 128, 256), pm, info, rng);
  // Head dimension 256 (O on m64n256, 128 registers; the producer stays a warp).
  ir = testing::check_lowered_params(s, f16, attention_shape(90, 256, true, 64, 128), pm, info, rng);
  CHECK(ir.find("wgmma_m64n256k16_f16_f32\" a=P[kk*8]") != std::string::npos);
  CHECK(ir.find("scores_next") != std::string::npos);
  // Mutations the interpreter must catch: the next tile's mbarrier wait dropped (its K read before
  // it lands), and the fence between clearing scores_next and the mmas into it.
  samples::Params p = samples::resolve(s, attention_shape(200, 64, false, 64, 128));
  Function f = s.build(p, f16).function();
  samples::Problem pr = s.make_problem(p, f16, rng);
  Function lowered = pm.run(bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr))), info);
  const std::string text = print(lowered);
  auto without = [&](const std::string& what) {
    std::string t = text;
    const std::size_t at = t.find(what);
    REQUIRE_MESSAGE(at != std::string::npos, what);
    // `what` up to its line's end (a line's start given), or the whole of `what` (several lines).
    t.erase(at, what.back() == '\n' ? what.size() : t.find('\n', at) + 1 - at);
    try {
      interpret(parse_function(t, "t.tgir"), samples::host_args(lowered, pr));
    } catch (const Error& x) {
      return std::string(x.what());
    }
    return std::string();
  };
  std::string e = without("          mbarrier_wait full[(ko + 1) % 2], ");
  CHECK_MESSAGE(e.find("K_shared") != std::string::npos, e);
  const std::size_t clear = text.find("scores_next[r] = 0.0");
  REQUIRE(clear != std::string::npos);
  e = without(text.substr(text.find("mma_fence", clear) - 10, 20));  // the fence's line
  CHECK_MESSAGE(e.find("into scores_next: thread 0 accessed these registers since its last mma_fence") !=
                    std::string::npos,
                e);
  // A loop whose async gemm accumulates across iterations (no clearing at its head) is left alone.
  PassManager plain(passes);
  TargetInfo g = test::sm90a();
  g.bulk_copy = true;
  CHECK(testing::check_lowered_params(*find("gemm"), f16, {{"M", 128}, {"N", 128}, {"K", 256}}, plain, g, rng)
            .find("_next") == std::string::npos);
}

// wgmma's RS form in the interpreter: A read from each lane's registers (a=a[0]); those registers
// belong to the mma until its mma_wait (a write before is an error), a write of them since the
// lane's last mma_fence before the mma is one, and B must be a shared tile.
TEST_CASE("async mma with A from registers: in flight until its wait, fenced before it") {
  auto kernel = [](const std::string& before, const std::string& after) {
    return "func t(C: f32[128, 32] global) {\n  kernel grid(1) threads(128) -> (bx; tx) {\n"
           "    shared B: f16[16, 64]\n    local a: f16[8]\n    local c: f32[32]\n"
           "    if tx < 16 {\n      for j in serial(0 +: 64) {\n        B[tx, j] = 1.0\n      }\n    }\n"
           "    proxy_fence\n    barrier\n"
           "    for r in unrolled(0 +: 8) {\n      a[r] = cast<f16>(tx % 4 + r)\n    }\n"
           "    for r in unrolled(0 +: 32) {\n      c[r] = 0.0\n    }\n" +
           before + "    mma \"wgmma_m64n64k16_f16_f32\" a=a[0], b=tile B[0, 0], c=c[0]\n" + after +
           "    mma_wait 0\n    for r in unrolled(0 +: 32) {\n      C[tx, r] = c[r]\n    }\n  }\n}\n";
  };
  auto run = [](const std::string& text) -> std::string {
    std::vector<float> c(128 * 32, -1.0f);
    HostArg arg;
    arg.data = c.data(), arg.shape = {128, 32}, arg.dtype = f32;
    try {
      interpret(parse_function(text, "t.tgir"), {arg});
    } catch (const Error& e) {
      return e.what();
    }
    // B is all ones, so C's row i is the sum of A's row i: lanes 4g..4g+3 of warp w hold row
    // 16w + g in registers 0, 1, 4, 5 (and row 16w + g + 8 in 2, 3, 6, 7), a[r] = lane % 4 + r:
    // 4·(0+1+4+5) + 4·(0+1+2+3) = 64, and 4·(2+3+6+7) + 24 = 96. C[0, 0] is lane 0's c[0], C[8, 0] its c[2].
    for (int t = 0; t < 128; ++t)
      for (int r : {0, 2})
        if (c[std::size_t(t * 32 + r)] != (r == 0 ? 64.0f : 96.0f))
          return "C element of thread " + std::to_string(t) + " register " + std::to_string(r) + " is " +
                 std::to_string(c[std::size_t(t * 32 + r)]);
    return "";
  };
  const std::string fenced = "    mma_fence\n";
  CHECK(run(kernel(fenced, "")) == "");
  const std::string unfenced = run(kernel(fenced + "    a[0] = cast<f16>(tx % 4)\n", ""));
  CHECK_MESSAGE(
      unfenced.find("reading A from a: thread 0 accessed these registers since its last mma_fence") !=
          std::string::npos,
      unfenced);
  const std::string early = run(kernel(fenced, "    a[0] = cast<f16>(0.0)\n"));
  CHECK_MESSAGE(
      early.find("a store to a by thread 0 while an async mma accumulating into it or reading A from "
                 "it is in flight") != std::string::npos,
      early);
  const std::string regs_b =
      "func t(C: f32[128, 32] global) {\n  kernel grid(1) threads(128) -> (bx; tx) {\n"
      "    local a: f16[8]\n    local b: f16[8]\n    local c: f32[32]\n"
      "    mma \"wgmma_m64n64k16_f16_f32\" a=a[0], b=b[0], c=c[0]\n    mma_wait 0\n  }\n}\n";
  CHECK_THROWS_WITH_AS(verify(parse_function(regs_b, "t.tgir")),
                       doctest::Contains("reads B from a shared tile"), Error);
}

TEST_CASE("mma: a transposed tile operand is checked against its stored shape") {
  const std::string text = R"(func t(C: f32[64, 64] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared A: f16[64, 16]
    shared B: f16[64, 16]
    local c: f32[32]
    mma "wgmma_m64n64k16_f16_f32" a=tile A[0, 0], b=tile trans B[0, 0], c=c[0]
    mma_wait 0
  }
}
)";
  const Function f = parse_function(text, "t.tgir");
  CHECK(print(f) == text);
  verify(f);
  // Not transposed, B's 16 rows cannot hold the unit's K×N = 16×64 tile.
  std::string plain = text;
  plain.replace(plain.find("tile trans B"), 12, "tile B");
  CHECK_THROWS_WITH_AS(verify(parse_function(plain, "t.tgir")),
                       doctest::Contains("spans [0, 64) of dimension 1"), Error);
}

TEST_CASE("sm_90a gemm: tiles no swizzle fits stay on mma.sync") {
  Function f = lowered_gemm(128, 128, 96, 128, 128, 48);  // 96-byte rows of A: no 32/64/128-byte strips
  std::string ir = print(f);
  INFO(ir);
  CHECK(ir.find("wgmma") == std::string::npos);
  CHECK(ir.find("mma_m16n8k16_f16_f32") != std::string::npos);
  CHECK(run_gemm(f, 128, 128, 96) == "");
  CHECK(swizzle_bits_for(32, 64) == 1);
  CHECK(swizzle_bits_for(64, 64) == 2);
  CHECK(swizzle_bits_for(256, 32) == 3);
  CHECK(swizzle_bits_for(96, 64) == 0);
  CHECK(swizzle_bits_for(128, 4) == 0);
}

TEST_CASE("sm_90a gemm: each fence or wait left out is an error of the interpreter") {
  Function f = lowered_gemm(128, 128, 128, 128, 128, 32);
  REQUIRE(run_gemm(f, 128, 128, 128) == "");
  EditSyncs no_proxy;
  no_proxy.op = ir::MmaSync::Op::ProxyFence;
  CHECK_MESSAGE(
      run_gemm(no_proxy.mutate_function(f), 128, 128, 128).find("without a proxy_fence") != std::string::npos,
      "no proxy_fence");
  EditSyncs no_fence;
  no_fence.op = ir::MmaSync::Op::Fence;
  CHECK_MESSAGE(run_gemm(no_fence.mutate_function(f), 128, 128, 128).find("since its last mma_fence") !=
                    std::string::npos,
                "no mma_fence");
  EditSyncs no_wait;
  std::string e = run_gemm(no_wait.mutate_function(f), 128, 128, 128);
  CHECK_MESSAGE(e.find("async mma") != std::string::npos, e);
  EditSyncs late;
  late.late = true;  // the next iteration's copies may overwrite a tile the mma still reads
  e = run_gemm(late.mutate_function(f), 128, 128, 128);
  CHECK_MESSAGE(e.find("race on shared buffer") != std::string::npos, e);
}

// Drops the barrier after each `mma_wait 1` (and the proxy_fence before it), or makes the wait
// `mma_wait 2`.
struct EditOverlap : IRMutator {
  bool deeper = false;
  Stmt visit(const ir::Seq* seq, const Stmt&) override {
    std::vector<Stmt> out;
    for (std::size_t i = 0; i < seq->stmts.size(); ++i) {
      Stmt s = mutate(seq->stmts[i]);
      const auto* w = s.as<ir::MmaSync>();
      if (!w || w->op != ir::MmaSync::Op::Wait || w->in_flight != 1) {
        out.push_back(s);
        continue;
      }
      if (deeper) {
        auto n = std::make_shared<ir::MmaSync>(*w);
        n->in_flight = 2;
        out.push_back(Stmt(std::move(n)));
        continue;
      }
      out.push_back(s);
      while (i + 1 < seq->stmts.size() && (seq->stmts[i + 1]->kind == ir::StmtKind::MmaSync ||
                                           seq->stmts[i + 1]->kind == ir::StmtKind::Barrier)) {
        bool barrier = seq->stmts[++i]->kind == ir::StmtKind::Barrier;
        if (barrier) break;
      }
    }
    return make_seq(std::move(out), seq->loc);
  }
};

TEST_CASE("sm_90a gemm: overlap_async_mma keeps one K step's mmas in flight") {
  for (int stages : {2, 3, 4}) {
    CAPTURE(stages);
    Function f = lowered_gemm(128, 128, 256, 128, 128, 32, 128, f16, stages);
    std::string ir = print(f);
    INFO(ir);
    // In the loop: mmas, mma_wait 1, barrier, then the fills of a later slot, unguarded; the last
    // stages - 1 iterations drain in a loop of their own, without fills; after it mma_wait 0.
    CHECK(count(ir, "mma_wait 1") == 2);
    CHECK(count(ir, "mma_wait 0") == 1);
    CHECK(ir.find("for ko in pipelined(0 +: " + std::to_string(9 - stages) + ", stages=" + std::to_string(stages)) !=
          std::string::npos);
    CHECK(ir.find("for ko in pipelined(" + std::to_string(9 - stages) + " +: " + std::to_string(stages - 1)) !=
          std::string::npos);
    CHECK(ir.find("if ko + ") == std::string::npos);
    const std::string fill = "async A_shared[(ko + " + std::to_string(stages - 1) + ") % " + std::to_string(stages);
    CHECK(ir.find("mma_wait 1") < ir.find(fill));
    CHECK(ir.find(fill) < ir.find("mma_wait 0"));
    CHECK(ir.find("async_wait " + std::to_string(stages - 2) + "\n      proxy_fence\n      barrier\n      for kk") !=
          std::string::npos);
    CHECK(run_gemm(f, 128, 128, 256) == "");
    CHECK(run_gemm(lowered_gemm(200, 72, 136, 128, 64, 32, 128, f16, stages), 200, 72, 136) == "");
    CHECK(run_gemm(lowered_gemm(130, 256, 200, 128, 256, 64, 256, f16, stages), 130, 256, 200) == "");
    CHECK(print(parse_function(ir, "g.tgir")) == ir);
  }
  Function f = lowered_gemm(128, 128, 256, 128, 128, 32, 128, f16, 3);
  // Without the barrier after mma_wait 1 another warp's fills overwrite a tile before every
  // warp's mmas on it are complete; with mma_wait 2 the fills overwrite what the mmas in flight read.
  EditOverlap no_barrier;
  std::string e = run_gemm(no_barrier.mutate_function(f), 128, 128, 256);
  CHECK_MESSAGE(e.find("race on shared buffer") != std::string::npos, e);
  EditOverlap deeper;
  deeper.deeper = true;
  e = run_gemm(deeper.mutate_function(f), 128, 128, 256);
  CHECK_MESSAGE(e.find("async mma") != std::string::npos, e);
}

// Drops every mbarrier statement of one kind.
struct DropMBarrier : IRMutator {
  ir::MBarrier::Op op;
  explicit DropMBarrier(ir::MBarrier::Op o) : op(o) {}
  Stmt visit(const ir::Seq* seq, const Stmt&) override {
    std::vector<Stmt> out;
    for (const Stmt& s0 : seq->stmts) {
      Stmt s = mutate(s0);
      const auto* m = s.as<ir::MBarrier>();
      if (!m || m->op != op) out.push_back(s);
    }
    return make_seq(std::move(out), seq->loc);
  }
};

TEST_CASE("bulk_copies: one thread's bulk copies on per-slot mbarriers feed the wgmma tiles") {
  Function f = lowered_gemm(256, 256, 256, 128, 128, 32, 128, f16, 3, true);
  std::string ir = print(f);
  INFO(ir);
  CHECK(ir.find("shared full: i64[3]") != std::string::npos);
  CHECK(ir.find("mbarrier_init full[s], 1") != std::string::npos);
  // A's 64-byte rows in one box; B's 256-byte rows in two boxes of 128-byte strips; prologue and loop.
  CHECK(count(ir, "bulk_copy A[") == 2);
  CHECK(count(ir, "bulk_copy B[") == 4);
  CHECK(ir.find("bulk_copy B[ko*32 + 64 +: 32, bx*128 + 64 +: 64] -> B_shared[(ko + 2) % 3 +: 1, 0 +: 32, 64 +: 64] on full[(ko + 2) % 3]") !=
        std::string::npos);
  CHECK(count(ir, "mbarrier_expect_tx full[") == 2);
  CHECK(ir.find("mbarrier_expect_tx full[(ko + 2) % 3], 16384") != std::string::npos);
  CHECK(ir.find("mbarrier_wait full[ko % 3], ko / 3 % 2") != std::string::npos);
  CHECK(ir.find("async A_shared") == std::string::npos);  // no cp.async left
  // overlap_async_mma keeps one K step in flight here too: the next slot's copies after the wait
  // for the previous step's mmas and the barrier after it, the last two steps draining apart.
  CHECK(count(ir, "mma_wait 1") == 2);
  CHECK(ir.find("for ko in pipelined(0 +: 6, stages=3)") != std::string::npos);
  CHECK(ir.find("mma_wait 1") < ir.find("mbarrier_expect_tx full[(ko + 2) % 3]"));
  CHECK(print(parse_function(ir, "g.tgir")) == ir);
  CHECK(run_gemm(f, 256, 256, 256) == "");
  // Ragged M and N: the boxes overhang the tensors, zero-filled.
  Function ragged = lowered_gemm(200, 72, 96, 128, 64, 32, 128, f16, 3, true);
  CHECK(print(ragged).find("bulk_copy") != std::string::npos);
  CHECK(run_gemm(ragged, 200, 72, 96) == "");
  // K = 100: rows of 200 bytes, not a multiple of 16: no tensor map, the fills stay cp.async.
  Function k100 = lowered_gemm(128, 128, 100, 128, 128, 32, 128, f16, 3, true);
  CHECK(print(k100).find("bulk_copy") == std::string::npos);
  CHECK(run_gemm(k100, 128, 128, 100) == "");
  // Without the wait, or the expected bytes: errors of the interpreter.
  std::string e = run_gemm(DropMBarrier(ir::MBarrier::Op::Wait).mutate_function(f), 256, 256, 256);
  CHECK_MESSAGE(e.find("before this thread waited for that phase") != std::string::npos, e);
  e = run_gemm(DropMBarrier(ir::MBarrier::Op::ExpectTx).mutate_function(f), 256, 256, 256);
  CHECK_MESSAGE(e.find("still expects 1 arrival(s)") != std::string::npos, e);
  // mma.sync tiles (too small for a warpgroup) filled by bulk copies stay dense, unpadded: the copy
  // engine writes a box's rows back to back.
  Function small = lowered_gemm(96, 64, 64, 32, 32, 16, 128, f16, 3, true);
  std::string small_ir = print(small);
  CHECK(small_ir.find("bulk_copy A[") != std::string::npos);
  CHECK(small_ir.find("mma_m16n8k16_f16_f32") != std::string::npos);
  CHECK(small_ir.find("layout=padded") == std::string::npos);
  CHECK(run_gemm(small, 96, 64, 64) == "");
  // Targets without bulk copies keep cp.async.
  CHECK(print(lowered_gemm(256, 256, 256, 128, 128, 32, 128, f16, 3)).find("bulk_copy") == std::string::npos);
}

// Drops every barrier inside pipelined loops.
struct DropLoopBarriers : IRMutator {
  int depth = 0;
  Stmt visit(const ir::For* op, const Stmt& self) override {
    depth += op->for_kind == ForKind::Pipelined;
    Stmt r = IRMutator::visit(op, self);
    depth -= op->for_kind == ForKind::Pipelined;
    return r;
  }
  Stmt visit(const ir::Seq* seq, const Stmt&) override {
    std::vector<Stmt> out;
    for (const Stmt& s0 : seq->stmts) {
      Stmt s = mutate(s0);
      if (!(depth > 0 && s->kind == ir::StmtKind::Barrier)) out.push_back(s);
    }
    return make_seq(std::move(out), seq->loc);
  }
};

TEST_CASE("bulk_copies: one barrier a K step and no proxy fence in the loop; mbarrier waits order the data") {
  for (int stages : {2, 3, 4}) {
    CAPTURE(stages);
    Function f = lowered_gemm(256, 256, 512, 128, 128, 64, 128, f16, stages, true);
    std::string ir = print(f);
    INFO(ir);
    // Each thread waits for its slot's mbarrier phase itself: no barrier between that wait and the
    // mmas (barrier thinning: a bulk copy is ordered by the wait, and an mbarrier wait does not
    // conflict with the copies' arrivals); the one barrier left keeps the next slot's copies after
    // every warp's mmas on it (mma_wait 1). The copy engine writes through the async proxy: the
    // only proxy_fence is the one after mbarrier_init.
    const std::size_t wait = ir.find("      mbarrier_wait full[ko % " + std::to_string(stages) + "], ko / ");
    REQUIRE(wait != std::string::npos);
    CHECK(ir.find("\n      mma_fence\n      for kk", wait) == ir.find('\n', wait));
    CHECK(ir.find("mma_wait 1\n      barrier\n      if tx == 0 {\n        mbarrier_expect_tx") !=
          std::string::npos);
    CHECK(count(ir, " barrier\n") == 2);  // after the inits, and in the main loop
    CHECK(count(ir, "proxy_fence") == 1);
    CHECK(ir.find("proxy_fence") < ir.find("for ko_pre"));
    CHECK(run_gemm(f, 256, 256, 512) == "");
    CHECK(run_gemm(lowered_gemm(200, 72, 136, 128, 64, 32, 128, f16, stages, true), 200, 72, 136) == "");
    CHECK(run_gemm(lowered_gemm(130, 256, 320, 128, 256, 64, 256, f16, stages, true), 130, 256, 320) == "");
  }
  // Without the loop's barrier thread 0's copies overwrite a slot other warps' mmas still read.
  Function f = lowered_gemm(256, 256, 512, 128, 128, 64, 128, f16, 3, true);
  std::string e = run_gemm(DropLoopBarriers().mutate_function(f), 256, 256, 512);
  CHECK_MESSAGE(e.find("race") != std::string::npos, e);
  // mma.sync tiles (ldmatrix reads) filled by bulk copies: the waits order them as well.
  Function small = lowered_gemm(96, 64, 128, 32, 32, 16, 128, f16, 3, true);
  std::string small_ir = print(small);
  INFO(small_ir);
  CHECK(small_ir.find("proxy_fence") != std::string::npos);  // after mbarrier_init
  CHECK(run_gemm(small, 96, 64, 128) == "");
  e = run_gemm(DropLoopBarriers().mutate_function(small), 96, 64, 128);
  CHECK_MESSAGE(e.find("race") != std::string::npos, e);
}

TEST_CASE("mma_fence, proxy_fence and mma_wait: printed, parsed back, checked by the verifier") {
  const char* text = R"(func k(X: f32[4] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    mma_fence
    proxy_fence
    mma_wait 1
    mma_wait 0
  }
}
)";
  Function f = parse_function(text, "t.tgir");
  CHECK(print(f) == text);
  std::string bad = text;
  bad.replace(bad.find("mma_wait 1"), 10, "mma_wait 9");
  CHECK_THROWS_WITH_AS(verify(parse_function(bad, "t.tgir")), doctest::Contains("between 0 and 7"), Error);
}

TEST_CASE("sm_80 and sm_90 keep mma.sync: wgmma only where the architecture-specific target is named") {
  const Sample& s = *find("gemm");
  Function f = bind_sizes(s.build(resolve(s, {{"M", 128}, {"N", 128}, {"K", 64}}), f16).function(), {});
  std::string ir = print(PassManager(gpu_pipeline()).run(f, test::sm90()));
  CHECK(ir.find("wgmma") == std::string::npos);
  CHECK(ir.find("mma_m16n8k16_f16_f32") != std::string::npos);
}
