// The contract functions of spirv_codegen.h: the features as an architecture string, the
// TargetInfo the passes see, the push-constant layout and the entry-point names, and
// emit_spirv, which hands each kernel to spirv/kernel_lowering and disassembles the module.
#include "spirv_codegen.h"

#include <iterator>
#include <sstream>

#include "spirv/kernel_lowering.h"
#include "spirv/module_builder.h"
#include "spirv/spirv_defs.h"
#include "tilegen/ir/matrix_unit.h"

#ifdef TILEGEN_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

namespace tg::vulkan {

namespace {

uint32_t parse_number(const std::string& field, const std::string& value) {
  try {
    std::size_t used = 0;
    unsigned long v = std::stoul(value, &used);
    if (used == value.size() && v <= 0xffffffffu) return uint32_t(v);
  } catch (const std::exception&) {
  }
  throw Error("vulkan arch string: field " + field + "=" + value + " needs a non-negative integer");
}

// The listing used for SpirvOutput::text where SPIRV-Tools is not built in or cannot read the
// module: one instruction a line, its name (where spirv_defs.h knows it) and operand words.
std::string word_listing(const std::vector<uint32_t>& words) {
  std::ostringstream os;
  os << "; SPIR-V 1.6, id bound " << (words.size() > 3 ? words[3] : 0) << "\n";
  for (std::size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    const char* name = spv::opcode_name(opcode);
    if (name)
      os << name;
    else
      os << "Op" << opcode;
    for (uint32_t j = 1; j < count && i + j < words.size(); ++j) os << " " << words[i + j];
    os << "\n";
    i += count ? count : 1;
  }
  return os.str();
}

}  // namespace

std::string arch_string(const Features& f) {
  std::string s = "vk1.3;sg=" + std::to_string(f.subgroup_size);
  if (f.float16_storage) s += ";f16s";
  if (f.int8_storage) s += ";i8s";
  if (f.float16_arith) s += ";f16";
  if (f.int64) s += ";i64";
  if (f.int16) s += ";i16";
  if (f.int8) s += ";i8";
  if (f.float64) s += ";f64";
  if (f.subgroup_arith) s += ";sgops";
  if (f.float_atomic_add) s += ";fatom";
  s += ";smem=" + std::to_string(f.max_shared_bytes) + ";thr=" + std::to_string(f.max_threads);
  if (!f.coopmat_units.empty()) {
    s += ";cm=";
    for (std::size_t i = 0; i < f.coopmat_units.size(); ++i) s += (i ? "," : "") + f.coopmat_units[i];
  }
  return s;
}

Features parse_arch(const std::string& arch) {
  Features f;
  f.float16_storage = f.int8_storage = f.int64 = f.int16 = f.int8 = f.subgroup_arith = false;
  std::istringstream in(arch);
  std::string field;
  bool version = false;
  while (std::getline(in, field, ';')) {
    std::string key = field.substr(0, field.find('=')), value;
    if (field.find('=') != std::string::npos) value = field.substr(field.find('=') + 1);
    if (key == "vk1.3")
      version = true;
    else if (key == "sg")
      f.subgroup_size = parse_number(key, value);
    else if (key == "f16s")
      f.float16_storage = true;
    else if (key == "i8s")
      f.int8_storage = true;
    else if (key == "f16")
      f.float16_arith = true;
    else if (key == "i64")
      f.int64 = true;
    else if (key == "i16")
      f.int16 = true;
    else if (key == "i8")
      f.int8 = true;
    else if (key == "f64")
      f.float64 = true;
    else if (key == "sgops")
      f.subgroup_arith = true;
    else if (key == "fatom")
      f.float_atomic_add = true;
    else if (key == "smem")
      f.max_shared_bytes = parse_number(key, value);
    else if (key == "thr")
      f.max_threads = parse_number(key, value);
    else if (key == "cm") {
      std::istringstream units(value);
      std::string u;
      while (std::getline(units, u, ','))
        if (!u.empty()) f.coopmat_units.push_back(u);
    } else {
      throw Error("vulkan arch string \"" + arch + "\": unknown field \"" + field +
                  "\"; expected vk1.3;sg=N;f16s;i8s;f16;i64;i16;i8;f64;sgops;fatom;smem=N;thr=N;cm=units");
    }
  }
  if (!version) throw Error("vulkan arch string \"" + arch + "\" does not start with vk1.3");
  for (const std::string& u : f.coopmat_units) {
    const MatrixUnit* mu = find_matrix_unit(u);
    if (!mu || mu->family != "coopmat")
      throw Error("vulkan arch string: " + u + " is not a cooperative-matrix unit of the registry");
  }
  return f;
}

bool shared_at_width(const Features& f) { return f.float16_arith && f.int16 && f.int8; }

TargetInfo target_info(const Features& f, const std::string& device_name, bool software) {
  TargetInfo info;
  info.target = "vulkan";
  info.device_name = device_name;
  info.arch = arch_string(f);
  info.software = software;
  info.portable = true;  // a vendor's own target (cuda, hip) on the same GPU is ranked above
  info.warp_size = int(f.subgroup_size);
  info.max_threads = int(f.max_threads);
  info.max_grid.assign(std::begin(f.max_grid), std::end(f.max_grid));
  // Shared tiles of f16, bf16, i16, i8 and u8 elements are held at their width where the device
  // has the types (shaderFloat16, shaderInt16, shaderInt8); otherwise widened to 32 bits in
  // Workgroup memory (see declare_buffers), so the passes plan with half the device's budget.
  info.shared_mem_bytes = f.max_shared_bytes / (shared_at_width(f) ? 1 : 2);
  info.vector_bytes = 16;
  info.async_copy = false;
  // Cooperative matrices are subgroup-scope operations of 32 lanes in the registry's model.
  if (f.subgroup_size == 32) info.matrix_units = f.coopmat_units;
  return info;
}

PushLayout push_constant_layout(const Function& f) {
  PushLayout layout;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (p.kind == Param::Kind::Tensor) continue;
    DType t = p.var.dtype();
    DType stored = t == i64 || t == f64 || t == u32 || t == i32 || t == f32 ? t : t.is_float() ? f32 : i32;
    uint32_t size = uint32_t(stored.bits() / 8);
    uint32_t offset = (layout.bytes + size - 1) / size * size;
    layout.fields.push_back({i, offset, stored});
    layout.bytes = offset + size;
  }
  layout.bytes = (layout.bytes + 3) / 4 * 4;
  if (layout.bytes > 128)
    throw Error(
        "function " + f.name + " has " + std::to_string(layout.bytes) +
            " bytes of scalar parameters; the vulkan target passes them as push constants (at most 128 "
            "bytes): pass fewer scalars, or put them in a tensor",
        f.loc);
  return layout;
}

SpirvOutput emit_spirv(const Function& lowered, const Features& features, const FastPaths& paths) {
  std::vector<const ir::Kernel*> kernels = ir::kernels_of(lowered);
  if (kernels.empty()) throw Error("function " + lowered.name + " has no kernel to emit", lowered.loc);
  ModuleBuilder m;
  ModuleLowering module(m, lowered, features, paths);
  std::vector<std::string> names = ir::kernel_entry_names(lowered);
  for (std::size_t i = 0; i < kernels.size(); ++i) module.lower_kernel(*kernels[i], names[i]);
  SpirvOutput out;
  out.words = m.finish();
  out.uses_coopmat = module.uses_coopmat();
  out.text = disassemble(out.words);
  return out;
}

std::string disassemble(const std::vector<uint32_t>& words) {
#ifdef TILEGEN_HAVE_SPIRV_TOOLS
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_3);
  std::string text;
  if (tools.Disassemble(words, &text,
                        SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    return text;
#endif
  return word_listing(words);
}

}  // namespace tg::vulkan
