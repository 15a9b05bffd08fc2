// The onednn peer: oneDNN 2.x primitives, opened with dlopen at first use (libdnnl.so.2) like the
// openblas peer, so neither libtilegen nor the command links it.
//
//   gemm, gemm_relu  matmul primitive, A M×K · B K×N (or transposed) → C, all f32, bf16 or f16 as
//                    the sample stores them; accumulation in f32 (oneDNN's rule); relu as a post-op
//   softmax          softmax_v2 forward (accurate) along the rows of an M×N f32/bf16/f16 matrix
//
// oneDNN picks its kernels from the host's ISA. On a CPU without avx512_bf16 a bf16 matmul is
// either emulated or falls back to a reference implementation: the peer reports which one it
// got (dnnl_query_impl_info_str) with its timing, so a ratio against "ref:any" is never mistaken
// for one against a tuned kernel.
#include <dlfcn.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "peers.h"
#include "tilegen/ir/error.h"

#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#define TG_HAVE_DNNL_HEADER (DNNL_VERSION_MAJOR == 2)
#else
#define TG_HAVE_DNNL_HEADER 0
#endif

namespace tg::bench {

#if TG_HAVE_DNNL_HEADER
namespace {

// The C entry points the peer uses (one list: declared in Dnnl, looked up in dnnl()).
#define TG_DNNL_FUNCTIONS(X) \
  X(dnnl_engine_create) \
  X(dnnl_stream_create) \
  X(dnnl_stream_wait) \
  X(dnnl_memory_desc_init_by_tag) \
  X(dnnl_memory_create) \
  X(dnnl_memory_destroy) \
  X(dnnl_matmul_desc_init) \
  X(dnnl_softmax_v2_forward_desc_init) \
  X(dnnl_primitive_attr_create) \
  X(dnnl_primitive_attr_destroy) \
  X(dnnl_primitive_attr_set_post_ops) \
  X(dnnl_post_ops_create) \
  X(dnnl_post_ops_destroy) \
  X(dnnl_post_ops_append_eltwise) \
  X(dnnl_primitive_desc_create) \
  X(dnnl_primitive_desc_query) \
  X(dnnl_primitive_desc_destroy) \
  X(dnnl_primitive_create) \
  X(dnnl_primitive_execute) \
  X(dnnl_primitive_destroy)

/// The C entry points the peer uses, looked up in libdnnl.so.2 (types from the header).
struct Dnnl {
#define TG_DNNL_FN(name) decltype(&::name) name = nullptr;
  TG_DNNL_FUNCTIONS(TG_DNNL_FN)
#undef TG_DNNL_FN
  void (*omp_set_num_threads)(int) = nullptr;  // oneDNN 2.6 on Debian runs on OpenMP (libgomp)
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
};

const Dnnl& dnnl() {
  static Dnnl d;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) error = std::string("cannot load libdnnl.so.2 (") + dlerror() + "); install libdnnl2";
#define TG_DNNL_FN(name)                                                                         \
  if (lib && error.empty() && !(d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, #name)))) \
    error = "libdnnl.so.2 has no " #name;
    TG_DNNL_FUNCTIONS(TG_DNNL_FN)
#undef TG_DNNL_FN
    if (error.empty()) {
      // libgomp came in with libdnnl; its thread count is what oneDNN's parallel regions use.
      if (void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        d.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_num_threads"));
      }
      if (d.dnnl_engine_create(&d.engine, dnnl_cpu, 0) != dnnl_success ||
          d.dnnl_stream_create(&d.stream, d.engine, dnnl_stream_default_flags) != dnnl_success)
        error = "oneDNN could not open its cpu engine";
    }
  }
  if (!error.empty()) throw Error("peer onednn: " + error);
  return d;
}

void check(dnnl_status_t s, const char* what) {
  if (s == dnnl_unimplemented)
    throw Error(
        "peer onednn: no oneDNN kernel for this on this CPU (oneDNN 2.x bf16 and f16 matmul need AVX-512)");
  if (s != dnnl_success)
    throw Error(std::string("peer onednn: ") + what + " failed (dnnl status " + std::to_string(int(s)) + ")");
}

dnnl_data_type_t dnnl_type(DType t) {
  if (t == f32) return dnnl_f32;
  if (t == bf16) return dnnl_bf16;
  if (t == f16) return dnnl_f16;
  throw Error("peer onednn: no oneDNN type for " + std::string(t.name()));
}

int64_t dimension(const samples::Params& p, const std::string& name, const std::string& sample) {
  auto it = p.find(name);
  if (it == p.end()) throw Error("peer onednn: sample " + sample + " has no parameter " + name);
  if (it->second <= 0) throw Error("peer onednn: " + name + " must be positive");
  return it->second;
}

bool flag(const samples::Params& p, const std::string& name) {
  auto it = p.find(name);
  return it != p.end() && it->second != 0;
}

dnnl_memory_desc_t matrix_desc(int64_t rows, int64_t cols, dnnl_data_type_t t, bool transposed) {
  dnnl_memory_desc_t md;
  dnnl_dims_t dims = {rows, cols};
  // ba: the rows×cols matrix stored column-major, i.e. the transpose lies row-major in memory.
  check(dnnl().dnnl_memory_desc_init_by_tag(&md, 2, dims, t, transposed ? dnnl_ba : dnnl_ab), "memory desc");
  return md;
}

/// Random bytes of a valid value of type t for n elements (bf16/f16 as the top halves of f32).
HostVector<uint8_t> random_matrix(int64_t n, DType t, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  HostVector<uint8_t> out(std::size_t(n) * std::size_t(t.bits() / 8));
  for (int64_t i = 0; i < n; ++i) {
    float v = dist(rng);
    if (t == f32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      uint16_t h = t == bf16 ? float_to_bf16_bits(v) : float_to_half_bits(v);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

/// A primitive with its memories, destroyed together; run() executes it once and waits.
class Primitive {
 public:
  Primitive(const void* op_desc, dnnl_primitive_attr_t attr) {
    const Dnnl& d = dnnl();
    check(d.dnnl_primitive_desc_create(&pd_, op_desc, attr, d.engine, nullptr), "primitive_desc_create");
    const char* impl = nullptr;
    if (d.dnnl_primitive_desc_query(pd_, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
      impl_ = impl;
    check(d.dnnl_primitive_create(&prim_, pd_), "primitive_create");
  }
  ~Primitive() {
    const Dnnl& d = dnnl();
    for (auto& a : args_) d.dnnl_memory_destroy(a.memory);
    if (prim_) d.dnnl_primitive_destroy(prim_);
    if (pd_) d.dnnl_primitive_desc_destroy(pd_);
  }
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  void bind(int arg, const dnnl_memory_desc_t& md, void* data) {
    dnnl_memory_t m = nullptr;
    check(dnnl().dnnl_memory_create(&m, &md, dnnl().engine, data), "memory_create");
    args_.push_back({arg, m});
  }
  void run() const {
    const Dnnl& d = dnnl();
    check(d.dnnl_primitive_execute(prim_, d.stream, int(args_.size()), args_.data()), "primitive_execute");
    check(d.dnnl_stream_wait(d.stream), "stream_wait");
  }
  const std::string& impl() const { return impl_; }

 private:
  dnnl_primitive_desc_t pd_ = nullptr;
  dnnl_primitive_t prim_ = nullptr;
  std::vector<dnnl_exec_arg_t> args_;
  std::string impl_;
};

void set_threads(int threads) {
  if (threads > 0 && dnnl().omp_set_num_threads) dnnl().omp_set_num_threads(threads);
}

/// A primitive with the inputs and outputs it runs on.
struct Job {
  HostVector<uint8_t> in0, in1, out;
  std::unique_ptr<Primitive> prim;
};

PreparedPeer finish(std::shared_ptr<Job> job, int threads) {
  Job* j = job.get();
  return {[j, threads] {
            set_threads(threads);  // every call: another peer may have changed OpenMP's count
            j->prim->run();
          },
          j->prim->impl(), job};
}

PreparedPeer matmul_prepare(const std::string& sample, const samples::Params& p, DType t, int threads) {
  const Dnnl& d = dnnl();
  const int64_t m = dimension(p, "M", sample), n = dimension(p, "N", sample), k = dimension(p, "K", sample);
  std::mt19937 rng(1);
  auto job = std::make_shared<Job>();
  job->in0 = random_matrix(m * k, t, rng), job->in1 = random_matrix(k * n, t, rng);
  job->out.resize(std::size_t(m * n) * std::size_t(t.bits() / 8));
  dnnl_memory_desc_t a_md = matrix_desc(m, k, dnnl_type(t), flag(p, "trans_A"));
  dnnl_memory_desc_t b_md = matrix_desc(k, n, dnnl_type(t), flag(p, "trans_B"));
  // C in the inputs' type, as the sample stores it (accumulation is f32 either way).
  dnnl_memory_desc_t c_md = matrix_desc(m, n, dnnl_type(t), false);
  dnnl_matmul_desc_t desc;
  check(d.dnnl_matmul_desc_init(&desc, &a_md, &b_md, nullptr, &c_md), "matmul_desc_init");
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t ops = nullptr;
  if (sample == "gemm_relu") {
    check(d.dnnl_primitive_attr_create(&attr), "primitive_attr_create");
    check(d.dnnl_post_ops_create(&ops), "post_ops_create");
    check(d.dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f), "append relu");
    check(d.dnnl_primitive_attr_set_post_ops(attr, ops), "set post-ops");
  }
  set_threads(threads);  // oneDNN sizes its kernels' blocking for the threads it will have
  job->prim = std::make_unique<Primitive>(&desc, attr);
  if (ops) d.dnnl_post_ops_destroy(ops);
  if (attr) d.dnnl_primitive_attr_destroy(attr);
  job->prim->bind(DNNL_ARG_SRC, a_md, job->in0.data());
  job->prim->bind(DNNL_ARG_WEIGHTS, b_md, job->in1.data());
  job->prim->bind(DNNL_ARG_DST, c_md, job->out.data());
  return finish(job, threads);
}

PreparedPeer softmax_prepare(const std::string& sample, const samples::Params& p, DType t, int threads) {
  const Dnnl& d = dnnl();
  const int64_t m = dimension(p, "M", sample), n = dimension(p, "N", sample);
  std::mt19937 rng(1);
  auto job = std::make_shared<Job>();
  job->in0 = random_matrix(m * n, t, rng), job->in1.resize(job->in0.size());
  dnnl_memory_desc_t md = matrix_desc(m, n, dnnl_type(t), false);
  dnnl_softmax_v2_desc_t desc;
  check(
      d.dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference, dnnl_softmax_accurate, &md, &md, 1),
      "softmax_v2_forward_desc_init");
  set_threads(threads);
  job->prim = std::make_unique<Primitive>(&desc, nullptr);
  job->prim->bind(DNNL_ARG_SRC, md, job->in0.data());
  job->prim->bind(DNNL_ARG_DST, md, job->in1.data());
  return finish(job, threads);
}

/// Empty when oneDNN loads and has a matmul kernel for `t` on this CPU (tried on 16×16×16 once
/// per type, so `tilegen bench --vs onednn` says so before timing anything); else why not.
std::string matmul_unavailable(DType t) {
  static std::map<std::string, std::string> known;
  const std::string key(t.name());
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::string why;
  try {
    dnnl_memory_desc_t md = matrix_desc(16, 16, dnnl_type(t), false);
    dnnl_matmul_desc_t desc;
    check(dnnl().dnnl_matmul_desc_init(&desc, &md, &md, nullptr, &md), "matmul_desc_init");
    Primitive probe(&desc, nullptr);
  } catch (const Error& e) {
    why = e.what();
  }
  return known[key] = why;
}

}  // namespace
#endif

std::string onednn_unsupported(const std::string& sample, DType t) {
#if TG_HAVE_DNNL_HEADER
  if (sample != "gemm" && sample != "gemm_relu" && sample != "softmax")
    return "peer onednn has no " + sample + " (it covers gemm, gemm_relu, softmax)";
  if (t != f32 && t != bf16 && t != f16)
    return "peer onednn runs " + sample + " at f32, bf16 or f16, not " + std::string(t.name());
  return sample == "softmax" ? std::string() : matmul_unavailable(t);
#else
  (void)sample, (void)t;
  return "peer onednn was not built: this build found no oneDNN 2.x header (install libdnnl-dev)";
#endif
}

PreparedPeer onednn_prepare(const std::string& sample, const samples::Params& p, DType t, int threads) {
  if (auto why = onednn_unsupported(sample, t); !why.empty()) throw Error(why);
#if TG_HAVE_DNNL_HEADER
  return sample == "softmax" ? softmax_prepare(sample, p, t, threads) : matmul_prepare(sample, p, t, threads);
#else
  (void)p, (void)threads;
  return {};
#endif
}

}  // namespace tg::bench
