// block_reduce: the sum of a vector, written at the thread level (the expert level of the IR):
// explicit thread index, a Local accumulator per thread, a shared array, barriers, and a tree
// reduction in shared memory. Each block sums its chunk of elements_per_block elements into
// partials[block], and adds it into total[0] with atomic_add.
//
//   X         [N]                          input
//   partials  [ceildiv(N, elements_per_block)]   one sum per block
//   total     [1]                          accumulated into: total[0] += sum(X)
#include <numeric>

#include "sample_support.h"

namespace tg::samples::detail {
namespace {

struct ReduceShape {
  int64_t N, threads, per_block;
  explicit ReduceShape(const Params& p)
      : N(param(p, "N")), threads(param(p, "threads")), per_block(param(p, "elements_per_block")) {}
  int64_t blocks() const { return (N + per_block - 1) / per_block; }
};

void check_reduce(const ReduceShape& s, DType t) {
  require(t == f32 || t == i32, "block_reduce",
          "dtype " + dtype_name(t) + " is not supported; use f32 or i32");
  require((s.threads & (s.threads - 1)) == 0, "block_reduce",
          "threads (" + std::to_string(s.threads) + ") must be a power of two for the tree reduction");
}

Kernel build_block_reduce(const Params& p, DType t) {
  const ReduceShape s(p);
  check_reduce(s, t);
  const int64_t T = s.threads, chunk = s.per_block;
  const Expr zero = t.is_float() ? make_float(0.0, t) : make_int(0, t);
  KernelBuilder k("block_reduce");
  auto X = k.tensor("X", {s.N}, t);
  auto partials = k.tensor("partials", {s.blocks()}, t);
  auto total = k.tensor("total", {1}, t);
  k.grid(s.blocks()).threads(int(T)).body([&](Expr bx) {
    Expr tx = k.thread_index();
    auto acc = k.local({1}, t, "acc");
    auto sums = k.shared({T}, t, "sums");
    // Thread tx adds elements tx, tx + T, tx + 2T, ... of the chunk: neighbouring threads read
    // neighbouring elements on every step.
    acc(0) = zero;
    k.serial(ceildiv(chunk, T), [&](Expr it) {
      Expr offset = it * T + tx, idx = bx * chunk + offset;
      k.if_(offset < chunk && idx < s.N, [&] { acc(0) += X(idx); });
    });
    sums(tx) = acc(0);
    k.barrier();
    // Halve the active threads each step; thread tx folds in its partner tx + step.
    for (int64_t step = T / 2; step > 0; step /= 2) {
      k.if_(tx < step, [&] { sums(tx) += sums(tx + step); });
      k.barrier();
    }
    k.if_(tx == 0, [&] {
      partials(bx) = sums(0);
      k.atomic_add(total(0), sums(0));
    });
  });
  return k.build();
}

Problem make_block_reduce(const Params& p, DType t, std::mt19937_64& rng, bool with_reference) {
  const ReduceShape s(p);
  check_reduce(s, t);
  const double range = t.is_float() ? 1.0 : 8.0;  // small integers: sums stay exact
  Problem pr;
  pr.args.push_back(random_input("X", {s.N}, t, rng, -range, range));
  pr.args.push_back(poisoned_output("partials", {s.blocks()}, t));
  HostArray total = random_input("total", {1}, t, rng, -range, range);
  total.is_output = total.accumulates = true;
  pr.args.push_back(std::move(total));
  if (!with_reference) return pr;
  std::vector<double> x = to_doubles(pr.args[0]), part(size_t(s.blocks()), 0.0);
  for (int64_t i = 0; i < s.N; ++i) part[size_t(i / s.per_block)] += x[size_t(i)];
  const double sum = std::accumulate(part.begin(), part.end(), pr.args[2].get(0));
  pr.expected.push_back(std::move(part));
  pr.expected.push_back({sum});
  return pr;
}

Params reduce_shape(int64_t N, int64_t threads, int64_t per_block) {
  return {{"N", N}, {"threads", threads}, {"elements_per_block", per_block}};
}

}  // namespace

Sample block_reduce_sample() {
  Sample s;
  s.name = "block_reduce";
  s.description =
      "thread-level vector sum: per-thread partials, a shared-memory tree, per-block and atomic total";
  s.params = {{"N", 1 << 20, "elements"},
              {"threads", 256, "threads per block (a power of two)", 1, 1024},
              {"elements_per_block", 4096, "elements each block sums"}};
  s.dtypes = {f32, i32};
  s.build = build_block_reduce;
  s.make_problem = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_block_reduce(p, t, rng, true);
  };
  s.make_inputs = [](const Params& p, DType t, std::mt19937_64& rng) {
    return make_block_reduce(p, t, rng, false);
  };
  // f32 sums of N terms in [-1, 1]; i32 sums are exact.
  s.tolerance = [](const Params& p, DType t) { return accumulation_tolerance(t, param(p, "N")); };
  add_test_shape(s, "ragged N=1000", reduce_shape(1000, 64, 256));
  add_test_shape(s, "aligned N=4096", reduce_shape(4096, 128, 1024));
  add_test_shape(s, "chunk not a multiple of threads", reduce_shape(777, 32, 100));
  add_test_shape(s, "single element", reduce_shape(1, 32, 64));
  add_test_shape(s, "ragged, default block", reduce_shape(100003, 256, 4096), true);
  s.bench_shapes = {reduce_shape(1 << 26, 256, 8192), reduce_shape(1 << 24, 256, 4096),
                    reduce_shape(1 << 28, 512, 16384)};
  s.flops = [](const Params&, DType) { return 0.0; };
  s.bytes = [](const Params& p, DType t) { return double(param(p, "N")) * element_bytes(t); };
  return s;
}

}  // namespace tg::samples::detail
