// Barrier placement of the GPU lowering (drop_redundant_barriers in partition_threads): kernels
// where a statement that touches no block memory sits between a shared write and its reader
// (issue 11). Each kernel runs in the interpreter on its builder IR (the oracle, race detection
// on), then lowered for cuda sm_80 and sm_90, hip gfx90a and gfx942 and a vulkan device, each
// lowered function executed by the interpreter with its race detector, then for real on cpu,
// vulkan, cuda and hip where those targets are available (cpu and lavapipe in CI). Outputs are poisoned before every run.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

#include "gpu_targets.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/gpu_pipeline.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/runtime.h"
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include "spirv_codegen.h"
#endif

using namespace tg;

namespace {

constexpr float kPoison = -777.0f;

// Tensors of f32 (inputs random small integers, exact in every order of summation; outputs
// poisoned) and one i32 scalar `c`, as the kernels below take them.
struct Inputs {
  std::vector<std::vector<float>> data;
  std::vector<std::vector<int64_t>> shapes;
  int64_t c = 0;

  Inputs(const Function& f, unsigned seed, int64_t c_value) : c(c_value) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(-4, 4);
    for (const Buffer& t : f.tensors()) {
      std::vector<int64_t> shape;
      for (const Expr& d : t->shape) shape.push_back(*d.as_int());
      std::vector<float> v(std::size_t(*t.const_numel()));
      bool output = t->name[0] == 'Y' || t->name[0] == 'C';
      for (float& x : v) x = output ? kPoison : float(dist(rng));
      data.push_back(std::move(v));
      shapes.push_back(std::move(shape));
    }
  }

  std::vector<HostArg> host_args(const Function& f) {
    std::vector<HostArg> args;
    std::size_t t = 0;
    for (const Param& p : f.params) {
      HostArg a;
      if (p.kind == Param::Kind::Tensor) {
        a.data = data[t].data();
        a.shape = shapes[t];
        a.dtype = f32;
        ++t;
      } else {
        a.is_tensor = false;
        a.scalar = Scalar::of_int(c);
        a.dtype = i32;
      }
      args.push_back(a);
    }
    return args;
  }
};

void check_equal(const Inputs& want, const Inputs& got, const std::string& where) {
  for (std::size_t t = 0; t < want.data.size(); ++t)
    for (std::size_t i = 0; i < want.data[t].size(); ++i) {
      INFO(where << ": tensor " << t << " element " << i);
      REQUIRE(got.data[t][i] == want.data[t][i]);
    }
}

std::vector<TargetInfo> gpu_infos() {
  std::vector<TargetInfo> infos = {test::sm80(), test::sm90(), test::gfx90a(),
                                   test::gfx942()};
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
  vulkan::Features vf;
  vf.subgroup_size = 32;
  vf.coopmat_units = {"coopmat_16x16x16_f16_f32"};
  infos.push_back(vulkan::target_info(vf, "test Vulkan device", false));
#endif
  return infos;
}

// The oracle's answer, then every lowering and every real target checked against it.
void check_everywhere(const Kernel& k, int64_t c = 0) {
  const Function& f = k.function();
  Inputs want(f, 3, c);
  interpret(f, want.host_args(f));  // also proves the kernel itself race-free
  for (const TargetInfo& info : gpu_infos()) {
    Function lowered = PassManager(gpu_pipeline()).run(bind_sizes(f, {}), info);
    INFO(info.target << " " << info.arch << " lowered:\n" << print(lowered));
    Inputs got(f, 3, c);
    interpret(lowered, got.host_args(lowered));
    check_equal(want, got, info.target + " " + info.arch + " lowered IR in the interpreter");
  }
  for (const TargetStatus& s : targets()) {
    if (!s.available || s.name == "interp") continue;  // interp ran the unlowered kernel above
    const std::string& name = s.name;
    CompiledKernel ck = Target::get(name).compile(k);
    Inputs got(f, 3, c);
    std::vector<KernelArg> args;
    std::size_t t = 0;
    for (const Param& p : f.params) {
      if (p.kind == Param::Kind::Tensor) {
        args.push_back(HostTensor{got.data[t].data(), got.shapes[t], f32});
        ++t;
      } else {
        args.push_back(c);
      }
    }
    ck.launch(args);
    check_equal(want, got, name);
  }
}

// C = A·B of 16×16 tiles staged through shared memory in a 128-thread block, `between` placed
// after the copies that fill As and Bs and before the gemm that reads them.
Kernel gemm_kernel(const std::function<void(KernelBuilder&, const Tensor& Cf)>& between, bool clear) {
  KernelBuilder k("gemm_after_copies");
  auto A = k.tensor("A", {16, 16}, f32);
  auto B = k.tensor("B", {16, 16}, f32);
  auto C = k.tensor("C", {16, 16}, f32);
  k.grid(1).threads(128).body([&](Expr) {
    auto As = k.shared({16, 16}, f32), Bs = k.shared({16, 16}, f32);
    auto Cf = k.fragment({16, 16}, f32);
    k.copy(A, As);
    k.copy(B, Bs);
    between(k, Cf);
    k.gemm(As, Bs, Cf, {.clear = clear});
    k.copy(Cf, C);
  });
  return k.build();
}

