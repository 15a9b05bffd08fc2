// The vulkan target against its peers in one run, on the same inputs:
//   - fp16 GEMM (4096³; 512³ with --quick) through whatever path the device takes (cooperative
//     matrices where it reports them; TILEGEN_VULKAN_COOPMAT=0, the default of the param
//     coopmat, forces the plain path) against
//     cuBLAS (cublasGemmEx, opened with dlopen, on the cuda target's buffers) where there is an
//     NVIDIA GPU, with the largest relative difference between the two results;
//   - flash_attention (B=8 H=16 S=4096 D=128, causal and not) against PyTorch SDPA
//     (bench/torch_sdpa_peer.py, run as a child process) where python3 and torch are present.
// A few block configurations are tried for each kernel and the fastest is reported. Each
// configuration is timed in two profile() passes a second apart and the lower median kept: on the
// H200 the SM clock has been seen to sit at 345-855 MHz instead of 1980 for up to a second while
// work ran, and a pass timed then was 2.8-4.9x slow (docs/PERF.md, Vulkan, 2026-12-02 21:51). Both
// medians are printed, and a pair more than 20% apart is flagged. Prints a table and writes CSV; on
// lavapipe (no peers) it reports tilegen's own figures only.
//
//   bench_vulkan [out.csv] [--quick] [--gemm-only] [--size N]
//   TILEGEN_BENCH_GEMM_CONFIGS="bm,bn,bk,stages,threads;..."  the GEMM configurations to try
//   (instead of the built-in list); TILEGEN_VULKAN_VECTOR / _PAD / _PREFETCH / _DOUBLE=0 (the
//   defaults of the params vector_copies, pad_rows, prefetch, double_buffer) switch the code
//   generator's 16-byte copies and the passes pad_shared_rows, prefetch_tiles, double_buffer_tiles
//   off, one by one.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "tilegen/runtime.h"
#include "tilegen/samples.h"

#ifndef TILEGEN_SOURCE_DIR
#define TILEGEN_SOURCE_DIR "."
#endif

