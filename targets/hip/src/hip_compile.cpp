// See hip_compile.h. Tools run as child processes (fork/exec, no shell) in a private temporary
// directory, removed afterwards.
#include "hip_compile.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "device_header.h"
#include "tilegen/common/vendor_library.h"
#include "tilegen/ir/error.h"

namespace tg::hip {

namespace {

namespace fs = std::filesystem;

// Runs argv[0] (found on PATH) with its stdout and stderr captured; returns the exit status.
int run_tool(const std::vector<std::string>& argv, std::string& output) {
  int fds[2];
  // Close-on-exec: compiles run side by side (the autotuner's pool), and a pipe inherited by
  // another compile's child would keep this one's read open until that child exits. dup2 below
  // gives the child its own stdout and stderr without the flag.
  if (pipe2(fds, O_CLOEXEC) != 0) throw Error("hip: cannot create a pipe to run " + argv[0]);
  pid_t pid = fork();
  if (pid < 0) throw Error("hip: cannot start " + argv[0]);
  if (pid == 0) {
    dup2(fds[1], 1), dup2(fds[1], 2);
    close(fds[0]), close(fds[1]);
    std::vector<char*> args;
    for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) output.append(buf, std::size_t(n));
    if (n > 0 || (n < 0 && errno == EINTR)) continue;
    break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// A directory of our own under $TMPDIR, removed with everything in it on destruction.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tilegen-hip-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("hip: cannot create a temporary directory in " + tmpl);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void write(const std::string& name, const void* data, std::size_t size) const {
    std::ofstream out(path / name, std::ios::binary);
    out.write(static_cast<const char*>(data), std::streamsize(size));
    if (!out) throw Error("hip: cannot write " + (path / name).string());
  }
  std::vector<uint8_t> read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }
};

// The major version clang reports ("... clang version 19.1.7 ..."), or 0.
int clang_major(const std::string& clang) {
  std::string out;
  if (run_tool({clang, "--version"}, out) != 0) return 0;
  std::smatch m;
  return std::regex_search(out, m, std::regex("clang version (\\d+)")) ? std::stoi(m[1]) : 0;
}

// An LLVM tool of the clang's release: "llvm-objdump-19" beside /usr/bin/clang-19, else on PATH.
std::string llvm_tool(const std::string& tool) {
  std::string why, clang = find_hip_clang(&why);
  std::smatch m;
  const std::string suffix = std::regex_search(clang, m, std::regex("clang(-\\d+)$")) ? m[1].str() : "";
  for (const std::string& name : {tool + suffix, tool}) {
    fs::path beside = fs::path(clang).parent_path() / name;
    if (clang.find('/') != std::string::npos && fs::exists(beside)) return beside.string();
    std::string out;
    if (run_tool({name, "--version"}, out) == 0) return name;
  }
  throw Error("hip: " + tool +
              " not found; install LLVM 19's tools (apt install llvm-19) to read code objects");
}

// ---- hiprtc, declared here: no ROCm headers are needed to build the plugin.
using hiprtcProgram = void*;
struct Hiprtc {
  VendorLibrary lib{{"libhiprtc.so", "libhiprtc.so.6", "/opt/rocm/lib/libhiprtc.so"},
                    "no ROCm runtime on this machine"};
  int (*create)(hiprtcProgram*, const char*, const char*, int, const char**, const char**) = nullptr;
  int (*compile)(hiprtcProgram, int, const char**) = nullptr;
  int (*log_size)(hiprtcProgram, std::size_t*) = nullptr;
  int (*log)(hiprtcProgram, char*) = nullptr;
  int (*code_size)(hiprtcProgram, std::size_t*) = nullptr;
  int (*code)(hiprtcProgram, char*) = nullptr;
  int (*destroy)(hiprtcProgram*) = nullptr;
  std::string error;
  Hiprtc() {
    lib.bind(create, "hiprtcCreateProgram"), lib.bind(compile, "hiprtcCompileProgram");
    lib.bind(log_size, "hiprtcGetProgramLogSize"), lib.bind(log, "hiprtcGetProgramLog");
    lib.bind(code_size, "hiprtcGetCodeSize"), lib.bind(code, "hiprtcGetCode");
    lib.bind(destroy, "hiprtcDestroyProgram");
    error = lib.error();
  }
};

