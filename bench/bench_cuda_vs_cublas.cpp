// tilegen's cuda target against cuBLAS (cublasGemmEx, opened with dlopen) in one process, on the
// same device buffers: fp16/bf16 GEMM (and f16 with B stored N×K) and the M=1 dequant GEMM
// (against a dense fp16 cuBLAS GEMM of the same shape). Then the memory-bound samples (softmax,
// rmsnorm) against the device's own device-to-device copy of the same bytes (cuMemcpyDtoD), in
// GB/s. Prints tables and writes CSV (the memory-bound rows to out.csv's sibling *_memory.csv).
//
//   bench_cuda_vs_cublas [out.csv] [--quick]
#include <cublas_v2.h>
#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tilegen/runtime.h"
#include "tilegen/samples.h"

namespace {

using namespace tg;
using namespace tg::samples;

struct Cublas {
  void* lib = nullptr;
  decltype(&::cublasCreate_v2) create = nullptr;
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                    int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                    cublasGemmAlgo_t);
  GemmEx gemm = nullptr;
  Cublas() {
    for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if ((lib = dlopen(n, RTLD_NOW | RTLD_GLOBAL))) break;
    if (!lib) return;
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "cublasCreate_v2"));
    gemm = reinterpret_cast<decltype(gemm)>(dlsym(lib, "cublasGemmEx"));
  }
};

