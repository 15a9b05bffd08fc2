// pipeline_shared: multi-buffered tiles with a prologue and prefetches, results unchanged;
// loops it cannot transform become serial.
#include "gpu_pass_test_util.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/pipeline_shared.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

namespace {

// 16×16×80 in f32: K in five tiles of 16, pipelined three deep.
const std::string kPipelined = GemmKernel{.k = 80, .k_tile = 16, .stages = 3}.text();

}  // namespace

TEST_CASE("pipeline_shared: tiles get a stage dimension, a prologue and prefetches") {
  PassRun r = run_pass(kPipelined, pipeline_shared);
  INFO(r.text);
  CHECK(contains(r.text, "shared As: f32[3, 16, 16]"));
  CHECK(contains(r.text, "for ko_pre in pipelined(0 +: 2, stages=3)"));
  CHECK(contains(r.text, "(ko + 2) % 3"));
  check_same_results(r.before, r.after);
  check_same_results(r.before, partition_threads(r.after, test::sm80()));
}

TEST_CASE("pipeline_shared: too little shared memory lowers the depth; a tile read after the loop stops it") {
  TargetInfo small = test::sm80();
  small.shared_mem_bytes = 8 * 1024;  // 3 KB of buffers + 2 KB a further stage, a quarter spare: two fit
  CHECK(contains(run_pass(kPipelined, pipeline_shared, small).text, "shared As: f32[2, 16, 16]"));

  PassRun r = run_pass(R"(
func keep(A: f32[64] global, C: f32[16] global) {
  kernel grid(1) threads(16) -> (bx; tx) {
    shared As: f32[16]
    for ko in pipelined(0 +: 4, stages=2) {
      copy A[ko*16 +: 16] -> As
    }
    copy As -> C
  }
})",
                       pipeline_shared);
  INFO(r.text);
  CHECK(contains(r.text, "for ko in serial(0 +: 4)"));
  CHECK(contains(r.text, "shared As: f32[16]"));
  check_same_results(r.before, r.after);
}

namespace {

// Every store inside the K loop into a two-slot tile made to fill the slot being read.
struct FillTheReadSlot : IRMutator {
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    if (op->buffer->scope != Scope::Shared || op->indices.size() != 3 || op->indices[0].as_int()) return self;
    auto n = std::make_shared<ir::Store>(*op);
    n->indices[0] = simplify_expr(n->indices[0] + 1) % 2;  // (ko + 1) % 2 → (ko + 2) % 2
    return Stmt(std::move(n));
  }
};

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("partition_threads: a two-slot pipelined loop keeps one barrier an iteration, after its reads") {
  // The fill of slot (ko + 1) % 2 and the reads of slot ko % 2 touch different elements; the
  // barrier after the reads separates them from the next iteration's fill of the same slot.
  Function f = parse_function(GemmKernel{.k = 80, .k_tile = 16, .stages = 2}.text());
  Function g = partition_threads(pipeline_shared(f, test::sm80()), test::sm80());
  std::string text = print(g);
  INFO(text);
  const std::string loop = text.substr(text.find("for ko in pipelined"));
  const std::string body = loop.substr(0, loop.find("\n    }\n"));
  CHECK(count_of(body, "barrier") == 1);
  CHECK(body.rfind("barrier") > body.rfind("Bs[ko % 2"));  // after the last read
  check_same_results(f, g);
  // The race detector checks the schedule: filling the slot being read is reported.
  Function wrong = g;
  wrong.body = FillTheReadSlot().mutate(g.body);
  std::string error;
  try {
    run_on_random(wrong, 3);
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error.find("race") != std::string::npos);
  // Three slots keep the barrier before the fill too: the prologue's last tile is read first.
  Function three = partition_threads(pipeline_shared(parse_function(kPipelined), test::sm80()), test::sm80());
  check_same_results(parse_function(kPipelined), three);
}
