// bench_cpu: the cpu target against its peers in one run — the table of docs/PERF.md's CPU
// section (issue 3), printed as markdown:
//   fp32 GEMM 512..4096 on 1 and 2 threads vs OpenBLAS (cblas_sgemm) and oneDNN (matmul)
//   bf16 GEMM vs oneDNN's bf16 matmul
//   softmax 4096×4096 f32 vs oneDNN's softmax, in GB/s
//   flash_attention B1 H8 S2048 D128 in TFLOP/s beside the GEMM rate of the same run
//   the cold JIT latency of gemm, per compile
//
//   bench_cpu [--sizes 512,1024,2048,4096] [--ragged 1000x777x333,...] [--threads 1,2] [--rounds N]
//             [--block M,N,K] [--quick] [--clock wall|cpu] [--only gemm,bf16,softmax,attention,jit]
//             [--softmax-block BM,BN] [--no-quiesce] [--json FILE [--commit SHA]]
// (--ragged: fp32 GEMM rows of those M×N×K shapes after the cubes; `--ragged none` drops them)
//
// Each comparison interleaves the two sides: after a warm-up of each, `rounds` times one timed
// tilegen call then one timed peer call; the figures are the medians, the ratio is peer median /
// tilegen median (> 1: tilegen faster). On a shared machine a disturbance then slows both alike.
// Each timed call is that side's second call in a row after the process went quiet
// (settled_time_ms): the previous side's pool threads must not share the cores with this one,
// and this side's own pool is awake, as in a loop of calls. --no-quiesce times one call of each
// side in turn, back to back.
// Peers come from bench/peers.cpp (dlopen'd libopenblas.so.0 and libdnnl.so.2).
// --json FILE [--commit SHA] also writes the fp32 GEMM figures as ../shared/RESULTS.md's rows
// (cpu.gemm.f32.<shape>.t<threads>, peer OpenBLAS; the same key + ".onednn" for oneDNN), each ratio
// from its own interleaved pair.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu_run.h"
#include "peers.h"
#include "tilegen/samples.h"
#include "tilegen/tilegen.h"

namespace {

using Clock = std::chrono::steady_clock;
using tg::bench::prepare_tilegen;
using tg::bench::TilegenRun;
using tg::samples::Params;

// --clock cpu: the process's CPU time instead of wall time. On a machine busy with other work
// it is far steadier for single-thread runs (time slices lost to other processes do not count);
// with more threads it also counts the time pool threads spin waiting for work, so use it for
// 1-thread comparisons only.
bool g_cpu_clock = false;

double now_ms() {
  if (!g_cpu_clock) return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

double time_ms(const std::function<void()>& f) {
  const double s = now_ms();
  f();
  return now_ms() - s;
}

bool g_quiesce = true;

/// One row of bench/results/<machine>.json (RESULTS.md).
struct ResultRow {
  std::string key, peer, note;
  double tilegen_ms = 0, peer_ms = 0, gflops = 0;
};
std::vector<ResultRow> g_rows;  // --no-quiesce: time each call right after the other side's, no settling

/// Waits until the process's other threads are idle: at most 5% of a core busy over a 2 ms
/// window, for up to a second. A library's pool threads keep spinning after a call returns
/// (OpenBLAS's workers for ~2^28 cycles, about 0.1 s here; libgomp's for ~1–5 ms; oneTBB's
/// briefly) and, on a 2-core machine, take a core from the next call — the other side's. Timing
/// each call from a quiet process keeps one side's idle threads out of the other's time.
void quiesce() {
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
  };
  const auto start = Clock::now();
  constexpr double kWindowMs = 2.0, kIdleShare = 0.05;
  while (Clock::now() - start < std::chrono::seconds(1)) {
    const double c0 = cpu_ms();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kWindowMs));
    if (cpu_ms() - c0 < kWindowMs * kIdleShare) break;
  }
}

/// One side's call in its steady state: the process quiet (quiesce), then untimed calls for at
/// least 30 ms (at least one), then the timed call. Without settling, a side is timed while the
/// other side's idle pool threads still spin (tilegen's 2048³ GEMM on 2 threads: 140–180 ms right
/// after an OpenBLAS call, 110–116 ms alone). Without the warm-up, a side is timed as the
/// machine wakes: on the znver3 KVM guest, after 0.1 s idle a 512³ GEMM on 2 threads took
/// 3.5–4.4 ms for its first calls and 2.4 ms from about the tenth (a vCPU idle for long is slow
/// to come back, whichever library wakes it).
double settled_time_ms(const std::function<void()>& f) {
  if (g_quiesce) {
    quiesce();
    const auto start = Clock::now();
    do f();
    while (Clock::now() - start < std::chrono::milliseconds(30));
  }
  return time_ms(f);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

std::string first_line_of(const char* path, const char* key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return line.substr(std::min(line.size(), line.find(':') + 2));
  return {};
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  in >> a >> b >> c;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a, b, c);
  return buf;
}