namespace {

using namespace tg;
using namespace tg::samples;

// cuBLAS and the CUDA driver through dlopen, with the few declarations used here (no CUDA
// headers needed to build this program): handles are pointers, enums are ints.
struct Cublas {
  using Create = int (*)(void**);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int,
                         int, const void*, void*, int, int, int, int);
  using CtxSync = int (*)();
  using EventCreate = int (*)(void**, unsigned);
  using EventRecord = int (*)(void*, void*);
  using EventSync = int (*)(void*);
  using EventElapsed = int (*)(float*, void*, void*);
  static constexpr int kOpN = 0, kR16F = 2, kCompute32F = 68, kAlgoDefault = -1;
  Create create = nullptr;
  GemmEx gemm = nullptr;
  CtxSync sync = nullptr;
  EventCreate event_create = nullptr;
  EventRecord event_record = nullptr;
  EventSync event_sync = nullptr;
  EventElapsed event_elapsed = nullptr;
  void* handle = nullptr;
  std::string why;
  Cublas() {
    void* lib = nullptr;
    for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if ((lib = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib || !cuda) {
      why = !cuda ? "no NVIDIA driver (libcuda.so.1)" : "libcublas.so.13/.12 not found";
      return;
    }
    create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
    gemm = reinterpret_cast<GemmEx>(dlsym(lib, "cublasGemmEx"));
    sync = reinterpret_cast<CtxSync>(dlsym(cuda, "cuCtxSynchronize"));
    event_create = reinterpret_cast<EventCreate>(dlsym(cuda, "cuEventCreate"));
    event_record = reinterpret_cast<EventRecord>(dlsym(cuda, "cuEventRecord"));
    event_sync = reinterpret_cast<EventSync>(dlsym(cuda, "cuEventSynchronize"));
    event_elapsed = reinterpret_cast<EventElapsed>(dlsym(cuda, "cuEventElapsedTime_v2"));
    if (!event_elapsed) event_elapsed = reinterpret_cast<EventElapsed>(dlsym(cuda, "cuEventElapsedTime"));
    if (!create || !gemm) why = "libcublas lacks cublasCreate_v2/cublasGemmEx";
    if (!sync || !event_create || !event_record || !event_sync || !event_elapsed)
      why = "libcuda.so.1 lacks event calls";
  }
};

struct Row {
  std::string kernel, shape, config, peer;
  double flops = 0, ms = 0, peer_ms = NAN, max_rel_diff = NAN;
};

std::string shape_text(const Params& p, std::initializer_list<const char*> keys) {
  std::string s;
  for (const char* k : keys) s += (s.empty() ? "" : ",") + std::string(k) + "=" + std::to_string(p.at(k));
  return s;
}

// The fastest of `configs` (each a set of parameter overrides) for the sample at `over`, each the
// lower median of two profile passes; the inputs are host tensors, so the result of the last
// launch is in `pr` afterwards.
std::optional<Row> best_config(Target& vk, const std::string& sample, const Params& over,
                               const std::vector<Params>& configs, DType t, Problem& pr, int runs) {
  const Sample& s = *find(sample);
  std::optional<Row> best;
  for (const Params& c : configs) {
    Params all = over;
    all.insert(c.begin(), c.end());
    std::string label;
    for (auto& [k, v] : c) label += (label.empty() ? "" : " ") + k + "=" + std::to_string(v);
    try {
      Params p = resolve(s, all);
      Kernel k = s.build(p, t);
      CompiledKernel ck = vk.compile(k);
      std::vector<KernelArg> args = kernel_args(k.function(), pr);
      ck.launch(args);
      ProfileOptions po;
      po.runs = runs;
      const double first = ck.profile(args, po).median_ms;
      std::this_thread::sleep_for(std::chrono::seconds(1));  // the second pass outside a dip the first met
      const double second = ck.profile(args, po).median_ms;
      const double ms = std::min(first, second);
      std::cout << "  " << sample << " " << label << ": " << ms << " ms (passes " << first << ", " << second
                << ")" << (std::max(first, second) > 1.2 * ms ? "  [passes disagree: see the header]" : "")
                << "\n";
      if (!best || ms < best->ms) best = Row{sample, "", label, "", s.flops(p, t), ms};
    } catch (const std::exception& e) {
      std::cout << "  " << sample << " " << label << ": failed: " << e.what() << "\n";
    }
  }
  return best;
}

double max_rel_diff(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, DType t, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double u = scalar_as_double(t, load_element(t, x.data(), i)),
           v = scalar_as_double(t, load_element(t, y.data(), i));
    worst = std::max(worst, std::abs(u - v) / std::max(1e-2, std::abs(v)));
  }
  return worst;
}

// C = A·B (row-major) with cuBLAS on the cuda target's buffers: column-major C^T = B^T·A^T.
void cublas_peer(Cublas& cb, Row& row, Problem& pr, int64_t M, int64_t N, int64_t K, int runs) {
  if (!cb.why.empty()) {
    row.peer = "cuBLAS unavailable: " + cb.why;
    return;
  }
  Target cuda = Target::get("cuda");
  DeviceBuffer A = cuda.upload(pr.args[0].view()), B = cuda.upload(pr.args[1].view());
  DeviceBuffer C = cuda.alloc({M, N}, f16);
  if (!cb.handle && cb.create(&cb.handle) != 0) throw Error("cublasCreate failed");
  float one = 1, zero = 0;
  auto run = [&] {
    if (cb.gemm(cb.handle, Cublas::kOpN, Cublas::kOpN, int(N), int(M), int(K), &one, B.device_ptr(),
                Cublas::kR16F, int(N), A.device_ptr(), Cublas::kR16F, int(K), &zero, C.device_ptr(),
                Cublas::kR16F, int(N), Cublas::kCompute32F, Cublas::kAlgoDefault) != 0)
      throw Error("cublasGemmEx failed");
  };
  for (int i = 0; i < 3; ++i) run();
  cb.sync();
  // Device time, like tilegen's timestamps: events on the legacy default stream, where cuBLAS runs.
  void *start = nullptr, *stop = nullptr;
  cb.event_create(&start, 0);
  cb.event_create(&stop, 0);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    cb.event_record(start, nullptr);
    run();
    cb.event_record(stop, nullptr);
    cb.event_sync(stop);
    float t = 0;
    cb.event_elapsed(&t, start, stop);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  row.peer = "cuBLAS";
  row.peer_ms = ms[ms.size() / 2];
  std::vector<uint8_t> c(C.bytes());
  C.download(c.data(), c.size());
  row.max_rel_diff = max_rel_diff(pr.args[2].bytes, c, f16, M * N);
}

