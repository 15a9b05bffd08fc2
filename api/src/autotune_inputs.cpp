// The autotuner's inputs: one set of device buffers every config runs on, made from the
// caller's arguments or from random values, and the comparison of a config's outputs with the
// reference's.
#include <cmath>
#include <cstring>
#include <random>

#include "autotune_internal.h"
#include "tilegen/ir/buffer_access.h"

namespace tg::autotune_detail {
namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

/// Whether the kernel writes the tensor anywhere.
bool writes(const Function& f, const Buffer& b) {
  bool w = false;
  for_each_buffer_access(
      f.body, [&](const Buffer& x, BufferAccess how) { w = w || (is_write(how) && x.same_as(b)); });
  return w;
}
bool reads(const Function& f, const Buffer& b) {
  bool r = false;
  for_each_buffer_access(f.body,
                         [&](const Buffer& x, BufferAccess how) { r = r || (is_read(how) && x.same_as(b)); });
  return r;
}

void fill_random(Slot& s, std::mt19937_64& rng) {
  int64_t numel = 1;
  for (int64_t d : s.shape) numel *= d;
  s.initial.assign(storage_bytes(s.dtype, numel), 0);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> whole(s.dtype.is_signed_int() ? -8 : 0, 8);
  for (int64_t i = 0; i < numel; ++i) {
    Scalar v;
    if (s.dtype.is_float())
      v = Scalar::of_float(round_float_to(s.dtype, real(rng)));
    else if (s.dtype.is_bool())
      v = Scalar::of_int(whole(rng) & 1);
    else
      v = Scalar::of_int(wrap_int_to(s.dtype, whole(rng)));
    store_element(s.dtype, s.initial.data(), i, v);
  }
}

/// A tensor the kernel only writes starts as NaN (or bytes 0x7F): an element a config forgets
/// to write cannot match the reference's.
void poison(Slot& s) {
  int64_t numel = 1;
  for (int64_t d : s.shape) numel *= d;
  s.initial.assign(storage_bytes(s.dtype, numel), 0x7F);
  if (s.dtype == f16 || s.dtype == bf16 || s.dtype == f32 || s.dtype == f64)
    for (int64_t i = 0; i < numel; ++i) store_element(s.dtype, s.initial.data(), i, Scalar::of_float(NAN));
}

/// The constant dimensions of a tensor parameter; nullopt where one is symbolic.
std::optional<std::vector<int64_t>> constant_shape(const Buffer& b) {
  std::vector<int64_t> out;
  for (const Expr& d : b->shape) {
    auto v = d.as_int();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::string param_label(std::size_t i, const std::string& name) {
  return "TuneOptions::args[" + std::to_string(i) + "] (" + name + ")";
}

/// The caller's argument `a` for tensor parameter `p`, copied into `s`.
void copy_given(Slot& s, const KernelArg& a, std::size_t i, const SourceLoc& loc) {
  const std::string label = param_label(i, s.name);
  if (auto* b = std::get_if<const DeviceBuffer*>(&a)) {
    if (!*b || (!(*b)->device_ptr() && (*b)->bytes() > 0))
      throw Error("autotune: " + label + " is a null or empty DeviceBuffer", loc);
    s.shape = (*b)->shape();
    if ((*b)->dtype() != s.dtype)
      throw Error("autotune: " + label + " has dtype " + std::string((*b)->dtype().name()) +
                      ", the kernel's is " + std::string(s.dtype.name()),
                  loc);
    s.initial.resize((*b)->bytes());
    if (!s.initial.empty()) (*b)->download(s.initial.data(), s.initial.size());
  } else if (auto* h = std::get_if<HostTensor>(&a)) {
    if (!h->data && h->bytes() > 0)
      throw Error("autotune: " + label + ": the host tensor's data is null", loc);
    if (h->dtype != s.dtype)
      throw Error("autotune: " + label + " has dtype " + std::string(h->dtype.name()) + ", the kernel's is " +
                      std::string(s.dtype.name()),
                  loc);
    s.shape = h->shape;
    s.initial.resize(h->bytes());
    if (!s.initial.empty()) std::memcpy(s.initial.data(), h->data, s.initial.size());
  } else {
    throw Error("autotune: " + label + " is a scalar; the kernel takes a tensor " +
                    std::string(s.dtype.name()) + " there",
                loc);
  }
}

}  // namespace

Inputs Inputs::make(const Target& target, const Function& f, const TuneOptions& opt, const SourceLoc& loc) {
  Inputs in;
  std::mt19937_64 rng(opt.seed);
  std::size_t n_params = 0;
  for (const Param& p : f.params) n_params += p.kind != Param::Kind::Size;
  const bool given = !opt.args.empty();
  if (given && opt.args.size() != n_params)
    throw Error("autotune: TuneOptions::args has " + std::to_string(opt.args.size()) +
                    " argument(s); kernel '" + f.name + "' takes " + std::to_string(n_params) +
                    " (sizes omitted)",
                loc);
  for (const auto& [name, shape] : opt.shapes) {
    const Param* p = f.find_param(name);
    if (!p || p->kind != Param::Kind::Tensor)
      throw Error("autotune: TuneOptions::shapes names '" + name +
                      "', which is no tensor parameter of kernel '" + f.name + "'",
                  loc);
  }
  std::size_t i = 0;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    Slot s;
    s.name = p.name();
    if (p.kind == Param::Kind::Scalar) {
      s.is_tensor = false;
      const DType t = p.var.dtype();
      if (given) {
        const KernelArg& a = opt.args[i];
        if (!std::holds_alternative<double>(a) && !std::holds_alternative<int64_t>(a))
          throw Error("autotune: " + param_label(i, s.name) + " is a tensor; the kernel takes a scalar there",
                      loc);
        s.scalar = a;
      } else {
        auto it = opt.scalars.find(s.name);
        if (it == opt.scalars.end())
          throw Error("autotune: kernel '" + f.name + "' takes the scalar '" + s.name +
                          "'; give its value in TuneOptions::scalars (or pass TuneOptions::args)",
                      loc);
        s.scalar = t.is_float() ? KernelArg(it->second) : KernelArg(int64_t(std::llround(it->second)));
      }
    } else {
      s.dtype = p.buffer->dtype;
      s.written = writes(f, p.buffer);
      if (given) {
        copy_given(s, opt.args[i], i, loc);
      } else if (auto it = opt.shapes.find(s.name); it != opt.shapes.end()) {
        s.shape = it->second;
      } else if (auto c = constant_shape(p.buffer)) {
        s.shape = *c;
      } else {
        throw Error("autotune: tensor '" + s.name + "' of kernel '" + f.name +
                        "' has symbolic dimensions; give its shape in TuneOptions::shapes (or pass "
                        "TuneOptions::args)",
                    loc);
      }
      for (int64_t d : s.shape)
        if (d < 0)
          throw Error("autotune: tensor '" + s.name + "' has the negative shape " + shape_text(s.shape), loc);
      if (s.shape.size() != p.buffer->shape.size())
        throw Error("autotune: tensor '" + s.name + "' has rank " + std::to_string(s.shape.size()) + " " +
                        shape_text(s.shape) + "; the kernel's is " + std::to_string(p.buffer->shape.size()),
                    loc);
      if (!given) fill_random(s, rng);
      if (s.written && !reads(f, p.buffer)) poison(s);
      try {
        s.buffer = target.alloc(s.shape, s.dtype);
        if (!s.initial.empty()) s.buffer.upload(s.initial.data(), s.initial.size());
      } catch (const Error& e) {
        throw Error("autotune: cannot allocate the tuner's copy of '" + s.name + "' " + shape_text(s.shape) +
                        ": " + e.message(),
                    loc);
      }
    }
    in.slots.push_back(std::move(s));
    ++i;
  }
  if (std::string why = in.mismatch(f); !why.empty())
    throw Error("autotune: the arguments do not fit kernel '" + f.name + "': " + why, loc);
  return in;
}

std::vector<KernelArg> Inputs::args() const {
  std::vector<KernelArg> out;
  for (const Slot& s : slots) out.push_back(s.is_tensor ? KernelArg(&s.buffer) : s.scalar);
  return out;
}

std::vector<KernelArg> Inputs::host_args(std::vector<std::vector<uint8_t>>& keep) const {
  keep.clear();
  keep.reserve(slots.size());
  std::vector<KernelArg> out;
  for (const Slot& s : slots) {
    if (!s.is_tensor) {
      out.push_back(s.scalar);
      continue;
    }
    keep.push_back(s.initial);
    out.push_back(HostTensor{keep.back().data(), s.shape, s.dtype});
  }
  return out;
}

void Inputs::reset() {
  for (Slot& s : slots)
    if (s.is_tensor && s.written && !s.initial.empty()) s.buffer.upload(s.initial.data(), s.initial.size());
}

std::vector<std::vector<uint8_t>> Inputs::outputs() const {
  std::vector<std::vector<uint8_t>> out;
  for (const Slot& s : slots) {
    if (!s.is_tensor || !s.written) continue;
    out.emplace_back(s.initial.size());
    if (!out.back().empty()) s.buffer.download(out.back().data(), out.back().size());
  }
  return out;
}

std::string Inputs::mismatch(const Function& f) const {
  std::size_t i = 0;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    if (i >= slots.size()) return "it has more parameters than the first config's kernel";
    const Slot& s = slots[i++];
    if (p.name() != s.name || (p.kind == Param::Kind::Tensor) != s.is_tensor)
      return "its parameter " + std::to_string(i) + " is '" + p.name() + "', the first config's is '" +
             s.name + "'";
    if (!s.is_tensor) continue;
    if (p.buffer->dtype != s.dtype || p.buffer->shape.size() != s.shape.size())
      return "its tensor '" + s.name + "' differs in dtype or rank from the first config's";
    for (std::size_t d = 0; d < s.shape.size(); ++d) {
      auto v = p.buffer->shape[d].as_int();
      if (v && *v != s.shape[d])
        return "its tensor '" + s.name + "' has dimension " + std::to_string(d) + " = " + std::to_string(*v) +
               ", the arguments' is " + std::to_string(s.shape[d]);
    }
  }
  if (i != slots.size()) return "it has fewer parameters than the first config's kernel";
  return {};
}

