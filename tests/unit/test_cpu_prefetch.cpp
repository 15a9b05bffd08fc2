// The cpu target's software pipelining of tile copies, as IR: the pass insert_prefetches
// (targets/cpu/src/insert_prefetches.h) gives a pipelined loop's gemm, between its micro-tiles,
// prefetches of the Global lines its next iteration copies; the code generator only spells them.
// The checks: the pass's IR in and out; the lines it prefetches are every line of the next tiles;
// only the gemms that have micro-tiles get them; the emitter prefetches exactly what the IR says;
// and results still equal the interpreter's on ragged shapes (the last iteration prefetches past
// the tensors' ends, the edge tiles past their rows), for every dtype and transpose.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "cpu_test_util.h"
#include "tilegen/builder.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/simplify.h"
#include "tilegen/plugin.h"
#include "tilegen/runtime.h"

using namespace tg;
using tg::testing::check_cpu_matches_interpreter;
using tg::testing::random_array;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(77);
  return r;
}

// C = op(A) · op(B) in bm×bn×bk tiles, the K loop pipelined (3 stages) or serial.
Kernel tiled_gemm(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn,
                  int64_t bk, bool pipelined) {
  return tg::testing::gemm_kernel(t, ta, tb, M, N, K, bm, bn, bk, pipelined ? 3 : 0);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TargetPlugin* cpu_plugin() { return testing::cpu_plugin_or_skip("prefetch"); }

/// The cpu pipeline's insert_prefetches on f, for a CPU LLVM knows by name.
Function insert_prefetches(TargetPlugin& cpu, const Function& f, const std::string& arch,
                           const CompileOptions& opt = {}) {
  const TargetInfo info = cpu.info_for_arch(arch);
  for (const PassEntry& p : cpu.pipeline(info, opt))
    if (p.name == "insert_prefetches") {
      Function out = p.run(f, info);
      verify(out);
      return out;
    }
  FAIL("the cpu pipeline has no insert_prefetches");
  return f;
}

// A lowered pipelined gemm, as the cpu pipeline leaves it before insert_prefetches: A's 12×16 f32
// tile is 12 lines, B's 16×16 one 16 lines (a line: 64 bytes, 16 floats).
const std::string kLowered =
    "func g(A: f32[24, 64] global, B: f32[64, 16] global, C: f32[24, 16] global) {\n"
    "  kernel grid(2) threads(1) -> (bx; tx) {\n"
    "    shared As: f32[12, 16]\n"
    "    shared Bs: f32[16, 16]\n"
    "    fragment Cf: f32[12, 16]\n"
    "    for i in parallel(0 +: 12) {\n"
    "      for j in parallel(0 +: 16) {\n"
    "        Cf[i, j] = 0.0\n"
    "      }\n"
    "    }\n"
    "    for ko in pipelined(0 +: 4, stages=2) {\n"
    "      for c0 in parallel(0 +: 12) {\n"
    "        for c1 in parallel(0 +: 16) {\n"
    "          As[c0, c1] = A[bx*12 + c0, ko*16 + c1]\n"
    "        }\n"
    "      }\n"
    "      for c0 in parallel(0 +: 16) {\n"
    "        for c1 in parallel(0 +: 16) {\n"
    "          Bs[c0, c1] = B[ko*16 + c0, c1]\n"
    "        }\n"
    "      }\n"
    "      gemm(As, Bs -> Cf)\n"
    "    }\n"
    "    for i in parallel(0 +: 12) {\n"
    "      for j in parallel(0 +: 16) {\n"
    "        C[bx*12 + i, j] = Cf[i, j]\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

// With AVX2 (8 floats a vector) the micro-tiles are 6×16: 2 of them, each prefetching half of
// A's next 12 lines and half of B's next 16.
const std::string kHints =
    "      gemm(As, Bs -> Cf) interleave t in steps(2) {\n"
    "        prefetch read A[bx*12 + t*6, ko*16 + 16] locality=3\n"
    "        prefetch read A[bx*12 + t*6 + 1, ko*16 + 16] locality=3\n"
    "        prefetch read A[bx*12 + t*6 + 2, ko*16 + 16] locality=3\n"
    "        prefetch read A[bx*12 + t*6 + 3, ko*16 + 16] locality=3\n"
    "        prefetch read A[bx*12 + t*6 + 4, ko*16 + 16] locality=3\n"
    "        prefetch read A[bx*12 + t*6 + 5, ko*16 + 16] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 16, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 17, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 18, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 19, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 20, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 21, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 22, 0] locality=3\n"
    "        prefetch read B[ko*16 + t*8 + 23, 0] locality=3\n"
    "      }\n";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

/// Every gemm's hints dropped: what the emitter gets when the pass decides nothing.
struct DropHints : IRMutator {
  Stmt visit(const ir::Gemm* op, const Stmt& self) override {
    if (!op->each_step) return self;
    auto g = std::make_shared<ir::Gemm>(*op);
    g->each_step = Stmt(), g->step = Var(), g->steps = 0;
    return Stmt(std::move(g));
  }
};

/// The gemms with hints, and the values their prefetches' indices take, buffer by buffer, for
/// every step, with the loop and block variables given: (buffer name → index tuples, in order).
struct PrefetchedLines : IRVisitor {
  std::vector<std::pair<Var, int64_t>> fixed;  // loop and block variables
  std::map<std::string, std::vector<std::vector<int64_t>>> lines;
  int gemms = 0;
  void visit(const ir::Gemm* op) override {
    if (!op->each_step) return;
    ++gemms;
    for (int64_t t = 0; t < op->steps; ++t) {
      std::vector<std::pair<Var, Expr>> at{{op->step, make_int(t, op->step.dtype())}};
      for (auto& [v, x] : fixed) at.push_back({v, make_int(x, v.dtype())});
      Stmt s = substitute(op->each_step, at);
      struct Take : IRVisitor {
        std::map<std::string, std::vector<std::vector<int64_t>>>* out;
        void visit(const ir::Prefetch* p) override {
          std::vector<int64_t> idx;
          for (const Expr& i : p->indices) {
            auto v = simplify_expr(i).as_int();
            REQUIRE(v);
            idx.push_back(*v);
          }
          (*out)[p->buffer->name].push_back(idx);
        }
      } take;
      take.out = &lines;
      take.visit_stmt(s);
    }
  }
};

Var var_named(const Function& f, const std::string& name) {
  struct Find : IRVisitor {
    std::string name;
    Var found;
    void visit(const ir::For* op) override {
      if (op->var.name() == name) found = op->var;
      IRVisitor::visit(op);
    }
    void visit(const ir::Kernel* op) override {
      for (const Var& v : op->block_vars)
        if (v.name() == name) found = v;
      IRVisitor::visit(op);
    }
  } f_;
  f_.name = name;
  f_.visit_stmt(f.body);
  REQUIRE(f_.found.defined());
  return f_.found;
}

}  // namespace