struct Options {
  // gemm blocks: 192×256×64 from 2048 up (wide B rows keep the tile copies' rows long; 0.7–0.8×
  // OpenBLAS against 0.65–0.75× for 96×128×128 in 1-thread sweeps on the znver3 guest); below
  // that 96×128×128, so that both threads get enough blocks. --block fixes one for every size.
  std::vector<int64_t> sizes{512, 1024, 2048, 4096}, threads{1, 2}, block;
  std::vector<int64_t> softmax_block;  // block_M, block_N of the softmax sample (empty: its defaults)
  std::vector<std::vector<int64_t>> ragged{{1000, 777, 333}};  // fp32 GEMM M×N×K rows after the cubes
  int rounds = 7;
  bool quick = false;  // one size per table, fewer rounds: a smoke run
  std::string only;    // ",gemm,softmax,": the tables to print (empty: all)
  std::string json, commit;  // --json FILE: the fp32 GEMM rows as RESULTS.md's data; --commit SHA
  bool wants(const char* table) const {
    return only.empty() || only.find(std::string(",") + table + ",") != std::string::npos;
  }
};

/// Medians of tilegen and of the peer, timed in alternation.
struct Pair {
  double ours_ms = 0, theirs_ms = 0;
  std::string impl, error;
};

Pair interleave(const TilegenRun& ours, const tg::bench::Peer* peer, const std::string& sample,
                const Params& p, tg::DType t, int threads, int rounds) {
  Pair out;
  tg::bench::PreparedPeer theirs;
  if (peer) {
    try {
      if (auto why = peer->unsupported(sample, t); !why.empty()) throw tg::Error(why);
      theirs = peer->prepare(sample, p, t, threads);
      out.impl = theirs.implementation;
    } catch (const std::exception& e) {
      out.error = e.what();
    }
  }
  std::vector<double> a, b;
  ours.call();
  if (theirs.call) theirs.call();
  for (int r = 0; r < rounds; ++r) {
    a.push_back(settled_time_ms([&] { ours.call(); }));
    if (theirs.call) b.push_back(settled_time_ms(theirs.call));
  }
  out.ours_ms = median(a);
  out.theirs_ms = median(b);
  return out;
}

std::string ratio(double ours_ms, double theirs_ms) {
  if (ours_ms <= 0 || theirs_ms <= 0) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", theirs_ms / ours_ms);
  return buf;
}

std::string rate(double work, double ms, double unit) {
  if (ms <= 0) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", work / ms / unit);
  return buf;
}

// The gemm sample at M×N×K (or n³): --block's tiles, else the sample's tiles tuned for this cpu and dtype
// (samples::resolve_for: what `tilegen bench` uses too).
Params gemm_params(const tg::Target& cpu, const std::vector<int64_t>& mnk, const Options& o, tg::DType t) {
  Params set{{"M", mnk[0]}, {"N", mnk[1]}, {"K", mnk[2]}};
  if (!o.block.empty()) set.insert({{"block_M", o.block[0]}, {"block_N", o.block[1]}, {"block_K", o.block[2]}});
  return tg::samples::resolve_for(*tg::samples::find("gemm"), set, cpu.info(), t);
}

Params gemm_params(const tg::Target& cpu, int64_t n, const Options& o, tg::DType t) {
  return gemm_params(cpu, {n, n, n}, o, t);
}

std::string tiles(const Params& p) {
  return std::to_string(p.at("block_M")) + "×" + std::to_string(p.at("block_N")) + "×" +
         std::to_string(p.at("block_K"));
}

