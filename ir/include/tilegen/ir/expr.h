// Expressions of the tile IR: immutable trees shared by handle. Constructors fold constants and
// drop identities (x+0, x*1) where cheap; the simplify pass does the rest.
//
//   Expr e = tg::ceildiv(N, 128) * 128;   // (N + 127) / 128 * 128, N a size parameter
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tilegen/ir/dtype.h"
#include "tilegen/ir/error.h"

namespace tg {

namespace ir {
struct ExprNode;
struct VarNode;
struct BufferNode;
}  // namespace ir

/// A handle to an immutable expression. Null only when default-constructed.
class Expr {
 public:
  Expr() = default;
  Expr(std::shared_ptr<const ir::ExprNode> n) : node_(std::move(n)) {}
  // Literals: integers become i32 (i64 when they do not fit), floating literals become "weak"
  // f32 constants that take the type of the float expression they meet.
  Expr(int v);
  Expr(int64_t v);
  Expr(long long v) : Expr(int64_t(v)) {}
  Expr(unsigned v) : Expr(int64_t(v)) {}
  Expr(std::size_t v) : Expr(int64_t(v)) {}
  Expr(float v);
  Expr(double v);
  Expr(bool v);

  const ir::ExprNode* get() const { return node_.get(); }
  const ir::ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ir::ExprNode>& ptr() const { return node_; }
  /// Whether this handle holds a node. (No operator bool: `!e` and `a && b` build IR.)
  bool defined() const { return bool(node_); }
  DType dtype() const;
  /// Same node (identity), not structural equality; see equal() for that.
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  template <typename T> const T* as() const;
  /// The constant value when this is an integer immediate.
  std::optional<int64_t> as_int() const;

 private:
  std::shared_ptr<const ir::ExprNode> node_;
};

/// A variable: loop variable, block/thread index, let binding, size or scalar parameter.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DType t = i32, SourceLoc loc = {});
  explicit Var(std::shared_ptr<const ir::VarNode> n);
  const ir::VarNode* node() const;
  const std::string& name() const;
};

namespace ir {

enum class ExprKind : uint8_t { IntImm, FloatImm, Var, Binary, Unary, Select, Cast, Call, Load, AccessCheck };

enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Mod, Min, Max,          // Div/Mod on integers are floor division/modulo
  Eq, Ne, Lt, Le, Gt, Ge, And, Or,           // comparisons and logic give bool
  BitAnd, BitOr, BitXor, Shl, Shr            // integers only; Shr is arithmetic on signed types
};
enum class UnOp : uint8_t { Neg, Not, BitNot };
enum class Intrinsic : uint8_t {
  Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Abs, Tanh, Sin, Cos, Floor, Ceil, Round, Erf, Sigmoid,
  Pow,  // two arguments
  Fma   // three arguments: a*b+c, rounded once
};

const char* name_of(BinOp op);   // "+", "min", "==", ...
const char* name_of(UnOp op);
const char* name_of(Intrinsic f);  // "exp", "rsqrt", ...
int arity_of(Intrinsic f);
bool is_comparison(BinOp op);
bool is_logical(BinOp op);

struct ExprNode {
  ExprKind kind;
  DType dtype;
  SourceLoc loc;  // the builder call that made it, when known
  ExprNode(ExprKind k, DType t, SourceLoc l = {}) : kind(k), dtype(t), loc(std::move(l)) {}
  virtual ~ExprNode() = default;
};

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImm(DType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  bool weak;  // a C++ floating literal not yet given a type by context
  FloatImm(DType t, double v, bool w = false) : ExprNode(kKind, t), value(v), weak(w) {}
};

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  VarNode(std::string n, DType t, SourceLoc l = {}) : ExprNode(kKind, t, std::move(l)), name(std::move(n)) {}
};

struct Binary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinOp op;
  Expr a, b;
  Binary(DType t, BinOp o, Expr x, Expr y) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

struct Unary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnOp op;
  Expr a;
  Unary(DType t, UnOp o, Expr x) : ExprNode(kKind, t), op(o), a(std::move(x)) {}
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, t, f;
  Select(DType ty, Expr c, Expr x, Expr y)
      : ExprNode(kKind, ty), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr a;
  Cast(DType t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
};

struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
  Call(DType t, Intrinsic f, std::vector<Expr> as) : ExprNode(kKind, t), fn(f), args(std::move(as)) {}
};

/// Element read: buffer[indices...], one index per dimension.
struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  std::shared_ptr<const BufferNode> buffer;
  std::vector<Expr> indices;
  Load(DType t, std::shared_ptr<const BufferNode> b, std::vector<Expr> idx)
      : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(idx)) {}
};

