// The `cpu` target: LLVM IR generated from the lowered tile IR, compiled for the host by LLVM 19
// at O3, loaded by ORC LLJIT; each grid block is a oneTBB task (see ../README.md). The model is
// api/src/interp_target.cpp; each hook below says what it does here.
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "emitter.h"
#include "insert_prefetches.h"
#include "jit.h"
#include "pack_gemm_operands.h"
#include "tilegen/env.h"
#include "tilegen/host_device_context.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/passes/check_element_accesses.h"
#include "tilegen/passes/fuse_parallel_loops.h"
#include "tilegen/passes/lower_tile_ops.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/rasterize_blocks.h"
#include "tilegen/passes/serialize_threads.h"
#include "tilegen/passes/simplify.h"
#include "tilegen/plugin.h"
#include "trim_edge_tiles.h"
#include "version_edge_copies.h"
#include "widen_gemm_tiles.h"

namespace tg::cpu {
namespace {

/// "AMD EPYC 9654 96-Core Processor" from /proc/cpuinfo, else the LLVM CPU name (the arch).
std::string cpu_model_name(const std::string& fallback) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  return fallback;
}

/// The size in bytes of this machine's level-`level` data (or unified) cache as Linux reports it
/// for cpu0 (/sys/devices/system/cpu/cpu0/cache/index*/), 0 where it says nothing.
int64_t host_cache_bytes(int level) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
    int l = 0;
    std::string type, size;
    if (!(lv >> l) || !(ty >> type) || !(sz >> size)) continue;
    if (l != level || type == "Instruction" || size.empty()) continue;
    int64_t n = std::atoll(size.c_str());
    if (size.back() == 'K') n <<= 10;
    if (size.back() == 'M') n <<= 20;
    return n;
  }
  return 0;
}

/// AMX's bf16 tile product (tdpbf16ps, 16×16×32 into f32), as a matrix unit of one "lane" holding
/// whole tiles: the name TargetInfo::matrix_units reports where the CPU runs AMX, so that samples
/// can pick tiles for it (samples::resolve_for); the emitter uses AMX for any bf16 gemm there.
const std::string& amx_bf16_unit() {
  static const std::string name = [] {
    MatrixUnit u;
    u.name = "amx_16x16x32_bf16_f32";
    u.family = "amx";
    u.m = 16, u.n = 16, u.k = 32, u.group_size = 1;
    u.a_type = bf16, u.b_type = bf16, u.c_type = f32;
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 32; ++c) u.a_layout.push_back({r, c});
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 16; ++c) u.b_layout.push_back({r, c});
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) u.c_layout.push_back({r, c});
    if (!find_matrix_unit(u.name)) register_matrix_unit(u);
    return u.name;
  }();
  return name;
}

TargetInfo info_for(const CpuTarget& t, bool host) {
  TargetInfo info;
  info.target = "cpu";
  info.device_name = host ? cpu_model_name(t.cpu) : t.cpu;
  info.arch = t.cpu;
  info.is_cpu = true;
  info.warp_size = 1;
  info.max_threads = 1024;
  info.shared_mem_bytes = 1 << 20;
  info.vector_bytes = t.avx512 ? 64 : 32;
  if (t.amx_bf16) info.matrix_units.push_back(amx_bf16_unit());
  return info;
}

/// The CPU to generate code for; *is_host says whether it is this machine (the code will run).
CpuTarget target_for(const TargetInfo& info, bool* is_host = nullptr) {
  CpuTarget host = host_target();
  const bool here = info.arch.empty() || info.arch == host.cpu;
  if (is_host) *is_host = here;
  return here ? host : named_target(info.arch);
}

// The params (plugin.h's ParamKey); pipeline() reads gemm (and, for insert_prefetches, the
// emitter's, emit_options()), codegen() the emitter's. The environment
// variables are defaults the runtime reads into the params, never read here.
const ParamKey kAmx = ParamKey::on_off(
    "amx", true, "TILEGEN_CPU_AMX", "bf16 gemm in AMX tiles where the CPU has them (and Linux grants them)");
const ParamKey kBf16Dot = ParamKey::on_off("bf16_dot", false, "TILEGEN_CPU_BF16_DOT",
                                           "bf16 gemm through vdpbf16ps where the CPU has avx512_bf16");