/// fp32 GEMM against OpenBLAS and oneDNN; returns the 2048 (or last) tilegen GFLOP/s per thread count.
std::vector<double> fp32_gemm_table(const tg::Target& cpu, const Options& o) {
  std::printf(
      "\n| fp32 GEMM M=N=K | threads | tilegen GFLOP/s | OpenBLAS GFLOP/s | ratio | oneDNN GFLOP/s | ratio "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::vector<double> rate_at(o.threads.size(), 0);
  std::vector<std::vector<int64_t>> shapes;
  for (int64_t n : o.sizes) shapes.push_back({n, n, n});
  shapes.insert(shapes.end(), o.ragged.begin(), o.ragged.end());
  for (const std::vector<int64_t>& mnk : shapes) {
    const int64_t n = mnk[0] == mnk[1] && mnk[1] == mnk[2] ? mnk[0] : 0;  // 0: a ragged row
    const Params p = gemm_params(cpu, mnk, o, tg::f32);
    const double flops = 2.0 * double(mnk[0]) * double(mnk[1]) * double(mnk[2]);
    const std::string label = n ? std::to_string(n)
                                : std::to_string(mnk[0]) + "×" + std::to_string(mnk[1]) + "×" +
                                      std::to_string(mnk[2]) + " (" + tiles(p) + ")";
    for (std::size_t ti = 0; ti < o.threads.size(); ++ti) {
      const int t = int(o.threads[ti]);
      auto ours = prepare_tilegen(cpu, "gemm", p, tg::f32, t);
      Pair blas = interleave(*ours, tg::bench::find_peer("openblas"), "gemm", p, tg::f32, t, o.rounds);
      Pair dnnl = interleave(*ours, tg::bench::find_peer("onednn"), "gemm", p, tg::f32, t, o.rounds);
      const double mine = median({blas.ours_ms, dnnl.ours_ms});
      std::printf("| %s | %d | %s | %s | %s | %s | %s |\n", label.c_str(), t, rate(flops, mine, 1e6).c_str(),
                  rate(flops, blas.theirs_ms, 1e6).c_str(), ratio(blas.ours_ms, blas.theirs_ms).c_str(),
                  rate(flops, dnnl.theirs_ms, 1e6).c_str(), ratio(dnnl.ours_ms, dnnl.theirs_ms).c_str());
      std::fflush(stdout);
      if (n == 2048 || (n && rate_at[ti] == 0)) rate_at[ti] = flops / mine / 1e6;
      const std::string key =
          "cpu.gemm.f32." +
          (n ? std::to_string(n)
             : std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2])) +
          ".t" + std::to_string(t);
      const std::string note = tiles(p) + " tiles";
      for (const auto& [suffix, pair] : {std::pair{"", &blas}, std::pair{".onednn", &dnnl}})
        if (pair->theirs_ms > 0)
          g_rows.push_back(
              {key + suffix, pair->impl, note, pair->ours_ms, pair->theirs_ms, flops / pair->ours_ms / 1e6});
    }
  }
  return rate_at;
}

void bf16_gemm_table(const tg::Target& cpu, const Options& o) {
  std::printf(
      "\n| bf16 GEMM M=N=K (f32 accumulate) | threads | tilegen GFLOP/s | oneDNN bf16 GFLOP/s | ratio | "
      "oneDNN kernel | OpenBLAS f32 GFLOP/s | ratio |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int64_t n : o.sizes) {
    if (n < 1024 && !o.quick) continue;
    const Params p = gemm_params(cpu, n, o, tg::bf16);
    const double flops = 2.0 * double(n) * double(n) * double(n);
    for (int64_t t : o.threads) {
      auto ours = prepare_tilegen(cpu, "gemm", p, tg::bf16, t);
      Pair d = interleave(*ours, tg::bench::find_peer("onednn"), "gemm", p, tg::bf16, int(t), o.rounds);
      // Where oneDNN has no bf16 kernel for the CPU: OpenBLAS's f32 GEMM of the same size, for scale.
      Pair b = interleave(*ours, tg::bench::find_peer("openblas"), "gemm", p, tg::f32, int(t), o.rounds);
      const double mine = median({d.ours_ms, b.ours_ms});
      std::printf("| %lld | %lld | %s | %s | %s | %s | %s | %s |\n", (long long)n, (long long)t,
                  rate(flops, mine, 1e6).c_str(), rate(flops, d.theirs_ms, 1e6).c_str(),
                  ratio(d.ours_ms, d.theirs_ms).c_str(), d.error.empty() ? d.impl.c_str() : d.error.c_str(),
                  rate(flops, b.theirs_ms, 1e6).c_str(), ratio(b.ours_ms, b.theirs_ms).c_str());
      std::fflush(stdout);
    }
  }
}