Hiprtc& hiprtc() {
  static Hiprtc h;
  return h;
}

CodeObject compile_with_hiprtc(const std::string& source, const std::string& name, const std::string& arch) {
  Hiprtc& h = hiprtc();
  if (!h.error.empty()) throw Error("hip: " + h.error);
  const char* header = device_header();
  const char* header_name = "tilegen_device.h";
  hiprtcProgram prog = nullptr;
  if (h.create(&prog, source.c_str(), (name + ".hip").c_str(), 1, &header, &header_name) != 0)
    throw Error("hip: hiprtcCreateProgram failed");
  const std::string arch_opt = "--offload-arch=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-O3", "-std=c++17", "-ffp-contract=off"};
  int rc = h.compile(prog, 4, opts);
  std::size_t n = 0;
  h.log_size(prog, &n);
  std::string log(n, '\0');
  if (n) h.log(prog, log.data());
  CodeObject out;
  out.compiler = "hiprtc";
  if (rc == 0 && h.code_size(prog, &n) == 0) {
    out.binary.resize(n);
    h.code(prog, reinterpret_cast<char*>(out.binary.data()));
  }
  h.destroy(&prog);
  if (rc != 0) throw Error("hip: hiprtc could not compile " + name + " for " + arch + ":\n" + log);
  return out;
}

CodeObject compile_with_clang(const std::string& source, const std::string& name, const std::string& arch) {
  std::string why, clang = find_hip_clang(&why);
  if (clang.empty()) throw Error("hip: " + why);
  TempDir dir;
  dir.write("tilegen_device.h", device_header(), std::string(device_header()).size());
  dir.write("kernel.hip", source.data(), source.size());
  const std::string src = (dir.path / "kernel.hip").string(), obj = (dir.path / "kernel.co").string();
  std::vector<std::string> cmd = {clang,
                                  "-x",
                                  "hip",
                                  "--offload-arch=" + arch,
                                  "--cuda-device-only",
                                  "--no-gpu-bundle-output",
                                  "-nogpulib",
                                  "-nogpuinc",
                                  "-O3",
                                  "-mwavefrontsize64",
                                  "-ffp-contract=off",
                                  "-DTG_HIP_STANDALONE",
                                  "-I",
                                  dir.path.string(),
                                  "-Wno-unused-command-line-argument",
                                  src,
                                  "-o",
                                  obj};
  std::string log;
  if (run_tool(cmd, log) != 0)
    throw Error("hip: " + clang + " could not compile " + name + " for " + arch + ":\n" + log);
  CodeObject out;
  out.binary = dir.read("kernel.co");
  out.compiler = clang;
  if (out.binary.empty()) throw Error("hip: " + clang + " wrote no code object for " + name + ":\n" + log);
  return out;
}

int metadata_int(const std::string& block, const char* key) {
  std::smatch m;
  std::regex re(std::string("\\.") + key + ":\\s*(\\d+)");
  return std::regex_search(block, m, re) ? std::stoi(m[1]) : 0;
}

}  // namespace

std::string find_hip_clang(std::string* why) {
  std::vector<std::string> candidates;
  if (const char* e = std::getenv("TILEGEN_HIP_CLANG"); e && *e) candidates.push_back(e);
  candidates.insert(candidates.end(), {"clang-19", "clang-20", "clang-21", "clang"});
  for (const std::string& c : candidates) {
    int major = clang_major(c);
    if (major >= 19) return c;
  }
  if (why)
    *why =
        "no clang 19 or later for HIP device compilation (tried $TILEGEN_HIP_CLANG, clang-19, clang); "
        "install clang-19 and lld-19, or ROCm for hiprtc";
  return "";
}

