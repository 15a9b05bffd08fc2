// LLVM target machine, O3 pipeline, emission and LLJIT loading for the cpu target (see jit.h).
#include "jit.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <mutex>

#include "tilegen/ir/dtype.h"
#include "tilegen/ir/error.h"

namespace tg::cpu {

namespace {

void init_llvm() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    ok = !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter() &&
         !llvm::InitializeNativeTargetAsmParser();
  });
  if (!ok) throw Error("cpu: LLVM has no native target for this host");
}

std::string error_text(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

template <typename T>
T unwrap(llvm::Expected<T> v, const std::string& what) {
  if (!v) throw Error("cpu: " + what + ": " + error_text(v.takeError()));
  return std::move(*v);
}

llvm::orc::JITTargetMachineBuilder machine_builder(const CpuTarget& t) {
  llvm::orc::JITTargetMachineBuilder b{llvm::Triple(t.triple)};
  b.setCPU(t.cpu);
  if (!t.features.empty()) b.addFeatures(std::vector<std::string>{t.features});
  b.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  b.setRelocationModel(llvm::Reloc::PIC_);
  b.setCodeModel(llvm::CodeModel::Small);
  return b;
}

/// glibc's vector math library (libmvec): with it, loops calling exp, log, sin... vectorise
/// (_ZGVdN8v_expf). Loaded globally so the JIT's process-symbol lookup finds it.
bool libmvec_available() {
  static const bool ok = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr;
  return ok;
}

}  // namespace

bool request_amx_state() {
#if defined(__linux__) && defined(__x86_64__)
  static const bool ok = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;  // <asm/prctl.h>, the kernel's xfeature
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
#else
  return false;
#endif
}

CpuTarget host_target() {
  init_llvm();
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> feats = llvm::sys::getHostCPUFeatures();
  for (auto& f : feats) {
    if (!t.features.empty()) t.features += ",";
    t.features += (f.second ? "+" : "-") + f.first().str();
  }
  t.avx512 = feats.lookup("avx512f");
  t.avx512bf16 = t.avx512 && feats.lookup("avx512bf16");
  t.amx_bf16 = feats.lookup("amx-tile") && feats.lookup("amx-bf16");
  return t;
}

CpuTarget named_target(const std::string& cpu) {
  init_llvm();
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target) throw Error("cpu: " + err);
  // Ask a generic subtarget whether the name is valid: creating one for an unknown CPU prints
  // LLVM's own warning on stderr.
  auto generic = std::unique_ptr<llvm::MCSubtargetInfo>(target->createMCSubtargetInfo(t.triple, "", ""));
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  bool known = false;
  if (generic)
    for (const llvm::SubtargetSubTypeKV& p : generic->getAllProcessorDescriptions())
      known = known || cpu == p.Key;
  if (known) sti.reset(target->createMCSubtargetInfo(t.triple, cpu, ""));
  if (!sti)
    throw Error("cpu: LLVM does not know the CPU '" + cpu +
                "'; use a name such as skylake-avx512, znver3 or "
                "sapphirerapids");
  t.cpu = cpu;
  t.avx512 = sti->checkFeatures("+avx512f");
  t.avx512bf16 = t.avx512 && sti->checkFeatures("+avx512bf16");
  t.amx_bf16 = sti->checkFeatures("+amx-tile,+amx-bf16");  // code to read, not to run here
  return t;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& t) {
  init_llvm();
  return unwrap(machine_builder(t).createTargetMachine(), "creating the target machine");
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, const CpuTarget& t) {
  m.setTargetTriple(t.triple);
  m.setDataLayout(tm.createDataLayout());
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", t.cpu);
    if (!t.features.empty()) f.addFnAttr("target-features", t.features);
    f.addFnAttr("prefer-vector-width", std::to_string(t.vector_bits()));
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  // No general unrolling: the vectoriser still interleaves (2-4 vectors an iteration) and loops
  // the IR marks Unrolled are still unrolled in full (LoopFullUnroll runs when forced). Unrolling
  // the vectorised copy and pack loops again made the module ~1.5x larger and the compile ~30%
  // slower (O3 58 → 42 ms, object 60 → 41 ms for gemm 2048) for no measurable kernel speed.
  pto.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, pto);
  llvm::Triple triple(t.triple);
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (libmvec_available() && triple.getArch() == llvm::Triple::x86_64)
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

// The back end rewrites the module as it lowers it (CodeGenPrepare...): callers print the
// optimised IR first; no copy is made, which would cost as much as a small module's O3.
std::vector<uint8_t> emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("cpu: LLVM cannot emit an object file for the target");
  pm.run(m);
  return {buf.begin(), buf.end()};
}

// ---- JitModule

JitModule::JitModule() = default;
JitModule::~JitModule() = default;

namespace {

/// An LLJIT with the process's symbols (libm, memset) visible. (fp8/fp4 are encoded and decoded in
/// the generated code itself: emit_expr.cpp.)
std::unique_ptr<llvm::orc::LLJIT> make_jit(const CpuTarget& t) {
  init_llvm();
  // A cached object may call libmvec without this process having compiled anything yet.
  libmvec_available();
  auto jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine_builder(t)).create(),
                    "starting LLJIT");
  auto& jd = jit->getMainJITDylib();
  jd.addGenerator(unwrap(
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit->getDataLayout().getGlobalPrefix()),
      "opening the process's symbols"));
  return jit;
}

}  // namespace

std::shared_ptr<JitModule> JitModule::from_object(const std::vector<uint8_t>& object) {
  std::shared_ptr<JitModule> m(new JitModule);
  m->jit_ = make_jit(host_target());
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), "tilegen_cpu_kernel");
  if (auto e = m->jit_->addObjectFile(std::move(buf)))
    throw Error("cpu: loading the object: " + error_text(std::move(e)));
  return m;
}

std::shared_ptr<JitModule> JitModule::from_ir_text(const std::string& text, const CpuTarget& t) {
  std::shared_ptr<JitModule> m(new JitModule);
  m->jit_ = make_jit(t);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> mod =
      llvm::parseIR(llvm::MemoryBufferRef(text, "tilegen_cpu_kernel.ll"), diag, *ctx);
  if (!mod) throw Error("cpu: the kernel's LLVM IR does not parse: " + diag.getMessage().str());
  if (auto e = m->jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw Error("cpu: compiling the kernel's LLVM IR: " + error_text(std::move(e)));
  return m;
}

void* JitModule::lookup(const std::string& name) const {
  auto sym = jit_->lookup(name);
  if (!sym)
    throw Error("cpu: symbol " + name + " is not in the kernel module: " + error_text(sym.takeError()));
  return sym->toPtr<void*>();
}

}  // namespace tg::cpu
