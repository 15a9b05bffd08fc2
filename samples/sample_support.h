// Private helpers shared by the sample files: parameter access, random inputs, poisoned outputs,
// tolerances. Not installed; the public surface is tilegen/samples.h.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "tilegen/samples.h"

namespace tg::samples::detail {

/// A resolved parameter; throws tg::Error when the sample forgot to declare it.
int64_t param(const Params& p, const std::string& name);
/// A parameter as a builder-ready Expr constant (shapes, block sizes).
inline Expr cparam(const Params& p, const std::string& name) { return Expr(param(p, name)); }

/// Throws tg::Error("<sample>: <message>") when `ok` is false: parameter combinations the
/// kernel cannot handle (block sizes that do not divide, a head count that does not split).
void require(bool ok, const std::string& sample, const std::string& message);

/// A flag parameter: {name, default, help} accepting 0 or 1.
ParamInfo flag(std::string name, int64_t default_value, std::string help);

/// Append a test shape with its label; `conformance_only` keeps it out of the Debug unit test.
inline void add_test_shape(Sample& s, std::string label, Params shape, bool conformance_only = false) {
  s.test_shapes.push_back(std::move(shape));
  s.test_shape_info.push_back({std::move(label), conformance_only});
}

/// C = A · Bᵀ in float64: `a` is M×K and `b_t` is N×K, both row-major; C is M×N row-major.
std::vector<double> matmul_reference(const std::vector<double>& a, const std::vector<double>& b_t, int64_t M,
                                     int64_t N, int64_t K);

/// Bytes of one element (packed types count half a byte).
inline double element_bytes(DType t) { return t.bits() / 8.0; }

/// "f16" in messages.
inline std::string dtype_name(DType t) { return std::string(t.name()); }

/// The cpu target's tiles for a gemm-shaped sample (block_M, block_N, block_K), from bench_cpu's
/// measurements (docs/PERF.md, CPU); on a GPU whose warpgroup unit (wgmma) takes the dtype, K
/// steps of `warpgroup_block_k` (one 128-byte swizzled row a tile row: 64 f16, 128 fp8), and
/// `bulk_stages` pipeline stages where bulk copies (TMA) fill the tiles; else empty. gemm.cpp.
Params gemm_tiles_with(const TargetInfo& target, const Params& p, DType t, int64_t warpgroup_block_k,
                       int64_t bulk_stages);
inline Params gemm_tiles(const TargetInfo& target, const Params& p, DType t) {
  return gemm_tiles_with(target, p, t, 64, 4);
}

/// Row kernels' tiles (softmax, rmsnorm) on a hardware GPU with lane shuffles: one row a block,
/// the whole row in one tile (block_N the power of two ≥ N, up to 16384) over N/16 threads, so
/// the row is read once and written once and stays in registers across warps
/// (infer_fragment_layouts) — the tiles at the copy's rate on the H200 (docs/PERF.md). Empty on
/// CPUs, software devices and for longer rows (the sample's column walks). softmax.cpp.
Params whole_row_tiles(const TargetInfo& target, const Params& p, DType t);

/// The tuning space of the sample of that name (tune_spaces.cpp), or null.
std::function<TuneSpace(const Params&, DType, const TargetInfo&)> tune_space_of(const std::string& sample);

// One factory per sample file.
Sample gemm_sample();
Sample gemm_relu_sample();
Sample softmax_sample();
Sample rmsnorm_sample();
Sample flash_attention_sample();
Sample dequant_gemm_sample();
Sample conv2d_sample();
Sample block_reduce_sample();
Sample gemm_softmax_sample();
Sample fp8_gemm_sample();

}  // namespace tg::samples::detail
