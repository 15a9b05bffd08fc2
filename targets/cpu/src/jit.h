// LLVM machinery of the cpu target: the host's target machine, the O3 pipeline, object emission
// and its disassembly, and ORC LLJIT instances that load a compiled kernel (private to the plugin).
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace tg::cpu {

/// The CPU code is generated for: host CPU name and features, or a named CPU's defaults.
struct CpuTarget {
  std::string triple;
  std::string cpu;       // "znver3", "sapphirerapids", ...
  std::string features;  // "+avx2,+fma,..." (empty: the CPU's defaults)
  bool avx512 = false;   // avx512f: 512-bit vectors preferred
  bool avx512bf16 = false;  // vdpbf16ps: bf16 pair dot products into f32
  bool amx_bf16 = false;    // AMX tiles with tdpbf16ps
  int vector_bits() const { return avx512 ? 512 : 256; }
};

/// Linux hands a process the AMX tile state (8 KiB a thread) only on request; without it the first
/// tile instruction raises SIGILL. Asked once per process (arch_prctl ARCH_REQ_XCOMP_PERM), when a
/// kernel with tiles is about to be compiled or loaded for the host, not at probe: once granted,
/// the process's signal frames grow and a later sigaltstack() smaller than them fails.
bool request_amx_state();

/// Initialises LLVM's native target once; throws tg::Error where it cannot.
CpuTarget host_target();
CpuTarget named_target(const std::string& cpu);
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& t);

/// Function attributes for the target (cpu, features, prefer-vector-width) and the O3 pipeline.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, const CpuTarget& t);
std::string module_text(const llvm::Module& m);
/// The module as an ELF object; the module is lowered in place (print it before).
std::vector<uint8_t> emit_object(llvm::Module& m, llvm::TargetMachine& tm);

/// The object's text sections as AT&T assembly, read back by LLVM's disassembler
/// (disassemble.cpp): one back-end run gives both the object and the assembly.
std::string disassemble_object(const std::vector<uint8_t>& object, const CpuTarget& t);

/// A loaded kernel module: look symbols up by name.
class JitModule {
 public:
  /// From an object file (what codegen produced), or from LLVM IR text (a cache hit with source only).
  static std::shared_ptr<JitModule> from_object(const std::vector<uint8_t>& object);
  static std::shared_ptr<JitModule> from_ir_text(const std::string& text, const CpuTarget& t);
  ~JitModule();
  void* lookup(const std::string& name) const;

 private:
  JitModule();
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace tg::cpu
