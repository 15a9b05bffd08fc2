// Each sample's tuning space (Sample::tune_space): the tile parameters its builder takes, the
// values worth trying on a kind of device, and a filter for combinations that cannot work
// there. The filters are the sure rules only — shared memory over the device's, more threads
// than it runs, accumulators a thread cannot hold in registers, a tile whose half already
// covers the problem, the builder's own requirements — and leave the rest (what a lowering
// does not support) to the compile, which the tuner reports as a failed config.
#include <algorithm>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

enum class Device { Gpu, Cpu, Software };

Device kind(const TargetInfo& t) {
  if (t.is_cpu) return Device::Cpu;
  return t.software ? Device::Software : Device::Gpu;
}

/// A tile is worth trying when it is the smallest one listed or its half does not cover the extent.
bool not_oversized(int64_t tile, int64_t extent, int64_t smallest) {
  return tile <= smallest || tile / 2 < extent;
}

double elt(DType t) { return element_bytes(t); }

/// Values of `name` in the config, or the resolved parameter when the space leaves it out.
struct View {
  const TuneConfig& c;
  const Params& p;
  int64_t operator()(const std::string& name) const {
    auto it = c.find(name);
    return it != c.end() ? it->second : param(p, name);
  }
};

// gemm-shaped kernels: gemm (threads, stages), gemm_relu (tiles only), gemm_softmax (N ≤ block_N).
TuneSpace gemm_like_space(const Params& p, DType t, const TargetInfo& info, bool threads_and_stages) {
  TuneSpace s;
  const Device d = kind(info);
  if (d == Device::Gpu) {
    s.params = {{"block_M", {64, 128, 256}}, {"block_N", {64, 128, 256}}, {"block_K", {32, 64}}};
    if (threads_and_stages)
      s.params.push_back({"stages", {2, 3, 4}}), s.params.push_back({"threads", {128, 256}});
  } else if (d == Device::Cpu) {  // tiles sized for the caches (docs/PERF.md, CPU); no stages there
    s.params = {
        {"block_M", {32, 64, 96, 128, 192}}, {"block_N", {64, 128, 256}}, {"block_K", {32, 64, 128, 256}}};
  } else {
    s.params = {{"block_M", {16, 32, 64}}, {"block_N", {16, 32, 64}}, {"block_K", {16, 32}}};
  }
  const int64_t M = param(p, "M"), N = param(p, "N"), K = param(p, "K");
  const int64_t smallest_m = s.params[0].values.front(), smallest_n = s.params[1].values.front();
  const int64_t smallest_k = s.params[2].values.front();
  s.valid = [=](const TuneConfig& c) {
    View v{c, p};
    const int64_t bm = v("block_M"), bn = v("block_N"), bk = v("block_K");
    if (!not_oversized(bm, M, smallest_m) || !not_oversized(bn, N, smallest_n) ||
        !not_oversized(bk, K, smallest_k))
      return false;
    if (d == Device::Cpu)  // a block's A and B tiles and its f32 accumulators within L2 (2 MiB)
      return (bm * bk + bk * bn) * elt(t) + bm * bn * 4.0 <= 2.0 * 1024 * 1024;
    const int64_t stages = threads_and_stages ? v("stages") : 2;
    const int64_t threads = threads_and_stages ? v("threads") : 128;
    if (threads > info.max_threads) return false;
    if (bm * bn / threads > 128) return false;  // f32 accumulators per thread
    return (bm * bk + bk * bn) * elt(t) * double(stages) <= double(info.shared_mem_bytes);
  };
  return s;
}