TEST_CASE("insert_prefetches: IR in, IR out") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const Function in = parse_function(kLowered, "lowered.tgir");
  verify(in);
  const Function out = insert_prefetches(*cpu, in, "haswell");
  CHECK(print(out) == with(kLowered, "      gemm(As, Bs -> Cf)\n", kHints));
  // The prefetches change nothing the interpreter computes.
  std::vector<float> a(24 * 64), b(64 * 16), c_in(24 * 16, -1.f), c_out(24 * 16, -2.f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 13) - 6.f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(i % 7) - 3.f;
  auto args = [&](std::vector<float>& c) {
    std::vector<HostArg> v(3);
    v[0].data = a.data(), v[0].shape = {24, 64};
    v[1].data = b.data(), v[1].shape = {64, 16};
    v[2].data = c.data(), v[2].shape = {24, 16};
    return v;
  };
  interpret(in, args(c_in));
  interpret(out, args(c_out));
  CHECK(c_in == c_out);
  // With AVX-512 (16 floats a vector) a 16-column C has no whole 8×48 micro-tile: no steps, no hints.
  CHECK(print(insert_prefetches(*cpu, in, "skylake-avx512")) == kLowered);
  // A serial loop promises no overlap and gets none; a loop without a gemm has nothing to hide them in.
  const std::string serial = with(kLowered, "pipelined(0 +: 4, stages=2)", "serial(0 +: 4)");
  CHECK(print(insert_prefetches(*cpu, parse_function(serial, "s.tgir"), "haswell")) == serial);
  const std::string no_gemm = with(kLowered, "      gemm(As, Bs -> Cf)\n", "");
  CHECK(print(insert_prefetches(*cpu, parse_function(no_gemm, "n.tgir"), "haswell")) == no_gemm);
  // A gemm nested in a loop of the pipelined one gets them too; the pass runs once (hints kept).
  const std::string nested = with(kLowered, "      gemm(As, Bs -> Cf)\n",
                                  "      gemm(As, Bs -> Cf)\n      for r in serial(0 +: 2) {\n"
                                  "        gemm(As, Bs -> Cf)\n      }\n");
  const Function twice = insert_prefetches(*cpu, parse_function(nested, "t.tgir"), "haswell");
  CHECK(count(print(twice), "interleave t in steps(2)") == 2);
  CHECK(print(insert_prefetches(*cpu, twice, "haswell")) == print(twice));
}

