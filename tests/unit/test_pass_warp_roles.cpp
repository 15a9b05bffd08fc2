// The pass warp_roles (issue 15's warp specialisation): a ring of slots that bulk_copies feeds
// becomes a producer warp issuing the copies, waiting on `empty` per slot, beside the block's
// threads (the consumers), which arrive on `empty` where a barrier ordered the slot's refill.
// IR in, IR out on a small ring; the interpreter runs both, side by side in the roles, and
// catches each omission in the output; the cases it must leave alone stay as they are; and every
// gemm-like sample lowered for sm_90a with tma and warp roles reproduces its reference.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/warp_roles.h"
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
#include "cuda_plugin.h"
#include "sample_test_util.h"
#include "tilegen/plugin.h"
#include "tilegen/samples.h"
#endif

using namespace tg;

namespace {

// A two-slot ring as the gpu pipeline leaves it without overlap_async_mma (the fill of the next
// tile first in the body, the barrier last): tile k of A (32 rows) into slot k % 2, its column
// sums into row k of C, by 32 threads.
const std::string kRing = R"(func ring(A: f32[256, 64] global, C: f32[8, 64] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    shared S: f32[2, 32, 64]
    shared full: i64[2]
    local acc: f32[2]
    for q in serial(0 +: 2) {
      acc[q] = 0.0
    }
    if tx == 0 {
      for s in serial(0 +: 2) {
        mbarrier_init full[s], 1
      }
    }
    proxy_fence
    barrier
    if tx == 0 {
      mbarrier_expect_tx full[0], 8192
      bulk_copy A[0 +: 32, 0 +: 64] -> S[0 +: 1, 0 +: 32, 0 +: 64] on full[0]
    }
    for k in pipelined(0 +: 8, stages=2) {
      if k + 1 < 8 {
        if tx == 0 {
          mbarrier_expect_tx full[(k + 1) % 2], 8192
          bulk_copy A[k*32 + 32 +: 32, 0 +: 64] -> S[(k + 1) % 2 +: 1, 0 +: 32, 0 +: 64] on full[(k + 1) % 2]
        }
      }
      mbarrier_wait full[k % 2], k / 2 % 2
      for q in serial(0 +: 2) {
        acc[q] = 0.0
        for i in serial(0 +: 32) {
          acc[q] = acc[q] + S[k % 2, i, tx*2 + q]
        }
        C[k, tx*2 + q] = acc[q]
      }
      barrier
    }
  }
}
)";

TargetInfo hopper_like() {
  TargetInfo info;
  info.target = "test";
  info.warp_size = 32;
  info.max_threads = 1024;
  info.bulk_copy = true;
  return info;
}