// Y[tx] = S[127 - tx] · l[0] after S is filled from X by a copy; `between` sits between the two.
Kernel reversal_kernel(const std::function<void(KernelBuilder&, const Tensor& l, Expr c)>& between) {
  KernelBuilder k("reverse_through_shared");
  auto X = k.tensor("X", {128}, f32);
  auto Y = k.tensor("Y", {128}, f32);
  Expr c = k.scalar("c", i32);
  k.grid(1).threads(128).body([&](Expr) {
    auto S = k.shared({128}, f32);
    auto l = k.local({1}, f32);
    Expr tx = k.thread_index();
    k.copy(X, S);
    l(0) = 1.0f;
    between(k, l, c);
    Y(tx) = S(127 - tx) * l(0);
  });
  return k.build();
}

}  // namespace

TEST_CASE("barriers: a gemm that clears its accumulator right after the copies of its operands") {
  check_everywhere(gemm_kernel([](KernelBuilder&, const Tensor&) {}, /*clear=*/true));
}

TEST_CASE("barriers: a clear of the accumulator between the copies and the gemm") {
  check_everywhere(gemm_kernel([](KernelBuilder& k, const Tensor& Cf) { k.clear(Cf); }, /*clear=*/false));
}

TEST_CASE("barriers: a store to a local between a shared write and its reader") {
  check_everywhere(reversal_kernel([](KernelBuilder&, const Tensor& l, Expr) { l(0) = 2.0f; }));
}

TEST_CASE("barriers: a barrier the user wrote survives a statement that touches no block memory") {
  check_everywhere(reversal_kernel([](KernelBuilder& k, const Tensor& l, Expr) {
    k.barrier();
    l(0) = 2.0f;
  }));
}

TEST_CASE("barriers: a barrier in a branch not taken does not separate the copy from its reader") {
  auto in_branch = [](KernelBuilder& k, const Tensor& l, Expr c) {
    k.if_(c > 0, [&] {
      l(0) = 3.0f;
      k.barrier();
    });
  };
  check_everywhere(reversal_kernel(in_branch), /*c=*/0);
  check_everywhere(reversal_kernel(in_branch), /*c=*/1);
}

TEST_CASE("barriers: a barrier in a loop that runs zero times does not separate the copy from its reader") {
  auto in_loop = [](KernelBuilder& k, const Tensor& l, Expr c) {
    k.serial(c, [&](Expr) {
      l(0) = l(0) + 1.0f;
      k.barrier();
    });
  };
  check_everywhere(reversal_kernel(in_loop), /*c=*/0);
  check_everywhere(reversal_kernel(in_loop), /*c=*/2);
}

namespace {

int barriers_in(const Stmt& s) {
  struct Count : IRVisitor {
    int n = 0;
    void visit(const ir::Barrier*) override { ++n; }
  } c;
  c.visit_stmt(s);
  return c.n;
}

Function lowered_for(const Kernel& k, const TargetInfo& info) {
  return PassManager(gpu_pipeline()).run(bind_sizes(k.function(), {}), info);
}

// X → S (shared), S = 2·S element-wise, S → Y: the three statements partition the 8×64 tile over
// the threads alike, so each element stays with one thread from copy to copy. With `shift`, the
// middle statement reads the next row's element instead (another thread's).
Kernel same_thread_stages(bool shift, bool in_loop) {
  KernelBuilder k(shift ? "stages_across_threads" : "stages_in_one_thread");
  auto X = k.tensor("X", {8, 64}, f32);
  auto Y = k.tensor("Y", {8, 64}, f32);
  k.grid(1).threads(128).body([&](Expr) {
    auto S = k.shared({8, 64}, f32), T = k.shared({8, 64}, f32);
    k.clear(T);
    auto step = [&] {
      k.copy(X, S);
      k.parallel(S, [&](Expr i, Expr j) {
        T(i, j) = T(i, j) + (shift ? S((i + 1) % 8, j) : S(i, j)) * 2.0f;
      });
    };
    if (in_loop)
      k.serial(3, [&](Expr) { step(); });
    else
      step();
    k.copy(T, Y);
  });
  return k.build();
}

// Each GPU target's lowered k, with its barrier count (the IR in the test's output on failure).
template <typename Check>
void for_each_lowering(const Kernel& k, Check check) {
  for (const TargetInfo& info : gpu_infos()) {
    Function lowered = lowered_for(k, info);
    INFO(info.target << " " << info.arch << ":\n" << print(lowered));
    check(barriers_in(lowered.body));
  }
}

}  // namespace

TEST_CASE("barriers: element-wise stages that keep every element in one thread need no barrier") {
  Kernel k = same_thread_stages(/*shift=*/false, /*in_loop=*/false);
  check_everywhere(k);
  for_each_lowering(k, [](int barriers) { CHECK(barriers == 0); });
}

TEST_CASE("barriers: a stage that reads another thread's element keeps its barrier") {
  Kernel k = same_thread_stages(/*shift=*/true, /*in_loop=*/false);
  check_everywhere(k);  // the lowered IR runs race-checked in the interpreter
  for_each_lowering(k, [](int barriers) { CHECK(barriers >= 1); });
}

TEST_CASE("barriers: a loop whose steps keep their elements in one thread has no barrier inside") {
  Kernel k = same_thread_stages(/*shift=*/false, /*in_loop=*/true);
  check_everywhere(k);
  for_each_lowering(k, [](int barriers) { CHECK(barriers == 0); });
  // Reading the next row: the loop's steps need their barriers, across iterations too.
  Kernel across = same_thread_stages(/*shift=*/true, /*in_loop=*/true);
  check_everywhere(across);
}
