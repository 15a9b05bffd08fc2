// async_copies (cuda's cp.async, as IR): which stores become asynchronous and where each group is
// waited for are in the lowered IR, and the interpreter executes them as late as that IR allows,
// so a missing or misplaced wait is a reported error rather than a race on the H200.
#include <doctest/doctest.h>

#include <random>

#include "gpu_targets.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/async_copies.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

Function lowered_gemm(int64_t M, int64_t N, int64_t K, int64_t stages = 3) {
  const Sample& s = *find("gemm");
  Params p = resolve(
      s, {{"M", M}, {"N", N}, {"K", K}, {"block_M", 32}, {"block_N", 32}, {"block_K", 16}, {"stages", stages}});
  Function f = bind_sizes(s.build(p, f32).function(), {});
  std::vector<PassEntry> passes = gpu_pipeline();
  passes.push_back({"pad_shared_tiles", pad_shared_tiles});  // as cuda's pipeline: padded rows
  passes.push_back({"async_copies", async_copies});
  return PassManager(passes).run(f, test::sm80());
}

// C = A·B in the interpreter on small random integers (exact), C poisoned first; the error text,
// or "" when it ran and C is right.
std::string run_gemm(const Function& f, int64_t M, int64_t N, int64_t K) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-3, 3);
  std::vector<float> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N), -777.0f);
  for (float& x : a) x = float(d(rng));
  for (float& x : b) x = float(d(rng));
  std::vector<HostArg> args(3);
  args[0].data = a.data(), args[0].shape = {M, K};
  args[1].data = b.data(), args[1].shape = {K, N};
  args[2].data = c.data(), args[2].shape = {M, N};
  try {
    interpret(f, args);
  } catch (const Error& e) {
    return e.what();
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (int64_t k = 0; k < K; ++k) want += double(a[std::size_t(i * K + k)]) * b[std::size_t(k * N + j)];
      if (c[std::size_t(i * N + j)] != float(want)) return "wrong C[" + std::to_string(i) + ", " + std::to_string(j) + "]";
    }
  return "";
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Rewrites every AsyncWait: dropped, moved after the barrier that follows it, or made to leave
// one more group in flight.
struct EditWaits : IRMutator {
  bool keep_after_barrier = false, loosen = false;
  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> out;
    for (std::size_t i = 0; i < op->stmts.size(); ++i) {
      Stmt s = mutate(op->stmts[i]);
      if (s->kind != ir::StmtKind::AsyncWait) {
        out.push_back(s);
        continue;
      }
      if (loosen) {
        auto w = std::make_shared<ir::AsyncWait>(*s.as<ir::AsyncWait>());
        ++w->in_flight;
        out.push_back(Stmt(std::move(w)));
        continue;
      }
      if (!keep_after_barrier) continue;
      if (i + 1 < op->stmts.size() && op->stmts[i + 1]->kind == ir::StmtKind::Barrier) {
        out.push_back(op->stmts[i + 1]);
        ++i;
      }
      out.push_back(s);
    }
    (void)self;
    return make_seq(std::move(out), op->loc);
  }
};

}  // namespace

TEST_CASE("async_copies: the pipelined fills become async stores, waited for before the barrier") {
  Function f = lowered_gemm(64, 64, 128);  // 8 K-iterations, 3 stages: fills in the main loop
  std::string ir = print(f);
  INFO(ir);
  CHECK(count(ir, "async ") > 0);
  // Barrier thinning leaves the main loop one barrier, after this iteration's reads: the wait
  // before it completes the next iteration's tile, so stages - 2 = 1 group stays in flight; the
  // prologue's loop leaves as many, its first tile complete before the main loop reads it.
  CHECK(count(ir, "async_wait 1") == 2);
  CHECK(count(ir, "async_wait 2") == 0);
  // Each wait comes right before a barrier, never after the reads it protects.
  for (auto at = ir.find("async_wait 1"); at != std::string::npos; at = ir.find("async_wait 1", at + 1)) {
    std::size_t next = ir.find('\n', at) + 1;
    CHECK(ir.compare(ir.find_first_not_of(' ', next), 7, "barrier") == 0);
  }
  CHECK(run_gemm(f, 64, 64, 128) == "");
  // With the interpreter's race detector (on by default), the IR's waits are checked exactly:
  // none, or each leaving one group more in flight, reads a tile still in flight.
  EditWaits drop;
  std::string missing = run_gemm(drop.mutate_function(f), 64, 64, 128);
  CHECK(missing.find("while an async copy into it is in flight") != std::string::npos);
  EditWaits loose;
  loose.loosen = true;
  std::string early = run_gemm(loose.mutate_function(f), 64, 64, 128);
  INFO(early);
  CHECK(early.find("while an async copy into it is in flight") != std::string::npos);
  // Without race detection a missing wait is a wrong answer, not silence: reads see the old tile.
}

