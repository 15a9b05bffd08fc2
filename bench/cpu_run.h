// A sample compiled for the cpu target with its inputs uploaded: what bench_cpu and bench_cpu_ab time.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace tg::bench {

/// One sample compiled for the cpu target on `threads` threads, its inputs on the device.
struct TilegenRun {
  explicit TilegenRun(tg::CompiledKernel k) : kernel(std::move(k)) {}
  tg::CompiledKernel kernel;
  std::vector<tg::DeviceBuffer> keep;
  std::vector<tg::KernelArg> args;
  tg::samples::Problem problem;
  void call() const { kernel.launch(args); }
};

inline std::unique_ptr<TilegenRun> prepare_tilegen(const tg::Target& cpu, const std::string& sample,
                                                   const tg::samples::Params& p, tg::DType t,
                                                   int64_t threads) {
  const tg::samples::Sample& s = *tg::samples::find(sample);
  tg::Kernel k = s.build(p, t);
  tg::CompileOptions opt;
  opt.params["num_threads"] = std::to_string(threads);
  auto r = std::make_unique<TilegenRun>(cpu.compile(k, opt));
  std::mt19937_64 rng(1);
  r->problem = s.make_inputs(p, t, rng);
  r->args = tg::samples::kernel_args(k.function(), r->problem);
  r->keep.reserve(r->args.size());
  for (auto& a : r->args)
    if (auto* h = std::get_if<tg::HostTensor>(&a)) {
      r->keep.push_back(cpu.upload(*h));
      a = &r->keep.back();
    }
  return r;
}

}  // namespace tg::bench
