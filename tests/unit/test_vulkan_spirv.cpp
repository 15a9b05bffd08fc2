// The vulkan target's SPIR-V code generator without a device: the module builder's words, the
// contract functions (arch strings, push constants, entry names), hand-written lowered kernels,
// and misuse errors. Every plain-path module passes spirv-val (SPIRV-Tools) where built in.
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include "spirv/module_builder.h"
#include "spirv_codegen.h"
#include "test_vulkan_spirv_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/gpu_pipeline.h"

using namespace tg;
using namespace tg::vulkan;

TEST_CASE("spirv builder: header, id bound, deduplicated types and constants") {
  ModuleBuilder m;
  m.capability(spv::CapShader);
  m.capability(spv::CapShader);
  uint32_t f = m.type_float(32);
  CHECK(m.type_float(32) == f);
  CHECK(m.type_int(32, true) != m.type_int(32, false));
  uint32_t one = m.constant_float(f, 1.0);
  CHECK(m.constant_float(f, 1.0) == one);
  CHECK(m.constant_float(f, 2.0) != one);
  CHECK(m.type_pointer(spv::SCFunction, f) == m.type_pointer(spv::SCFunction, f));
  auto words = m.finish();
  REQUIRE(words.size() > 5);
  CHECK(words[0] == 0x07230203u);
  CHECK(words[1] == 0x00010600u);
  CHECK(words[3] == m.bound());
  // One OpCapability Shader (2 words), then OpMemoryModel Logical Vulkan.
  CHECK(words[5] == (2u << 16 | spv::OpCapability));
  CHECK(words[6] == spv::CapShader);
  CHECK(words[7] == (3u << 16 | spv::OpMemoryModel));
  CHECK(words[9] == spv::kMemoryModelVulkan);
  CHECK(test::count_opcode(words, spv::OpTypeFloat) == 1);
  CHECK(test::count_opcode(words, spv::OpConstant) == 2);
}

TEST_CASE("spirv builder: strings are nul-terminated and padded; function variables lead the first block") {
  CHECK(ModuleBuilder::string_words("abc").size() == 1);
  CHECK(ModuleBuilder::string_words("abcd").size() == 2);
  ModuleBuilder m;
  m.capability(spv::CapShader);
  uint32_t v = m.type_void(), f = m.type_float(32);
  uint32_t fn = m.begin_function(v, m.type_function(v));
  m.label(m.fresh_id());
  m.op(spv::OpFAdd, f, {m.constant_float(f, 1.0), m.constant_float(f, 2.0)});
  m.function_variable(m.type_pointer(spv::SCFunction, f));
  m.inst(spv::OpReturn, {});
  m.end_function();
  auto w = m.finish();
  std::vector<uint32_t> ops = test::opcodes(w);
  auto at = [&](uint32_t op) { return std::find(ops.begin(), ops.end(), op) - ops.begin(); };
  CHECK(at(spv::OpLabel) + 1 == at(spv::OpVariable));
  CHECK(at(spv::OpVariable) < at(spv::OpFAdd));
  CHECK(fn > 0);
}

TEST_CASE("vulkan arch strings round-trip and reject unknown fields") {
  Features f = test::h200_features();
  Features g = parse_arch(arch_string(f));
  CHECK(arch_string(g) == arch_string(f));
  CHECK(g.coopmat_units == f.coopmat_units);
  CHECK(g.subgroup_size == 32);
  Features l = test::lavapipe_features();
  CHECK(arch_string(parse_arch(arch_string(l))) == arch_string(l));
  CHECK_THROWS_WITH_AS(parse_arch("vk1.3;sg=8;warp=4"), doctest::Contains("warp=4"), Error);
  CHECK_THROWS_AS(parse_arch("vk1.3;cm=mma_m16n8k16_f16_f32"), Error);
  TargetInfo info = target_info(f, "NVIDIA H200", false);
  CHECK(info.target == "vulkan");
  CHECK(info.warp_size == 32);
  CHECK(info.matrix_units == f.coopmat_units);
  CHECK(target_info(l, "llvmpipe", true).matrix_units.empty());
}

TEST_CASE("vulkan push constants: scalars packed with alignment, bool and small ints as 32 bits") {
  Function f = parse_function(R"(
func scal(X: f32[4] global, a: f32, b: i64, c: bool) {
  kernel grid(1) threads(4) -> (bx; tx) {
    X[tx] = select(c, a, 0.0) + cast<f32>(b)
  }
})");
  PushLayout p = push_constant_layout(f);
  REQUIRE(p.fields.size() == 3);
  CHECK(p.fields[0].offset == 0);
  CHECK(p.fields[1].offset == 8);
  CHECK(p.fields[1].dtype == i64);
  CHECK(p.fields[2].dtype == i32);
  CHECK(p.bytes == 20);
  CHECK(ir::kernel_entry_names(f) == std::vector<std::string>{"scal_k0"});
  SpirvOutput out = emit_spirv(f, test::lavapipe_features());
  test::check_valid(out);
}

