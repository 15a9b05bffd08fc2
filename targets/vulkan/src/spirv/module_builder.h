// A small SPIR-V module builder: fresh ids, deduplicated types and constants, the module's
// sections in the order the specification requires, and function bodies written block by block
// (structured control flow is the caller's: it emits OpSelectionMerge/OpLoopMerge before the
// branches, see KernelLowering).
//
//   ModuleBuilder m;
//   m.capability(spv::CapShader);
//   uint32_t f32 = m.type_float(32), one = m.constant_float(f32, 1.0);   // same ids when asked twice
//   uint32_t fn = m.begin_function(m.type_void(), "main");
//   m.op(spv::OpFAdd, f32, {one, one});  m.inst(spv::OpReturn, {});  m.end_function();
//   std::vector<uint32_t> words = m.finish();  // header (magic, 1.6, bound) + sections
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spirv/spirv_defs.h"

namespace tg::vulkan {

class ModuleBuilder {
 public:
  using Words = std::vector<uint32_t>;

  uint32_t fresh_id() { return next_id_++; }
  uint32_t bound() const { return next_id_; }

  // ---- module-level declarations (each deduplicated)
  void capability(uint32_t cap);
  void extension(const std::string& name);
  uint32_t ext_inst_import(const std::string& name);
  void entry_point(uint32_t function, const std::string& name, const std::vector<uint32_t>& interface);
  void execution_mode(uint32_t function, uint32_t mode, const std::vector<uint32_t>& literals);
  void name(uint32_t id, const std::string& text);
  void decorate(uint32_t id, uint32_t decoration, const std::vector<uint32_t>& literals = {});
  void member_decorate(uint32_t type, uint32_t member, uint32_t decoration,
                       const std::vector<uint32_t>& literals = {});

  // ---- types: asking twice for the same type gives the same id (structs excepted: each is new,
  // since their decorations differ)
  uint32_t type_void();
  uint32_t type_bool();
  uint32_t type_int(uint32_t bits, bool is_signed);
  uint32_t type_float(uint32_t bits);
  uint32_t type_vector(uint32_t component, uint32_t count);
  uint32_t type_array(uint32_t element, uint32_t length);  // length as a literal; its constant is made here
  uint32_t type_runtime_array(uint32_t element);
  uint32_t type_struct(const std::vector<uint32_t>& members);
  uint32_t type_pointer(uint32_t storage_class, uint32_t pointee);
  uint32_t type_function(uint32_t result, const std::vector<uint32_t>& params = {});
  uint32_t type_cooperative_matrix(uint32_t component, uint32_t scope, uint32_t rows, uint32_t cols,
                                   uint32_t use);

  // ---- constants (deduplicated by type and value)
  uint32_t constant_bool(bool v);
  uint32_t constant_int(uint32_t type, int64_t v);  // the type's width decides one or two words
  uint32_t constant_float(uint32_t type, double v);
  uint32_t constant_null(uint32_t type);
  uint32_t constant_composite(uint32_t type, const std::vector<uint32_t>& parts);
  /// The 32-bit integer type's constant: the shorthand for scopes, semantics and indices.
  uint32_t u32(uint32_t v) { return constant_int(type_int(32, false), v); }

  // ---- global variables
  uint32_t global_variable(uint32_t pointer_type, uint32_t storage_class);

  // ---- functions: instructions go into the current block; OpVariables of Function storage
  // are gathered at the start of the first block, as the specification requires.
  uint32_t begin_function(uint32_t result_type, uint32_t function_type);
  void end_function();
  uint32_t function_variable(uint32_t pointer_type);
  /// Starts a block with this label id (from fresh_id()).
  void label(uint32_t id);
  uint32_t current_label() const { return current_label_; }
  /// An instruction without a result.
  void inst(uint32_t opcode, const Words& operands);
  /// An instruction with a result type and a fresh result id; returns the id.
  uint32_t op(uint32_t opcode, uint32_t result_type, const Words& operands);

  /// The whole module: header and every section.
  Words finish() const;

  /// Literal string operand words (UTF-8, nul-terminated, padded to a word).
  static Words string_words(const std::string& s);

 private:
  uint32_t dedup_type(uint32_t opcode, const Words& operands);
  uint32_t width_of(uint32_t type) const;
  static void append(Words& out, uint32_t opcode, const Words& operands);

  uint32_t next_id_ = 1;
  Words capabilities_, extensions_, imports_, entry_points_, modes_, debug_, annotations_, globals_;
  Words functions_, body_, variables_;
  std::set<uint32_t> caps_seen_;
  std::set<std::string> ext_seen_;
  std::map<std::string, uint32_t> imports_seen_;
  std::map<Words, uint32_t> types_seen_;  // opcode + operands → id (types and constants)
  std::map<uint32_t, uint32_t> widths_;   // scalar number type → bits
  bool in_function_ = false, first_block_ = true;
  std::size_t first_block_end_ = 0;  // where the first block's OpLabel ends in body_
  uint32_t current_label_ = 0;
};

}  // namespace tg::vulkan
