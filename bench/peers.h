// Peers: other implementations of a sample that `tilegen bench --vs PEER` times next to tilegen,
// the same way (warm-up, then the median of many runs). A registry of name → functions, so a new
// peer (cuBLAS, torch) is one entry here and nothing else changes.
//
//   const tg::bench::Peer* p = tg::bench::find_peer("openblas");
//   if (auto why = p->unsupported("gemm", tg::f32); why.empty())
//     double ms = p->run("gemm", params, tg::f32, {3, 20}).median_ms;
//
// prepare() gives the call itself, inputs allocated, so a benchmark can interleave the peer's
// runs with tilegen's (bench/bench_cpu.cpp): a disturbance then slows both sides alike.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilegen/host_device_context.h"
#include "tilegen/ir/dtype.h"
#include "tilegen/samples.h"

namespace tg::bench {

/// A peer's operands and results live in host memory as the host targets allocate it (2 MiB
/// pages from 2 MiB up: tg::allocate_host_memory), so a comparison does not time the page size.
template <class T>
using HostVector = std::vector<T, HostAllocator<T>>;

struct PeerTiming {
  double median_ms = 0, min_ms = 0;
  int runs = 0;
  std::string implementation;  // the kernel the library chose, where it says ("brg:avx2")
};

struct PeerRunOptions {
  int warmup = 3;
  int runs = 20;
  int threads = 0;  // 0: the library's default (its environment variable, else every core)
};

/// One peer call on ready inputs; `call()` runs it once and returns when it is done.
struct PreparedPeer {
  std::function<void()> call;
  std::string implementation;   // empty when the library does not say
  std::shared_ptr<void> state;  // inputs and library objects, kept alive with the call
};

struct Peer {
  std::string name;
  std::string covers;  // what it implements, for messages: "gemm, gemm_relu at f32"
  /// Empty when the peer can run `sample` at `dtype`; otherwise why not, as a sentence.
  std::function<std::string(const std::string& sample, DType dtype)> unsupported;
  /// Inputs and the call for the sample's problem at `params` on `threads` threads (0: the
  /// library's default). Throws tg::Error when it cannot.
  std::function<PreparedPeer(const std::string& sample, const samples::Params& params, DType dtype,
                             int threads)>
      prepare;

  /// prepare(), then the median of opt.runs calls after opt.warmup.
  PeerTiming run(const std::string& sample, const samples::Params& params, DType dtype,
                 const PeerRunOptions& opt) const;
};

/// Every peer this build knows of, available or not (an unavailable one says why in unsupported()).
const std::vector<Peer>& peers();
/// nullptr when no peer has this name.
const Peer* find_peer(const std::string& name);

/// OpenBLAS's core type once loaded ("Haswell", "Zen"; see peers.cpp), or why it is absent.
std::string openblas_core();

/// The onednn peer (peer_onednn.cpp): matmul and softmax primitives of libdnnl.so.2.
std::string onednn_unsupported(const std::string& sample, DType dtype);
PreparedPeer onednn_prepare(const std::string& sample, const samples::Params& params, DType dtype,
                            int threads);

/// The median of `runs` wall-clock timings of `f` after `warmup` untimed calls, in milliseconds.
PeerTiming time_median(const std::function<void()>& f, const PeerRunOptions& opt);

}  // namespace tg::bench
