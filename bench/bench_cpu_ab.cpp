// bench_cpu_ab: one cpu kernel under two settings of the environment, timed in alternation in one
// process — what a pass or an allocation choice is worth on a machine whose speed drifts (a KVM
// guest whose host runs other guests: 20% between runs minutes apart, PERF.md). Each setting is
// applied (setenv, "VAR=-" unsets) before its kernel is compiled and its tensors are allocated,
// so compile params' environment defaults (TILEGEN_CPU_*) and TILEGEN_HUGE_PAGES both take effect.
// Rounds alternate A B B A ...; each round's ratio comes from its own pair.
//
//   bench_cpu_ab gemm --set M=1000,N=777,K=333 --threads 2 --rounds 100
//     --a TILEGEN_CPU_VERSION_EDGES=0 --b TILEGEN_CPU_VERSION_EDGES=1      (one command line)
//   → gemm M=1000,N=777,K=333 f32, 1 threads, 100 rounds
//       A [TILEGEN_CPU_VERSION_EDGES=0]  12.45 ms  41.6 GFLOP/s
//       B [TILEGEN_CPU_VERSION_EDGES=1]  10.31 ms  50.2 GFLOP/s
//       time A / time B per round: median 1.219, quartiles 1.19 .. 1.26   (> 1: B faster)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_run.h"
#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Variant {
  std::string env;
  std::unique_ptr<tg::bench::TilegenRun> run;
  std::vector<double> ms;
};

void apply_env(const std::string& settings) {
  std::istringstream in(settings);
  for (std::string kv; in >> kv;) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw tg::Error("bench_cpu_ab: '" + kv + "' is not VAR=VALUE");
    const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (value == "-")
      unsetenv(name.c_str());
    else
      setenv(name.c_str(), value.c_str(), 1);
  }
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::size_t(q * double(v.size() - 1) + 0.5)];
}

int run(int argc, char** argv) {
  if (argc < 2)
    throw tg::Error(
        "usage: bench_cpu_ab SAMPLE [--set K=V,...] [--dtype T] [--threads N] "
        "[--rounds R] --a \"VAR=V ...\" --b \"VAR=V ...\"");
  const std::string sample = argv[1];
  std::string set, a, b, dtype = "f32";
  int threads = 1, rounds = 30;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--set")
      set = v;
    else if (k == "--dtype")
      dtype = v;
    else if (k == "--threads")
      threads = std::stoi(v);
    else if (k == "--rounds")
      rounds = std::stoi(v);
    else if (k == "--a")
      a = v;
    else if (k == "--b")
      b = v;
    else
      throw tg::Error("bench_cpu_ab: unknown option " + k);
  }
  if (rounds < 2) throw tg::Error("bench_cpu_ab: --rounds takes 2 or more");
  const tg::samples::Sample* s = tg::samples::find(sample);
  if (!s) throw tg::Error("bench_cpu_ab: no sample '" + sample + "'");
  const std::optional<tg::DType> parsed = tg::DType::from_name(dtype);
  if (!parsed) throw tg::Error("bench_cpu_ab: no dtype '" + dtype + "'");
  const tg::DType t = *parsed;
  tg::samples::Params given;
  std::istringstream items(set);
  for (std::string kv; std::getline(items, kv, ',');) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw tg::Error("bench_cpu_ab: --set item '" + kv + "' is not NAME=VALUE");
    given[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
  }
  tg::Target cpu = tg::Target::get("cpu");
  const tg::samples::Params p = tg::samples::resolve_for(*s, given, cpu.info(), t);
  std::vector<std::unique_ptr<Variant>> vs;
  for (const std::string& env : {a, b}) {
    apply_env(env);
    auto v = std::make_unique<Variant>();
    v->env = env;
    v->run = tg::bench::prepare_tilegen(cpu, sample, p, t, threads);
    vs.push_back(std::move(v));
  }
  auto timed = [](Variant& v) {
    v.run->call();  // warm: this side's pool awake, its data in the caches it uses
    const auto start = Clock::now();
    v.run->call();
    v.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  };
  std::vector<double> ratio;
  for (int r = 0; r < rounds; ++r) {
    const bool a_first = r % 2 == 0;
    timed(*vs[a_first ? 0 : 1]);
    timed(*vs[a_first ? 1 : 0]);
    ratio.push_back(vs[0]->ms.back() / vs[1]->ms.back());
  }
  const double flops = s->flops ? s->flops(p, t) : 0;
  std::printf("%s %s %s, %d threads, %d rounds\n", sample.c_str(), set.c_str(), dtype.c_str(), threads,
              rounds);
  for (const auto& v : vs) {
    const double ms = quantile(v->ms, 0.5);
    std::printf("  %s [%s]  %.2f ms", v.get() == vs[0].get() ? "A" : "B", v->env.c_str(), ms);
    if (flops > 0) std::printf("  %.1f GFLOP/s", flops / ms / 1e6);
    std::printf("\n");
  }
  std::printf("  time A / time B per round: median %.3f, quartiles %.2f .. %.2f   (> 1: B faster)\n",
              quantile(ratio, 0.5), quantile(ratio, 0.25), quantile(ratio, 0.75));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
