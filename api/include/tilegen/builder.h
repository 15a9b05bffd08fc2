// The fluent kernel builder. Reads in the order a kernel author thinks: declare tensors, launch
// a grid, allocate tiles, loop, copy, gemm, epilogue, store.
//
//   tg::KernelBuilder k("matmul_relu");
//   auto A = k.tensor("A", {M, K}, tg::f16);
//   ...
//   k.grid(tg::ceildiv(N, bn), tg::ceildiv(M, bm)).threads(128).body([&](tg::Expr bx, tg::Expr by) {
//     auto As = k.shared({bm, bk}, tg::f16);
//     ...
//   });
//   tg::Kernel kernel = k.build();
//
// Every call records its call site; a misuse is a tg::Error naming that file:line and saying
// what to change, thrown by the call itself where it can be seen there, else by build().
#pragma once
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg {

using Loc = std::source_location;
class KernelBuilder;
struct BuilderState;  // private to the builder

/// The result of build(): a verified function.
class Kernel {
 public:
  Kernel() = default;
  explicit Kernel(Function f) : fn_(std::move(f)) {}
  const Function& function() const { return fn_; }
  const std::string& name() const { return fn_.name; }
  std::string ir() const;  // the text form

 private:
  Function fn_;
};

/// An element of a buffer in element code. Reading converts to Expr; assigning records a Store.
///   Cf(i, j) = tg::max(Cf(i, j), 0.0f);   Acc(i) += x;
class ElementRef {
 public:
  ElementRef(BuilderState* st, Buffer b, std::vector<Expr> idx, SourceLoc loc)
      : st_(st), buf_(std::move(b)), idx_(std::move(idx)), loc_(std::move(loc)) {}
  operator Expr() const;
  Expr value() const { return Expr(*this); }
  const ElementRef& operator=(const Expr& v) const;
  const ElementRef& operator=(const ElementRef& v) const { return *this = v.value(); }
  const ElementRef& operator+=(const Expr& v) const;
  const ElementRef& operator-=(const Expr& v) const;
  const ElementRef& operator*=(const Expr& v) const;
  const ElementRef& operator/=(const Expr& v) const;
  const Buffer& buffer() const { return buf_; }
  const std::vector<Expr>& indices() const { return idx_; }
  const SourceLoc& loc() const { return loc_; }

 private:
  BuilderState* st_;
  Buffer buf_;
  std::vector<Expr> idx_;
  SourceLoc loc_;
};

/// A box of a tensor or tile: offsets, and extents when given. A copy fills unknown extents
/// from the other side's shape: `k.copy(A.at(by * bm, ko * bk), As)` copies bm×bk.
struct Tile {
  Buffer buffer;
  std::vector<Expr> offsets;
  std::vector<Expr> extents;  // empty = to be inferred
  SourceLoc loc;
};

/// An index and the line it is written on. operator[] cannot take a std::source_location
/// default argument, so it takes an Index instead: converting the index expression to an Index
/// (implicitly, in the user's `X[i]`) evaluates Loc::current() at that call, and errors in the
/// indexing name the user's line rather than builder.h.
struct Index {
  template <typename T>
    requires std::is_convertible_v<T, Expr>
  Index(T&& e, Loc at = Loc::current()) : expr(std::forward<T>(e)), loc(at) {}
  Expr expr;
  Loc loc;
};

/// A buffer as the builder hands it out: tensors, shared tiles, fragments, locals.
class Tensor {
 public:
  Tensor() = default;
  Tensor(BuilderState* st, Buffer b) : st_(st), buf_(std::move(b)) {}
  const Buffer& buffer() const { return buf_; }
  const std::string& name() const { return buf_->name; }
  DType dtype() const { return buf_->dtype; }
  std::size_t rank() const { return buf_->shape.size(); }
  /// Dimension `dim`'s extent; a tensor not made by a KernelBuilder, or a dimension past its
  /// rank, is a tg::Error at the caller's line.
  Expr shape(std::size_t dim, Loc loc = Loc::current()) const;

  ElementRef operator()(Expr i0, Loc loc = Loc::current()) const;
  ElementRef operator()(Expr i0, Expr i1, Loc loc = Loc::current()) const;
  ElementRef operator()(Expr i0, Expr i1, Expr i2, Loc loc = Loc::current()) const;
  ElementRef operator()(Expr i0, Expr i1, Expr i2, Expr i3, Loc loc = Loc::current()) const;
  /// X[i] is X(i), for one-dimensional buffers; errors name the line of the index.
  ElementRef operator[](Index i0) const { return (*this)(std::move(i0.expr), i0.loc); }

  /// A tile starting at these offsets; extents inferred by the operation that uses it.
  Tile at(Expr i0, Loc loc = Loc::current()) const;
  Tile at(Expr i0, Expr i1, Loc loc = Loc::current()) const;
  Tile at(Expr i0, Expr i1, Expr i2, Loc loc = Loc::current()) const;
  Tile at(Expr i0, Expr i1, Expr i2, Expr i3, Loc loc = Loc::current()) const;
  /// An explicit box.
  Tile slice(std::vector<Expr> offsets, std::vector<Expr> extents, Loc loc = Loc::current()) const;
  /// The whole buffer.
  operator Tile() const;

 private:
  BuilderState* st_ = nullptr;
  Buffer buf_;
};

struct GemmOptions {
  bool trans_a = false;
  bool trans_b = false;
  bool clear = false;  // C = A·B instead of C += A·B
};

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name, Loc loc = Loc::current());
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // ---- Parameters
  /// A tensor parameter in global memory; shape entries are constants or size() expressions.
  Tensor tensor(std::string name, std::vector<Expr> shape, DType t, Loc loc = Loc::current());
  /// A symbolic dimension, bound from the tensors' shapes at launch.
  Expr size(std::string name, Loc loc = Loc::current());
  /// A scalar parameter passed at launch.
  Expr scalar(std::string name, DType t, Loc loc = Loc::current());

  // ---- Launch shape
  KernelBuilder& grid(Expr gx, Loc loc = Loc::current());
  KernelBuilder& grid(Expr gx, Expr gy, Loc loc = Loc::current());
  KernelBuilder& grid(Expr gx, Expr gy, Expr gz, Loc loc = Loc::current());
  KernelBuilder& threads(int n, Loc loc = Loc::current());
  /// The kernel body, given the block indices (one lambda argument per grid dimension).
  template <typename F> void body(F&& f, Loc loc = Loc::current()) {
    begin_body(SourceLoc::from(loc));
    run_body(
        [&] {
          if constexpr (std::is_invocable_v<F, Expr, Expr, Expr>) f(body_arg(0), body_arg(1), body_arg(2));
          else if constexpr (std::is_invocable_v<F, Expr, Expr>) f(body_arg(0), body_arg(1));
          else if constexpr (std::is_invocable_v<F, Expr>) f(body_arg(0));
          else f();
        },
        SourceLoc::from(loc));
  }

  // ---- On-chip memory (inside body)
  Tensor shared(std::vector<Expr> shape, DType t, std::string name = {}, Loc loc = Loc::current());
  Tensor fragment(std::vector<Expr> shape, DType t, std::string name = {}, Loc loc = Loc::current());
  Tensor local(std::vector<Expr> shape, DType t, std::string name = {}, Loc loc = Loc::current());
  /// Layout annotations (the developer level): swizzled or padded shared tiles.
  void annotate_layout(const Tensor& t, Layout layout, Loc loc = Loc::current());

  // ---- Tile operations (collective over the block)
  void clear(const Tile& dst, Loc loc = Loc::current());
  void fill(const Tile& dst, Expr value, Loc loc = Loc::current());
  void copy(const Tile& src, const Tile& dst, Loc loc = Loc::current());
  void gemm(const Tile& a, const Tile& b, const Tile& c, GemmOptions opt = {}, Loc loc = Loc::current());
  void reduce_sum(const Tensor& src, const Tensor& dst, int axis, bool clear = true, Loc loc = Loc::current());
  void reduce_max(const Tensor& src, const Tensor& dst, int axis, bool clear = true, Loc loc = Loc::current());
  void reduce_min(const Tensor& src, const Tensor& dst, int axis, bool clear = true, Loc loc = Loc::current());
  void reduce_absmax(const Tensor& src, const Tensor& dst, int axis, bool clear = true, Loc loc = Loc::current());

  // ---- Loops. The lambda takes one Expr per loop dimension.
  template <typename F> void parallel(const Tensor& t, F&& f, Loc loc = Loc::current()) {
    parallel(t.buffer()->shape, std::forward<F>(f), loc);
  }
  template <typename F> void parallel(std::vector<Expr> extents, F&& f, Loc loc = Loc::current()) {
    loop_nest(ForKind::Parallel, extents, 0, erase_nd(std::forward<F>(f), extents.size(), loc), loc);
  }
  template <typename F> void serial(Expr extent, F&& f, Loc loc = Loc::current()) {
    loop(ForKind::Serial, Expr(0), extent, 0, std::function<void(Expr)>(std::forward<F>(f)), loc);
  }
  template <typename F> void serial(Expr begin, Expr end, F&& f, Loc loc = Loc::current()) {
    loop(ForKind::Serial, begin, end - begin, 0, std::function<void(Expr)>(std::forward<F>(f)), loc);
  }
  template <typename F> void pipelined(Expr extent, int stages, F&& f, Loc loc = Loc::current()) {
    loop(ForKind::Pipelined, Expr(0), extent, stages, std::function<void(Expr)>(std::forward<F>(f)), loc);
  }
  template <typename F> void unrolled(Expr extent, F&& f, Loc loc = Loc::current()) {
    loop(ForKind::Unrolled, Expr(0), extent, 0, std::function<void(Expr)>(std::forward<F>(f)), loc);
  }
  template <typename F> void vectorized(Expr extent, F&& f, Loc loc = Loc::current()) {
    loop(ForKind::Vectorized, Expr(0), extent, 0, std::function<void(Expr)>(std::forward<F>(f)), loc);
  }

  // ---- Control and element code
  class IfChain {
   public:
    IfChain(KernelBuilder* k, std::size_t index) : k_(k), index_(index) {}
    template <typename F> void else_(F&& f, Loc loc = Loc::current()) {
      k_->add_else(index_, std::function<void()>(std::forward<F>(f)), SourceLoc::from(loc));
    }

   private:
    KernelBuilder* k_;
    std::size_t index_;
  };
  template <typename F> IfChain if_(Expr cond, F&& then, Loc loc = Loc::current()) {
    return IfChain(this, add_if(std::move(cond), std::function<void()>(std::forward<F>(then)), SourceLoc::from(loc)));
  }
  /// Bind a value to a name for the rest of the enclosing block.
  Expr let(std::string name, Expr value, Loc loc = Loc::current());
  /// The thread's index in its block (the expert level), and the block's index.
  Expr thread_index(Loc loc = Loc::current());
  Expr block_index(int dim, Loc loc = Loc::current());
  void barrier(Loc loc = Loc::current());
  void atomic_add(const ElementRef& dst, Expr value, Loc loc = Loc::current());
  void atomic_max(const ElementRef& dst, Expr value, Loc loc = Loc::current());
  void atomic_min(const ElementRef& dst, Expr value, Loc loc = Loc::current());

  /// Verify and return the kernel. Throws tg::Error naming the first offending builder call.
  Kernel build(Loc loc = Loc::current());

  BuilderState* state() { return st_.get(); }

 private:
  using NdBody = std::function<void(const std::vector<Expr>&)>;
  template <typename F> static NdBody erase_nd(F&& f, std::size_t rank, Loc loc) {
    return [f = std::forward<F>(f), rank, loc](const std::vector<Expr>& v) mutable {
      if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr, Expr>) { check_arity(4, rank, loc); f(v[0], v[1], v[2], v[3]); }
      else if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr>) { check_arity(3, rank, loc); f(v[0], v[1], v[2]); }
      else if constexpr (std::is_invocable_v<F&, Expr, Expr>) { check_arity(2, rank, loc); f(v[0], v[1]); }
      else { check_arity(1, rank, loc); f(v[0]); }
    };
  }
  static void check_arity(std::size_t lambda_args, std::size_t rank, Loc loc);
  void begin_body(SourceLoc loc);
  /// The block index handed to body()'s lambda; errors name the body() call.
  Expr body_arg(int dim);
  /// Records the body's statements; an exception out of it leaves the builder refusing build().
  void run_body(const std::function<void()>& f, SourceLoc loc);
  void loop(ForKind kind, Expr begin, Expr extent, int stages, std::function<void(Expr)> f, Loc loc);
  void loop_nest(ForKind kind, const std::vector<Expr>& extents, int stages, NdBody f, Loc loc);
  std::size_t add_if(Expr cond, std::function<void()> then, SourceLoc loc);
  void add_else(std::size_t index, std::function<void()> f, SourceLoc loc);

  std::unique_ptr<BuilderState> st_;
};

}  // namespace tg
