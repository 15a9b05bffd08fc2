// The SPIR-V module builder (see module_builder.h). Words are written as the specification
// lays them out: word 0 of an instruction is (word count << 16) | opcode.
#include "spirv/module_builder.h"

#include <bit>
#include <cstring>

#include "tilegen/ir/error.h"

namespace tg::vulkan {

ModuleBuilder::Words ModuleBuilder::string_words(const std::string& s) {
  Words w((s.size() + 4) / 4, 0u);  // at least one nul byte
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}

void ModuleBuilder::append(Words& out, uint32_t opcode, const Words& operands) {
  out.push_back(uint32_t(operands.size() + 1) << 16 | opcode);
  out.insert(out.end(), operands.begin(), operands.end());
}

void ModuleBuilder::capability(uint32_t cap) {
  if (caps_seen_.insert(cap).second) append(capabilities_, spv::OpCapability, {cap});
}

void ModuleBuilder::extension(const std::string& n) {
  if (ext_seen_.insert(n).second) append(extensions_, spv::OpExtension, string_words(n));
}

uint32_t ModuleBuilder::ext_inst_import(const std::string& n) {
  auto it = imports_seen_.find(n);
  if (it != imports_seen_.end()) return it->second;
  uint32_t id = fresh_id();
  Words ops = {id};
  Words s = string_words(n);
  ops.insert(ops.end(), s.begin(), s.end());
  append(imports_, spv::OpExtInstImport, ops);
  return imports_seen_[n] = id;
}

void ModuleBuilder::entry_point(uint32_t function, const std::string& n,
                                const std::vector<uint32_t>& interface) {
  Words ops = {spv::kExecutionModelGLCompute, function};
  Words s = string_words(n);
  ops.insert(ops.end(), s.begin(), s.end());
  ops.insert(ops.end(), interface.begin(), interface.end());
  append(entry_points_, spv::OpEntryPoint, ops);
}

void ModuleBuilder::execution_mode(uint32_t function, uint32_t mode, const std::vector<uint32_t>& literals) {
  Words ops = {function, mode};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(modes_, spv::OpExecutionMode, ops);
}

void ModuleBuilder::name(uint32_t id, const std::string& text) {
  Words ops = {id};
  Words s = string_words(text);
  ops.insert(ops.end(), s.begin(), s.end());
  append(debug_, spv::OpName, ops);
}

void ModuleBuilder::decorate(uint32_t id, uint32_t decoration, const std::vector<uint32_t>& literals) {
  Words ops = {id, decoration};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(annotations_, spv::OpDecorate, ops);
}

void ModuleBuilder::member_decorate(uint32_t type, uint32_t member, uint32_t decoration,
                                    const std::vector<uint32_t>& literals) {
  Words ops = {type, member, decoration};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(annotations_, spv::OpMemberDecorate, ops);
}

// Types and constants share one table keyed by opcode and operands (the result type of a
// constant is among its operands), so equal requests return the first id.
uint32_t ModuleBuilder::dedup_type(uint32_t opcode, const Words& operands) {
  Words key = {opcode};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = types_seen_.find(key);
  if (it != types_seen_.end()) return it->second;
  uint32_t id = fresh_id();
  Words ops;
  const bool has_type = opcode >= spv::OpConstantTrue && opcode <= spv::OpConstantNull;
  if (has_type) {  // constants: result type first, then the result id
    ops = {operands[0], id};
    ops.insert(ops.end(), operands.begin() + 1, operands.end());
  } else {
    ops = {id};
    ops.insert(ops.end(), operands.begin(), operands.end());
  }
  append(globals_, opcode, ops);
  return types_seen_[key] = id;
}

uint32_t ModuleBuilder::type_void() { return dedup_type(spv::OpTypeVoid, {}); }
uint32_t ModuleBuilder::type_bool() { return dedup_type(spv::OpTypeBool, {}); }
uint32_t ModuleBuilder::type_int(uint32_t bits, bool is_signed) {
  uint32_t id = dedup_type(spv::OpTypeInt, {bits, is_signed ? 1u : 0u});
  widths_[id] = bits;
  return id;
}
uint32_t ModuleBuilder::type_float(uint32_t bits) {
  uint32_t id = dedup_type(spv::OpTypeFloat, {bits});
  widths_[id] = bits;
  return id;
}
uint32_t ModuleBuilder::type_vector(uint32_t c, uint32_t n) { return dedup_type(spv::OpTypeVector, {c, n}); }
uint32_t ModuleBuilder::type_array(uint32_t element, uint32_t length) {
  return dedup_type(spv::OpTypeArray, {element, u32(length)});
}
uint32_t ModuleBuilder::type_runtime_array(uint32_t element) {
  return dedup_type(spv::OpTypeRuntimeArray, {element});
}
uint32_t ModuleBuilder::type_struct(const std::vector<uint32_t>& members) {
  uint32_t id = fresh_id();
  Words ops = {id};
  ops.insert(ops.end(), members.begin(), members.end());
  append(globals_, spv::OpTypeStruct, ops);
  return id;
}
uint32_t ModuleBuilder::type_pointer(uint32_t sc, uint32_t pointee) {
  return dedup_type(spv::OpTypePointer, {sc, pointee});
}
uint32_t ModuleBuilder::type_function(uint32_t result, const std::vector<uint32_t>& params) {
  Words ops = {result};
  ops.insert(ops.end(), params.begin(), params.end());
  return dedup_type(spv::OpTypeFunction, ops);
}
uint32_t ModuleBuilder::type_cooperative_matrix(uint32_t component, uint32_t scope, uint32_t rows,
                                                uint32_t cols, uint32_t use) {
  return dedup_type(spv::OpTypeCooperativeMatrixKHR, {component, u32(scope), u32(rows), u32(cols), u32(use)});
}

uint32_t ModuleBuilder::constant_bool(bool v) {
  uint32_t b = type_bool();
  return dedup_type(v ? spv::OpConstantTrue : spv::OpConstantFalse, {b});
}

uint32_t ModuleBuilder::width_of(uint32_t type) const {
  auto it = widths_.find(type);
  if (it == widths_.end()) throw Error("spirv builder: a constant of a type that is not a scalar number");
  return it->second;
}

uint32_t ModuleBuilder::constant_int(uint32_t type, int64_t v) {
  if (width_of(type) == 64)
    return dedup_type(spv::OpConstant, {type, uint32_t(uint64_t(v)), uint32_t(uint64_t(v) >> 32)});
  return dedup_type(spv::OpConstant, {type, uint32_t(uint64_t(v))});
}

uint32_t ModuleBuilder::constant_float(uint32_t type, double v) {
  uint32_t w = width_of(type);
  if (w == 64) {
    uint64_t b = std::bit_cast<uint64_t>(v);
    return dedup_type(spv::OpConstant, {type, uint32_t(b), uint32_t(b >> 32)});
  }
  if (w != 32) throw Error("spirv builder: float constants are 32- or 64-bit");
  return dedup_type(spv::OpConstant, {type, std::bit_cast<uint32_t>(float(v))});
}

uint32_t ModuleBuilder::constant_null(uint32_t type) { return dedup_type(spv::OpConstantNull, {type}); }

uint32_t ModuleBuilder::constant_composite(uint32_t type, const std::vector<uint32_t>& parts) {
  Words ops = {type};
  ops.insert(ops.end(), parts.begin(), parts.end());
  return dedup_type(spv::OpConstantComposite, ops);
}

uint32_t ModuleBuilder::global_variable(uint32_t pointer_type, uint32_t storage_class) {
  uint32_t id = fresh_id();
  append(globals_, spv::OpVariable, {pointer_type, id, storage_class});
  return id;
}

uint32_t ModuleBuilder::begin_function(uint32_t result_type, uint32_t function_type) {
  if (in_function_) throw Error("spirv builder: a function inside a function");
  in_function_ = true;
  first_block_ = true;
  body_.clear();
  variables_.clear();
  uint32_t id = fresh_id();
  append(functions_, spv::OpFunction, {result_type, id, spv::kFunctionControlNone, function_type});
  return id;
}

uint32_t ModuleBuilder::function_variable(uint32_t pointer_type) {
  uint32_t id = fresh_id();
  append(variables_, spv::OpVariable, {pointer_type, id, spv::SCFunction});
  return id;
}

void ModuleBuilder::label(uint32_t id) {
  append(body_, spv::OpLabel, {id});
  current_label_ = id;
  if (first_block_) first_block_end_ = body_.size();
  first_block_ = false;
}

void ModuleBuilder::inst(uint32_t opcode, const Words& operands) { append(body_, opcode, operands); }

uint32_t ModuleBuilder::op(uint32_t opcode, uint32_t result_type, const Words& operands) {
  uint32_t id = fresh_id();
  Words ops = {result_type, id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  append(body_, opcode, ops);
  return id;
}

void ModuleBuilder::end_function() {
  functions_.insert(functions_.end(), body_.begin(), body_.begin() + std::ptrdiff_t(first_block_end_));
  functions_.insert(functions_.end(), variables_.begin(), variables_.end());
  functions_.insert(functions_.end(), body_.begin() + std::ptrdiff_t(first_block_end_), body_.end());
  append(functions_, spv::OpFunctionEnd, {});
  in_function_ = false;
}

ModuleBuilder::Words ModuleBuilder::finish() const {
  Words w = {spv::kMagic, spv::kVersion16, 0u, next_id_, 0u};
  for (const Words* s : {&capabilities_, &extensions_, &imports_}) w.insert(w.end(), s->begin(), s->end());
  w.push_back(3u << 16 | spv::OpMemoryModel);
  w.push_back(spv::kAddressingLogical);
  w.push_back(spv::kMemoryModelVulkan);
  for (const Words* s : {&entry_points_, &modes_, &debug_, &annotations_, &globals_, &functions_})
    w.insert(w.end(), s->begin(), s->end());
  return w;
}

}  // namespace tg::vulkan
