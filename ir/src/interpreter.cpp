// interpret(): check and bind the arguments, then run the function's kernels one after another,
// each kernel's grid blocks spread over a pool of host threads (a block is independent of the
// others by the IR's semantics, and each worker owns its blocks' shared and local storage).
#include "tilegen/ir/interpreter.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "interp_internal.h"
#include "tilegen/ir/access_check.h"

namespace tg {

using namespace interp;

namespace {

std::string dims_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void set_shape(BufShape& sh, std::vector<int64_t> dims) {
  sh.dims = std::move(dims);
  sh.strides.assign(sh.dims.size(), 1);
  sh.numel = 1;
  for (std::size_t d = sh.dims.size(); d-- > 0;) {
    sh.strides[d] = sh.numel;
    sh.numel *= sh.dims[d];
  }
}

/// Binds arguments to parameters: tensors to their buffers, scalars to their slots, and sizes
/// from the tensors' shapes (a size in several tensors must agree).
class ArgBinder {
 public:
  ArgBinder(const Function& f, const Program& p, const std::vector<HostArg>& args, Launch& l)
      : f_(f), p_(p), args_(args), l_(l) {}
  void run();

 private:
  const Param* size_param(const Expr& e, int32_t* slot) const {
    auto* v = e.as<ir::VarNode>();
    for (std::size_t i = 0; v && i < f_.params.size(); ++i)
      if (f_.params[i].kind == Param::Kind::Size && f_.params[i].var.get() == v) {
        *slot = p_.param_slot[i];
        return &f_.params[i];
      }
    return nullptr;
  }
  void bind_tensor(std::size_t param, const HostArg& a, std::size_t position);
  SourceLoc where(const Buffer& b) const { return b->loc.known() ? b->loc : f_.loc; }

