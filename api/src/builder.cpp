// KernelBuilder: parameters, launch shape, body, on-chip buffers and build(). Tile operations,
// loops and element code are in builder_ops.cpp; the state they share is builder_state.h.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "builder_state.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/check_index_ranges.h"

namespace tg {

namespace builder_detail {
std::string describe(const Buffer& b) { return std::string(name_of(b->scope)) + " " + b->name; }

std::string shape_str(const std::vector<Expr>& dims) {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) out += "x";
    if (auto v = dims[i].as_int())
      out += std::to_string(*v);
    else if (auto* var = dims[i].as<ir::VarNode>())
      out += var->name;
    else
      out += "?";
  }
  return out.empty() ? "scalar" : out;
}

bool is_identifier(const std::string& n) {
  bool ok = !n.empty() && (std::isalpha((unsigned char)n[0]) || n[0] == '_');
  for (char c : n) ok = ok && (std::isalnum((unsigned char)c) || c == '_');
  return ok;
}
}  // namespace builder_detail

using builder_detail::describe;

// ---- BuilderState

void BuilderState::check_not_built(const char* what, const SourceLoc& at) const {
  if (phase == Phase::Built)
    throw Error(std::string(what) + " after build(): kernel " + name +
                    " is finished; start a new KernelBuilder for another kernel",
                at);
}

void BuilderState::require_body(const char* what, const SourceLoc& at,
                                const std::vector<Buffer>& used) const {
  check_not_built(what, at);
  if (phase == Phase::InBody && !frames.empty()) return;
  if (phase == Phase::AfterBody)
    for (auto& b : used)
      if (b && b->scope != Scope::Global)
        throw Error(std::string(what) + " after body() closed: " + describe(b) +
                        " lives only inside its kernel; move this call into the body lambda",
                    at);
  throw Error(std::string(what) +
                  " outside body(): tile operations and element code belong inside "
                  "k.grid(...).threads(...).body([&](...) { ... })",
              at);
}

void BuilderState::check_owned(const Buffer& b, const char* what, const SourceLoc& at) const {
  if (!b) throw Error(std::string(what) + " of an empty Tensor; use a tensor, shared, fragment or local", at);
  auto same = [&](const Buffer& x) { return x.same_as(b); };
  if (b->scope == Scope::Global) {
    for (auto& p : params)
      if (p.kind == Param::Kind::Tensor && same(p.buffer)) return;
    throw Error(std::string(what) + ": " + describe(b) +
                    " belongs to another KernelBuilder; declare it here with "
                    "k.tensor(...)",
                at);
  }
  if (std::none_of(buffers.begin(), buffers.end(), same))
    throw Error(std::string(what) + ": " + describe(b) +
                    " was allocated by another kernel; allocate it inside this kernel's body",
                at);
}

void BuilderState::claim_name(const std::string& n, const char* what, const SourceLoc& at) {
  if (!builder_detail::is_identifier(n))
    throw Error(std::string(what) + " name \"" + n + "\" is not an identifier; use letters, digits and _",
                at);
  if (std::find(names.begin(), names.end(), n) != names.end())
    throw Error(
        std::string(what) + " name " + n + " is already used in kernel " + name + "; pick another name", at);
  names.push_back(n);
}

Stmt BuilderState::collect(const char* what, const SourceLoc& at, const std::function<void()>& body) {
  push();
  std::size_t depth = frames.size();
  try {
    body();
  } catch (...) {
    frames.resize(depth - 1);
    last_if.reset();
    if (!abandoned) {
      std::string message = "an exception";
      try {
        throw;
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
      }
      abandoned = Abandoned{what, message, at};
    }
    throw;
  }
  return pop(at);
}

void BuilderState::push() { frames.emplace_back(); }

Stmt BuilderState::pop(const SourceLoc& seq_loc) {
  Frame f = std::move(frames.back());
  frames.pop_back();
  if (last_if && last_if->depth >= frames.size()) last_if.reset();
  // Fold from the end: a let marker takes everything folded after it as its body.
  std::vector<Stmt> tail;
  for (auto it = f.entries.rbegin(); it != f.entries.rend(); ++it) {
    if (it->let) {
      it->let->body = make_seq(std::move(tail), it->let->loc);
      tail = {Stmt(it->let)};
    } else {
      tail.insert(tail.begin(), it->stmt);
    }
  }
  return make_seq(std::move(tail), seq_loc);
}