const ParamKey kFastMath =
    ParamKey::on_off("fast_math", false, "", "LLVM's fast-math flags on float arithmetic");
const ParamKey kGemm = ParamKey::one_of("gemm", {"microkernel", "plain"}, "microkernel", "",
                                        "plain: every gemm a loop nest, no register-blocked micro-kernel");
const ParamKey kPanelRows = ParamKey::count(
    "gemm_panel_rows", 0, 64, 4, "TILEGEN_CPU_PANEL_ROWS",
    "row blocks of a gemm that share one packed B panel where it fits in half the L2 (pack_gemm_operands); "
    "0 or 1: a B tile per block");
const ParamKey kTrimEdges =
    ParamKey::on_off("trim_edges", true, "TILEGEN_CPU_TRIM_EDGES",
                     "edge blocks' gemms over the rows, columns and K steps that exist (trim_edge_tiles)");
const ParamKey kVersionEdges = ParamKey::on_off(
    "version_edges", true, "TILEGEN_CPU_VERSION_EDGES",
    "copies over a ragged tile test their columns only in the edge blocks (version_edge_copies)");
const ParamKey kWidenTiles = ParamKey::on_off(
    "widen_tiles", true, "TILEGEN_CPU_WIDEN_TILES",
    "f16/fp8 tiles only copies fill and micro-kernel gemms read held in f32 (widen_gemm_tiles)");
const ParamKey kNumThreads = ParamKey::count(
    "num_threads", 0, 4096, 0, "", "the kernel's own oneTBB arena of this many threads; 0: the process's");

/// The emitter's options for code for CPU t (here: code to run on this machine), read from the
/// params: what codegen emits with, and what insert_prefetches plans with (the gemm's steps).
EmitOptions emit_options(const CpuTarget& t, bool here, const CompileOptions& opt) {
  EmitOptions eo;
  eo.fast_math = param_on(opt, kFastMath);
  eo.num_threads = int(param_count(opt, kNumThreads));
  eo.vector_bits = t.vector_bits();
  // bf16 gemm through vdpbf16ps, on request, where the CPU has avx512_bf16. Not the default: on
  // the Sapphire Rapids measured (PERF.md, CPU) it runs at half the f32 FMA rate, and bf16
  // widened to f32 is 1.5x faster.
  // Both switches are read on every CPU, so a bad value is an error even where it changes nothing.
  const bool want_bf16_dot = param_on(opt, kBf16Dot);
  const bool want_amx = param_on(opt, kAmx);
  eo.bf16_dot = t.avx512bf16 && want_bf16_dot;
  // bf16 gemm in AMX tiles where the CPU has them (and, for code to run here, Linux grants them).
  eo.amx = t.amx_bf16 && want_amx && (!here || request_amx_state());
  return eo;
}

/// Whether compiled code uses AMX tiles (its IR or its assembly names the tile product).
bool uses_amx(const Artifact& a) {
  return a.assembly.find("tdpbf16ps") != std::string::npos || a.source.find("x86.tdpbf16ps") != std::string::npos;
}

/// TILEGEN_NUM_THREADS, 0 when unset (oneTBB's default: every core).
int env_threads() { return int(env::integer("TILEGEN_NUM_THREADS", 1, 4096, 0)); }

/// TILEGEN_NUM_THREADS caps oneTBB for the whole process (tbb::global_control), set once; the
/// value is checked at every call (device open, kernel load), so a bad one is an error there.
void apply_env_threads() {
  const int n = env_threads();
  static std::once_flag once;
  static std::unique_ptr<tbb::global_control> limit;
  std::call_once(once, [n] {
    if (n)
      limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, n);
  });
}

/// Scratch for one task: Shared, Fragment and Local buffers of the blocks it runs; grown on
/// demand, one per worker thread, 64-byte aligned.
void* task_scratch(int64_t bytes) {
  struct Arena {
    void* p = nullptr;
    int64_t n = 0;
    ~Arena() { std::free(p); }
  };
  thread_local Arena a;
  if (bytes > a.n) {
    std::free(a.p);
    a.n = (bytes + 63) / 64 * 64;
    a.p = std::aligned_alloc(64, std::size_t(a.n));
    if (!a.p) throw Error("cpu: out of memory for " + std::to_string(bytes) + " bytes of block scratch");
  }
  return a.p;
}

