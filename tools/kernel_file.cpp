// A user's IR text file as the tilegen commands take it (see kernel_file.h).
#include "kernel_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fuzz/kernel_check.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/check_index_ranges.h"

namespace tg::cli {

namespace {

std::string names_of(const std::vector<Var>& vars) {
  std::vector<std::string> names;
  for (const Var& v : vars) names.push_back(v.name());
  return names.empty() ? std::string("(none)") : join(names, ", ");
}

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read IR file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError("cannot read IR file '" + path + "': " + std::strerror(errno));
  return text.str();
}

/// The kernel's written and read tensors, by parameter buffer.
struct TensorUse {
  bool read = false, written = false;
};

TensorUse use_of(const Function& f, const Buffer& param) {
  TensorUse u;
  for_each_buffer_access(f.body, [&](const Buffer& b, BufferAccess how) {
    if (!b.same_as(param)) return;
    u.read = u.read || is_read(how);
    u.written = u.written || is_write(how);
  });
  return u;
}

/// A tensor parameter's shape once every size is bound (its dimensions are then constants).
std::vector<int64_t> bound_shape(const Buffer& t, const std::string& path) {
  std::vector<int64_t> shape;
  for (std::size_t d = 0; d < t->shape.size(); ++d) {
    std::optional<int64_t> n = t->shape[d].as_int();
    if (!n || *n < 0)
      throw Error("tensor " + t->name + " of " + path + " has dimension " + std::to_string(d) + " = " +
                  (n ? std::to_string(*n) : std::string("a value no size gives")) +
                  " at these sizes; choose sizes that make every dimension a count");
    shape.push_back(*n);
  }
  return shape;
}

}  // namespace

bool is_kernel_file(const std::string& arg) {
  return arg.find('/') != std::string::npos || (arg.size() > 5 && arg.ends_with(".tgir"));
}

KernelFile read_kernel_file(const std::string& path, const samples::Params& set) {
  KernelFile k;
  k.path = path;
  const std::string text = read_text(path);
  try {
    fuzz::Case c = fuzz::parse_case(text, path);  // the function and its `# sizes` line
    k.fn = std::move(c.fn);
    k.sizes = std::move(c.sizes);
    verify(k.fn);  // what build() holds a builder's kernel to
    check_index_ranges(k.fn);
  } catch (const Error& e) {
    throw UsageError(e.what());  // "FILE:LINE: ..." where the line is known
  }
  for (const auto& [name, value] : set) {
    const Param* p = k.fn.find_param(name);
    if (p && p->kind == Param::Kind::Size)
      k.sizes[name] = value;
    else if (p && p->kind == Param::Kind::Scalar)
      k.scalars[name] = value;
    else
      throw UsageError("--set " + name + ": kernel " + k.fn.name + " of " + path +
                       " has no size or scalar of that name; its sizes are " + names_of(k.fn.sizes()) +
                       ", its scalars " + names_of(k.fn.scalars()));
  }
  try {  // bind_sizes' own rules for every value: a size the kernel has, positive, fitting its type
    (void)bind_sizes(k.fn, k.sizes);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return k;
}

void require_values(const KernelFile& k, bool scalars) {
  for (const Var& s : k.fn.sizes())
    if (!k.sizes.count(s.name()))
      throw Error("size " + s.name() + " of " + file_name(k.path) + " is not given: add --set " + s.name() +
                  "=VALUE (its sizes are " + names_of(k.fn.sizes()) + ")");
  if (!scalars) return;
  for (const Var& s : k.fn.scalars())
    if (!k.scalars.count(s.name()))
      throw Error("scalar " + s.name() + " of " + file_name(k.path) + " is not given: add --set " + s.name() +
                  "=VALUE (an integer; its scalars are " + names_of(k.fn.scalars()) + ")");
}

std::string format_sizes(const KernelFile& k) {
  std::vector<std::string> items;
  for (const Var& s : k.fn.sizes())
    if (auto it = k.sizes.find(s.name()); it != k.sizes.end())
      items.push_back(s.name() + "=" + std::to_string(it->second));
  return items.empty() ? std::string("(constant)") : join(items, ",");
}

samples::Problem make_file_problem(const KernelFile& k, std::mt19937_64& rng) {
  require_values(k, true);
  const Function bound = bind_sizes(k.fn, k.sizes);
  samples::Problem p;
  for (const Param& prm : bound.params) {
    if (prm.kind == Param::Kind::Scalar) p.scalars.push_back(double(k.scalars.at(prm.name())));
    if (prm.kind != Param::Kind::Tensor) continue;
    const Buffer& t = prm.buffer;
    const TensorUse use = use_of(bound, t);
    std::vector<int64_t> shape = bound_shape(t, k.path);
    if (use.written && !use.read) {
      p.args.push_back(samples::poisoned_output(t->name, std::move(shape), t->dtype));
      continue;
    }
    p.args.push_back(samples::random_input(t->name, std::move(shape), t->dtype, rng));
    p.args.back().is_output = use.written;
    p.args.back().accumulates = use.written;
  }
  // The reference: the interpreter on a copy of the same inputs, at the same sizes.
  samples::Problem ref = p;
  try {
    interpret(bound, samples::host_args(bound, ref));
  } catch (const Error& e) {
    throw Error("the interpreter, running " + k.path + " for the reference, failed: " + e.what());
  }
  for (const samples::HostArray& a : ref.args)
    if (a.is_output) p.expected.push_back(samples::to_doubles(a));
  if (p.expected.empty())
    throw Error("kernel " + k.fn.name + " of " + k.path +
                " writes none of its tensors: there is nothing to check");
  return p;
}

std::vector<samples::Tolerance> file_tolerances(const samples::Problem& p) {
  int64_t terms = 1;
  for (const samples::HostArray& a : p.args)
    for (int64_t d : a.shape) terms = std::max(terms, d);
  std::vector<samples::Tolerance> out;
  for (const samples::HostArray& a : p.args)
    if (a.is_output) out.push_back(samples::accumulation_tolerance(a.dtype, terms));
  return out;
}

}  // namespace tg::cli
