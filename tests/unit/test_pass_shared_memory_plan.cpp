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
  Function f = parse_function(R"(
func phases(X: f32[256] global, Y: f32[256] global) {
  kernel grid(1) threads(256) -> (bx; tx) {
    shared A: f32[256]
    shared B: f32[256]
    shared C: f32[8]
    A[tx] = X[tx]
    barrier
    Y[tx] = A[255 - tx]
    barrier
    B[tx] = Y[tx] * 2.0
    C[tx % 8] = 1.0
    barrier
    Y[tx] = B[255 - tx] + C[0]
  }
})");
  SharedMemoryPlan p = plan_shared_memory(kernel_of(f), plain_bytes, 48 * 1024);
  CHECK(offset_of(p, "A") == offset_of(p, "B"));  // A dies before the barrier at statement 3
  CHECK(offset_of(p, "C") != offset_of(p, "B"));  // C and B live together
  CHECK(p.bytes == 1024 + 32);
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