// PyTorch SDPA's FlashAttention-2 back-end on the same shape, from the peer script's output line
// "sdpa_flash B=.. ... median_ms=X tflops=Y".
void sdpa_peer(Row& row, const Params& p) {
  std::string cmd = "python3 " TILEGEN_SOURCE_DIR "/bench/torch_sdpa_peer.py";
  for (const char* k : {"B", "H", "HKV", "S", "D", "causal"})
    cmd += std::string(" --") + k + " " + std::to_string(p.at(k));
  cmd += " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (f && std::fgets(buf, sizeof buf, f)) out += buf;
  if (f) pclose(f);
  auto at = out.find("sdpa_flash");
  auto ms = out.find("median_ms=", at == std::string::npos ? 0 : at);
  if (at == std::string::npos || ms == std::string::npos) {
    // The script's last line says why (an ImportError without torch, no CUDA device, ...).
    std::string last = out.substr(0, out.find_last_not_of("\n") + 1);
    last = last.substr(last.find_last_of('\n') + 1);
    row.peer = "SDPA unavailable: " + last;
    return;
  }
  row.peer = "torch SDPA (flash)";
  row.peer_ms = std::atof(out.c_str() + ms + 10);
}

// "128,128,32,1,128;64,64,32,2,128" → GEMM configurations (block_M, block_N, block_K, stages,
// threads); throws on anything else.
std::vector<Params> parse_gemm_configs(const std::string& text) {
  std::vector<Params> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(';', at);
    std::string one = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    if (one.empty()) continue;
    int64_t v[5];
    if (std::sscanf(one.c_str(), "%ld,%ld,%ld,%ld,%ld", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
      throw Error("TILEGEN_BENCH_GEMM_CONFIGS: '" + one + "' is not bm,bn,bk,stages,threads");
    out.push_back(
        {{"block_M", v[0]}, {"block_N", v[1]}, {"block_K", v[2]}, {"stages", v[3]}, {"threads", v[4]}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv = argc > 1 && argv[1][0] != '-' ? argv[1] : "bench_vulkan.csv";
  bool quick = false, gemm_only = false;
  int64_t size = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") quick = true;
    if (a == "--gemm-only") gemm_only = true;
    if (a == "--size" && i + 1 < argc) size = std::atol(argv[++i]);
  }
  try {
    Target vk = Target::get("vulkan");
    const TargetInfo& info = vk.info();
    // The path the compiles take: coopmat=0 (the environment's default included) forces the plain one.
    const CompileOptions resolved = resolve_compile_options(vk.plugin(), {});
    const bool plain = info.matrix_units.empty() ||
                       (resolved.params.count("coopmat") && resolved.params.at("coopmat") == "0");
    std::cout << "device: " << info.device_name << " (" << info.arch << ")"
              << (plain ? ", plain path" : ", cooperative-matrix path") << "\n";
    const int runs = quick ? 5 : 20;
    std::mt19937_64 rng(5);
    std::vector<Row> rows;
    Cublas cb;

    const int64_t n = size > 0 ? size : quick ? 512 : 4096;
    const Params gemm{{"M", n}, {"N", n}, {"K", n}};
    Problem gp = find("gemm")->make_inputs(resolve(*find("gemm"), gemm), f16, rng);
    // Large tiles first (one Workgroup buffer a tile, rows padded, the next tile's loads in
    // registers: what the cooperative-matrix path is built for), then what fits 32 KB of
    // Workgroup memory (lavapipe; NVIDIA offers 48 KB): configurations that do not fit fail fast
    // and are listed as such.
    std::vector<Params> gemm_configs = {
        {{"block_M", 128}, {"block_N", 128}, {"block_K", 32}, {"stages", 1}, {"threads", 128}},
        {{"block_M", 128}, {"block_N", 128}, {"block_K", 32}, {"stages", 1}, {"threads", 256}},
        {{"block_M", 128}, {"block_N", 128}, {"block_K", 64}, {"stages", 1}, {"threads", 256}},
        {{"block_M", 128}, {"block_N", 256}, {"block_K", 32}, {"stages", 1}, {"threads", 256}},
        {{"block_M", 256}, {"block_N", 128}, {"block_K", 32}, {"stages", 1}, {"threads", 256}},
        {{"block_M", 64}, {"block_N", 64}, {"block_K", 32}, {"stages", 2}, {"threads", 128}}};
    if (const char* env = std::getenv("TILEGEN_BENCH_GEMM_CONFIGS"); env && *env)
      gemm_configs = parse_gemm_configs(env);
    if (auto r = best_config(vk, "gemm", gemm, gemm_configs, f16, gp, runs)) {
      r->shape = shape_text(gemm, {"M", "N", "K"});
      cublas_peer(cb, *r, gp, n, n, n, runs);
      rows.push_back(*r);
    }

    for (int64_t causal : {0, 1}) {
      if (gemm_only) break;
      Params fa{
          {"B", quick ? 1 : 8}, {"H", quick ? 2 : 16}, {"HKV", quick ? 2 : 16}, {"S", quick ? 512 : 4096},
          {"D", 128},           {"causal", causal}};
      Problem fp = find("flash_attention")->make_inputs(resolve(*find("flash_attention"), fa), f16, rng);
      std::vector<Params> fa_configs = {{{"block_M", 64}, {"block_N", 64}, {"threads", 128}},
                                        {{"block_M", 32}, {"block_N", 32}, {"threads", 128}},
                                        {{"block_M", 32}, {"block_N", 16}, {"threads", 128}},
                                        {{"block_M", 16}, {"block_N", 32}, {"threads", 64}}};
      if (auto r = best_config(vk, "flash_attention", fa, fa_configs, f16, fp, runs)) {
        r->shape = shape_text(fa, {"B", "H", "S", "D", "causal"});
        sdpa_peer(*r, fa);
        rows.push_back(*r);
      }
    }

    std::ofstream out(csv);
    out << "device,path,kernel,shape,config,tilegen_ms,tilegen_tflops,peer,peer_ms,peer_tflops,ratio,max_rel_"
           "diff\n";
    std::printf("%-16s %-34s %11s %8s %11s %8s %7s %9s  %s\n", "kernel", "shape", "tilegen ms", "TF/s",
                "peer ms", "TF/s", "ratio", "max rel", "peer");
    const char* path = plain ? "plain" : "coopmat";
    for (const Row& r : rows) {
      double a = r.flops / r.ms / 1e9, b = r.flops / r.peer_ms / 1e9, ratio = r.peer_ms / r.ms;
      std::printf("%-16s %-34s %11.4f %8.2f %11.4f %8.2f %7.3f %9.2e  %s [%s]\n", r.kernel.c_str(),
                  r.shape.c_str(), r.ms, a, r.peer_ms, b, ratio, r.max_rel_diff, r.peer.c_str(),
                  r.config.c_str());
      out << '"' << info.device_name << "\"," << path << "," << r.kernel << ",\"" << r.shape << "\",\""
          << r.config << "\"," << r.ms << "," << a << ",\"" << r.peer << "\"," << r.peer_ms << "," << b << ","
          << ratio << "," << r.max_rel_diff << "\n";
    }
    std::cout << "ratio = peer time / tilegen time (1.0 = parity); CSV: " << csv << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_vulkan: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