/// Blocks per oneTBB task (simple_partitioner: tasks of grain/2 to grain blocks). A thread runs its range in
/// grid order (the rasterised order, so neighbours share operand panels) and steals half of another's when
/// done; small tasks let the threads finish together when one of them is slowed. On a KVM guest
/// a vCPU loses milliseconds at a time to the host: with 4 tasks per thread (11 blocks of ~2.7 ms
/// each for a 2048³ GEMM) one thread often finished 15–30 ms after the other. Same process,
/// alternating, 2 threads (znver3 guest): GEMM 2048³ 5–9% faster, softmax 4096² 4%, GEMM 512³
/// 2%, GEMM 1024³ unchanged (threads · 16 was tried earlier without gain, but measured while the
/// peer's idle threads spun through tilegen's calls: see bench_cpu's settled_time_ms). At most
/// 32–64 tasks per thread whatever the block count: the per-task cost (< 1 µs) stays negligible.
int64_t block_grain(int64_t blocks, int threads) {
  return std::max<int64_t>(1, blocks / (int64_t(std::max(threads, 1)) * 32));
}

/// TILEGEN_CPU_TIMING: where a cold compile's time goes, per stage, in this thread's CPU time
/// (steady on a busy machine, where wall time mostly measures the other processes).
class StageTimes {
 public:
  StageTimes() : last_(now()) {}
  void mark(const char* stage) {
    const double t = now();
    text_ +=
        (text_.empty() ? "" : ", ") + std::string(stage) + " " + std::to_string(int(t - last_ + 0.5)) + " ms";
    last_ = t;
  }
  const std::string& text() const { return text_; }

 private:
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
  }
  double last_;
  std::string text_;
};

using KernelFn = void (*)(void**, int64_t, int64_t, void*);

struct LoadedModule {
  std::shared_ptr<JitModule> jit;
  struct Entry {
    KernelFn fn;
    int64_t scratch_bytes;
    int64_t blocks;
  };
  std::vector<Entry> kernels;
  std::unique_ptr<tbb::task_arena> arena;  // CompileOptions.params["num_threads"]
};

class CpuContext final : public HostDeviceContext {
 public:
  CpuContext() : HostDeviceContext("cpu") {}

  // The object file when there is one (no second compilation), else the LLVM IR text.
  std::shared_ptr<void> load(const Artifact& a, const Function& lowered) override {
    apply_env_threads();
    // A kernel compiled in an earlier process (the kernel cache) may use tiles this one has not
    // been granted yet.
    if (uses_amx(a) && !request_amx_state())
      throw Error("cpu: " + lowered.name +
                      " was compiled with AMX tiles but Linux refuses this process the tile state "
                      "(arch_prctl ARCH_REQ_XCOMP_PERM; a thread's sigaltstack may be too small); compile it "
                      "with CompileOptions params {\"amx\": \"0\"} (or TILEGEN_CPU_AMX=0)",
                  lowered.loc);
    auto m = std::make_shared<LoadedModule>();
    m->jit = a.binary.empty() ? JitModule::from_ir_text(a.source, host_target())
                              : JitModule::from_object(a.binary);
    std::vector<const ir::Kernel*> ks = ir::kernels_of(lowered);
    for (std::size_t i = 0; i < ks.size(); ++i) {
      int64_t blocks = 1;
      for (auto& g : ks[i]->grid) blocks *= *g.as_int();
      m->kernels.push_back({reinterpret_cast<KernelFn>(m->jit->lookup(kernel_symbol(lowered, int(i)))),
                            *static_cast<const int64_t*>(m->jit->lookup(scratch_symbol(lowered, int(i)))),
                            blocks});
    }
    int threads = *static_cast<const int32_t*>(m->jit->lookup(threads_symbol(lowered)));
    if (threads > 0) m->arena = std::make_unique<tbb::task_arena>(threads);
    return m;
  }

