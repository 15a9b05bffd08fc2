// Shared tiles of 16- and 8-bit formats are held at their width in Workgroup memory where the
// device has the types (shaderInt16, shaderInt8), so the passes get the device's whole budget;
// without them they are widened to 32 bits and the budget is halved. Tiles filled only by
// 16-byte copies are held as uvec4s instead (vector_copy.cpp): checked here with those copies
// switched off (FastPaths::vector_copies, the vulkan target's param vector_copies=0), and as
// uvec4s with them on.
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include <map>

#include "test_vulkan_spirv_util.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/samples.h"
#include "vulkan_pipeline.h"

using namespace tg;
using namespace tg::vulkan;

namespace {

SpirvOutput gemm_module(const Features& features, DType dtype, const CompileOptions& opt = {}) {
  const samples::Sample* s = nullptr;
  for (const samples::Sample& x : samples::all())
    if (x.name == "gemm") s = &x;
  REQUIRE(s);
  const int64_t n = 128;
  samples::Params p = samples::resolve(*s, {{"M", n}, {"N", n}, {"K", n}, {"block_M", 32}, {"block_N", 32}});
  Function f = s->build(p, dtype).function();
  Function b = bind_sizes(f, infer_sizes(f, {{n, n}, {n, n}, {n, n}}));
  PassManager pm(vulkan_pipeline(opt));
  return emit_spirv(pm.run(b, target_info(features, "test", false)), features, fast_paths(opt));
}

// The element type of the Workgroup variable called `name`: {width, signedness}, or {0, 0}.
std::pair<uint32_t, uint32_t> shared_element(const std::vector<uint32_t>& words, const std::string& name) {
  std::map<uint32_t, std::vector<uint32_t>> defs;  // result id -> operands, for types
  std::map<uint32_t, uint32_t> def_op, var_type;
  uint32_t id = 0;
  for (std::size_t i = 5; i < words.size();) {
    uint32_t n = words[i] >> 16, op = words[i] & 0xffff;
    if (!n) break;
    std::vector<uint32_t> w(words.begin() + long(i) + 1, words.begin() + long(i + n));
    if (op == spv::OpName) {
      std::string text;
      for (std::size_t k = 1; k < w.size(); ++k)
        for (int b = 0; b < 4; ++b)
          if (char ch = char((w[k] >> (8 * b)) & 0xff)) text += ch;
      if (text == name) id = w[0];
    }
    if (op == spv::OpTypeInt || op == spv::OpTypeFloat || op == spv::OpTypeArray ||
        op == spv::OpTypePointer || op == spv::OpTypeVector)
      defs[w[0]] = w, def_op[w[0]] = op;
    if (op == spv::OpVariable && w.size() >= 3 && w[2] == spv::SCWorkgroup) var_type[w[1]] = w[0];
    i += n;
  }
  if (!var_type.count(id)) return {0, 0};
  uint32_t pointee = defs[var_type[id]][2];
  REQUIRE(def_op[pointee] == spv::OpTypeArray);
  uint32_t element = defs[pointee][1];
  if (def_op[element] == spv::OpTypeFloat) return {defs[element][1], 2};
  if (def_op[element] == spv::OpTypeVector) return {defs[defs[element][1]][1] * defs[element][2], 4};
  REQUIRE(def_op[element] == spv::OpTypeInt);
  return {defs[element][1], defs[element][2]};
}

}  // namespace

TEST_CASE("vulkan shared width: tiles filled by 16-byte copies are uvec4 arrays") {
  SpirvOutput out = gemm_module(test::lavapipe_features(), bf16);
  test::check_valid(out);
  CHECK(shared_element(out.words, "A_shared") == std::pair<uint32_t, uint32_t>{128, 4});
  CHECK(shared_element(out.words, "B_shared") == std::pair<uint32_t, uint32_t>{128, 4});
}

TEST_CASE("vulkan shared width: a bf16 tile is a 16-bit Workgroup array with shaderInt16") {
  CompileOptions scalar_copies;
  scalar_copies.params["vector_copies"] = "0";
  Features f = test::lavapipe_features();
  SpirvOutput bf = gemm_module(f, bf16, scalar_copies);
  test::check_valid(bf);
  CHECK(shared_element(bf.words, "A_shared") == std::pair<uint32_t, uint32_t>{16, 0});  // bf16 bits in a u16
  CHECK(shared_element(bf.words, "B_shared") == std::pair<uint32_t, uint32_t>{16, 0});
  CHECK(target_info(f, "test", false).shared_mem_bytes == 32768);  // the whole budget

  f.int16 = f.int8 = false;  // no 16/8-bit integer types: widened, and half the budget to plan with
  SpirvOutput wide = gemm_module(f, bf16, scalar_copies);
  test::check_valid(wide);
  CHECK(shared_element(wide.words, "A_shared").first == 32);
  CHECK(target_info(f, "test", false).shared_mem_bytes == 16384);
  // the arch string carries the two features
  Features g = parse_arch(arch_string(test::lavapipe_features()));
  CHECK(g.int16);
  CHECK(g.int8);
  CHECK(!parse_arch(arch_string(f)).int16);
}

TEST_CASE(
    "vulkan shared width: tiles over the Workgroup budget are named, fragments as fragments with the "
    "reason") {
  // F is reduced, so no register layout serves it: partition_threads makes it a shared tile.
  KernelBuilder k("frag_reduce");
  auto X = k.tensor("X", {64, 64}, f32);
  auto Y = k.tensor("Y", {64}, f32);
  k.grid(1).threads(128).body([&](Expr) {
    auto S = k.shared({64, 64}, f32, "S");
    auto F = k.fragment({64, 64}, f32, "F");
    auto r = k.fragment({64}, f32, "r");
    k.copy(X, S);
    k.copy(S, F);
    k.reduce_sum(F, r, 1);
    k.copy(r, Y);
  });
  Features big = test::lavapipe_features();
  big.max_shared_bytes = 1 << 20;
  Function lowered =
      PassManager(vulkan_pipeline({})).run(k.build().function(), target_info(big, "test", false));
  CHECK(print(lowered).find("shared F: f32[64, 64] from_fragment") != std::string::npos);
  CHECK(print(parse_function(print(lowered))) == print(lowered));
  Features small = test::lavapipe_features();  // 32 KiB: S and F need 16 KiB each, the rest more
  try {
    emit_spirv(lowered, small);
    FAIL("no error");
  } catch (const Error& e) {
    std::string m = e.what();
    INFO(m);
    CHECK(m.find("shared buffers S (16384 bytes)") != std::string::npos);
    CHECK(m.find("fragments F (16384 bytes)") != std::string::npos);
    CHECK(m.find("a fragment is in Workgroup memory when the layout passes cannot spread it") !=
          std::string::npos);
    CHECK(m.find("this Vulkan device has 32768") != std::string::npos);
  }
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