TEST_CASE("async_copies: a wait moved after its barrier is caught") {
  // Two stages: the main loop's one barrier is its only separation of the tiles.
  Function f = lowered_gemm(64, 64, 128, 2);
  std::string ir = print(f);
  INFO(ir);
  CHECK(count(ir, "async_wait 0") == 1);
  CHECK(run_gemm(f, 64, 64, 128) == "");
  EditWaits late;
  late.keep_after_barrier = true;
  std::string after = run_gemm(late.mutate_function(f), 64, 64, 128);
  INFO(after);
  CHECK((after.find("in flight") != std::string::npos || after.find("race on shared") != std::string::npos));
}

TEST_CASE("async_copies: a main loop left without fills still waits for the prologue's groups") {
  // K = 32: two iterations of 16 with three stages, every tile from the prologue.
  Function f = lowered_gemm(64, 64, 32);
  std::string ir = print(f);
  INFO(ir);
  CHECK(count(ir, "async_wait 1") == 1);  // the prologue's loop
  CHECK(count(ir, "async_wait 2") == 1);  // the main loop, a wait an iteration
  CHECK(run_gemm(f, 64, 64, 32) == "");
  EditWaits drop;
  CHECK(run_gemm(drop.mutate_function(f), 64, 64, 32) != "");
}

TEST_CASE("async_copies: nothing changes where the target has no asynchronous copies") {
  const Sample& s = *find("gemm");
  Params p = resolve(s, {{"M", 64}, {"N", 64}, {"K", 128}});
  Function f = bind_sizes(s.build(p, f32).function(), {});
  TargetInfo amd = test::gfx90a();
  Function lowered = PassManager(gpu_pipeline()).run(f, amd);
  CHECK(print(async_copies(lowered, amd)) == print(lowered));
}

TEST_CASE("async stores and async_wait: printed, parsed back, and checked by the verifier") {
  const std::string text =
      "func f(G: f32[64] global) {\n"
      "  kernel grid(1) threads(64) -> (bx; tx) {\n"
      "    shared S: f32[64]\n"
      "    async S[tx] = G[tx]\n"
      "    async_wait 0\n"
      "    barrier\n"
      "    G[tx] = S[63 - tx]\n"
      "  }\n"
      "}\n";
  Function f = parse_function(text, "t.tgir");
  std::string printed = print(f);
  CHECK(printed.find("async S[tx] = G[tx]") != std::string::npos);
  CHECK(printed.find("async_wait 0") != std::string::npos);
  CHECK(print(parse_function(printed)) == printed);
  std::vector<float> g(64);
  for (int i = 0; i < 64; ++i) g[std::size_t(i)] = float(i);
  std::vector<HostArg> args(1);
  args[0].data = g.data(), args[0].shape = {64};
  interpret(f, args);
  for (int i = 0; i < 64; ++i) CHECK(g[std::size_t(i)] == float(63 - i));
  // Never waited for: the kernel ends with the copy in flight.
  std::string no_wait = text;
  no_wait.replace(no_wait.find("    async_wait 0\n"), 17, "");
  CHECK_THROWS_WITH_AS(interpret(parse_function(no_wait, "t.tgir"), args),
                       doctest::Contains("in flight"), Error);
  // A wait with no copies since the last commits an empty group; one left in flight at the end
  // holds nothing to report (UBSan found the end-of-kernel check reading its first copy).
  std::string empty_group = text;
  empty_group.replace(empty_group.find("    async_wait 0\n"), 17, "    async_wait 0\n    async_wait 1\n");
  interpret(parse_function(empty_group, "t.tgir"), args);
  // ... and a copy behind an empty group is still reported.
  std::string behind = text;
  behind.replace(behind.find("    async S[tx] = G[tx]\n    async_wait 0\n"), 41, "    async_wait 1\n    async S[tx] = G[tx]\n    async_wait 1\n");
  CHECK_THROWS_WITH_AS(interpret(parse_function(behind, "t.tgir"), args), doctest::Contains("in flight"), Error);
  // Only global → shared of one dtype is an async copy.
  std::string wrong = text;
  wrong.replace(wrong.find("async S[tx] = G[tx]"), 19, "async S[tx] = G[tx] * 2.0");
  CHECK_THROWS_WITH_AS(verify(parse_function(wrong, "t.tgir")), doctest::Contains("an asynchronous copy moves one element"),
                       Error);
}