struct Events {  // driver-API events on the legacy default stream, where cuBLAS runs
  decltype(&::cuEventCreate) create = nullptr;
  decltype(&::cuEventRecord) record = nullptr;
  decltype(&::cuEventSynchronize) sync = nullptr;
  decltype(&::cuEventElapsedTime_v2) elapsed = nullptr;
  decltype(&::cuMemcpyDtoD_v2) copy = nullptr;
  Events() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    create = reinterpret_cast<decltype(create)>(dlsym(lib, "cuEventCreate"));
    record = reinterpret_cast<decltype(record)>(dlsym(lib, "cuEventRecord"));
    sync = reinterpret_cast<decltype(sync)>(dlsym(lib, "cuEventSynchronize"));
    elapsed = reinterpret_cast<decltype(elapsed)>(dlsym(lib, "cuEventElapsedTime_v2"));
    copy = reinterpret_cast<decltype(copy)>(dlsym(lib, "cuMemcpyDtoD_v2"));
  }
  template <typename F>
  double median_ms(F&& run, int runs) {
    CUevent a, b;
    create(&a, CU_EVENT_DEFAULT), create(&b, CU_EVENT_DEFAULT);
    for (int i = 0; i < 3; ++i) run();
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      record(a, nullptr);
      run();
      record(b, nullptr);
      sync(b);
      float t = 0;
      elapsed(&t, a, b);
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

struct Row {
  std::string name, dtype;
  int64_t M, N, K;
  double tilegen_ms, cublas_ms, max_rel_diff;
};

// C = A·B (row-major) with cuBLAS: column-major C^T = B^T·A^T, so B is passed first.
// trans_b: B is stored N×K (the dequant weights' layout).
void cublas_gemm(Cublas& cb, cublasHandle_t h, const DeviceBuffer& A, const DeviceBuffer& B, DeviceBuffer& C,
                 int64_t M, int64_t N, int64_t K, DType t, bool trans_b) {
  float one = 1, zero = 0;
  cudaDataType dt = t == bf16 ? CUDA_R_16BF : CUDA_R_16F;
  cublasStatus_t s = cb.gemm(h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(N), int(M), int(K),
                             &one, B.device_ptr(), dt, trans_b ? int(K) : int(N), A.device_ptr(), dt, int(K),
                             &zero, C.device_ptr(), dt, int(N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) throw Error("cublasGemmEx failed with status " + std::to_string(int(s)));
}

double max_rel_diff(const DeviceBuffer& x, const DeviceBuffer& y, DType t) {
  std::vector<uint8_t> a(x.bytes()), b(y.bytes());
  x.download(a.data(), a.size());
  y.download(b.data(), b.size());
  double worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    double u = scalar_as_double(t, load_element(t, a.data(), i)),
           v = scalar_as_double(t, load_element(t, b.data(), i));
    worst = std::max(worst, std::abs(u - v) / std::max(1e-2, std::abs(v)));
  }
  return worst;
}

// A sample's problem on the device, compiled and launched once.
struct OnDevice {
  Problem pr;
  std::vector<DeviceBuffer> bufs;
  std::vector<KernelArg> args;  // point into bufs
  CompiledKernel k;
};

OnDevice launch_once(Target& gpu, const Sample& s, const Params& p, DType t, std::mt19937_64& rng, bool reference) {
  Problem pr = reference ? s.make_problem(p, t, rng) : s.make_inputs(p, t, rng);
  std::vector<DeviceBuffer> bufs;
  for (HostArray& a : pr.args) bufs.push_back(gpu.upload(a.view()));
  std::vector<KernelArg> args;
  for (const DeviceBuffer& b : bufs) args.emplace_back(&b);
  CompiledKernel k = gpu.compile(s.build(p, t));
  k.launch(args);
  return {std::move(pr), std::move(bufs), std::move(args), std::move(k)};
}

Row run_case(Target& gpu, Cublas& cb, cublasHandle_t h, Events& ev, const std::string& sample, Params over,
             DType t, int runs) {
  const Sample& s = *find(sample);
  Params p = resolve_for(s, over, gpu.info(), t);  // the device's tuned tiles, as `tilegen bench` runs
  std::mt19937_64 rng(5);
  OnDevice d = launch_once(gpu, s, p, t, rng, false);
  std::vector<DeviceBuffer>& bufs = d.bufs;
  std::vector<KernelArg>& args = d.args;
  CompiledKernel& k = d.k;
  ProfileOptions po;
  po.runs = runs;
  double ours = k.profile(args, po).median_ms;
  int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  const bool dequant = sample == "dequant_gemm";
  const bool trans_b = p.count("trans_B") && p.at("trans_B") != 0;  // B stored N×K (a linear layer's)
  // The peer: cuBLAS on dense f16/bf16 operands of the same shape (for dequant, B is N×K).
  DeviceBuffer A = bufs[0];
  DeviceBuffer B = bufs[1];
  if (dequant) {  // dense N×K weights in the input dtype
    const Sample& g = *find("gemm");
    Problem dense = g.make_inputs(resolve(g, {{"M", N}, {"N", 1}, {"K", K}}), t, rng);
    B = gpu.upload(dense.args[0].view());
  }
  DeviceBuffer C = gpu.alloc({M, N}, t);
  cublas_gemm(cb, h, A, B, C, M, N, K, t, dequant || trans_b);
  double theirs = ev.median_ms([&] { cublas_gemm(cb, h, A, B, C, M, N, K, t, dequant || trans_b); }, runs);
  double diff = dequant ? NAN : max_rel_diff(bufs.back(), C, t);
  return {sample + (trans_b ? "_tB" : ""), std::string(t.name()), M, N, K, ours, theirs, diff};
}

struct MemoryRow {
  std::string name, dtype;
  int64_t M, N;
  double tilegen_ms, copy_ms, bytes, max_abs_err;
  std::string config;  // the tiles timed best
};

// A memory-bound sample against a device-to-device copy moving the same bytes (its input into
// its output buffer's size: one read and one write of M×N elements, the sample's minimal traffic).
// Timed at the sample's default tiles and at whole rows a tile (one read and one write), 1 or 2
// row a block of 256, 512 or 1024 threads; each checked against the float64 reference, the fastest kept.
MemoryRow run_memory_case(Target& gpu, Events& ev, const std::string& sample, int64_t M, int64_t N, DType t,
                          int runs) {
  const Sample& s = *find(sample);
  std::vector<Params> configs = {{}};
  for (auto [bm, threads] : {std::pair<int64_t, int64_t>{1, 256}, {1, 512}, {1, 1024}})
    configs.push_back({{"block_M", bm}, {"block_N", N}, {"threads", threads}});
  MemoryRow best{sample, std::string(t.name()), M, N, 0, 0, 0, 0, ""};
  for (const Params& extra : configs) {
    Params given = extra;
    given["M"] = M, given["N"] = N;
    Params p = resolve_for(s, given, gpu.info(), t);
    std::mt19937_64 rng(7);
    OnDevice d = launch_once(gpu, s, p, t, rng, true);
    std::vector<DeviceBuffer>& bufs = d.bufs;
    const Problem& pr = d.pr;
    // Checked against the float64 reference before it is timed.
    std::vector<uint8_t> out(bufs.back().bytes());
    bufs.back().download(out.data(), out.size());
    double err = 0;
    for (int64_t i = 0; i < bufs.back().numel(); ++i)
      err = std::max(err, std::abs(scalar_as_double(t, load_element(t, out.data(), i)) - pr.expected[0][size_t(i)]));
    ProfileOptions po;
    po.runs = runs;
    double ours = d.k.profile(d.args, po).median_ms;
    std::string config = "block_M=" + std::to_string(p.at("block_M")) + " block_N=" + std::to_string(p.at("block_N")) +
                         " threads=" + std::to_string(p.at("threads"));
    std::printf("  %s %s %lldx%lld %s: %.4f ms\n", sample.c_str(), std::string(t.name()).c_str(), (long long)M, (long long)N,
                config.c_str(), ours);
    if (best.config.empty() || ours < best.tilegen_ms) {
      DeviceBuffer& x = bufs.front();
      DeviceBuffer y = gpu.alloc({M, N}, t);
      auto ptr = [](const DeviceBuffer& b) { return CUdeviceptr(reinterpret_cast<uintptr_t>(b.device_ptr())); };
      double copy = ev.median_ms([&] { ev.copy(ptr(y), ptr(x), x.bytes()); }, runs);
      best = {sample, std::string(t.name()), M, N, ours, copy, 2.0 * double(x.bytes()), err, config};
    }
  }
  return best;
}

}  // namespace

