#include "peers.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <random>

#include "tilegen/ir/error.h"

namespace tg::bench {

PeerTiming time_median(const std::function<void()>& f, const PeerRunOptions& opt) {
  for (int i = 0; i < opt.warmup; ++i) f();
  std::vector<double> ms;
  for (int i = 0; i < std::max(opt.runs, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  PeerTiming t;
  t.runs = int(ms.size());
  t.min_ms = ms.front();
  t.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return t;
}

PeerTiming Peer::run(const std::string& sample, const samples::Params& params, DType dtype,
                     const PeerRunOptions& opt) const {
  PreparedPeer p = prepare(sample, params, dtype, opt.threads);
  PeerTiming t = time_median(p.call, opt);
  t.implementation = p.implementation;
  return t;
}

namespace {

// ---- openblas: cblas_sgemm from the system's libopenblas, opened at first use.
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;
using SgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);

struct OpenBlas {
  SgemmFn sgemm = nullptr;
  void (*set_num_threads)(int) = nullptr;
  char* (*get_corename)() = nullptr;
};

// Debian's OpenBLAS picks kernels from the CPU's name and falls back to SSE3 kernels on CPUs it
// does not know (Sapphire Rapids, and this KVM guest's AMD EPYC, among them), which would make
// the peer look several times slower than it is. Name the best kernels for the ISA the CPU
// really has, unless the user already chose: SkylakeX with AVX-512, else Zen on AMD (its tuned
// AVX2 kernels and block sizes; the SGEMM kernel is Haswell's), else Haswell.
void choose_openblas_coretype() {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  else if (__builtin_cpu_supports("avx2"))
    setenv("OPENBLAS_CORETYPE", __builtin_cpu_is("amd") ? "Zen" : "Haswell", 0);
#endif
}

const OpenBlas& openblas() {
  static OpenBlas b;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    choose_openblas_coretype();  // must precede dlopen: OpenBLAS reads it when it loads
    void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = std::string("cannot load libopenblas.so.0 (") + dlerror() + "); install libopenblas0";
    } else if (!(b.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm")))) {
      error = "libopenblas.so.0 has no cblas_sgemm";
    } else {
      b.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
      b.get_corename = reinterpret_cast<char* (*)()>(dlsym(lib, "openblas_get_corename"));
    }
  }
  if (!b.sgemm) throw Error("peer openblas: " + error);
  return b;
}

int dimension(const samples::Params& p, const std::string& name, const std::string& sample) {
  auto it = p.find(name);
  if (it == p.end()) throw Error("peer openblas: sample " + sample + " has no parameter " + name);
  if (it->second <= 0 || it->second > INT_MAX)
    throw Error("peer openblas: " + name + "=" + std::to_string(it->second) + " is outside what cblas takes");
  return int(it->second);
}

std::string openblas_unsupported(const std::string& sample, DType t) {
  if (sample != "gemm" && sample != "gemm_relu")
    return "peer openblas has no " + sample + " (it covers gemm, gemm_relu)";
  if (t != f32) return "peer openblas runs " + sample + " at f32 only, not " + std::string(t.name());
  return {};
}

bool flag(const samples::Params& p, const std::string& name) {
  auto it = p.find(name);
  return it != p.end() && it->second != 0;
}

// C = op(A)·op(B) (then relu for gemm_relu), row-major as the samples lay them out: A is M×K, or
// K×M with trans_A; B is K×N, or N×K with trans_B.
PreparedPeer openblas_prepare(const std::string& sample, const samples::Params& p, DType t, int threads) {
  if (auto why = openblas_unsupported(sample, t); !why.empty()) throw Error(why);
  const OpenBlas& blas = openblas();
  const int m = dimension(p, "M", sample), n = dimension(p, "N", sample), k = dimension(p, "K", sample);
  const bool trans_a = flag(p, "trans_A"), trans_b = flag(p, "trans_B"), relu = sample == "gemm_relu";
  struct Data {
    HostVector<float> a, b, c;
  };
  auto d = std::make_shared<Data>();
  d->a.resize(std::size_t(m) * k), d->b.resize(std::size_t(k) * n), d->c.resize(std::size_t(m) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : d->a) v = dist(rng);
  for (auto& v : d->b) v = dist(rng);
  Data* x = d.get();
  auto call = [=, &blas] {
    // Every call, as another peer's calls in between may have changed the count (cheap when equal).
    if (threads > 0 && blas.set_num_threads) blas.set_num_threads(threads);
    blas.sgemm(kCblasRowMajor, trans_a ? kCblasTrans : kCblasNoTrans, trans_b ? kCblasTrans : kCblasNoTrans,
               m, n, k, 1.0f, x->a.data(), trans_a ? m : k, x->b.data(), trans_b ? k : n, 0.0f, x->c.data(),
               n);
    if (relu)
      for (auto& v : x->c) v = std::max(v, 0.0f);
  };
  return {call, "cblas_sgemm, core " + openblas_core(), d};
}

// A peer this build does not carry yet: listed, so asking for it gets a sentence, not "unknown".
Peer absent_peer(const std::string& name, const std::string& covers) {
  const std::string why = "peer " + name + " is not available in this build";
  return Peer{
      name, covers, [why](const std::string&, DType) { return why; },
      [why](const std::string&, const samples::Params&, DType, int) -> PreparedPeer { throw Error(why); }};
}

}  // namespace

const std::vector<Peer>& peers() {
  static const std::vector<Peer> all = {
      Peer{"openblas", "gemm, gemm_relu at f32", openblas_unsupported, openblas_prepare},
      Peer{"onednn", "gemm, gemm_relu (matmul) and softmax at f32, bf16, f16", onednn_unsupported,
           onednn_prepare},
      absent_peer("cublas", "gemm, gemm_relu on NVIDIA GPUs"),
      absent_peer("torch", "every sample, through libtorch"),
  };
  return all;
}

std::string openblas_core() {
  try {
    const OpenBlas& b = openblas();
    return b.get_corename ? std::string(b.get_corename()) : std::string("unknown core");
  } catch (const Error& e) {
    return e.what();
  }
}

const Peer* find_peer(const std::string& name) {
  for (const auto& p : peers())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace tg::bench