void softmax_table(const tg::Target& cpu, const Options& o) {
  const tg::samples::Sample& s = *tg::samples::find("softmax");
  Params set = {{"M", 4096}, {"N", 4096}};
  if (o.softmax_block.size() == 2) set["block_M"] = o.softmax_block[0], set["block_N"] = o.softmax_block[1];
  const Params p = tg::samples::resolve(s, set);
  const double bytes = s.bytes(p, tg::f32);
  std::printf(
      "\n| softmax 4096×4096 f32 (read + write) | threads | tilegen GB/s | oneDNN GB/s | ratio | oneDNN "
      "kernel |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (int64_t t : o.threads) {
    auto ours = prepare_tilegen(cpu, "softmax", p, tg::f32, t);
    Pair d = interleave(*ours, tg::bench::find_peer("onednn"), "softmax", p, tg::f32, int(t), o.rounds * 2);
    std::printf("| | %lld | %s | %s | %s | %s |\n", (long long)t, rate(bytes, d.ours_ms, 1e6).c_str(),
                rate(bytes, d.theirs_ms, 1e6).c_str(), ratio(d.ours_ms, d.theirs_ms).c_str(),
                d.error.empty() ? d.impl.c_str() : d.error.c_str());
    std::fflush(stdout);
  }
}

void attention_table(const tg::Target& cpu, const Options& o, const std::vector<double>& gemm_rate) {
  const tg::samples::Sample& s = *tg::samples::find("flash_attention");
  const Params p =
      tg::samples::resolve(s, {{"B", 1}, {"H", 8}, {"HKV", 8}, {"S", o.quick ? 512 : 2048}, {"D", 128}});
  const double flops = s.flops(p, tg::bf16);
  std::printf(
      "\n| flash_attention bf16 B1 H8 S%lld D128 | threads | tilegen GFLOP/s | fp32 GEMM GFLOP/s, same run | "
      "ratio |\n",
      (long long)p.at("S"));
  std::printf("|---|---|---|---|---|\n");
  for (std::size_t ti = 0; ti < o.threads.size(); ++ti) {
    auto ours = prepare_tilegen(cpu, "flash_attention", p, tg::bf16, o.threads[ti]);
    std::vector<double> ms;
    ours->call();
    for (int r = 0; r < std::max(3, o.rounds / 2); ++r) ms.push_back(time_ms([&] { ours->call(); }));
    const double g = flops / median(ms) / 1e6;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", gemm_rate[ti] > 0 ? g / gemm_rate[ti] : 0.0);
    std::printf("| | %lld | %.1f | %.1f | %s |\n", (long long)o.threads[ti], g, gemm_rate[ti], buf);
    std::fflush(stdout);
  }
}

void jit_table(const tg::Target& cpu) {
  std::printf(
      "\n| JIT latency, cold (gemm f32 2048, kernel cache off: passes + LLVM + object + load) | wall ms | "
      "process CPU ms |\n");
  std::printf("|---|---|---|\n");
  const tg::samples::Sample& gemm = *tg::samples::find("gemm");
  const bool saved = g_cpu_clock;
  for (int r = 0; r < 5; ++r) {
    // A new shape each time: nothing of the previous compile can be reused.
    Params p = tg::samples::resolve(gemm, {{"M", 2048 + 64 * r}, {"N", 2048}, {"K", 2048}});
    tg::Kernel k = gemm.build(p, tg::f32);
    g_cpu_clock = true;
    const double c0 = now_ms();
    g_cpu_clock = false;
    const double w = time_ms([&] { tg::CompiledKernel ck = cpu.compile(k); });
    g_cpu_clock = true;
    const double c = now_ms() - c0;
    std::printf("| compile %d | %.1f | %.1f |\n", r, w, c);
  }
  g_cpu_clock = saved;
}