TEST_CASE("insert_prefetches: bf16 gemms in AMX tiles have no steps and get no hints") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  const Kernel k = tiled_gemm(bf16, false, false, 128, 128, 128, 48, 64, 32, true);
  auto lowered = [&](const std::string& arch, const CompileOptions& opt) {
    const TargetInfo info = cpu->info_for_arch(arch);
    return print(PassManager(cpu->pipeline(info, opt)).run(k.function(), info));
  };
  CompileOptions no_amx;
  no_amx.params["amx"] = "0";
  CHECK(count(lowered("sapphirerapids", {}), "prefetch read") == 0);
  CHECK(count(lowered("sapphirerapids", no_amx), "prefetch read") > 0);
  CHECK(count(lowered("skylake-avx512", {}), "prefetch read") > 0);
}

TEST_CASE("insert_prefetches: every line of the next iteration's tiles, shared out over the steps") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  // f32 tiles bm×16 of A (one line a row) and 16×48 of B (3 lines a row): step t prefetches lines
  // t·q .. t·q + q - 1 of each, q = ceil(lines / steps), so the steps take the lines in order and
  // the last ones run past the tile (harmless). AVX-512: 8×48 micro-tiles, a 24-row tile has 3
  // (q = 8 and 16: exact); AVX2 on a ragged 61×83×70: 6×16 micro-tiles, a 20-row tile has 3 × 3,
  // q = 3 and 6 (27 and 54 lines for 20 and 48), and the loads are under their bounds selects.
  struct Case {
    const char* arch;
    int64_t M, N, K, bm, steps;
  };
  for (const Case& c : {Case{"skylake-avx512", 64, 48, 64, 24, 3}, Case{"haswell", 61, 83, 70, 20, 9}}) {
    INFO(c.arch);
    const Kernel k = tiled_gemm(f32, false, false, c.M, c.N, c.K, c.bm, 48, 16, true);
    const TargetInfo info = cpu->info_for_arch(c.arch);
    // Whole tiles at the edges too (trim_edges=0): one gemm, whose steps cover the whole tiles;
    // and B copied a tile a step (gemm_panel_rows=0), so that its next lines are prefetched.
    CompileOptions whole_tiles;
    whole_tiles.params["trim_edges"] = "0";
    whole_tiles.params["gemm_panel_rows"] = "0";
    const Function f = PassManager(cpu->pipeline(info, whole_tiles)).run(k.function(), info);
    INFO(print(f));
    CHECK(count(print(f), "interleave t in steps(" + std::to_string(c.steps) + ")") == 1);
    const int64_t qa = (c.bm + c.steps - 1) / c.steps, qb = (48 + c.steps - 1) / c.steps;
    for (int64_t ko : {int64_t(0), (c.K + 15) / 16 - 1})
      for (int64_t by : {0, 1})
        for (int64_t bx : {int64_t(0), (c.N + 47) / 48 - 1}) {  // block indices of the grid
          INFO("ko ", ko, " by ", by, " bx ", bx);
          PrefetchedLines p;
          p.fixed = {{var_named(f, "ko"), ko}, {var_named(f, "by"), by}, {var_named(f, "bx"), bx}};
          p.visit_stmt(f.body);
          CHECK(p.gemms == 1);
          // Line l: A[by*bm + l, (ko + 1)*16] and B[(ko + 1)*16 + l/3, bx*48 + l%3*16].
          std::vector<std::vector<int64_t>> a, b;
          for (int64_t l = 0; l < c.steps * qa; ++l) a.push_back({by * c.bm + l, (ko + 1) * 16});
          for (int64_t l = 0; l < c.steps * qb; ++l)
            b.push_back({(ko + 1) * 16 + l / 3, bx * 48 + l % 3 * 16});
          CHECK(p.lines["A"] == a);
          CHECK(p.lines["B"] == b);
        }
  }
}