TuneSpace gemm_softmax_space(const Params& p, DType t, const TargetInfo& info) {
  TuneSpace s = gemm_like_space(p, t, info, true);
  // block_N holds whole rows: only tiles at least N wide, the smallest such first.
  const int64_t N = param(p, "N");
  std::vector<int64_t> bn;
  for (int64_t v : {16, 32, 64, 128, 256})
    if (v >= N && bn.size() < 2) bn.push_back(v);
  if (bn.empty()) bn.push_back(param(p, "block_N"));
  s.params[1].values = bn;
  auto inner = s.valid;
  s.valid = [inner, N, p](const TuneConfig& c) { return View{c, p}("block_N") >= N && inner(c); };
  return s;
}

TuneSpace flash_attention_space(const Params& p, DType t, const TargetInfo& info) {
  TuneSpace s;
  const Device d = kind(info);
  if (d == Device::Gpu)
    s.params = {
        {"block_M", {64, 128}}, {"block_N", {32, 64, 128}}, {"stages", {1, 2, 3}}, {"threads", {128, 256}}};
  else
    s.params = {{"block_M", {16, 32, 64}}, {"block_N", {16, 32, 64}}};
  const int64_t S = param(p, "S"), D = param(p, "D");
  const int64_t smallest = s.params[0].values.front();
  s.valid = [=](const TuneConfig& c) {
    View v{c, p};
    const int64_t bm = v("block_M"), bn = v("block_N"), stages = v("stages"), threads = v("threads");
    if (!not_oversized(bm, S, smallest) || !not_oversized(bn, S, s.params[1].values.front())) return false;
    if (d != Device::Gpu) return (bm * D + 2 * bn * D) * elt(t) <= double(info.shared_mem_bytes);
    if (threads > info.max_threads) return false;
    // A warp of a matrix unit multiplies 16 rows: each warp needs its own 16 rows of Q.
    if (bm * info.warp_size / threads < 16) return false;
    if ((bm * bn + bm * D) / threads > 192) return false;  // scores and output accumulators per thread
    return (bm * D + 2 * bn * D * std::max<int64_t>(stages, 1)) * elt(t) <= double(info.shared_mem_bytes);
  };
  return s;
}

// softmax and rmsnorm: rows per block, columns per tile, threads. On a GPU the whole row of
// whole_row_tiles (their default there) is a width too.
TuneSpace row_space(const Params& p, DType t, const TargetInfo& info, std::vector<int64_t> widths) {
  TuneSpace s;
  const Device d = kind(info);
  const int64_t M = param(p, "M"), N = param(p, "N");
  const Params whole = whole_row_tiles(info, p, t);  // the GPU default: empty where it does not apply
  if (!whole.empty() && whole.at("block_N") > widths.back()) widths.push_back(whole.at("block_N"));
  s.params = {{"block_M", {1, 2, 4, 8}}, {"block_N", std::move(widths)}};
  if (d == Device::Gpu) s.params.push_back({"threads", {64, 128, 256, 512, 1024}});
  const int64_t smallest_n = s.params[1].values.front();
  s.valid = [=](const TuneConfig& c) {
    View v{c, p};
    const int64_t bm = v("block_M"), bn = v("block_N"), threads = v("threads");
    if (!not_oversized(bm, M, 1) || !not_oversized(bn, N, smallest_n)) return false;
    if (threads > info.max_threads) return false;
    return d != Device::Gpu || bm * bn / threads <= 64;  // a tile's elements per thread, in registers
  };
  return s;
}

TuneSpace dequant_gemm_space(const Params& p, DType t, const TargetInfo& info) {
  TuneSpace s;
  const Device d = kind(info);
  if (d == Device::Gpu)
    s.params = {{"block_M", {16, 32, 64}},
                {"block_N", {64, 128, 256}},
                {"block_K", {32, 64, 128}},
                {"stages", {2, 3}},
                {"threads", {128, 256}}};
  else
    s.params = {{"block_M", {16, 32}}, {"block_N", {32, 64, 128}}, {"block_K", {32, 64, 128}}};
  const int64_t M = param(p, "M"), N = param(p, "N"), group = param(p, "group");
  s.valid = [=](const TuneConfig& c) {
    View v{c, p};
    const int64_t bm = v("block_M"), bn = v("block_N"), bk = v("block_K"), stages = v("stages");
    if (group % bk != 0) return false;  // the builder's rule: a K step within one scale group
    if (!not_oversized(bm, M, 16) || !not_oversized(bn, N, s.params[1].values.front())) return false;
    if (v("threads") > info.max_threads) return false;
    // A and the dequantised W in shared memory, plus the packed W staged beside them.
    const double smem = ((bm + bn) * bk * elt(t) + bn * bk * 0.5) * double(d == Device::Gpu ? stages : 1);
    return smem <= double(info.shared_mem_bytes);
  };
  return s;
}