std::size_t BuilderState::record(Stmt s) {
  auto& entries = frames.back().entries;
  entries.push_back(Entry{std::move(s), nullptr});
  last_if.reset();
  return entries.size() - 1;
}

void BuilderState::record_let(std::shared_ptr<ir::Let> marker) {
  frames.back().entries.push_back(Entry{Stmt(), std::move(marker)});
  last_if.reset();
}

// ---- Kernel

std::string Kernel::ir() const { return print(fn_); }

// ---- Parameters

KernelBuilder::KernelBuilder(std::string name, Loc loc) : st_(std::make_unique<BuilderState>()) {
  st_->loc = SourceLoc::from(loc);
  st_->name = std::move(name);
  if (st_->name.empty()) throw Error("KernelBuilder needs a kernel name", st_->loc);
}

KernelBuilder::~KernelBuilder() = default;

Tensor KernelBuilder::tensor(std::string name, std::vector<Expr> shape, DType t, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->check_not_built("tensor()", at);
  if (st_->phase != BuilderState::Phase::Declaring)
    throw Error("tensor(\"" + name + "\") after body(): declare parameters before grid(...).body(...)", at);
  st_->claim_name(name, "tensor", at);
  for (auto& d : shape)
    if (!d.defined() || !d.dtype().is_int())
      throw Error("tensor " + name + ": every dimension must be an integer (a constant or a k.size(...))",
                  at);
  Buffer b = Buffer::make(std::move(name), std::move(shape), t, Scope::Global, {}, at);
  Param p;
  p.kind = Param::Kind::Tensor;
  p.buffer = b;
  st_->params.push_back(std::move(p));
  return Tensor(st_.get(), b);
}

Expr KernelBuilder::size(std::string name, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->check_not_built("size()", at);
  if (st_->phase != BuilderState::Phase::Declaring)
    throw Error("size(\"" + name + "\") after body(): declare sizes before grid(...).body(...)", at);
  st_->claim_name(name, "size", at);
  Param p;
  p.kind = Param::Kind::Size;
  p.var = Var(std::move(name), i32, at);
  st_->sizes.push_back(p);
  return p.var;
}

Expr KernelBuilder::scalar(std::string name, DType t, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->check_not_built("scalar()", at);
  if (st_->phase != BuilderState::Phase::Declaring)
    throw Error("scalar(\"" + name + "\") after body(): declare scalars before grid(...).body(...)", at);
  st_->claim_name(name, "scalar", at);
  if (t.is_packed())
    throw Error("scalar " + name + " of packed type " + std::string(t.name()) +
                    " cannot be passed by value; use i8 or a wider type",
                at);
  Param p;
  p.kind = Param::Kind::Scalar;
  p.var = Var(std::move(name), t, at);
  st_->params.push_back(p);
  return p.var;
}

// ---- Launch shape

namespace {
KernelBuilder& set_grid(KernelBuilder& k, BuilderState& st, std::vector<Expr> dims, const SourceLoc& at) {
  st.check_not_built("grid()", at);
  if (st.phase != BuilderState::Phase::Declaring || !st.grid.empty())
    throw Error(
        "grid() called twice: a KernelBuilder makes one kernel; use another builder for another kernel", at);
  static const char* names[] = {"bx", "by", "bz"};
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!dims[d].defined() || !dims[d].dtype().is_int())
      throw Error("grid(): dimension " + std::to_string(d) + " must be an integer number of blocks", at);
    st.block_vars.push_back(Var(names[d], i32, at));
  }
  st.grid = std::move(dims);
  st.grid_loc = at;
  return k;
}
}  // namespace

KernelBuilder& KernelBuilder::grid(Expr gx, Loc loc) {
  return set_grid(*this, *st_, {gx}, SourceLoc::from(loc));
}
KernelBuilder& KernelBuilder::grid(Expr gx, Expr gy, Loc loc) {
  return set_grid(*this, *st_, {gx, gy}, SourceLoc::from(loc));
}
KernelBuilder& KernelBuilder::grid(Expr gx, Expr gy, Expr gz, Loc loc) {
  return set_grid(*this, *st_, {gx, gy, gz}, SourceLoc::from(loc));
}