TEST_CASE("cpu prefetch: the code generator prefetches what the IR says, and nothing else") {
  TargetPlugin* cpu = cpu_plugin();
  if (!cpu) return;
  const TargetInfo info = cpu->info_for_arch("haswell");
  const Function hinted = insert_prefetches(*cpu, parse_function(kLowered, "lowered.tgir"), "haswell");
  // Two steps of 14 prefetches: the LLVM IR (before the loop over micro-tiles is unrolled, if
  // ever) holds the 14 calls once; without the hints it has none.
  const Artifact with_hints = cpu->codegen(hinted, info, {});
  CHECK(count(with_hints.source, "call void @llvm.prefetch") == 14);
  CHECK(count(with_hints.assembly, "prefetcht0") == 14);
  const Artifact without = cpu->codegen(DropHints().mutate_function(hinted), info, {});
  CHECK(count(without.source, "call void @llvm.prefetch") == 0);
  // A prefetch statement anywhere is one llvm.prefetch with its write flag and locality.
  const std::string one = with(kLowered, "      gemm(As, Bs -> Cf)\n",
                               "      gemm(As, Bs -> Cf)\n      prefetch write B[ko, 3] locality=1\n");
  const Artifact single = cpu->codegen(parse_function(one, "one.tgir"), info, {});
  CHECK(count(single.source, "call void @llvm.prefetch") == 1);
  CHECK(count(single.source, "i32 1, i32 1, i32 1)") == 1);
  // Hints in a step count the micro-kernel does not have are an error, not a silent guess.
  const std::string wrong = print(hinted);
  CHECK_THROWS_WITH_AS(cpu->codegen(parse_function(with(wrong, "steps(2)", "steps(3)"), "w.tgir"), info, {}),
                       doctest::Contains("carries this gemm out in 2 steps"), Error);
}

TEST_CASE("cpu prefetch: a pipelined gemm still equals the interpreter, ragged, every dtype and transpose") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  for (DType t : {f32, f16, bf16})
    for (int tr = 0; tr < 4; ++tr) {
      bool ta = tr & 1, tb = tr & 2;
      INFO(t.name() << " trans_a " << ta << " trans_b " << tb);
      // 61×83×70 in 24×48×16 tiles: ragged in M, N and K; whole 6×16 micro-tiles and edges.
      const int64_t M = 61, N = 83, K = 70;
      Kernel k = tiled_gemm(t, ta, tb, M, N, K, 24, 48, 16, true);
      std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
      std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      check_cpu_matches_interpreter(
          *cpu, k.function(),
          {random_array(as, t, rng()), random_array(bs, t, rng()), random_array({M, N}, f32, rng())}, {},
          1e-4);
    }
}

TEST_CASE("cpu prefetch: only a pipelined loop with a micro-kernel gemm prefetches its next tiles") {
  auto cpu = tg::testing::cpu_target_or_skip();
  if (!cpu) return;
  tg::testing::NoKernelCache no_cache;
  const std::string pipelined =
      cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, true)).assembly();
  const std::string serial =
      cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, false)).assembly();
  // 32 micro-tiles of 6×16 share A's next 48×32 tile (96 lines: 3 each) and B's next 32×64
  // tile (128 lines: 4 each); the serial loop promises no overlap and gets none.
  CHECK(count(pipelined, "prefetcht0") >= 7);
  CHECK(count(serial, "prefetch") == 0);
  CompileOptions plain;
  plain.params["gemm"] = "plain";  // no micro-kernel: the gemm is a loop nest, nothing to pipeline
  const CompiledKernel loops =
      cpu->compile(tiled_gemm(f32, false, false, 128, 128, 128, 48, 64, 32, true), plain);
  CHECK(count(loops.assembly(), "prefetch") == 0);
  // The pass is in the list `tilegen ir --after` shows, and it is what put them there.
  bool listed = false;
  for (auto& [name, text] : loops.stages()) listed = listed || name == "insert_prefetches";
  CHECK(listed);
}