std::string Inputs::signature() const {
  std::string out;
  for (const Slot& s : slots) {
    out += s.name + ":";
    if (s.is_tensor)
      out += std::string(s.dtype.name()) + shape_text(s.shape);
    else
      out += std::holds_alternative<double>(s.scalar) ? "f=" + std::to_string(std::get<double>(s.scalar))
                                                      : "i=" + std::to_string(std::get<int64_t>(s.scalar));
    out += ";";
  }
  return out;
}

std::string compare_outputs(const Inputs& in, const std::vector<std::vector<uint8_t>>& got,
                            const std::vector<std::vector<uint8_t>>& want,
                            const std::function<TuneTolerance(DType)>& tolerance, double* max_error) {
  std::size_t k = 0;
  double worst = 0;
  std::string first_problem;
  for (const Slot& s : in.slots) {
    if (!s.is_tensor || !s.written) continue;
    const std::vector<uint8_t>& g = got.at(k);
    const std::vector<uint8_t>& w = want.at(k);
    ++k;
    int64_t numel = 1;
    for (int64_t d : s.shape) numel *= d;
    const TuneTolerance tol = tolerance ? tolerance(s.dtype) : default_tolerance(s.dtype);
    double scale = 1;
    for (int64_t i = 0; i < numel; ++i) {
      const double v = std::fabs(scalar_as_double(s.dtype, load_element(s.dtype, w.data(), i)));
      if (std::isfinite(v)) scale = std::max(scale, v);
    }
    int64_t bad = 0, first = -1;
    double got_first = 0, want_first = 0;
    for (int64_t i = 0; i < numel; ++i) {
      const double a = scalar_as_double(s.dtype, load_element(s.dtype, g.data(), i));
      const double b = scalar_as_double(s.dtype, load_element(s.dtype, w.data(), i));
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      const double err = std::fabs(a - b);
      if (std::isfinite(err)) worst = std::max(worst, err);
      if (err <= tol.abs * scale + tol.rel * std::fabs(b)) continue;  // false for NaN
      if (bad++ == 0) first = i, got_first = a, want_first = b;
    }
    if (bad && first_problem.empty())
      first_problem = s.name + ": " + std::to_string(bad) + " of " + std::to_string(numel) +
                      " elements differ from the reference's beyond the tolerance, first at " +
                      std::to_string(first) + ": got " + std::to_string(got_first) + ", reference " +
                      std::to_string(want_first);
  }
  if (max_error) *max_error = worst;
  return first_problem;
}

}  // namespace tg::autotune_detail