  // args follow lowered.params: tensors by pointer, scalars through 8-byte slots (double/int64).
  void launch(const std::shared_ptr<void>& loaded, const Function& lowered,
              const std::vector<LaunchArg>& args) override {
    auto& m = *static_cast<LoadedModule*>(loaded.get());
    std::vector<void*> ptrs;
    std::vector<uint64_t> slots(lowered.params.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < lowered.params.size(); ++i) {
      const Param& p = lowered.params[i];
      if (p.kind == Param::Kind::Size) continue;
      if (next >= args.size()) throw Error("cpu: too few launch arguments for " + lowered.name);
      const LaunchArg& a = args[next++];
      if (p.kind == Param::Kind::Tensor) {
        ptrs.push_back(a.device_ptr);
        continue;
      }
      double d = a.dtype.is_float() ? a.scalar.f : double(a.scalar.i);
      int64_t n = a.dtype.is_float() ? int64_t(a.scalar.f) : a.scalar.i;
      if (p.var.dtype().is_float())
        std::memcpy(&slots[i], &d, 8);
      else
        std::memcpy(&slots[i], &n, 8);
      ptrs.push_back(&slots[i]);
    }
    for (const auto& k : m.kernels) {
      if (k.blocks <= 0) continue;
      auto run = [&] {
        const int64_t grain = block_grain(k.blocks, tbb::this_task_arena::max_concurrency());
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, k.blocks, grain),
            [&](const tbb::blocked_range<int64_t>& r) {
              k.fn(ptrs.data(), r.begin(), r.end(), task_scratch(k.scratch_bytes));
            },
            tbb::simple_partitioner());
      };
      if (m.arena)
        m.arena->execute(run);
      else
        run();
    }
  }
};

class CpuPlugin final : public TargetPlugin {
 public:
  std::string name() const override { return "cpu"; }

  // Available wherever LLVM has a native target: one device, the host CPU.
  ProbeResult probe() override {
    ProbeResult r;
    try {
      r.devices.push_back(info_for(host_target(), true));
      r.available = true;
    } catch (const std::exception& e) {
      r.reason = e.what();
    }
    return r;
  }

  // default_pipeline, then tile statements to parallel loops (gemms the micro-kernel handles
  // stay), then threads to loops, then the prefetches of pipelined loops (docs/passes.md lists the
  // whole pipeline):
  //   copy A[...] -> As; gemm As, Bs -> Cf; barrier; S[tx] = ...
  //   → for c0 in parallel(...) { As[...] = A[...] }; gemm As, Bs -> Cf; for tx_0 in [0, 128) { S[tx_0] = ...
  //   }
  std::vector<PassEntry> pipeline(const TargetInfo& info, const CompileOptions& opt) override {
    bool micro = param_text(opt, kGemm) != "plain";
    std::vector<PassEntry> p = default_pipeline(opt.sizes);
    // A block column's B panel copied once for several row blocks, not once a block.
    // Only a panel that stays in L2 while its row blocks read it pays (PERF.md, CPU, 2026-12-06:
    // 2.2 MiB at 2048³ gained nothing, 220 KiB at 1000×777×333 5–8%): at most half of this
    // machine's L2, or of 1 MiB for a CPU named without one.
    PackGemmOptions pack;
    pack.rows = int(param_count(opt, kPanelRows));
    bool here = false;
    target_for(info, &here);
    const int64_t l2 = here ? host_cache_bytes(2) : 0;
    pack.max_panel_bytes = (l2 > 0 ? l2 : int64_t(1) << 20) / 2;
    // Narrow float tiles only the micro-kernel reads held in f32: the copy converts them once.
    if (micro && param_on(opt, kWidenTiles))
      p.push_back(
          {"widen_gemm_tiles", [](const Function& f, const TargetInfo&) { return widen_gemm_tiles(f); }});
    p.push_back({"pack_gemm_operands",
                 [pack](const Function& f, const TargetInfo&) { return pack_gemm_operands(f, pack); }});
    // An edge block's gemm computes the rows, columns and K steps that exist, not the whole tile.
    if (param_on(opt, kTrimEdges))
      p.push_back({"trim_edge_tiles", [](const Function& f, const TargetInfo& info) {
                     return trim_edge_tiles(f, info.vector_bytes / 4);
                   }});
    // Blocks a task runs one after another then share a column panel of B (and the 8 row panels
    // of A) in the caches: at 4096² B no longer fits in L3 in plain row order.
    p.push_back({"rasterize_blocks",
                 [](const Function& f, const TargetInfo& info) { return rasterize_blocks(f, info); }});
    p.push_back({"lower_tile_ops", [micro](const Function& f, const TargetInfo& info) {
                   LowerTileOpsOptions o;
                   if (micro) o.keep_gemm = gemm_has_microkernel;
                   o.reduce_lanes = info.vector_bytes / 4 * 4;  // four vectors of f32 partial results
                   return lower_tile_ops(f, info, o);
                 }});
    p.push_back({"simplify", simplify});
    // Before the threads become loops: the checks report the thread of each access.
    if (checks_accesses(opt)) p.push_back({"check_element_accesses", check_element_accesses});
    p.push_back({"serialize_threads", serialize_threads});
    p.push_back({"simplify", simplify});
    // A tile's copy in, element-wise updates and copy out: one pass over the tile, not three.
    p.push_back({"fuse_parallel_loops", fuse_parallel_loops});
    // On the loops codegen sees: a pipelined loop's gemms prefetch its next tile copies.
    p.push_back({"insert_prefetches", [opt](const Function& f, const TargetInfo& info) {
                   bool here = false;
                   CpuTarget t = target_for(info, &here);
                   return insert_prefetches(f, emit_options(t, here, opt));
                 }});
    // A ragged tile's copies test its columns only in the edge blocks: no masked vector moves
    // elsewhere.
    if (param_on(opt, kVersionEdges))
      p.push_back({"version_edge_copies",
                   [](const Function& f, const TargetInfo&) { return version_edge_copies(f); }});
    return p;
  }

