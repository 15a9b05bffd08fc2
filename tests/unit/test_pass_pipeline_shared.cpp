// pipeline_shared: multi-buffered tiles with a prologue and prefetches, results unchanged;
// loops it cannot transform become serial.
#include "gpu_pass_test_util.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/pipeline_shared.h"

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
