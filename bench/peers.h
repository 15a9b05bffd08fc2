// Peers: other implementations of a sample that `tilegen bench --vs PEER` times next to tilegen,
// the same way (warm-up, then the median of many runs). A registry of name → function, so a new
// peer (cuBLAS, torch) is one entry here and nothing else changes.
//
//   const tg::bench::Peer* p = tg::bench::find_peer("openblas");
//   if (auto why = p->unsupported("gemm", tg::f32); why.empty())
//     double ms = p->run("gemm", params, tg::f32, {3, 20}).median_ms;
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tilegen/ir/dtype.h"
#include "tilegen/samples.h"

namespace tg::bench {

struct PeerTiming {
  double median_ms = 0, min_ms = 0;
  int runs = 0;
};

struct PeerRunOptions {
  int warmup = 3;
  int runs = 20;
};

struct Peer {
  std::string name;
  std::string covers;  // what it implements, for messages: "gemm, gemm_relu at f32"
  /// Empty when the peer can run `sample` at `dtype`; otherwise why not, as a sentence.
  std::function<std::string(const std::string& sample, DType dtype)> unsupported;
  /// Time the peer on the sample's problem at `params`. Throws tg::Error when it cannot.
  std::function<PeerTiming(const std::string& sample, const samples::Params& params, DType dtype,
                           const PeerRunOptions& opt)>
      run;
};

/// Every peer this build knows of, available or not (an unavailable one says why in unsupported()).
const std::vector<Peer>& peers();
/// nullptr when no peer has this name.
const Peer* find_peer(const std::string& name);

/// The median of `runs` wall-clock timings of `f` after `warmup` untimed calls, in milliseconds.
PeerTiming time_median(const std::function<void()>& f, const PeerRunOptions& opt);

}  // namespace tg::bench