void write_json(const std::string& path, const std::string& machine, const std::string& date,
                const std::string& commit) {
  std::ofstream out(path);
  if (!out) throw tg::Error("bench_cpu: cannot write " + path);
  auto quoted = [](const std::string& v) {
    std::string q = "\"";
    for (char c : v) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  char buf[256];
  out << "{ \"machine\": " << quoted(machine) << ",\n  \"date\": " << quoted(date)
      << ",\n  \"commit\": " << quoted(commit) << ",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const ResultRow& r = g_rows[i];
    std::snprintf(buf, sizeof buf,
                  "\"tilegen_ms\": %.3f, \"peer_ms\": %.3f, \"ratio\": %.2f, \"gflops\": %.1f", r.tilegen_ms,
                  r.peer_ms, r.peer_ms / r.tilegen_ms, r.gflops);
    out << "    { \"key\": " << quoted(r.key) << ", " << buf << ", \"peer\": " << quoted(r.peer)
        << ", \"note\": " << quoted(r.note) << " }" << (i + 1 < g_rows.size() ? "," : "") << "\n";
  }
  out << "  ] }\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--sizes" && has_value)
      o.sizes = parse_list(argv[++i]);
    else if (a == "--threads" && has_value)
      o.threads = parse_list(argv[++i]);
    else if (a == "--block" && has_value)
      o.block = parse_list(argv[++i]);
    else if (a == "--ragged" && has_value) {
      o.ragged.clear();
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ','))
        if (item != "none") {
          std::vector<int64_t> mnk;
          std::stringstream dims(item);
          std::string d;
          while (std::getline(dims, d, 'x')) mnk.push_back(std::stoll(d));
          if (mnk.size() != 3) {
            std::fprintf(stderr, "bench_cpu: --ragged takes shapes MxNxK, e.g. 1000x777x333\n");
            return 2;
          }
          o.ragged.push_back(mnk);
        }
    } else if (a == "--softmax-block" && has_value)
      o.softmax_block = parse_list(argv[++i]);
    else if (a == "--rounds" && has_value)
      o.rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--clock" && has_value)
      g_cpu_clock = std::string(argv[++i]) == "cpu";
    else if (a == "--only" && has_value)
      o.only = std::string(",") + argv[++i] + ",";
    else if (a == "--json" && has_value)
      o.json = argv[++i];
    else if (a == "--commit" && has_value)
      o.commit = argv[++i];
    else if (a == "--no-quiesce")
      g_quiesce = false;
    else if (a == "--quick")
      o.quick = true, o.sizes = {512}, o.rounds = 3, o.ragged.clear();
    else {
      std::fprintf(stderr,
                   "usage: bench_cpu [--sizes 512,1024,2048,4096] [--ragged MxNxK,...|none] [--threads 1,2] "
                   "[--rounds N] "
                   "[--block M,N,K] [--quick] [--clock wall|cpu] [--only gemm,bf16,softmax,attention,jit] "
                   "[--softmax-block BM,BN] [--no-quiesce] [--json FILE [--commit SHA]]\n");
      return 2;
    }
  }
  if (!o.block.empty() && o.block.size() != 3) {
    std::fprintf(stderr, "bench_cpu: --block takes three sizes, M,N,K\n");
    return 2;
  }
  setenv("TILEGEN_CACHE", "0", 1);  // cold compiles: the JIT latency is part of the report
  try {
    tg::Target cpu = tg::Target::get("cpu");
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("date: %s\nmachine: %s (LLVM CPU %s), %u hardware threads, load average %s\n", date,
                first_line_of("/proc/cpuinfo", "model name").c_str(), cpu.info().arch.c_str(),
                std::thread::hardware_concurrency(), loadavg().c_str());
    const std::string core = tg::bench::openblas_core();  // loads OpenBLAS, choosing its core type
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("peers: OpenBLAS core %s (OPENBLAS_CORETYPE=%s); oneDNN 2 (libdnnl.so.2, OpenMP)\n",
                core.c_str(), coretype ? coretype : "unset");
    std::printf(
        "tilegen gemm tiles (M×N×K) f32 %s below 2048, %s from 2048; bf16 %s, %s%s; medians of %d interleaved "
        "rounds (%s time); ratio = peer time / tilegen time\n",
        tiles(gemm_params(cpu, 1024, o, tg::f32)).c_str(), tiles(gemm_params(cpu, 2048, o, tg::f32)).c_str(),
        tiles(gemm_params(cpu, 1024, o, tg::bf16)).c_str(), tiles(gemm_params(cpu, 2048, o, tg::bf16)).c_str(),
        o.block.empty() ? " (the sample's tiles for this cpu)" : " (--block)", o.rounds,
        g_cpu_clock ? "process CPU" : "wall");
    std::vector<double> gemm_rate(o.threads.size(), 0);
    if (o.wants("gemm") || o.wants("attention")) gemm_rate = fp32_gemm_table(cpu, o);
    if (o.wants("bf16")) bf16_gemm_table(cpu, o);
    if (o.wants("softmax")) softmax_table(cpu, o);
    if (o.wants("attention")) attention_table(cpu, o, gemm_rate);
    if (o.wants("jit")) jit_table(cpu);
    std::printf("\nload average at the end: %s\n", loadavg().c_str());
    if (!o.json.empty()) {
      char iso[32];
      std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%MZ", std::gmtime(&now));
      write_json(o.json,
                 first_line_of("/proc/cpuinfo", "model name") + " (LLVM CPU " + cpu.info().arch + "), " +
                     std::to_string(std::thread::hardware_concurrency()) + " hardware threads",
                 iso, o.commit);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