KernelBuilder& KernelBuilder::threads(int n, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->check_not_built("threads()", at);
  if (st_->phase != BuilderState::Phase::Declaring)
    throw Error("threads() after body(): set the block size before body(...)", at);
  std::string call = "threads(" + std::to_string(n) + "): ";
  if (n > 1024) throw Error(call + "at most 1024 threads per block; use a larger grid", at);
  if (n < 1) throw Error(call + "a block needs at least 1 thread; use threads(128) or similar", at);
  st_->threads = n;
  return *this;
}

void KernelBuilder::begin_body(SourceLoc loc) {
  st_->check_not_built("body()", loc);
  if (st_->phase != BuilderState::Phase::Declaring)
    throw Error(
        "body() called twice: a KernelBuilder makes one kernel; use another builder for another kernel", loc);
  if (st_->grid.empty())
    throw Error("body() before grid(...): call k.grid(blocks...).threads(n).body(...)", loc);
  st_->phase = BuilderState::Phase::InBody;
  st_->body_loc = loc;
  st_->thread_var = Var("tx", i32, loc);
}

void KernelBuilder::run_body(const std::function<void()>& f, SourceLoc loc) {
  try {
    st_->kernel_body = st_->collect("body", loc, f);
  } catch (...) {
    st_->phase = BuilderState::Phase::AfterBody;
    throw;
  }
  st_->phase = BuilderState::Phase::AfterBody;
}

Expr KernelBuilder::thread_index(Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("thread_index()", at);
  return st_->thread_var;
}

Expr KernelBuilder::block_index(int dim, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("block_index()", at);
  if (dim < 0 || dim >= int(st_->block_vars.size()))
    throw Error("block_index(" + std::to_string(dim) + "): the grid has " +
                    std::to_string(st_->block_vars.size()) + " dimensions",
                at);
  return st_->block_vars[dim];
}

Expr KernelBuilder::body_arg(int dim) {
  if (dim >= int(st_->block_vars.size()))
    throw Error("body(): the lambda takes more block indices than grid() has dimensions (" +
                    std::to_string(st_->block_vars.size()) + "); take one tg::Expr per grid dimension",
                st_->body_loc);
  return st_->block_vars[dim];
}

// ---- On-chip memory

namespace {
Tensor allocate(BuilderState& st, Scope scope, std::vector<Expr> shape, DType t, std::string name,
                const SourceLoc& at) {
  const char* what = scope == Scope::Shared     ? "shared()"
                     : scope == Scope::Fragment ? "fragment()"
                                                : "local()";
  st.require_body(what, at);
  for (auto& d : shape)
    if (!d.defined() || !d.dtype().is_int())
      throw Error(std::string(what) + ": every dimension must be an integer", at);
  if (name.empty()) {
    const char* prefix = scope == Scope::Shared ? "shared_" : scope == Scope::Fragment ? "frag_" : "local_";
    auto taken = [&](const std::string& n) {
      return std::find(st.names.begin(), st.names.end(), n) != st.names.end();
    };
    do name = prefix + std::to_string(st.scope_counters[int(scope)]++);
    while (taken(name));
  }
  st.claim_name(name, what, at);
  Buffer b = Buffer::make(std::move(name), std::move(shape), t, scope, {}, at);
  st.buffers.push_back(b);
  return Tensor(&st, b);
}
}  // namespace

Tensor KernelBuilder::shared(std::vector<Expr> shape, DType t, std::string name, Loc loc) {
  return allocate(*st_, Scope::Shared, std::move(shape), t, std::move(name), SourceLoc::from(loc));
}
Tensor KernelBuilder::fragment(std::vector<Expr> shape, DType t, std::string name, Loc loc) {
  return allocate(*st_, Scope::Fragment, std::move(shape), t, std::move(name), SourceLoc::from(loc));
}
Tensor KernelBuilder::local(std::vector<Expr> shape, DType t, std::string name, Loc loc) {
  return allocate(*st_, Scope::Local, std::move(shape), t, std::move(name), SourceLoc::from(loc));
}

