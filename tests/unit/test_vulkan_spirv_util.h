// Helpers for the vulkan SPIR-V tests: typical device features, the module's opcodes, and
// spirv-val through the SPIRV-Tools library (the disassembly printed on failure).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu_pass_test_util.h"  // contains(), and IR helpers
#include "spirv/spirv_defs.h"
#include "spirv_codegen.h"

#ifdef TILEGEN_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

namespace tg::test {

/// lavapipe-like: subgroup 8, 16/8-bit storage, no cooperative matrices, no f64 arithmetic.
inline vulkan::Features lavapipe_features() {
  vulkan::Features f;
  f.subgroup_size = 8;
  f.float16_arith = true;
  f.max_shared_bytes = 32768;
  return f;
}

/// H200-like: subgroup 32, shaderFloat16, coopmat units for f16 and i8.
inline vulkan::Features h200_features() {
  vulkan::Features f;
  f.subgroup_size = 32;
  f.float16_arith = true;
  f.float64 = true;
  f.float_atomic_add = true;
  f.max_shared_bytes = 49152;
  f.coopmat_units = {"coopmat_16x16x16_f16_f32", "coopmat_16x16x16_f16_f16", "coopmat_16x16x32_i8_i32"};
  return f;
}

/// One instruction of a module: its opcode and its operand words (result type and id included).
struct Inst {
  uint32_t op;
  std::vector<uint32_t> operands;
};

/// The module's instructions after the 5-word header, in order (stops at a malformed word count).
inline std::vector<Inst> instructions(const std::vector<uint32_t>& words) {
  std::vector<Inst> out;
  for (std::size_t i = 5; i < words.size();) {
    uint32_t n = words[i] >> 16;
    if (!n) break;
    out.push_back(
        {words[i] & 0xffff, std::vector<uint32_t>(words.begin() + long(i) + 1, words.begin() + long(i + n))});
    i += n;
  }
  return out;
}

inline std::vector<uint32_t> opcodes(const std::vector<uint32_t>& words) {
  std::vector<uint32_t> ops;
  for (std::size_t i = 5; i < words.size();) {
    uint32_t n = words[i] >> 16;
    ops.push_back(words[i] & 0xffff);
    i += n ? n : 1;
  }
  return ops;
}

inline int count_opcode(const std::vector<uint32_t>& words, uint32_t op) {
  auto ops = opcodes(words);
  return int(std::count(ops.begin(), ops.end(), op));
}

/// spirv-val (Vulkan 1.3 rules) accepts the module; prints the disassembly when it does not.
inline void check_valid(const vulkan::SpirvOutput& out) {
#ifdef TILEGEN_HAVE_SPIRV_TOOLS
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_3);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& p, const char* m) {
    messages += "word " + std::to_string(p.index) + ": " + m + "\n";
  });
  bool ok = tools.Validate(out.words);
  INFO("spirv-val: " << messages << "\n" << out.text);
  CHECK(ok);
#else
  CHECK(out.words.size() > 5);
#endif
}

}  // namespace tg::test
