// Host arrays of the sample problems: storage in the dtype's own format, random inputs, poisoned
// outputs, the comparison against the float64 reference, and the launch-argument views.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "sample_support.h"

namespace tg::samples {

int64_t HostArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

HostTensor HostArray::view() { return HostTensor{bytes.data(), shape, dtype}; }

double HostArray::get(int64_t i) const {
  return scalar_as_double(dtype, load_element(dtype, bytes.data(), i));
}

void HostArray::set(int64_t i, double v) {
  Scalar s;
  if (dtype.is_float())
    s = Scalar::of_float(round_float_to(dtype, v));
  else if (dtype.is_bool())
    s = Scalar::of_int(v != 0);
  else
    s = Scalar::of_int(wrap_int_to(dtype, int64_t(std::llround(v))));
  store_element(dtype, bytes.data(), i, s);
}

Comparison compare(const HostArray& got, const std::vector<double>& want, Tolerance tol) {
  if (int64_t(want.size()) != got.numel())
    throw Error("compare: output '" + got.name + "' has " + std::to_string(got.numel()) +
                " elements but its reference has " + std::to_string(want.size()) +
                "; compare the output with the reference made for the same problem");
  Comparison c;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.get(i), w = want[size_t(i)];
    bool same = g == w || (std::isnan(g) && std::isnan(w));
    double err = same ? 0.0 : std::fabs(g - w);
    bool ok = same || err <= tol.abs + tol.rel * std::fabs(w);  // false for NaN
    if (std::isnan(err)) err = std::numeric_limits<double>::infinity();
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (!ok) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

namespace {
HostArray& array_for(const Param& prm, Problem& p, const Function& f) {
  for (auto& a : p.args)
    if (a.name == prm.name()) return a;
  throw Error("kernel '" + f.name + "' has tensor parameter '" + prm.name() +
              "' but the problem has no array of that name; build the kernel and the problem "
              "from the same sample and parameters");
}

// The scalars of `p` in parameter order; throws when the problem has fewer than the kernel.
template <typename Visit>
void for_each_arg(const Function& f, Problem& p, Visit visit) {
  size_t next_scalar = 0;
  for (const Param& prm : f.params) {
    if (prm.kind == Param::Kind::Size) continue;
    if (prm.kind == Param::Kind::Tensor) {
      visit(&array_for(prm, p, f), DType{}, 0.0);
      continue;
    }
    if (next_scalar >= p.scalars.size())
      throw Error("kernel '" + f.name + "' has scalar parameter '" + prm.name() +
                  "' but the problem provides only " + std::to_string(p.scalars.size()) + " scalars");
    visit(nullptr, prm.var.dtype(), p.scalars[next_scalar++]);
  }
}
}  // namespace

std::vector<HostArg> host_args(const Function& f, Problem& p) {
  std::vector<HostArg> out;
  for_each_arg(f, p, [&](HostArray* a, DType t, double v) {
    HostArg arg;
    if (a) {
      arg.data = a->bytes.data();
      arg.shape = a->shape;
      arg.dtype = a->dtype;
    } else {
      arg.is_tensor = false;
      arg.dtype = t;
      arg.scalar = t.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(std::llround(v)));
    }
    out.push_back(std::move(arg));
  });
  return out;
}

std::vector<KernelArg> kernel_args(const Function& f, Problem& p) {
  std::vector<KernelArg> out;
  for_each_arg(f, p, [&](HostArray* a, DType t, double v) {
    if (a)
      out.emplace_back(a->view());
    else if (t.is_float())
      out.emplace_back(v);
    else
      out.emplace_back(int64_t(std::llround(v)));
  });
  return out;
}

HostArray random_input(std::string name, std::vector<int64_t> shape, DType t, std::mt19937_64& rng, double lo,
                       double hi) {
  HostArray a;
  a.name = std::move(name);
  a.shape = std::move(shape);
  a.dtype = t;
  a.bytes.assign(storage_bytes(t, a.numel()), 0);
  if (t.is_float()) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < a.numel(); ++i) a.set(i, u(rng));
  } else {
    std::uniform_int_distribution<int64_t> u(int64_t(std::ceil(lo)), int64_t(std::floor(hi)));
    for (int64_t i = 0; i < a.numel(); ++i) a.set(i, double(u(rng)));
  }
  return a;
}

HostArray poisoned_output(std::string name, std::vector<int64_t> shape, DType t) {
  HostArray a;
  a.name = std::move(name);
  a.shape = std::move(shape);
  a.dtype = t;
  a.is_output = true;
  a.bytes.assign(storage_bytes(t, a.numel()), 0x7F);
  if (t.is_float())
    for (int64_t i = 0; i < a.numel(); ++i)
      store_element(t, a.bytes.data(), i, Scalar::of_float(std::nan("")));
  return a;
}

Tolerance accumulation_tolerance(DType t, int64_t terms) {
  double root = std::sqrt(double(std::max<int64_t>(terms, 1)));
  if (t == f16) return {1e-3 * root, 1e-2};
  if (t == bf16) return {8e-3 * root, 3e-2};
  if (t.is_int() || t.is_bool()) return {0, 0};
  return {1e-5 * root, 1e-4};
}

std::vector<double> to_doubles(const HostArray& a) {
  std::vector<double> out(size_t(a.numel()));
  for (int64_t i = 0; i < a.numel(); ++i) out[size_t(i)] = a.get(i);
  return out;
}

namespace detail {

std::vector<double> matmul_reference(const std::vector<double>& a, const std::vector<double>& b_t, int64_t M,
                                     int64_t N, int64_t K) {
  std::vector<double> c(size_t(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const double* ar = a.data() + m * K;
      const double* br = b_t.data() + n * K;
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += ar[k] * br[k];
      c[size_t(m * N + n)] = acc;
    }
  return c;
}

int64_t param(const Params& p, const std::string& name) {
  auto it = p.find(name);
  if (it == p.end())
    throw Error("sample parameter '" + name + "' is missing; pass the parameters through samples::resolve()");
  return it->second;
}

void require(bool ok, const std::string& sample, const std::string& message) {
  if (!ok) throw Error(sample + ": " + message);
}

ParamInfo flag(std::string name, int64_t default_value, std::string help) {
  return ParamInfo{std::move(name), default_value, std::move(help), 0, 1};
}

}  // namespace detail
}  // namespace tg::samples