void KernelBuilder::annotate_layout(const Tensor& t, Layout layout, Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  st_->require_body("annotate_layout()", at, {t.buffer()});
  st_->check_owned(t.buffer(), "annotate_layout()", at);
  const Buffer& b = t.buffer();
  bool shared_kind = layout.kind == Layout::Kind::Swizzle || layout.kind == Layout::Kind::Padded;
  if (shared_kind && b->scope != Scope::Shared)
    throw Error("annotate_layout(): swizzled and padded layouts apply to shared tiles, not " + describe(b),
                at);
  if (layout.kind == Layout::Kind::MatrixUnit && b->scope != Scope::Fragment)
    throw Error("annotate_layout(): a matrix-unit layout applies to fragments, not " + describe(b), at);
  if (layout.kind == Layout::Kind::Swizzle && (layout.param < 1 || layout.param > 3))
    throw Error("annotate_layout(): swizzle bits must be 1..3 (16-byte chunks in a 128-byte row), not " +
                    std::to_string(layout.param),
                at);
  if (layout.kind == Layout::Kind::Padded && layout.param < 1)
    throw Error("annotate_layout(): padding must be at least 1 element, not " + std::to_string(layout.param),
                at);
  for (auto& note : st_->layouts)
    if (note.buffer.same_as(b))
      throw Error("annotate_layout(): " + describe(b) + " already has a layout (set at " + note.loc.str() +
                      "); annotate each buffer once",
                  at);
  st_->layouts.push_back({b, std::move(layout), at});
}

// ---- build()

namespace {
/// Rebuilds annotated buffers with their layout; every Load, Store, Region and the Kernel's
/// allocation list then refer to the new node.
class ApplyLayouts : public IRMutator {
 public:
  explicit ApplyLayouts(const std::vector<BuilderState::LayoutNote>& notes) : notes_(notes) {}
  Buffer mutate_buffer(const Buffer& b) override {
    if (!b) return b;
    for (auto& [old, out] : done_)
      if (old == b.get()) return out;
    for (auto& note : notes_)
      if (note.buffer.same_as(b)) {
        auto n = std::make_shared<ir::BufferNode>(*b.get());
        n->layout = note.layout;
        done_.emplace_back(b.get(), Buffer(std::move(n)));
        return done_.back().second;
      }
    return IRMutator::mutate_buffer(b);
  }

 private:
  const std::vector<BuilderState::LayoutNote>& notes_;
  std::vector<std::pair<const ir::BufferNode*, Buffer>> done_;
};
}  // namespace

Kernel KernelBuilder::build(Loc loc) {
  SourceLoc at = SourceLoc::from(loc);
  if (st_->phase == BuilderState::Phase::Built)
    throw Error("build() called twice: kernel " + st_->name + " is already built; keep the first result", at);
  if (st_->phase == BuilderState::Phase::InBody)
    throw Error("build() inside body(): call it after body(...)", at);
  if (st_->phase == BuilderState::Phase::Declaring)
    throw Error(
        "build(): kernel " + st_->name + " has no body; add k.grid(...).threads(n).body([&](...) { ... })",
        at);
  if (const auto& a = st_->abandoned)
    throw Error("build(): the " + a->what + " body at " + a->loc.str() + " ended with an exception (" +
                    a->message + "), so kernel " + st_->name +
                    " lacks its statements; fix that error and build the kernel with a new KernelBuilder",
                at);
  st_->phase = BuilderState::Phase::Built;

  auto kernel = std::make_shared<ir::Kernel>(st_->grid_loc);
  kernel->grid = st_->grid;
  kernel->block_vars = st_->block_vars;
  kernel->threads = st_->threads;
  kernel->thread_var = st_->thread_var;
  kernel->buffers = st_->buffers;
  kernel->body = st_->kernel_body;

  Function f;
  f.name = st_->name;
  f.loc = st_->loc;
  f.params = st_->params;
  f.params.insert(f.params.end(), st_->sizes.begin(), st_->sizes.end());
  f.body = Stmt(kernel);
  if (!st_->layouts.empty()) f = ApplyLayouts(st_->layouts).mutate_function(f);
  verify(f);
  check_index_ranges(f);
  return Kernel(std::move(f));
}

void KernelBuilder::check_arity(std::size_t lambda_args, std::size_t rank, Loc loc) {
  if (lambda_args != rank)
    throw Error("parallel: the lambda takes " + std::to_string(lambda_args) +
                    (lambda_args == 1 ? " index" : " indices") + " but the loop has " + std::to_string(rank) +
                    (rank == 1 ? " dimension" : " dimensions") + "; take one tg::Expr per dimension",
                SourceLoc::from(loc));
}

}  // namespace tg
