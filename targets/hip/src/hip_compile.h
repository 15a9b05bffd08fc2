// HIP C++ → AMDGPU code object, and what can be read back from one, without a GPU.
//
// Two compilers: hiprtc (dlopen of libhiprtc, where a ROCm runtime is installed) and otherwise
// clang's HIP device compilation, which needs clang 19+ and lld but no ROCm:
//   clang-19 -x hip --offload-arch=gfx942 --cuda-device-only --no-gpu-bundle-output -nogpulib
//            -nogpuinc -O3 -mwavefrontsize64 -ffp-contract=off -DTG_HIP_STANDALONE kernel.hip -o kernel.co
// (no contraction: a*b+c stays two roundings, as the interpreter computes it).
// The hip target's CompileOptions param compiler=clang|hiprtc forces one (its default comes from
// TILEGEN_HIP_COMPILER); TILEGEN_HIP_CLANG names the clang to run, as PATH names programs.
// The code object is read back with LLVM's tools found beside that clang (llvm-objdump for the
// disassembly, llvm-readobj --notes for the AMDGPU metadata: registers, LDS, scratch, spills).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg::hip {

struct CodeObject {
  std::vector<uint8_t> binary;  // an ELF code object for one gfx architecture
  std::string compiler;         // "hiprtc" or the clang command's first word
};

/// Which compiler compile_hip runs: hiprtc where it loads, else clang; or the one named.
enum class HipCompiler { Auto, Hiprtc, Clang };

/// Compile `source` (with the device-header library) for `arch` ("gfx90a", "gfx942"). Errors are
/// tg::Error with the compiler's log.
CodeObject compile_hip(const std::string& source, const std::string& name, const std::string& arch,
                       HipCompiler compiler = HipCompiler::Auto);

/// The clang able to compile HIP for AMDGPU (version 19 or later, lld beside it), or empty with
/// the reason in `why`.
std::string find_hip_clang(std::string* why = nullptr);

/// Whether hiprtc can be loaded (a ROCm runtime); `why` says why not.
bool hiprtc_available(std::string* why = nullptr);

/// Resource use of one kernel, from the code object's AMDGPU metadata.
struct KernelStats {
  std::string name;
  int vgprs = 0, agprs = 0, sgprs = 0;
  int vgpr_spills = 0, sgpr_spills = 0;
  int64_t lds_bytes = 0, scratch_bytes = 0;  // group and private segment sizes
};

/// Every kernel's resource use (llvm-readobj --notes). Throws tg::Error when no tool can read it.
std::vector<KernelStats> code_object_stats(const std::vector<uint8_t>& binary);
/// The same as a table, a kernel a row.
std::string format_stats(const std::vector<KernelStats>& stats);
/// The disassembly of a code object (llvm-objdump -d).
std::string disassemble(const std::vector<uint8_t>& binary, const std::string& arch);

}  // namespace tg::hip