TEST_CASE("vulkan codegen: an unbound size is a push constant, and strides follow it") {
  Function f = parse_function(R"(
func sym(X: f32[n, 3] global, Y: f32[n, 3] global, n: size) {
  kernel grid((n + 63) / 64) threads(64) -> (bx; tx) {
    let i: i32 = bx*64 + tx
    if i < n {
      for j in serial(0 +: 3) {
        Y[i, j] = X[i, j] * 2.0
      }
    }
  }
})");
  PushLayout p = push_constant_layout(f);
  REQUIRE(p.fields.size() == 1);
  CHECK(p.fields[0].param_index == 2);
  for (bool int64 : {true, false}) {
    Features feat = test::lavapipe_features();
    feat.int64 = int64;
    SpirvOutput out = emit_spirv(f, feat);
    test::check_valid(out);
#ifdef TILEGEN_HAVE_SPIRV_TOOLS  // the text is SPIRV-Tools' disassembly only where it is built in
    CHECK(test::contains(out.text, "PushConstant"));
#endif
  }
}

TEST_CASE("vulkan codegen: an elementwise kernel is one entry point with the contract's interface") {
  Function f = parse_function(R"(
func add(A: f16[1000] global, B: f32[1000] global, C: f16[1000] global) {
  kernel grid(8) threads(128) -> (bx; tx) {
    if bx * 128 + tx < 1000 {
      C[bx * 128 + tx] = cast<f16>(cast<f32>(A[bx * 128 + tx]) + B[bx * 128 + tx])
    }
  }
})");
  SpirvOutput out = emit_spirv(f, test::lavapipe_features());
  test::check_valid(out);
  CHECK(!out.uses_coopmat);
  CHECK(test::count_opcode(out.words, spv::OpEntryPoint) == 1);
  CHECK(test::count_opcode(out.words, spv::OpSelectionMerge) == 1);
#ifdef TILEGEN_HAVE_SPIRV_TOOLS  // the text is SPIRV-Tools' disassembly only where it is built in
  CHECK(test::contains(out.text, "add_k0"));
  CHECK(test::contains(out.text, "LocalSize 128 1 1"));
  CHECK(test::contains(out.text, "NonWritable"));
  CHECK(test::contains(out.text, "Binding 2"));
#endif
}

namespace {

// f with every tensor and scalar parameter rebuilt as a new node, allocated in reverse parameter
// order, so the nodes' addresses compare the other way round.
Function reallocated(const Function& f) {
  struct Rebuild : IRMutator {
    std::vector<std::pair<Var, Expr>> vars;
    std::vector<std::pair<const ir::BufferNode*, Buffer>> buffers;
    Buffer mutate_buffer(const Buffer& b) override {
      for (auto& [from, to] : buffers)
        if (from == b.get()) return to;
      return IRMutator::mutate_buffer(b);
    }
    Expr visit(const ir::VarNode* op, const Expr& self) override {
      for (auto& [from, to] : vars)
        if (from.node() == op) return to;
      return self;
    }
  } r;
  Function g = f;
  for (auto p = g.params.rbegin(); p != g.params.rend(); ++p) {
    if (p->kind == Param::Kind::Tensor) {
      auto node = std::make_shared<ir::BufferNode>(*p->buffer.get());
      r.buffers.push_back({p->buffer.get(), Buffer(node)});
      p->buffer = Buffer(node);
    } else {
      Var v(p->var.name(), p->var.dtype());
      r.vars.push_back({p->var, v});
      p->var = v;
    }
  }
  g.body = r.mutate(f.body);
  return g;
}

}  // namespace

TEST_CASE("vulkan codegen: the module's words do not depend on where the IR's nodes lie in memory") {
  Function f = parse_function(R"(
func scaled(A: f32[256] global, B: f32[256] global, C: f32[256] global, D: f32[256] global, a: f32, b: f32, c: i32) {
  kernel grid(2) threads(128) -> (bx; tx) {
    C[bx * 128 + tx] = A[bx * 128 + tx] * a + cast<f32>(c)
    D[bx * 128 + tx] = B[bx * 128 + tx] * b
  }
})");
  Function g = reallocated(f);
  REQUIRE(print(g) == print(f));
  CHECK(emit_spirv(g, test::lavapipe_features()).words == emit_spirv(f, test::lavapipe_features()).words);
}