  const Function& f_;
  const Program& p_;
  const std::vector<HostArg>& args_;
  Launch& l_;
  std::vector<std::string> bound_by_;  // per slot: "tensor A dimension 1" once a size is bound
  std::vector<std::pair<std::size_t, std::size_t>> deferred_;  // (param, dim) checked after binding
};

void ArgBinder::bind_tensor(std::size_t i, const HostArg& a, std::size_t position) {
  const Buffer& b = f_.params[i].buffer;
  std::string arg = "argument " + std::to_string(position) + " (tensor " + b->name + ")";
  if (!a.is_tensor) throw Error(arg + " is a scalar; pass a tensor", where(b));
  if (a.dtype != b->dtype)
    throw Error(arg + " has dtype " + std::string(a.dtype.name()) + ", but " + b->name + " is declared " +
                    std::string(b->dtype.name()),
                where(b));
  if (a.shape.size() != b.rank())
    throw Error(arg + " has rank " + std::to_string(a.shape.size()) + " (shape " + dims_text(a.shape) +
                    "), but " + b->name + " is declared with rank " + std::to_string(b.rank()),
                where(b));
  for (std::size_t d = 0; d < a.shape.size(); ++d) {
    int64_t n = a.shape[d];
    std::string dim = "tensor " + b->name + " dimension " + std::to_string(d);
    if (n < 0) throw Error(dim + " is negative (" + std::to_string(n) + ")", where(b));
    int32_t slot = -1;
    if (auto c = b->shape[d].as_int()) {
      if (*c != n)
        throw Error(dim + " is " + std::to_string(n) + ", but the kernel was built for " + std::to_string(*c),
                    where(b));
    } else if (const Param* sp = size_param(b->shape[d], &slot)) {
      if (bound_by_[std::size_t(slot)].empty()) {
        l_.host_env[std::size_t(slot)] = Scalar::of_int(n);
        bound_by_[std::size_t(slot)] = dim;
      } else if (l_.host_env[std::size_t(slot)].i != n) {
        throw Error(dim + " is " + std::to_string(n) + ", but size " + sp->name() + " is " +
                        std::to_string(l_.host_env[std::size_t(slot)].i) + " from " +
                        bound_by_[std::size_t(slot)] + "; the tensors disagree on " + sp->name(),
                    where(b));
      }
    } else {
      deferred_.push_back({i, d});
    }
  }
  BufShape& sh = l_.shapes[std::size_t(p_.param_buf[i])];
  set_shape(sh, a.shape);
  if (!a.data && sh.numel > 0) throw Error(arg + " has no data pointer", where(b));
  // An empty tensor may come without data; any access to it is out of bounds anyway, but it
  // must still count as Global so that bounds-checked copies predicate instead of failing.
  static char empty_tensor;
  sh.global = a.data ? a.data : &empty_tensor;
}

void ArgBinder::run() {
  std::vector<std::size_t> expected;
  std::string names;
  for (std::size_t i = 0; i < f_.params.size(); ++i)
    if (f_.params[i].kind != Param::Kind::Size) {
      expected.push_back(i);
      names += (names.empty() ? "" : ", ") + f_.params[i].name();
    }
  if (args_.size() != expected.size())
    throw Error("function " + f_.name + " takes " + std::to_string(expected.size()) + " arguments (" + names +
                    "), but " + std::to_string(args_.size()) +
                    " were given; sizes are not passed, they come from the "
                    "tensors' shapes",
                f_.loc);
  bound_by_.assign(std::size_t(p_.nslots), {});
  for (std::size_t k = 0; k < expected.size(); ++k) {
    std::size_t i = expected[k];
    const HostArg& a = args_[k];
    if (f_.params[i].kind == Param::Kind::Tensor) {
      bind_tensor(i, a, k);
      continue;
    }
    const Var& v = f_.params[i].var;
    if (a.is_tensor)
      throw Error("argument " + std::to_string(k) + " (scalar " + v.name() +
                      ") is a tensor; pass a scalar value "
                      "(HostArg with is_tensor = false)",
                  f_.loc);
    l_.host_env[std::size_t(p_.param_slot[i])] = convert_scalar(a.dtype, v.dtype(), a.scalar);
    bound_by_[std::size_t(p_.param_slot[i])] = "scalar " + v.name();
  }
  for (std::size_t i = 0; i < f_.params.size(); ++i)
    if (f_.params[i].kind == Param::Kind::Size && bound_by_[std::size_t(p_.param_slot[i])].empty())
      throw Error("size " + f_.params[i].name() +
                      " is not the dimension of any tensor: pass it as a scalar "
                      "parameter, or use it in a tensor's shape",
                  f_.loc);
  if (deferred_.empty()) return;
  BlockExec host(l_, -1);  // shape expressions such as N * 2, now that every size is known
  for (auto [i, d] : deferred_) {
    const Buffer& b = f_.params[i].buffer;
    int64_t want = host.eval_host(p_.bufs[std::size_t(p_.param_buf[i])].shape[d]).i;
    int64_t have = l_.shapes[std::size_t(p_.param_buf[i])].dims[d];
    if (want != have)
      throw Error("tensor " + b->name + " dimension " + std::to_string(d) + " is " + std::to_string(have) +
                      ", but its declared shape gives " + std::to_string(want),
                  where(b));
  }
}

/// Numbers for the kernel's shared, fragment and local buffers, from the host context.
void resolve_buffer_shapes(Launch& l, const KernelInfo& k, BlockExec& host) {
  const Program& p = *l.prog;
  for (int32_t b : k.local_bufs) {
    const ir::BufferNode* node = p.bufs[std::size_t(b)].node;
    std::vector<int64_t> dims;
    for (int32_t e : p.bufs[std::size_t(b)].shape) dims.push_back(host.eval_host(e).i);
    for (int64_t n : dims)
      if (n < 0) throw Error("buffer " + node->name + " has a negative shape " + dims_text(dims), node->loc);
    set_shape(l.shapes[std::size_t(b)], std::move(dims));
    // The interpreter holds every element as 8 bytes; refuse what cannot be a real on-chip buffer
    // before allocating it per worker.
    int64_t n = l.shapes[std::size_t(b)].numel * (node->scope == Scope::Local ? k.threads : 1);
    if (n > (int64_t(1) << 28) || n < 0)
      throw Error(std::string(name_of(node->scope)) + " buffer " + node->name + " of shape " +
                      dims_text(l.shapes[std::size_t(b)].dims) + " is too large for on-chip memory; tile it",
                  node->loc);
  }
}

/// Runs one kernel's grid over the worker pool; the error of the lowest failing block wins, so a
/// failure reads the same whatever the scheduling (blocks are claimed in order, and every block
/// below a failing one was claimed and runs to its end).
void launch_kernel(Launch& l, const KernelInfo& k, int kernel, BlockExec& host) {
  resolve_buffer_shapes(l, k, host);
  std::vector<int64_t> grid;
  int64_t count = 1;
  for (int32_t e : k.grid) {
    grid.push_back(host.eval_host(e).i);
    if (grid.back() < 0)
      throw Error("kernel grid " + dims_text(grid) + " has a negative dimension", k.node->loc);
    count *= grid.back();
  }
  if (count == 0) return;
  int workers =
      l.opt.num_threads > 0 ? l.opt.num_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  workers = int(std::min<int64_t>(workers, count));
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex err_mu;
  int64_t err_block = INT64_MAX;
  std::exception_ptr err;
  auto record = [&](int64_t block) {
    std::lock_guard<std::mutex> g(err_mu);
    if (block < err_block) err_block = block, err = std::current_exception();
    stop = true;
  };
  auto work = [&] {
    try {
      BlockExec ex(l, kernel);
      std::vector<int64_t> idx(grid.size());
      for (int64_t i; !stop && (i = next++) < count;) {
        try {
          int64_t r = i;
          for (std::size_t d = 0; d < grid.size(); ++d) idx[d] = r % grid[d], r /= grid[d];  // x fastest
          ex.run_block(idx);
        } catch (...) {
          record(i);
        }
      }
    } catch (...) {  // allocating the worker's storage failed
      record(INT64_MAX - 1);
    }
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (err) std::rethrow_exception(err);
}

void run_top(Launch& l, int32_t sid, BlockExec& host) {
  const Program& p = *l.prog;
  const SNode& s = p.stmts[std::size_t(sid)];
  switch (s.kind) {
    case ir::StmtKind::Seq:
      for (int32_t c : s.stmts) run_top(l, c, host);
      return;
    case ir::StmtKind::Let: {
      Scalar v = host.eval_host(s.e0);
      l.host_env[std::size_t(s.slot)] = v;
      host.set_host_slot(s.slot, v);
      run_top(l, s.body, host);
      return;
    }
    case ir::StmtKind::Kernel: launch_kernel(l, p.kernels[std::size_t(s.kernel)], s.kernel, host); return;
    default: throw Error("only kernels, lets and sequences may appear outside a kernel", s.src->loc);
  }
}

}  // namespace

void interpret(const Function& f, const std::vector<HostArg>& args, const InterpretOptions& opt) {
  Program prog = interp::compile(f);
  std::mutex global_lock;
  Launch l;
  l.prog = &prog;
  l.opt = opt;
  l.global_lock = &global_lock;
  l.shapes.resize(prog.bufs.size());
  l.host_env.resize(std::size_t(prog.nslots));
  ArgBinder(f, prog, args, l).run();
  BlockExec host(l, -1);
  run_top(l, prog.root, host);
  if (prog.access_record >= 0 && opt.report_access_record)
    if (auto e =
            access_error(f, static_cast<const uint32_t*>(l.shapes[std::size_t(prog.access_record)].global)))
      throw *e;
}

}  // namespace tg
