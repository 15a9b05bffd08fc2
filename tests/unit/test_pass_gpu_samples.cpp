// Every sample, lowered by the cuda target's whole pipeline for sm_80 and sm_90 (mma.sync m16n8k16,
// 32-lane warps, cp.async as async stores and waits, row reductions by shuffles), at its test
// shapes and the conformance suite's default-tile ones, executed by the interpreter with its race detection:
// the per-thread code, the barriers, the async copies' waits and the matrix-unit layouts must
// reproduce the float64 reference. Without the cuda plugin in the build (the sanitizer build),
// the shared GPU pipeline alone.
#include <doctest/doctest.h>

#include "gpu_targets.h"
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
#include "cuda_plugin.h"
#endif
#include "sample_test_util.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/runtime.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::samples;

namespace {

void check_sample(const Sample& s, DType t, int sm, bool default_tiles, bool arch_specific = false,
                  bool bulk = false, bool roles = false, bool wgmma_all = false) {
  std::mt19937_64 rng(7);
#ifdef TILEGEN_HAVE_CUDA_CODEGEN
  static const std::unique_ptr<TargetPlugin> plugin(cuda::make_plugin());  // the linked code generator
  TargetPlugin* cuda = plugin.get();
#else
  TargetPlugin* cuda = nullptr;
  MESSAGE("the shared gpu pipeline only: the build has no cuda code generator");
#endif
  TargetInfo info = cuda ? cuda->info_for_arch("sm_" + std::to_string(sm) + (arch_specific ? "a" : ""))
                         : test::nvidia(sm, arch_specific);
  CompileOptions opt;
  if (bulk) opt.params["tma"] = "1";  // cuda's switch for the pass bulk_copies
  if (roles) opt.params["warp_roles"] = "1";  // and for warp_roles
  if (wgmma_all) opt.params["wgmma_trans_b"] = opt.params["wgmma_rows"] = "1";  // and for wgmma's reach
  if (wgmma_all && roles) opt.params["issue_ahead"] = "1";  // and the early issue in the roles' loop
  if (!cuda) info.bulk_copy = bulk;
  if (!cuda) info.async_mma_trans_b = info.async_mma_rows = info.async_mma_register_a = wgmma_all;
  PassManager pm(cuda ? cuda->pipeline(info, opt) : gpu_pipeline());
  for (size_t i = 0; i < s.test_shapes.size(); ++i) {
    if (s.test_shape_info[i].conformance_only != default_tiles) continue;
    testing::check_lowered_sample(s, t, i, pm, info, rng);
  }
}

}  // namespace

TEST_CASE("gpu pipeline on every sample and dtype: the interpreter reproduces the references") {
  for (int sm : {80, 90})
    for (const Sample& s : all())
      for (DType t : s.dtypes) {
        SUBCASE(("sm_" + std::to_string(sm) + " " + s.name + " " + std::string(t.name())).c_str()) {
          check_sample(s, t, sm, false);
        }
      }
}

// sm_90a: the gemms wgmma takes (async mmas on swizzled shared tiles, their fences and waits).
TEST_CASE("gpu pipeline for sm_90a on every sample and dtype: the interpreter reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE(("sm_90a " + s.name + " " + std::string(t.name())).c_str()) {
        check_sample(s, t, 90, false, true);
      }
    }
}

// sm_90a with bulk tensor copies on mbarriers (--param tma=1): the fills the copy engine can do
// become one thread's boxes, every thread waiting for its slot's phase.
TEST_CASE("gpu pipeline for sm_90a with bulk copies on every sample and dtype: the interpreter reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE(("sm_90a tma " + s.name + " " + std::string(t.name())).c_str()) {
        check_sample(s, t, 90, false, true, true);
      }
    }
}

// The same with warp roles (--param warp_roles=1): a producer warp issues the bulk copies, the
// block's threads arrive on a slot's `empty` mbarrier where a barrier ordered its refill; the
// interpreter runs the roles side by side, switching at the mbarrier waits.
TEST_CASE(
    "gpu pipeline for sm_90a with bulk copies and warp roles on every sample and dtype: the interpreter "
    "reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE(("sm_90a roles " + s.name + " " + std::string(t.name())).c_str()) {
        check_sample(s, t, 90, false, true, true, true);
      }
    }
}