// f run on fresh A (small integers) and a poisoned C: "" when C holds A's column sums for the
// first `tiles` tiles (and the poison after them), else the interpreter's error or the first
// wrong element.
std::string run_ring(const Function& f, unsigned seed, int tiles = 8) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-9, 9);
  std::vector<float> a(256 * 64), c(8 * 64, -777.0f);
  for (float& x : a) x = float(d(rng));
  std::vector<HostArg> args(2);
  args[0].data = a.data(), args[0].shape = {256, 64};
  args[1].data = c.data(), args[1].shape = {8, 64};
  try {
    interpret(f, args);
  } catch (const Error& e) {
    return e.what();
  }
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 64; ++j) {
      float want = 0;
      for (int i = 0; i < 32; ++i) want += a[std::size_t((k * 32 + i) * 64 + j)];
      if (c[std::size_t(k * 64 + j)] != (k < tiles ? want : -777.0f))
        return "wrong C[" + std::to_string(k) + ", " + std::to_string(j) + "]";
    }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("warp_roles: a ring's fills become a producer warp's, its barriers the consumers' arrivals") {
  const Function in = parse_function(kRing, "ring.tgir");
  verify(in);
  CHECK(run_ring(in, 1) == "");
  const Function out = warp_roles(in, hopper_like());
  const std::string text = print(out);
  CHECK(text == R"(func ring(A: f32[256, 64] global, C: f32[8, 64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared S: f32[2, 32, 64]
    shared full: i64[2]
    local acc: f32[2]
    shared empty: i64[2]
    if tx < 32 {
      for q in serial(0 +: 2) {
        acc[q] = 0.0
      }
    }
    if tx == 0 {
      for s in serial(0 +: 2) {
        mbarrier_init full[s], 1
        mbarrier_init empty[s], 32
      }
    }
    proxy_fence
    barrier
    if tx < 32, concurrently {
      for k in pipelined(0 +: 8, stages=2) {
        mbarrier_wait full[k % 2], k / 2 % 2
        for q in serial(0 +: 2) {
          acc[q] = 0.0
          for i in serial(0 +: 32) {
            acc[q] = acc[q] + S[k % 2, i, tx*2 + q]
          }
          C[k, tx*2 + q] = acc[q]
        }
        if k + 1 < 8 && k + 2 < 8 && k + 2 >= 2 {
          mbarrier_arrive empty[k % 2]
        }
      }
    } else {
      if tx == 32 {
        mbarrier_expect_tx full[0], 8192
        bulk_copy A[0 +: 32, 0 +: 64] -> S[0 +: 1, 0 +: 32, 0 +: 64] on full[0]
        for k in serial(0 +: 8) {
          if k + 1 < 8 {
            if k + 1 >= 2 {
              mbarrier_wait empty[(k + 1) % 2], ((k + 1) / 2 + 1) % 2
            }
            mbarrier_expect_tx full[(k + 1) % 2], 8192
            bulk_copy A[k*32 + 32 +: 32, 0 +: 64] -> S[(k + 1) % 2 +: 1, 0 +: 32, 0 +: 64] on full[(k + 1) % 2]
          }
        }
      }
    }
  }
}
)");
  verify(out);
  CHECK(print(parse_function(text, "roles.tgir")) == text);
  for (unsigned seed : {1u, 2u, 3u}) CHECK(run_ring(out, seed) == "");

  // What the interpreter says of each part left out or got wrong.
  auto run = [](const std::string& t) { return run_ring(parse_function(t, "broken.tgir"), 4); };
  std::string e =
      run(replaced(text, "              mbarrier_wait empty[(k + 1) % 2], ((k + 1) / 2 + 1) % 2\n", ""));
  // (the producer's copy into slot 0 lands before the consumers waited for its last phase)
  CHECK_MESSAGE(e.find("before this thread waited for that phase") != std::string::npos, e);
  e = run(replaced(text, "((k + 1) / 2 + 1) % 2", "(k + 1) / 2 % 2"));
  CHECK_MESSAGE(!e.empty(), "a wrong parity of empty went unnoticed");
  e = run(replaced(text, "          mbarrier_arrive empty[k % 2]\n", ""));
  CHECK_MESSAGE(e.find("neither role can go on") != std::string::npos, e);
  e = run(replaced(text, "if tx < 32, concurrently {", "if tx < 32 {"));
  CHECK_MESSAGE(e.find("nothing that runs before this wait completes it") != std::string::npos, e);
  e = run(replaced(text, "mbarrier_init empty[s], 32", "mbarrier_init empty[s], 31"));
  CHECK_MESSAGE(e.find("race on shared buffer S[") != std::string::npos, e);  // a phase one arrival early
}

TEST_CASE("warp_roles: kernels it must leave as they are") {
  const TargetInfo info = hopper_like();
  auto unchanged = [&](const std::string& text, const TargetInfo& with) {
    const Function f = parse_function(text, "ring.tgir");
    return print(warp_roles(f, with)) == print(f);
  };
  CHECK(!unchanged(kRing, info));
  TargetInfo no_bulk = info;
  no_bulk.bulk_copy = false;
  CHECK(unchanged(kRing, no_bulk));
  TargetInfo full = info;  // no room for a producer warp
  full.max_threads = 48;
  CHECK(unchanged(kRing, full));
  // The consumers write shared memory that only the block's barriers ordered.
  CHECK(unchanged(
      replaced(replaced(kRing, "    local acc: f32[2]\n", "    local acc: f32[2]\n    shared W: f32[32]\n"),
               "        C[k, tx*2 + q] = acc[q]\n",
               "        W[tx] = acc[q]\n        C[k, tx*2 + q] = W[tx]\n"),
      info));
  // A barrier that orders something else than a refill.
  CHECK(unchanged(replaced(kRing, "      mbarrier_wait full[k % 2], k / 2 % 2\n",
                           "      mbarrier_wait full[k % 2], k / 2 % 2\n      barrier\n"),
                  info));
  // A fill whose guard reads memory, or depends on the thread.
  CHECK(unchanged(replaced(kRing, "if k + 1 < 8 {", "if k + 1 < 8 && A[0, 0] > -100.0 {"), info));
  CHECK(unchanged(replaced(kRing, "if k + 1 < 8 {", "if k + 1 < 8 && tx < 16 {"), info));
}