/// The element access an AccessCheck guards.
enum class AccessKind : uint8_t { Load, Store, Atomic };
const char* name_of(AccessKind k);  // "load", "store", "atomic"

/// A checked element access (the pass check_element_accesses makes these, with --param
/// check_bounds=all): the value of `cond` (bool: the element is in range). Where it is false, the
/// launch's first failure is written to the function's access record (access_check.h): `site`,
/// the block, the thread and the indices, for the host to report with the buffer's name and shape
/// and this node's loc (the builder call of the access). The buffer is named, not referenced: the
/// check is a report, and passes that reshape a buffer (serialize_threads' Local rows) leave it be.
/// `thread` is -1 where the block runs as a whole (a parallel loop). Text form:
///   access_check(tx < 64, store "Y"[tx] of [64], (bx; tx), 0, "/src/user.cpp:12")
struct AccessCheck : ExprNode {
  static constexpr ExprKind kKind = ExprKind::AccessCheck;
  Expr cond;
  AccessKind access = AccessKind::Load;
  std::string buffer;
  std::vector<Expr> indices, shape;
  std::vector<Expr> block;  // the kernel's block indices, one per grid dimension
  Expr thread;
  int site = 0;
  AccessCheck(SourceLoc l) : ExprNode(kKind, tg::boolean, std::move(l)) {}
};

}  // namespace ir

template <typename T> const T* Expr::as() const {
  return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
}

// ---- Construction. Each folds constants and applies the implicit conversions:
// a weak float literal takes the other side's float type; an int literal meeting a float becomes
// that float; int meets int → the wider; int meets float → the float; f16/bf16 meet f32 → f32.
Expr make_int(int64_t v, DType t = i32);
Expr make_float(double v, DType t = f32);
Expr make_bool(bool v);
Expr make_binary(ir::BinOp op, Expr a, Expr b);
Expr make_unary(ir::UnOp op, Expr a);
Expr make_select(Expr cond, Expr t, Expr f);
Expr make_cast(DType t, Expr a);
Expr make_call(ir::Intrinsic fn, std::vector<Expr> args);
Expr make_load(std::shared_ptr<const ir::BufferNode> buffer, std::vector<Expr> indices);
/// The common type two operands are converted to (the rules above).
DType promote(const Expr& a, const Expr& b);

/// An operand of an Expr operator: the value and the user's line, so that using an empty
/// (default-constructed) Expr is a tg::Error at that line. Converts from whatever an Expr does;
/// the line is captured where the conversion happens, the operator's call site.
struct Operand {
  template <typename T>
    requires std::is_convertible_v<T&&, Expr>
  Operand(T&& v, std::source_location at = std::source_location::current())
      : expr(std::forward<T>(v)), loc(at) {}
  Expr expr;
  std::source_location loc;
};

Expr operator+(Operand a, Operand b);
Expr operator-(Operand a, Operand b);
Expr operator*(Operand a, Operand b);
Expr operator/(Operand a, Operand b);
Expr operator%(Operand a, Operand b);
Expr operator-(Operand a);
Expr operator==(Operand a, Operand b);
Expr operator!=(Operand a, Operand b);
Expr operator<(Operand a, Operand b);
Expr operator<=(Operand a, Operand b);
Expr operator>(Operand a, Operand b);
Expr operator>=(Operand a, Operand b);
Expr operator&&(Operand a, Operand b);
Expr operator||(Operand a, Operand b);
Expr operator!(Operand a);
Expr operator&(Operand a, Operand b);
Expr operator|(Operand a, Operand b);
Expr operator^(Operand a, Operand b);
Expr operator<<(Operand a, Operand b);
Expr operator>>(Operand a, Operand b);

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(DType t, Expr a);
Expr ceildiv(Expr a, Expr b);
Expr exp(Expr a);
Expr exp2(Expr a);
Expr log(Expr a);
Expr log2(Expr a);
Expr sqrt(Expr a);
Expr rsqrt(Expr a);
Expr abs(Expr a);
Expr tanh(Expr a);
Expr sin(Expr a);
Expr cos(Expr a);
Expr floor(Expr a);
Expr ceil(Expr a);
Expr round(Expr a);
Expr erf(Expr a);
Expr sigmoid(Expr a);
Expr pow(Expr a, Expr b);
Expr fma(Expr a, Expr b, Expr c);
/// Largest/smallest finite value of a float type (the start of a running max / min).
Expr lowest(DType t);
Expr highest(DType t);
Expr infinity(DType t);

/// Structural equality (variables and buffers compared by identity).
bool equal(const Expr& a, const Expr& b);
/// Structural hash consistent with equal().
std::size_t hash_expr(const Expr& e);

}  // namespace tg