// How long an application waits for the gemm kernel: cold (an empty kernel cache: the passes,
// NVRTC, the module load) and cached (the same kernel again: the cache's hit and the load), each
// the median of five, in wall milliseconds. The cache directory is a fresh one per cold compile.
void compile_latency(Target& gpu, int64_t n) {
  const Sample& s = *find("gemm");
  Params p = resolve_for(s, {{"M", n}, {"N", n}, {"K", n}}, gpu.info(), f16);
  const Kernel k = s.build(p, f16);
  const char* old = std::getenv("TILEGEN_CACHE_DIR");
  const std::string saved = old ? old : "";
  auto ms_of = [&] {
    auto t0 = std::chrono::steady_clock::now();
    CompiledKernel c = gpu.compile(k);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> cold, cached;
  for (int i = 0; i < 5; ++i) {
    char dir[] = "/tmp/tilegen-bench-cache-XXXXXX";
    if (!::mkdtemp(dir)) throw Error("mkdtemp failed for the compile-latency cache");
    ::setenv("TILEGEN_CACHE_DIR", dir, 1);
    cold.push_back(ms_of());
    cached.push_back(ms_of());
    std::filesystem::remove_all(dir);
  }
  if (old)
    ::setenv("TILEGEN_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("TILEGEN_CACHE_DIR");
  std::sort(cold.begin(), cold.end());
  std::sort(cached.begin(), cached.end());
  std::printf("compile gemm f16 %lld^3 (%lldx%lldx%lld tiles): cold %.1f ms (min %.1f), cached %.2f ms (min %.2f), "
              "median of 5\n\n",
              (long long)n, (long long)p.at("block_M"), (long long)p.at("block_N"), (long long)p.at("block_K"),
              cold[2], cold[0], cached[2], cached[0]);
}

int main(int argc, char** argv) {
  std::string csv = argc > 1 && argv[1][0] != '-' ? argv[1] : "bench_cuda_vs_cublas.csv";
  bool quick = argc > 1 && std::string(argv[argc - 1]) == "--quick";
  try {
    Cublas cb;
    Events ev;
    if (!cb.gemm || !cb.create) throw Error("libcublas.so.13 not found or lacks cublasGemmEx");
    if (!ev.create) throw Error("libcuda.so.1 not found");
    Target gpu = Target::get("cuda");
    cublasHandle_t h = nullptr;
    if (cb.create(&h) != CUBLAS_STATUS_SUCCESS) throw Error("cublasCreate failed");
    const int runs = quick ? 5 : 20;
    std::vector<Row> rows;
    for (DType t : {f16, bf16})
      for (int64_t n : quick ? std::vector<int64_t>{1024} : std::vector<int64_t>{2048, 4096, 8192})
        rows.push_back(run_case(gpu, cb, h, ev, "gemm", {{"M", n}, {"N", n}, {"K", n}}, t, runs));
    // Ragged and small-K shapes (issue 15's table: correct, ratio reported).
    for (auto [m, n, k] : {std::array<int64_t, 3>{1000, 777, 333}, {2048, 2048, 64}})
      if (!quick) rows.push_back(run_case(gpu, cb, h, ev, "gemm", {{"M", m}, {"N", n}, {"K", k}}, f16, runs));
    // B stored N×K (gemm_tB; wgmma reads it K-major with --param wgmma_trans_b=1).
    if (!quick)
      rows.push_back(run_case(gpu, cb, h, ev, "gemm", {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"trans_B", 1}},
                              f16, runs));
    int64_t dk = quick ? 2048 : 8192;
    rows.push_back(run_case(gpu, cb, h, ev, "dequant_gemm", {{"M", 1}, {"N", dk}, {"K", dk}}, f16, runs));
    std::ofstream out(csv);
    out << "device,kernel,dtype,M,N,K,tilegen_ms,cublas_ms,tilegen_tflops,cublas_tflops,ratio,max_rel_diff\n";
    std::printf("%-13s %-5s %6s %6s %6s %11s %11s %8s %8s %7s %10s\n", "kernel", "dtype", "M", "N", "K",
                "tilegen ms", "cuBLAS ms", "TF/s", "cuBLAS", "ratio", "max rel");
    for (const Row& r : rows) {
      double flops = 2.0 * double(r.M) * double(r.N) * double(r.K);
      double a = flops / r.tilegen_ms / 1e9, b = flops / r.cublas_ms / 1e9;
      std::printf("%-13s %-5s %6lld %6lld %6lld %11.4f %11.4f %8.1f %8.1f %7.3f %10.2e\n", r.name.c_str(),
                  r.dtype.c_str(), (long long)r.M, (long long)r.N, (long long)r.K, r.tilegen_ms, r.cublas_ms,
                  a, b, r.cublas_ms / r.tilegen_ms, r.max_rel_diff);
      out << gpu.info().device_name << "," << r.name << "," << r.dtype << "," << r.M << "," << r.N << ","
          << r.K << "," << r.tilegen_ms << "," << r.cublas_ms << "," << a << "," << b << ","
          << r.cublas_ms / r.tilegen_ms << "," << r.max_rel_diff << "\n";
    }
    std::cout << "ratio = cuBLAS time / tilegen time (1.0 = parity); CSV: " << csv << "\n\n";
    compile_latency(gpu, quick ? 1024 : 4096);

    if (!ev.copy) throw Error("libcuda.so.1 lacks cuMemcpyDtoD_v2");
    const int64_t mn = quick ? 2048 : 8192;
    std::vector<MemoryRow> mem;
    for (const char* sample : {"softmax", "rmsnorm"})
      for (DType t : {f16, f32}) mem.push_back(run_memory_case(gpu, ev, sample, mn, mn, t, runs));
    std::string mcsv = csv.substr(0, csv.rfind('.')) + "_memory.csv";
    std::ofstream mo(mcsv);
    mo << "device,kernel,dtype,M,N,tilegen_ms,copy_ms,tilegen_gbs,copy_gbs,ratio,max_abs_err,config\n";
    std::printf("%-8s %-5s %6s %6s %11s %9s %9s %9s %7s %10s  %s\n", "kernel", "dtype", "M", "N", "tilegen ms",
                "copy ms", "GB/s", "copy GB/s", "ratio", "max abs", "tiles");
    for (const MemoryRow& r : mem) {
      double a = r.bytes / r.tilegen_ms / 1e6, b = r.bytes / r.copy_ms / 1e6;
      std::printf("%-8s %-5s %6lld %6lld %11.4f %9.4f %9.1f %9.1f %7.3f %10.2e  %s\n", r.name.c_str(),
                  r.dtype.c_str(), (long long)r.M, (long long)r.N, r.tilegen_ms, r.copy_ms, a, b, a / b,
                  r.max_abs_err, r.config.c_str());
      mo << gpu.info().device_name << "," << r.name << "," << r.dtype << "," << r.M << "," << r.N << ","
         << r.tilegen_ms << "," << r.copy_ms << "," << a << "," << b << "," << a / b << "," << r.max_abs_err
         << ",\"" << r.config << "\"\n";
    }
    std::cout << "ratio = tilegen GB/s / copy GB/s, both counting one read and one write of M×N; CSV: " << mcsv
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bench_cuda_vs_cublas: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
