// Integer range analysis shared by the passes: interval bounds of index expressions from the
// ranges of the variables in scope (loop, block, thread, let and size variables) and from facts
// known to hold (loop bounds, If conditions), plus the linear normal form the proofs rely on.
//
//   for i in [0, 4) { for j in [0, 128) { ... (i*128 + j) / 128 ... } }
//   bounds of i*128 + j               → [0, 511]
//   bounds of (i*128 + j) / 128       → [0, 3]
//   decide(i*128 + j < 512)           → true
//
// Arithmetic is analysed over the mathematical integers: like Halide, the analysis assumes index
// arithmetic does not overflow its type. Float expressions have no bounds (everything()).
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tilegen/ir/function.h"

namespace tg {

/// A closed range of integers [lo, hi]. INT64_MIN and INT64_MAX stand for −∞ and +∞.
struct Interval {
  int64_t lo, hi;

  static constexpr int64_t kNegInf = INT64_MIN;
  static constexpr int64_t kPosInf = INT64_MAX;
  static constexpr Interval everything() { return {kNegInf, kPosInf}; }
  static constexpr Interval point(int64_t v) { return {v, v}; }
  constexpr bool has_lower() const { return lo != kNegInf; }
  constexpr bool has_upper() const { return hi != kPosInf; }
  constexpr bool is_point() const { return lo == hi && has_lower() && has_upper(); }
  bool operator==(const Interval&) const = default;
};

/// The values an integer type can hold (bool: [0, 1]; i64 and floats: everything()).
Interval type_range(DType t);

/// Ranges of the variables in scope, by variable identity.
using VarRanges = std::unordered_map<const ir::VarNode*, Interval>;

/// An integer expression as constant + Σ coefficient·term, where no term is itself a sum,
/// a difference, a negation or a product with a constant of the same type. Equal terms
/// (tg::equal) are merged, so x + 3 - x + 4 is {terms: {}, constant: 7}.
struct LinearForm {
  DType type = i32;
  std::vector<std::pair<Expr, int64_t>> terms;  // in order of first appearance
  int64_t constant = 0;
  bool is_constant() const { return terms.empty(); }
};

/// The linear form of an integer expression (a bool or float one is a single term).
LinearForm linear_form(const Expr& e);
/// Whether e is a multiple of k for every value of its variables, seen on its simplified linear
/// form: every coefficient and the constant divisible by k. 8*i + 16*j → true for k = 8;
/// i + 8 → false (i may be odd). A sound "yes", used to prove alignment and lane shapes.
bool is_multiple_of(const Expr& e, int64_t k);
/// Rebuild a linear form: positive terms first in their order, then the negative ones, then the
/// constant: {x:1, y:-1, 7} → x - y + 7; {x:4} → x * 4; {} with constant c → c.
Expr to_expr(const LinearForm& f);
/// a - b + k as a linear form, computed over the integers (no wrapping of constants).
LinearForm linear_difference(const Expr& a, const Expr& b, int64_t k = 0);

/// What is known at one point of the IR: variable ranges and facts. Facts are integer
/// expressions d known to satisfy d ≤ 0; `i < N` is recorded as i - N + 1 ≤ 0.
class RangeContext {
 public:
  VarRanges ranges;
  std::vector<LinearForm> facts;
  /// Let variables with a linear value, expanded in facts and goals so that proofs see through
  /// them (let row = by*128 + i; ... row < M ...).
  std::unordered_map<const ir::VarNode*, LinearForm> definitions;

  /// Size parameters of f are known to be ≥ 0.
  static RangeContext for_function(const Function& f);

  /// Bounds of an integer or bool expression (everything() for floats and what is unknown).
  Interval bounds(const Expr& e) const;
  /// Whether d ≤ 0 always holds, from bounds or from a fact f with d - k·f ≤ 0 (k > 0).
  /// Decisions nested inside a bounds computation (a select's condition) use ranges only, so
  /// that a fact mentioning a select cannot send the proof around in a circle.
  bool prove_nonpositive(const Expr& d, bool use_facts = true) const;
  bool prove_nonpositive(const LinearForm& d, bool use_facts = true) const;
  /// true / false when the condition is decided for every value in scope; nullopt otherwise.
  /// Decides integer comparisons, &&, ||, ! and constants; float conditions stay undecided.
  std::optional<bool> decide(const Expr& cond, bool use_facts = true) const;
  bool prove(const Expr& cond) const {
    auto d = decide(cond);
    return d && *d;
  }

  /// Record that cond holds: each conjunct that is an integer comparison becomes a fact, and
  /// a comparison of a variable with a constant also narrows that variable's range.
  void assume(const Expr& cond);
  /// Record that cond does not hold (a negated comparison, or each disjunct of an ||).
  void assume_not(const Expr& cond);
  /// Record the fact f ≤ 0.
  void assume_linear(const LinearForm& f);

  /// Kernel: block_vars[d] in [0, grid[d]), thread_var in [0, threads).
  void enter_kernel(const ir::Kernel& k);
  /// for v in [min, min + extent).
  void enter_loop(const Var& v, const Expr& min, const Expr& extent);
  /// let v = value.
  void enter_let(const Var& v, const Expr& value);
  /// f with every let variable that has a definition replaced by it.
  LinearForm expand(const LinearForm& f) const;
  void set_range(const Var& v, Interval r);

  /// Restores ranges and facts when it goes out of scope:
  ///   { RangeContext::Scope s(ctx); ctx.enter_loop(...); body = mutate(op->body); }
  class Scope {
   public:
    explicit Scope(RangeContext& c)
        : ctx_(c), ranges_(c.ranges), definitions_(c.definitions), nfacts_(c.facts.size()) {}
    ~Scope() {
      ctx_.ranges = std::move(ranges_);
      ctx_.definitions = std::move(definitions_);
      ctx_.facts.resize(nfacts_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RangeContext& ctx_;
    VarRanges ranges_;
    std::unordered_map<const ir::VarNode*, LinearForm> definitions_;
    std::size_t nfacts_;
  };

 private:
  void narrow(const LinearForm& f);
};

/// Bounds of e given only variable ranges (no facts).
Interval bounds_of(const Expr& e, const VarRanges& ranges = {});

}  // namespace tg