bool hiprtc_available(std::string* why) {
  if (why) *why = hiprtc().error;
  return hiprtc().error.empty();
}

CodeObject compile_hip(const std::string& source, const std::string& name, const std::string& arch,
                       HipCompiler compiler) {
  if (compiler == HipCompiler::Hiprtc || (compiler == HipCompiler::Auto && hiprtc_available()))
    return compile_with_hiprtc(source, name, arch);
  return compile_with_clang(source, name, arch);
}

// llvm-readobj --notes prints the AMDGPU metadata as YAML, a kernel a "- .agpr_count: ..." block:
//   amdhsa.kernels:
//     - .agpr_count:     0
//       ...
//       .name:           gemm
//       .vgpr_count:     52
std::vector<KernelStats> code_object_stats(const std::vector<uint8_t>& binary) {
  TempDir dir;
  dir.write("kernel.co", binary.data(), binary.size());
  std::string out;
  if (run_tool({llvm_tool("llvm-readobj"), "--notes", (dir.path / "kernel.co").string()}, out) != 0)
    throw Error("hip: llvm-readobj could not read the code object:\n" + out);
  std::vector<KernelStats> stats;
  const std::size_t kernels = out.find("amdhsa.kernels:");
  if (kernels == std::string::npos) throw Error("hip: the code object has no AMDGPU kernel metadata");
  std::string rest = out.substr(kernels);
  // Kernels are the list items at the first item's indentation; deeper items are their .args.
  std::smatch first;
  if (!std::regex_search(rest, first, std::regex("\\n( *)- \\.")))
    throw Error("hip: the code object lists no kernels");
  const std::string item = "\n" + first[1].str() + "- .";
  std::vector<std::size_t> at;
  for (std::size_t p = rest.find(item); p != std::string::npos; p = rest.find(item, p + 1)) at.push_back(p);
  for (std::size_t i = 0; i < at.size(); ++i) {
    std::string block = rest.substr(at[i], (i + 1 < at.size() ? at[i + 1] : rest.size()) - at[i]);
    std::smatch m;
    // The kernel's own .name, at the item's field indentation (its .args have names too).
    if (!std::regex_search(block, m, std::regex("\\n" + first[1].str() + "  \\.name:\\s*(\\S+)"))) continue;
    KernelStats k;
    k.name = m[1];
    k.vgprs = metadata_int(block, "vgpr_count"), k.agprs = metadata_int(block, "agpr_count");
    k.sgprs = metadata_int(block, "sgpr_count");
    k.vgpr_spills = metadata_int(block, "vgpr_spill_count"),
    k.sgpr_spills = metadata_int(block, "sgpr_spill_count");
    k.lds_bytes = metadata_int(block, "group_segment_fixed_size");
    k.scratch_bytes = metadata_int(block, "private_segment_fixed_size");
    stats.push_back(k);
  }
  return stats;
}

std::string format_stats(const std::vector<KernelStats>& stats) {
  std::ostringstream os;
  os << "kernel                          vgprs  agprs  sgprs  lds_bytes  scratch_bytes  vgpr_spills  "
        "sgpr_spills\n";
  for (const KernelStats& k : stats) {
    char row[256];
    std::snprintf(row, sizeof row, "%-30s  %5d  %5d  %5d  %9lld  %13lld  %11d  %11d\n", k.name.c_str(),
                  k.vgprs, k.agprs, k.sgprs, (long long)k.lds_bytes, (long long)k.scratch_bytes,
                  k.vgpr_spills, k.sgpr_spills);
    os << row;
  }
  return os.str();
}

std::string disassemble(const std::vector<uint8_t>& binary, const std::string& arch) {
  TempDir dir;
  dir.write("kernel.co", binary.data(), binary.size());
  std::string out;
  if (run_tool({llvm_tool("llvm-objdump"), "-d", "--mcpu=" + arch, (dir.path / "kernel.co").string()}, out) !=
      0)
    throw Error("hip: llvm-objdump could not disassemble the code object:\n" + out);
  return out;
}

}  // namespace tg::hip