  // Lowered IR → LLVM module → O3 → {source: LLVM IR, assembly: x86, binary: ELF object}.
  Artifact codegen(const Function& lowered, const TargetInfo& info, const CompileOptions& opt) override {
    bool here = false;
    CpuTarget t = target_for(info, &here);
    const EmitOptions eo = emit_options(t, here, opt);
    StageTimes times;
    llvm::LLVMContext ctx;
    // Optimisation remarks ("loop not vectorized") are not the user's concern: keep stderr clean.
    ctx.setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo*, void*) {});
    std::unique_ptr<llvm::Module> m = emit_module(lowered, ctx, eo);
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*m, &os))
      throw Error("cpu: internal error, the generated LLVM IR is invalid: " + problems, lowered.loc);
    times.mark("emit");
    auto tm = make_target_machine(t);
    optimize(*m, *tm, t);
    times.mark("O3");
    Artifact a;
    a.source = module_text(*m);
    times.mark("print IR");
    a.binary = emit_object(*m, *tm);
    times.mark("object");
    a.assembly = disassemble_object(a.binary, t);
    times.mark("disassembly");
    if (env::flag("TILEGEN_CPU_TIMING", false))
      std::fprintf(stderr, "cpu codegen %s: %s\n", lowered.name.c_str(), times.text().c_str());
    a.entry = kernel_symbol(lowered, 0);
    return a;
  }

  std::vector<ParamKey> param_keys() const override {
    return {kAmx,       kBf16Dot,      kFastMath,   kGemm,      kPanelRows,
            kTrimEdges, kVersionEdges, kWidenTiles, kNumThreads};
  }

  std::unique_ptr<DeviceContext> open(int index) override {
    if (index != 0)
      throw Error("cpu has one device (0); device " + std::to_string(index) + " does not exist");
    apply_env_threads();
    return std::make_unique<CpuContext>();
  }

  // Any CPU LLVM knows by name ("skylake-avx512", "znver4"): code for it without running it.
  TargetInfo info_for_arch(const std::string& arch) override {
    CpuTarget host = host_target();
    if (arch.empty() || arch == host.cpu) return info_for(host, true);
    return info_for(named_target(arch), false);
  }
};

}  // namespace
}  // namespace tg::cpu

TILEGEN_PLUGIN_EXPORT const TgPluginEntry* tilegen_plugin_entry() {
  static const TgPluginEntry e{tg::kPluginAbiVersion, "cpu",
                               []() -> tg::TargetPlugin* { return new tg::cpu::CpuPlugin; }};
  return &e;
}