TEST_CASE("warp_roles: rings of other lengths") {
  // One to five tiles (with one or two, the arrivals never happen and the producer never waits).
  for (int tiles : {1, 2, 3, 5}) {
    CAPTURE(tiles);
    const std::string n = std::to_string(tiles);
    std::string text = replaced(replaced(kRing, "0 +: 8, stages=2", "0 +: " + n + ", stages=2"),
                                "if k + 1 < 8", "if k + 1 < " + n);
    const Function out = warp_roles(parse_function(text, "ring.tgir"), hopper_like());
    verify(out);
    CHECK(run_ring(out, 5, tiles) == "");
  }
}

TEST_CASE("set_max_registers: printed, parsed, checked by the verifier and the interpreter") {
  const std::string roles = print(warp_roles(parse_function(kRing, "ring.tgir"), hopper_like()));
  // First in each branch of the roles; the consumers here are a warp, not a warpgroup.
  std::string text = replaced(roles, "    if tx < 32, concurrently {\n",
                              "    if tx < 32, concurrently {\n      set_max_registers 216\n");
  text = replaced(text, "    } else {\n      if tx == 32 {",
                  "    } else {\n      set_max_registers 40\n      if tx == 32 {");
  const Function f = parse_function(text, "regs.tgir");
  CHECK(print(f) == text);
  verify(f);
  CHECK_MESSAGE(
      run_ring(f, 1).find("set_max_registers reached by 32 threads of warpgroup 0") != std::string::npos,
      run_ring(f, 1));
  auto verify_error = [](const std::string& t) {
    try {
      verify(parse_function(t, "regs.tgir"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(
      verify_error(replaced(text, "set_max_registers 216", "set_max_registers 212")).find("multiple of 8") !=
      std::string::npos);
  CHECK(verify_error(replaced(text, "set_max_registers 40", "set_max_registers 16")).find("from 24 to 256") !=
        std::string::npos);
  CHECK(verify_error(replaced(kRing, "    proxy_fence\n", "    set_max_registers 64\n    proxy_fence\n"))
            .find("outside warp roles") != std::string::npos);
}

#ifdef TILEGEN_HAVE_CUDA_CODEGEN
// sm_90a reallocates registers: the producer becomes a warpgroup at 40 registers a thread and the
// consumers take what it frees of the block's share, as many blocks a multiprocessor as the
// shared memory holds (at most two); with one block and one consumer warpgroup nothing is short,
// and the producer stays a warp.
TEST_CASE("warp_roles: on sm_90a a producer warpgroup hands its registers to the consumers") {
  static const std::unique_ptr<TargetPlugin> cuda(cuda::make_plugin());
  const TargetInfo info = cuda->info_for_arch("sm_90a");
  CHECK(info.reallocate_registers);
  CompileOptions opt;
  opt.params = {{"tma", "1"}, {"warp_roles", "1"}};
  PassManager pm(cuda->pipeline(info, opt));
  const samples::Sample& g = *samples::find("gemm");
  auto lowered = [&](samples::Params p) {
    p.insert({{"M", 4096}, {"N", 4096}, {"K", 4096}});
    Function f = g.build(samples::resolve(g, p), f16).function();
    return print(pm.run(bind_sizes(f, infer_sizes(f, {{4096, 4096}, {4096, 4096}, {4096, 4096}})), info));
  };
  std::string ir = lowered({{"block_K", 64}, {"stages", 3}});  // 97 KiB: two blocks
  CHECK(ir.find("threads(256)") != std::string::npos);
  CHECK(ir.find("if tx < 128, concurrently {\n      set_max_registers 216\n") != std::string::npos);
  CHECK(ir.find("} else {\n      set_max_registers 40\n      if tx == 128 {") != std::string::npos);
  ir = lowered({{"block_M", 128}, {"block_N", 256}, {"block_K", 64}, {"threads", 256}, {"stages", 4}});
  CHECK(ir.find("threads(384)") != std::string::npos);
  CHECK(ir.find("set_max_registers 232") != std::string::npos);
  ir = lowered({{"block_K", 64}, {"stages", 4}});  // 129 KiB: one block, registers to spare
  CHECK(ir.find("threads(160)") != std::string::npos);
  CHECK(ir.find("set_max_registers") == std::string::npos);
}

// The gemm-like samples through the cuda pipeline for sm_90a with tma and warp roles, at shapes
// with more K tiles than slots (so the roles apply) and ragged edges: the roles are in the
// lowered IR, and the interpreter reproduces the float64 reference.
TEST_CASE("warp_roles: gemm-like samples for sm_90a with tma and warp roles reproduce the references") {
  static const std::unique_ptr<TargetPlugin> cuda(cuda::make_plugin());
  const TargetInfo info = cuda->info_for_arch("sm_90a");
  CompileOptions opt;
  opt.params["tma"] = "1";
  opt.params["warp_roles"] = "1";
  PassManager pm(cuda->pipeline(info, opt));
  std::mt19937_64 rng(11);
  struct Case {
    const char* sample;
    DType t;
    samples::Params p;
  };
  const std::vector<Case> cases = {
      {"gemm", f16, {{"M", 200}, {"N", 264}, {"K", 520}}},
      {"gemm", f16, {{"M", 130}, {"N", 257}, {"K", 456}, {"trans_B", 1}}},
      // A stored K×M stays on mma.sync (ldmatrix reads the slots): no roles on cuda, the barrier kept
      {"gemm", f16, {{"M", 264}, {"N", 136}, {"K", 392}, {"trans_A", 1}}},  // A's rows 16-byte multiples
      {"gemm", bf16, {{"M", 192}, {"N", 136}, {"K", 392}}},
      {"gemm", f16, {{"M", 136}, {"N", 200}, {"K", 520}, {"block_K", 32}, {"stages", 4}}},
      {"gemm_relu", f16, {{"M", 200}, {"N", 264}, {"K", 520}}},
      {"gemm_softmax", f16, {{"M", 96}, {"N", 128}, {"K", 512}}},
      // two consumer warpgroups on 128×256 tiles, four stages: a producer warpgroup, 232 registers
      {"gemm",
       f16,
       {{"M", 256},
        {"N", 264},
        {"K", 520},
        {"block_M", 128},
        {"block_N", 256},
        {"threads", 256},
        {"stages", 4}}},
  };
  for (const Case& c : cases) {
    const samples::Sample* s = samples::find(c.sample);
    REQUIRE(s);
    std::string label = std::string(c.sample) + " " + std::string(c.t.name());
    for (auto& [k, v] : c.p) label += " " + k + "=" + std::to_string(v);
    SUBCASE(label.c_str()) {
      const std::string text = testing::check_lowered_params(*s, c.t, c.p, pm, info, rng);
      const bool mma_sync = c.p.count("trans_A") > 0;
      CHECK_MESSAGE((text.find(", concurrently {") != std::string::npos) == !mma_sync, "roles or not in\n"
                                                                                           << text);
      CHECK((text.find("mbarrier_arrive empty[") != std::string::npos) == !mma_sync);
    }
  }
}

// On cuda (TargetInfo::roles_async_reads_only) a ring whose slots ldmatrix reads for mma.sync
// keeps the block's barrier: the two kernels that gave wrong answers with roles on an H100
// (gemm_softmax 96×128×512 with wgmma_rows=0, trans_B gemm with wgmma_trans_b=0); with the
// gemms on wgmma the same kernels get their roles. The synthetic rings above, on a TargetInfo
// without the flag, keep theirs.
TEST_CASE("warp_roles: cuda leaves rings that mma.sync reads through ldmatrix without roles") {
  static const std::unique_ptr<TargetPlugin> cuda(cuda::make_plugin());
  const TargetInfo info = cuda->info_for_arch("sm_90a");
  CHECK(info.roles_async_reads_only);
  CHECK_FALSE(hopper_like().roles_async_reads_only);
  struct Case {
    const char* sample;
    samples::Params p;
    const char* wgmma_switch;
  };
  for (const Case& c :
       {Case{"gemm_softmax", {{"M", 96}, {"N", 128}, {"K", 512}}, "wgmma_rows"},
        Case{"gemm", {{"M", 512}, {"N", 512}, {"K", 1024}, {"trans_B", 1}}, "wgmma_trans_b"}}) {
    for (const char* on : {"0", "1"}) {
      CAPTURE(c.sample);
      CAPTURE(on);
      CompileOptions opt;
      opt.params = {{"tma", "1"}, {"warp_roles", "1"}, {c.wgmma_switch, on}};
      PassManager pm(cuda->pipeline(info, opt));
      const samples::Sample* s = samples::find(c.sample);
      REQUIRE(s);
      std::mt19937_64 rng(5);
      const std::string text = testing::check_lowered_params(*s, f16, c.p, pm, info, rng);
      const bool wgmma = std::string(on) == "1";
      const bool roles = text.find(", concurrently {") != std::string::npos;
      const bool ldmatrix = text.find("ldmatrix") != std::string::npos;
      CHECK(roles == wgmma);
      CHECK(ldmatrix == !wgmma);
      CHECK(text.find("bulk_copy") != std::string::npos);  // the ring is there either way
    }
  }
}
#endif