TEST_CASE("vulkan codegen: loops, shared memory, barriers, atomics and lets") {
  Function f = parse_function(R"(
func red(X: f32[256] global, Y: f32[1] global, N: i32[1] global) {
  kernel grid(2) threads(128) -> (bx; tx) {
    shared s: f32[128]
    local acc: f32[1]
    acc[0] = 0.0
    for i in serial(0 +: 1) {
      let j: i32 = bx * 128 + tx
      acc[0] = acc[0] + X[j]
    }
    s[tx] = acc[0]
    barrier
    for k in serial(0 +: 7) {
      if tx < 64 >> k {
        s[tx] = s[tx] + s[tx + (64 >> k)]
      }
      barrier
    }
    if tx == 0 {
      atomic add(Y[0], s[0])
      atomic max(N[0], (bx - 7) / 2)
    }
  }
})");
  SpirvOutput out = emit_spirv(f, test::lavapipe_features());
  test::check_valid(out);
  CHECK(test::count_opcode(out.words, spv::OpLoopMerge) >= 3);  // two loops and the CAS loop
  CHECK(test::count_opcode(out.words, spv::OpControlBarrier) == 2);
  CHECK(test::count_opcode(out.words, spv::OpAtomicCompareExchange) == 1);
  CHECK(test::count_opcode(out.words, spv::OpAtomicSMax) == 1);
  Features fa = test::lavapipe_features();
  fa.float_atomic_add = true;
  SpirvOutput with_float_add = emit_spirv(f, fa);
  test::check_valid(with_float_add);
  CHECK(test::count_opcode(with_float_add.words, spv::OpAtomicFAddEXT) == 1);
  CHECK(test::count_opcode(with_float_add.words, spv::OpAtomicCompareExchange) == 0);
}

TEST_CASE("vulkan codegen: misuse names the construct") {
  Function f64k = parse_function(R"(
func d(X: f64[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    X[tx] = X[tx] * 2.0:f64
  }
})");
  CHECK_THROWS_WITH_AS(emit_spirv(f64k, test::lavapipe_features()), doctest::Contains("shaderFloat64"),
                       Error);
  Function h = parse_function(R"(
func h(X: f16[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    X[tx] = X[tx] * 2.0:f16
  }
})");
  Features no16 = test::lavapipe_features();
  no16.float16_storage = false;
  CHECK_THROWS_WITH_AS(emit_spirv(h, no16), doctest::Contains("storageBuffer16BitAccess"), Error);
  Function tile = parse_function(R"(
func t(X: f32[4] global, Y: f32[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    copy X -> Y
  }
})");
  CHECK_THROWS_WITH_AS(emit_spirv(tile, test::lavapipe_features()), doctest::Contains("per-thread code only"),
                       Error);
  Function packed = parse_function(R"(
func p(X: int4[4] global) {
  kernel grid(1) threads(4) -> (bx; tx) {
    X[tx] = X[tx] + cast<int4>(1)
  }
})");
  CHECK_THROWS_WITH_AS(emit_spirv(packed, test::lavapipe_features()), doctest::Contains("unsupported: "),
                       Error);
}

TEST_CASE("vulkan codegen: mma on a coopmat unit stages the model layout through Workgroup tiles") {
  // Lane L holds row-major elements L*8 .. L*8+7 of each 16x16 operand (the registry's model).
  Function f = parse_function(R"(
func mm(A: f16[16, 16] global, B: f16[16, 16] global, C: f32[16, 16] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    local a: f16[8]
    local b: f16[8]
    local c: f32[8]
    for r in unrolled(0 +: 8) {
      a[r] = A[tx / 2, tx % 2 * 8 + r]
      b[r] = B[tx / 2, tx % 2 * 8 + r]
      c[r] = 0.0
    }
    mma "coopmat_16x16x16_f16_f32" a=a[0], b=b[0], c=c[0]
    for r in unrolled(0 +: 8) {
      C[tx / 2, tx % 2 * 8 + r] = c[r]
    }
  }
})");
  SpirvOutput out = emit_spirv(f, test::h200_features());
  CHECK(out.uses_coopmat);
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixLoadKHR) == 3);
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixMulAddKHR) == 1);
  CHECK(test::count_opcode(out.words, spv::OpCooperativeMatrixStoreKHR) == 1);
  CHECK(test::count_opcode(out.words, spv::OpControlBarrier) == 3);  // subgroup: before, staged, stored
  CHECK(test::contains(out.text, "OpCooperativeMatrixMulAddKHR"));
  // Elements are staged at lane*8 + r of the subgroup's tile: 8 stores a lane for each operand.
  CHECK(test::count_opcode(out.words, spv::OpStore) >= 3 * 8);
  CHECK_THROWS_WITH_AS(emit_spirv(f, test::lavapipe_features()),
                       doctest::Contains("not reported by this Vulkan device"), Error);
  Features no_f16 = test::h200_features();
  no_f16.float16_arith = false;
  CHECK_THROWS_WITH_AS(emit_spirv(f, no_f16), doctest::Contains("shaderFloat16"), Error);
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