// sm_90a with wgmma wherever it reaches (--param wgmma_trans_b=1,wgmma_rows=1): trans_B gemms with
// B K-major, accumulators whose rows are reduced (gemm_softmax, attention's scores) in wgmma
// registers, and P·V reading P from registers (the RS form): flash_attention on wgmma throughout.
TEST_CASE(
    "gpu pipeline for sm_90a with wgmma_trans_b and wgmma_rows on every sample and dtype: the interpreter "
    "reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE(("sm_90a wgmma " + s.name + " " + std::string(t.name())).c_str()) {
        check_sample(s, t, 90, false, true, false, false, true);
      }
    }
}

// Everything sm_90a has, together: bulk copies, warp roles, wgmma wherever it reaches, and
// issue_ahead (flash_attention's next Q·Kᵀ issued beside its softmax).
TEST_CASE("gpu pipeline for sm_90a with every Hopper switch on every sample and dtype: the interpreter "
          "reproduces the references") {
  for (const Sample& s : all())
    for (DType t : s.dtypes) {
      SUBCASE(("sm_90a all " + s.name + " " + std::string(t.name())).c_str()) {
        check_sample(s, t, 90, false, true, true, true, true);
      }
    }
}

// Two cases (every other sample each): among the slowest unit tests under ASan, split so that
// the ctest shards share them.
static void check_default_tiles(std::size_t parity) {
  for (std::size_t i = parity; i < all().size(); i += 2)
    for (DType t : all()[i].dtypes) {
      SUBCASE((all()[i].name + " " + std::string(t.name())).c_str()) { check_sample(all()[i], t, 90, true); }
    }
}

TEST_CASE(
    "gpu pipeline at the conformance suite's default tiles (sm_90), even samples: the interpreter reproduces "
    "the references") {
  check_default_tiles(0);
}

TEST_CASE(
    "gpu pipeline at the conformance suite's default tiles (sm_90), odd samples: the interpreter reproduces "
    "the references") {
  check_default_tiles(1);
}

namespace {

// Every kernel of f, with the bytes of its block-shared buffers summed as a Vulkan module declares
// them (one Workgroup array each, no overlap).
std::vector<int64_t> shared_bytes_per_kernel(const Function& f) {
  std::vector<const ir::Kernel*> kernels;
  if (const auto* k = f.body.as<ir::Kernel>()) kernels.push_back(k);
  if (const auto* s = f.body.as<ir::Seq>())
    for (const Stmt& st : s->stmts)
      if (const auto* k = st.as<ir::Kernel>()) kernels.push_back(k);
  std::vector<int64_t> out;
  for (const ir::Kernel* k : kernels) {
    int64_t bytes = 0;
    for (const Buffer& b : k->buffers)
      if (b->scope == Scope::Shared || b->scope == Scope::Fragment)
        bytes += int64_t(storage_bytes(b->dtype, *b.const_numel()));
    out.push_back(bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("gpu pipeline without matrix units (lavapipe-like): gemm f32 at default tiles fits 32 KiB") {
  TargetInfo info;  // 8-lane subgroups, no cooperative matrices, 32 KiB of Workgroup memory
  info.target = "vulkan";
  info.device_name = "lavapipe-like";
  info.software = true;
  info.warp_size = 8;
  info.shared_mem_bytes = 32 * 1024;
  const Sample& s = *find("gemm");
  PassManager pm(gpu_pipeline());
  std::mt19937_64 rng(11);
  for (Params shape : {Params{{"M", 130}, {"N", 140}, {"K", 72}},
                       Params{{"M", 100}, {"N", 129}, {"K", 40}, {"trans_A", 1}, {"trans_B", 1}}}) {
    Params p = resolve(s, shape);  // block 128×128×32, 128 threads
    REQUIRE(p.at("block_M") == 128);
    Function f = s.build(p, f32).function();
    Problem pr = s.make_problem(p, f32, rng);
    Function lowered = pm.run(bind_sizes(f, infer_sizes(f, testing::tensor_shapes(f, pr))), info);
    std::string text = print(lowered);
    INFO(text);
    CHECK(text.find("local C_local: f32[128]") != std::string::npos);  // 8×16 threads, 16×8 each
    for (int64_t bytes : shared_bytes_per_kernel(lowered)) CHECK(bytes <= 32 * 1024);
    interpret(lowered, host_args(lowered, pr));
    testing::check_outputs(pr, s.tolerance(p, f32));
  }
}
