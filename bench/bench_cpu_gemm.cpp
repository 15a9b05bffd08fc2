// bench_cpu_gemm: the cpu target against OpenBLAS in the same run — fp32 GEMM at 512..4096 on
// 1 and 2 threads, softmax 4096×4096 in GB/s, and the cold JIT latency of gemm. Prints a
// markdown table (the CPU section of docs/PERF.md).
//
//   bench_cpu_gemm [--sizes 512,1024,2048,4096] [--threads 1,2] [--block M,N,K] [--reps N]
//
// OpenBLAS is opened with dlopen (libopenblas.so.0); OPENBLAS_CORETYPE=SkylakeX is set on
// AVX-512 hosts (Debian's build otherwise falls back to SSE3 kernels there).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                         float*, int);
  using SetThreads = void (*)(int);
  Sgemm sgemm = nullptr;
  SetThreads set_threads = nullptr;
  std::string core;
  bool open() {
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    set_threads = reinterpret_cast<SetThreads>(dlsym(h, "openblas_set_num_threads"));
    auto corename = reinterpret_cast<char* (*)()>(dlsym(h, "openblas_get_corename"));
    if (corename) core = corename();
    return sgemm && set_threads;
  }
};

bool host_has_avx512() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool yes = false;
  while (!yes && std::fgets(line, sizeof line, f)) yes = std::strstr(line, " avx512f") != nullptr;
  std::fclose(f);
  return yes;
}

/// Best of `reps` timed calls after one warm-up: the machine this runs on is shared, and the
/// minimum is the figure least disturbed by other processes (for both sides alike).
template <typename F>
double best_ms(int reps, F f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto s = Clock::now();
    f();
    t.push_back(ms_since(s));
  }
  return *std::min_element(t.begin(), t.end());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes{512, 1024, 2048, 4096}, threads{1, 2}, block{96, 128, 128};
  int reps = 5;
  std::string dump;  // --dump PREFIX: write PREFIX.ll and PREFIX.s of the first gemm
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--sizes")
      sizes = parse_list(argv[i + 1]);
    else if (a == "--threads")
      threads = parse_list(argv[i + 1]);
    else if (a == "--block")
      block = parse_list(argv[i + 1]);
    else if (a == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (a == "--dump")
      dump = argv[i + 1];
  }
  if (host_has_avx512()) setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  setenv("TILEGEN_CACHE", "0", 1);  // cold compiles: the JIT latency is part of the report
  OpenBlas blas;
  bool have_blas = blas.open();
  tg::Target cpu = tg::Target::get("cpu");
  std::printf("device: %s, arch %s; OpenBLAS %s\n\n", cpu.info().device_name.c_str(), cpu.info().arch.c_str(),
              have_blas ? ("core " + blas.core).c_str() : "not found");

  const tg::samples::Sample& gemm = *tg::samples::find("gemm");
  std::printf(
      "| fp32 GEMM M=N=K | threads | tilegen cpu GFLOP/s | OpenBLAS GFLOP/s | ratio "
      "|\n|---|---|---|---|---|\n");
  std::mt19937_64 rng(1);
  for (int64_t n : sizes) {
    tg::samples::Params p = tg::samples::resolve(
        gemm,
        {{"M", n}, {"N", n}, {"K", n}, {"block_M", block[0]}, {"block_N", block[1]}, {"block_K", block[2]}});
    tg::Kernel k = gemm.build(p, tg::f32);
    tg::samples::Problem pr = gemm.make_inputs(p, tg::f32, rng);
    const float* A = reinterpret_cast<const float*>(pr.args[0].bytes.data());
    const float* B = reinterpret_cast<const float*>(pr.args[1].bytes.data());
    float* C = reinterpret_cast<float*>(pr.args[2].bytes.data());
    std::vector<tg::DeviceBuffer> bufs;
    for (auto& a : pr.args) bufs.push_back(cpu.upload(a.view()));
    double flops = 2.0 * double(n) * double(n) * double(n);
    for (int64_t t : threads) {
      tg::CompileOptions opt;
      opt.params["num_threads"] = std::to_string(t);
      tg::CompiledKernel ck = cpu.compile(k, opt);
      if (!dump.empty()) {
        FILE* f = std::fopen((dump + ".ll").c_str(), "w");
        std::fputs(ck.source().c_str(), f);
        std::fclose(f);
        f = std::fopen((dump + ".s").c_str(), "w");
        std::fputs(ck.assembly().c_str(), f);
        std::fclose(f);
        dump.clear();
      }
      double ours = best_ms(reps, [&] { ck(bufs[0], bufs[1], bufs[2]); });
      double theirs = 0;
      if (have_blas) {
        blas.set_threads(int(t));
        theirs = best_ms(reps, [&] {
          blas.sgemm(101, 111, 111, int(n), int(n), int(n), 1.f, A, int(n), B, int(n), 0.f, C, int(n));
        });
      }
      double g_ours = flops / ours / 1e6, g_theirs = theirs > 0 ? flops / theirs / 1e6 : 0;
      std::printf("| %lld | %lld | %.1f | %.1f | %.2f |\n", (long long)n, (long long)t, g_ours, g_theirs,
                  g_theirs > 0 ? g_ours / g_theirs : 0.0);
      std::fflush(stdout);
    }
  }

  // Softmax 4096×4096 f32: bytes moved (read + write) per second.
  const tg::samples::Sample& sm = *tg::samples::find("softmax");
  tg::samples::Params sp = tg::samples::resolve(sm, {{"M", 4096}, {"N", 4096}});
  tg::samples::Problem spr = sm.make_inputs(sp, tg::f32, rng);
  std::vector<tg::DeviceBuffer> sbufs;
  for (auto& a : spr.args) sbufs.push_back(cpu.upload(a.view()));
  std::printf("\n| softmax 4096x4096 f32 | threads | GB/s |\n|---|---|---|\n");
  for (int64_t t : threads) {
    tg::CompileOptions opt;
    opt.params["num_threads"] = std::to_string(t);
    tg::CompiledKernel ck = cpu.compile(sm.build(sp, tg::f32), opt);
    double ms = best_ms(reps, [&] { ck(sbufs[0], sbufs[1]); });
    std::printf("| | %lld | %.1f |\n", (long long)t, sm.bytes(sp, tg::f32) / ms / 1e6);
  }

  // Cold JIT latency: pipeline + LLVM O3 + object emission + load, gemm 2048 fp32.
  std::printf("\n| JIT latency, cold (gemm f32) | ms |\n|---|---|\n");
  for (int r = 0; r < 3; ++r) {
    tg::samples::Params p = tg::samples::resolve(gemm, {{"M", 2048 + 64 * r}, {"N", 2048}, {"K", 2048}});
    tg::Kernel k = gemm.build(p, tg::f32);
    auto s = Clock::now();
    tg::CompiledKernel ck = cpu.compile(k);  // constant shapes: compiled and loaded here
    std::printf("| run %d | %.1f |\n", r, ms_since(s));
  }
  return 0;
}
