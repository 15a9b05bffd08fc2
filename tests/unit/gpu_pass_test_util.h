// Helpers for the GPU pass tests: parse a function, fill its tensors with random values, run it
// in the interpreter, and compare two versions of a function on the same inputs.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"

namespace tg::test {

/// Every tensor parameter's contents after running f on inputs drawn from `seed`.
inline std::vector<std::vector<double>> run_on_random(const Function& f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-8, 8);  // exact in every dtype used here
  std::vector<std::vector<uint8_t>> storage;
  std::vector<HostArg> args;
  for (const Buffer& t : f.tensors()) {
    int64_t n = *t.const_numel();
    storage.emplace_back(storage_bytes(t->dtype, n));
    for (int64_t i = 0; i < n; ++i) {
      double v = dist(rng) / 4.0;
      store_element(t->dtype, storage.back().data(), i,
                    t->dtype.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(v * 4) % 8));
    }
    HostArg a;
    a.data = storage.back().data();
    for (const Expr& d : t->shape) a.shape.push_back(*d.as_int());
    a.dtype = t->dtype;
    args.push_back(a);
  }
  interpret(f, args);
  std::vector<std::vector<double>> out;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const Buffer t = f.tensors()[k];
    std::vector<double> v;
    for (int64_t i = 0; i < *t.const_numel(); ++i)
      v.push_back(scalar_as_double(t->dtype, load_element(t->dtype, storage[k].data(), i)));
    out.push_back(std::move(v));
  }
  return out;
}

/// The two functions leave every tensor equal within `tol` (relative) on the same inputs.
inline void check_same_results(const Function& before, const Function& after, double tol = 0) {
  auto a = run_on_random(before, 5), b = run_on_random(after, 5);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < a[k].size(); ++i) {
      INFO("tensor " << k << " element " << i);
      CHECK(std::abs(a[k][i] - b[k][i]) <= tol * (1 + std::abs(a[k][i])));
    }
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tg::test
