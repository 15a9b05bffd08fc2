// pipeline_shared: multi-buffered tiles with a prologue and prefetches, results unchanged;
// loops it cannot transform become serial.
#include "gpu_pass_test_util.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/partition_threads.h"
#include "tilegen/passes/pipeline_shared.h"

using namespace tg;
using namespace tg::test;

namespace {

const char* kPipelined = R"(
func mm(A: f32[16, 80] global, B: f32[80, 16] global, C: f32[16, 16] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared As: f32[16, 16]
    shared Bs: f32[16, 16]
    fragment Cf: f32[16, 16]
    fill Cf = 0.0
    for ko in pipelined(0 +: 5, stages=3) {
      copy A[0 +: 16, ko*16 +: 16] -> As
      copy B[ko*16 +: 16, 0 +: 16] -> Bs
      gemm(As, Bs -> Cf)
    }
    copy Cf -> C
  }
})";

}  // namespace

TEST_CASE("pipeline_shared: tiles get a stage dimension, a prologue and prefetches") {
  Function f = parse_function(kPipelined);
  Function g = pipeline_shared(f, nvidia_target_info(80));
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "shared As: f32[3, 16, 16]"));
  CHECK(contains(text, "for ko_pre in pipelined(0 +: 2, stages=3)"));
  CHECK(contains(text, "(ko + 2) % 3"));
  check_same_results(f, g);
  check_same_results(f, partition_threads(g, nvidia_target_info(80)));
}

TEST_CASE("pipeline_shared: too little shared memory lowers the depth; a tile read after the loop stops it") {
  TargetInfo small = nvidia_target_info(80);
  small.shared_mem_bytes = 8 * 1024;  // 3 KB of buffers + 2 KB a further stage, a quarter spare: two fit
  Function g = pipeline_shared(parse_function(kPipelined), small);
  CHECK(contains(print(g), "shared As: f32[2, 16, 16]"));

  Function f = parse_function(R"(
func keep(A: f32[64] global, C: f32[16] global) {
  kernel grid(1) threads(16) -> (bx; tx) {
    shared As: f32[16]
    for ko in pipelined(0 +: 4, stages=2) {
      copy A[ko*16 +: 16] -> As
    }
    copy As -> C
  }
})");
  Function h = pipeline_shared(f, nvidia_target_info(80));
  std::string text = print(h);
  INFO(text);
  CHECK(contains(text, "for ko in serial(0 +: 4)"));
  CHECK(contains(text, "shared As: f32[16]"));
  check_same_results(f, h);
}
