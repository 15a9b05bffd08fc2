// plan_shared_memory: buffers whose lifetimes are separated by a barrier share bytes; others do
// not; a kernel over the limit is an error naming the buffers to shrink.
#include "gpu_pass_test_util.h"
#include "tilegen/passes/shared_memory_plan.h"

using namespace tg;
using namespace tg::test;

namespace {

int64_t plain_bytes(const Buffer& b) { return int64_t(storage_bytes(b->dtype, *b.const_numel())); }

const ir::Kernel& kernel_of(const Function& f) { return *f.body.as<ir::Kernel>(); }

int64_t offset_of(const SharedMemoryPlan& p, const std::string& name) {
  for (auto& [b, off] : p.offsets)
    if (b->name == name) return off;
  return -1;
}

}  // namespace

TEST_CASE("shared memory plan: a barrier between two lifetimes lets buffers share bytes") {
  Function f = parse_function(kSharedPhases);
  SharedMemoryPlan p = plan_shared_memory(kernel_of(f), plain_bytes, 48 * 1024);
  CHECK(offset_of(p, "A") == offset_of(p, "B"));  // A dies before the barrier at statement 3
  CHECK(offset_of(p, "C") != offset_of(p, "B"));  // C and B live together
  CHECK(p.bytes == 1024 + 32);
}

// flash_attention on the H200 read NaN: V_shared, read only by ldmatrix, was placed on top of
// P_shared, written after V was loaded and before the ldmatrix read it.
TEST_CASE("shared memory plan: a buffer that only ldmatrix reads lives until that read") {
  Function f = parse_function(R"(
func ld(X: f16[256] global, Y: f32[32] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    shared V: f16[16, 16]
    shared P: f16[256]
    local regs: f16[8]
    for i in serial(0 +: 8) {
      V[i*2 + tx / 16, tx % 16] = X[i*32 + tx]
    }
    barrier
    for i in serial(0 +: 8) {
      P[i*32 + tx] = X[255 - i*32 - tx]
    }
    barrier
    ldmatrix x4 V[tx % 16, tx / 16 * 8] -> regs[0]
    Y[tx] = cast<f32>(regs[0]) + cast<f32>(P[tx])
  }
})");
  SharedMemoryPlan p = plan_shared_memory(kernel_of(f), plain_bytes, 48 * 1024);
  CHECK(offset_of(p, "V") != offset_of(p, "P"));
  CHECK(p.bytes == 1024);
}

TEST_CASE("shared memory plan: without a barrier between them, buffers stay apart") {
  Function f = parse_function(R"(
func close(X: f32[64] global, Y: f32[64] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    shared A: f32[64]
    shared B: f32[64]
    A[tx] = X[tx]
    B[tx] = X[tx]
    barrier
    Y[tx] = A[63 - tx] + B[tx]
  }
})");
  SharedMemoryPlan p = plan_shared_memory(kernel_of(f), plain_bytes, 48 * 1024);
  CHECK(offset_of(p, "A") != offset_of(p, "B"));
  CHECK(p.bytes == 512);
  CHECK_THROWS_WITH_AS(plan_shared_memory(kernel_of(f), plain_bytes, 300, "a small GPU"),
                       doctest::Contains("shrink the block's tiles: A (256 B), B (256 B)"), Error);
}
