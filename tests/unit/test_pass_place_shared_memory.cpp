// place_shared_memory: the shared-memory plan as IR (`placed OFFSET +: BYTES`), read back by the
// parser, judged by the verifier, checked by the interpreter (a read of bytes another buffer
// took is an error), and the only source of the GPU source targets' shared-memory offsets.
#include "gpu_pass_test_util.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/pad_shared_tiles.h"
#include "tilegen/passes/place_shared_memory.h"
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
#include "cuda_codegen.h"
#include "tilegen/passes/gpu_pipeline.h"
#endif

using namespace tg;
using namespace tg::test;

namespace {

// flash_attention's shape of the bug the H200 found: V is loaded, P is written, then V is read.
// `v_at` and `p_at` are the two placements.
std::string two_phase(int v_at, int p_at) {
  return R"(
func ld(X: f32[64] global, Y: f32[64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared V: f32[64] placed )" +
         std::to_string(v_at) + R"( +: 256
    shared P: f32[64] placed )" +
         std::to_string(p_at) + R"( +: 256
    V[tx] = X[tx]
    barrier
    P[tx] = X[63 - tx] * 2.0
    barrier
    Y[tx] = V[63 - tx] + P[tx]
  }
})";
}

TargetInfo small_device() {
  TargetInfo info;
  info.target = "test";
  info.device_name = "a test device";
  info.shared_mem_bytes = 48 * 1024;
  return info;
}

}  // namespace

TEST_CASE("place_shared_memory: placements print and parse back") {
  Function f = parse_function(two_phase(0, 256));
  std::string text = print(f);
  CHECK(text.find("shared V: f32[64] placed 0 +: 256") != std::string::npos);
  CHECK(text.find("shared P: f32[64] placed 256 +: 256") != std::string::npos);
  CHECK(print(parse_function(text)) == text);
}

TEST_CASE("place_shared_memory: the verifier judges placements") {
  CHECK_THROWS_WITH_AS(verify(parse_function(two_phase(0, 8))), doctest::Contains("not a multiple of 16"), Error);
  std::string partial = two_phase(0, 256);
  partial.replace(partial.find(" placed 256 +: 256"), std::string(" placed 256 +: 256").size(), "");
  CHECK_THROWS_WITH_AS(verify(parse_function(partial)), doctest::Contains("places 1 of its 2 shared buffers"), Error);
  std::string small = two_phase(0, 256);
  small.replace(small.find("placed 256 +: 256"), std::string("placed 256 +: 256").size(), "placed 256 +: 128");
  CHECK_THROWS_WITH_AS(verify(parse_function(small)), doctest::Contains("placed in 128 bytes but holds 256"), Error);
  std::string local = "func l(Y: f32[4] global) { kernel grid(1) threads(4) -> (bx; tx) {\n"
                      "  local R: f32[4] placed 0 +: 16\n  Y[tx] = 1.0\n} }";
  CHECK_THROWS_WITH_AS(parse_function(local), doctest::Contains("only a shared buffer is placed"), Error);
}

TEST_CASE("place_shared_memory: the interpreter reports a read of bytes another buffer took") {
  // Apart: right. On the same bytes: V is read after P overwrote them.
  std::vector<std::vector<double>> out = run_on_random(parse_function(two_phase(0, 256)), 3);
  for (int i = 0; i < 64; ++i)
    CHECK(out[1][std::size_t(i)] == out[0][std::size_t(63 - i)] + 2 * out[0][std::size_t(63 - i)]);
  CHECK_THROWS_WITH_AS(run_on_random(parse_function(two_phase(0, 0)), 3),
                       doctest::Contains("shared buffer V[63] is read by thread 0 after P, placed on bytes it shares"),
                       Error);
  // A partial overlap is an overlap.
  CHECK_THROWS_WITH_AS(run_on_random(parse_function(two_phase(0, 128)), 3),
                       doctest::Contains("(V at bytes 0 +: 256, P at bytes 128 +: 256)"), Error);
}

TEST_CASE("place_shared_memory: buffers a barrier separates share bytes, live ones do not") {
  Function f = parse_function(kSharedPhases);
  Function placed = place_shared_memory(f, small_device());
  verify(placed);
  std::string text = print(placed);
  CHECK(text.find("shared A: f32[256] placed 0 +: 1024") != std::string::npos);
  CHECK(text.find("shared B: f32[256] placed 0 +: 1024") != std::string::npos);
  CHECK(text.find("shared C: f32[8] placed 1024 +: 32") != std::string::npos);
  check_same_results(f, placed);  // and the interpreter's overlap check holds on the plan
  TargetInfo tiny = small_device();
  tiny.shared_mem_bytes = 1024;
  CHECK_THROWS_WITH_AS(place_shared_memory(f, tiny), doctest::Contains("a test device"), Error);
}

#ifdef TILEGEN_HAVE_CUDA_CODEGEN
TEST_CASE("place_shared_memory: the GPU source declares buffers where the IR places them") {
  TargetInfo info = test::sm80();
  std::string cu = cuda::emit_cuda(parse_function(two_phase(512, 1024)), info);
  CHECK(cu.find("V = reinterpret_cast<float*>(tg_smem + 512)") != std::string::npos);
  CHECK(cu.find("P = reinterpret_cast<float*>(tg_smem + 1024)") != std::string::npos);
  std::string unplaced = two_phase(0, 256);
  for (const char* p : {" placed 0 +: 256", " placed 256 +: 256"}) unplaced.replace(unplaced.find(p), std::string(p).size(), "");
  CHECK_THROWS_WITH_AS(cuda::emit_cuda(parse_function(unplaced), info),
                       doctest::Contains("has no place in shared memory: the pass place_shared_memory"), Error);
}
#endif

TEST_CASE("pad_shared_tiles: rows of a multiple of 32 bytes get 16 bytes more, in the IR") {
  Function f = parse_function(R"(
func tiles(X: f16[64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared A: f16[8, 32]
    shared B: f32[4, 30]
    shared C: f16[8, 16] layout=padded(4)
    shared D: f32[64]
    A[0, tx % 32] = X[tx]
    B[0, tx % 30] = 1.0
    C[0, tx % 16] = X[tx]
    D[tx] = 2.0
  }
})");
  Function padded = pad_shared_tiles(f, small_device());
  verify(padded);
  std::string text = print(padded);
  CHECK(text.find("shared A: f16[8, 32] layout=padded(8)") != std::string::npos);  // 64-byte rows
  CHECK(text.find("shared B: f32[4, 30]\n") != std::string::npos);                  // 120-byte rows
  CHECK(text.find("shared C: f16[8, 16] layout=padded(4)") != std::string::npos);   // the user's
  CHECK(text.find("shared D: f32[64]\n") != std::string::npos);                     // rank 1
  // The plan counts the padding: A takes 8 rows of 40 halves.
  std::string placed = print(place_shared_memory(padded, small_device()));
  CHECK(placed.find("shared A: f16[8, 32] layout=padded(8) placed") != std::string::npos);
  CHECK(placed.find("+: 640") != std::string::npos);
}