TuneSpace conv2d_space(const Params& p, DType t, const TargetInfo& info) {
  TuneSpace s;
  const Device d = kind(info);
  if (d == Device::Gpu)
    s.params = {{"block_M", {64, 128}},
                {"block_N", {32, 64, 128}},
                {"block_K", {16, 32, 64}},
                {"stages", {2, 3}},
                {"threads", {128, 256}}};
  else
    s.params = {{"block_M", {32, 64, 128}}, {"block_N", {32, 64}}, {"block_K", {16, 32, 64}}};
  const int64_t F = param(p, "F");
  s.valid = [=](const TuneConfig& c) {
    View v{c, p};
    const int64_t bm = v("block_M"), bn = v("block_N"), bk = v("block_K"), threads = v("threads");
    if (!not_oversized(bn, F, s.params[1].values.front())) return false;
    if (threads > info.max_threads || (d == Device::Gpu && bm * bn / threads > 128)) return false;
    const int64_t stages = d == Device::Gpu ? v("stages") : 1;
    return (bm * bk + bk * bn) * elt(t) * double(stages) <= double(info.shared_mem_bytes);
  };
  return s;
}

TuneSpace block_reduce_space(const Params& p, DType, const TargetInfo& info) {
  TuneSpace s;
  s.params = {{"threads", {64, 128, 256, 512, 1024}},
              {"elements_per_block", {1024, 2048, 4096, 8192, 16384}}};
  const int64_t N = param(p, "N");
  s.valid = [=](const TuneConfig& c) {
    const int64_t threads = c.at("threads"), per_block = c.at("elements_per_block");
    return threads <= info.max_threads && per_block >= threads && not_oversized(per_block, N, 1024);
  };
  return s;
}

}  // namespace

std::function<TuneSpace(const Params&, DType, const TargetInfo&)> tune_space_of(const std::string& sample) {
  if (sample == "gemm")
    return [](const Params& p, DType t, const TargetInfo& i) { return gemm_like_space(p, t, i, true); };
  if (sample == "gemm_relu")
    return [](const Params& p, DType t, const TargetInfo& i) { return gemm_like_space(p, t, i, false); };
  if (sample == "gemm_softmax") return gemm_softmax_space;
  if (sample == "fp8_gemm")  // one-byte elements: K steps up to 128 (a 128-byte swizzled row)
    return [](const Params& p, DType t, const TargetInfo& i) {
      TuneSpace s = gemm_like_space(p, t, i, true);
      if (kind(i) == Device::Gpu) s.params[2].values = {64, 128};
      return s;
    };
  if (sample == "flash_attention") return flash_attention_space;
  if (sample == "softmax")
    return [](const Params& p, DType t, const TargetInfo& i) {
      return row_space(p, t, i, {128, 256, 512, 1024});
    };
  if (sample == "rmsnorm")
    return [](const Params& p, DType t, const TargetInfo& i) {
      return row_space(p, t, i, {256, 512, 1024, 2048});
    };
  if (sample == "dequant_gemm") return dequant_gemm_space;
  if (sample == "conv2d") return conv2d_space;
  if (sample == "block_reduce") return block_reduce_space;
  return nullptr;
}

}  // namespace tg::samples::detail
