// Expressions of the IR text form, read back exactly as print() wrote them:
//
//   A[by*128 + i, k] * 0.5:f16 + cast<f16>(exp2(x - m))     min(a, b)     select(c, t, f)
//
// Nodes are made directly (not with make_binary and friends): those fold constants and insert
// conversions, and the tree read must be the tree printed. Operand types therefore must already
// agree, as they do in every tree the builder makes; a mismatch is an error naming the cast to add.
#include <cmath>
#include <limits>

#include "text_parser.h"

namespace tg::text {

using namespace ir;

namespace {

struct BinaryOpInfo {
  std::string_view punct;
  BinOp op;
  int prec;  // larger binds tighter; the printer's table, in printer.cpp, is the same
};
constexpr BinaryOpInfo kBinaryOps[] = {
    {"||", BinOp::Or, 1},    {"&&", BinOp::And, 2}, {"|", BinOp::BitOr, 3}, {"^", BinOp::BitXor, 4},
    {"&", BinOp::BitAnd, 5}, {"==", BinOp::Eq, 6},  {"!=", BinOp::Ne, 6},   {"<", BinOp::Lt, 7},
    {"<=", BinOp::Le, 7},    {">", BinOp::Gt, 7},   {">=", BinOp::Ge, 7},   {"<<", BinOp::Shl, 8},
    {">>", BinOp::Shr, 8},   {"+", BinOp::Add, 9},  {"-", BinOp::Sub, 9},   {"*", BinOp::Mul, 10},
    {"/", BinOp::Div, 10},   {"%", BinOp::Mod, 10},
};

const BinaryOpInfo* binary_op_at(const Token& t) {
  if (t.kind != TokKind::Punct) return nullptr;
  for (auto& info : kBinaryOps)
    if (t.text == info.punct) return &info;
  return nullptr;
}

std::string tname(DType t) { return std::string(t.name()); }

bool is_call_word(const std::string& w) {
  if (w == "select" || w == "cast" || w == "min" || w == "max" || w == "access_check") return true;
  for (int i = 0; i <= int(Intrinsic::Fma); ++i)
    if (w == name_of(Intrinsic(i))) return true;
  return false;
}

}  // namespace

int Parser::tree_depth(const std::vector<Expr>& children, int line) {
  int d = 0;
  for (auto& c : children) {
    auto it = expr_depth_.find(c.get());
    d = std::max(d, it == expr_depth_.end() ? 1 : it->second);
  }
  if (d + 1 > kMaxDepth)
    fail_at(line, "expression nests deeper than " + std::to_string(kMaxDepth) + " levels; split it with let");
  return d + 1;
}

Expr Parser::finish(std::shared_ptr<ExprNode> node, int depth, int line) {
  node->loc = SourceLoc(name_, line);
  expr_depth_[node.get()] = depth;
  return Expr(std::move(node));
}

Expr Parser::expression() { return binary(1); }

std::vector<Expr> Parser::expression_list(std::string_view close, const std::string& context) {
  std::vector<Expr> out;
  if (accept(close)) return out;
  for (;;) {
    out.push_back(expression());
    if (accept(",")) continue;
    expect(close, context);
    return out;
  }
}

// Precedence climbing; the recursion is bounded by the number of precedence levels.
Expr Parser::binary(int min_prec) {
  Expr lhs = unary();
  for (;;) {
    const BinaryOpInfo* info = binary_op_at(peek());
    if (!info || info->prec < min_prec) return lhs;
    int line = next().line;
    Expr rhs = binary(info->prec + 1);
    lhs = binary_node(info->op, lhs, rhs, line);
  }
}

Expr Parser::binary_node(BinOp op, Expr a, Expr b, int line) {
  std::string sym = std::string("'") + name_of(op) + "'";
  DType ta = a.dtype(), tb = b.dtype(), result = ta;
  if (is_logical(op)) {
    if (!ta.is_bool() || !tb.is_bool())
      fail_at(line, "operands of " + sym + " must be bool, not " + tname(ta) + " and " + tname(tb) +
                        "; compare them first, as in x != 0");
    result = boolean;
  } else {
    if (ta != tb)
      fail_at(line, "operands of " + sym + " have different types " + tname(ta) + " and " + tname(tb) +
                        "; convert one with cast<" + tname(ta) +
                        ">(...) or give a literal its type, as in 1:" + tname(ta));
    if (op >= BinOp::BitAnd && ta.is_float())
      fail_at(line, "bitwise " + sym + " needs integer operands, not " + tname(ta));
    if (is_comparison(op)) result = boolean;
  }
  int depth = tree_depth({a, b}, line);
  return finish(std::make_shared<Binary>(result, op, std::move(a), std::move(b)), depth, line);
}

Expr Parser::unary() {
  Nest nest(*this);
  const Token& t = peek();
  if (t.punct("-")) {
    // `-5` and `-inf` are literals; the negation of a literal is printed `-(5)`.
    const Token& n = peek(1);
    if (n.kind == TokKind::Int || n.kind == TokKind::Float || n.ident("inf") || n.ident("nan")) {
      next();
      return literal(true);
    }
  }
  UnOp op;
  if (t.punct("-"))
    op = UnOp::Neg;
  else if (t.punct("!"))
    op = UnOp::Not;
  else if (t.punct("~"))
    op = UnOp::BitNot;
  else
    return primary();
  int line = next().line;
  Expr a = unary();
  if (op == UnOp::Not && !a.dtype().is_bool())
    fail_at(line, "'!' needs a bool operand, not " + tname(a.dtype()) + "; compare it first, as in x == 0");
  if (op == UnOp::BitNot && a.dtype().is_float())
    fail_at(line, "'~' needs an integer operand, not " + tname(a.dtype()));
  DType result = op == UnOp::Not ? boolean : a.dtype();
  int depth = tree_depth({a}, line);
  return finish(std::make_shared<Unary>(result, op, std::move(a)), depth, line);
}

Expr Parser::primary() {
  const Token& t = peek();
  if (t.kind == TokKind::Int || t.kind == TokKind::Float) return literal(false);
  if (t.punct("(")) {
    next();
    Expr e = expression();
    expect(")", "to close '('");
    return e;
  }
  if (t.kind == TokKind::Ident) {
    if (t.text == "true" || t.text == "false") {
      next();
      return finish(std::make_shared<IntImm>(boolean, t.text == "true" ? 1 : 0), 1, t.line);
    }
    if (t.text == "inf" || t.text == "nan") return literal(false);
    if (is_call_word(t.text)) {
      next();
      return call(t.text, t.line);
    }
    return name_or_load();
  }
  fail("expected an expression, found " + t.describe());
}

// A number (or inf, nan) with an optional type: 3, 3:i64, 1.5, 1.5:f16, -inf:bf16.
Expr Parser::literal(bool negative) {
  const Token& t = next();
  bool is_float = t.kind != TokKind::Int;
  DType type = is_float ? f32 : i32;
  if (accept(":")) type = expect_dtype("after ':' of literal " + t.text);
  return is_float ? float_literal(t, negative, type) : int_literal(t, negative, type);
}

Expr Parser::int_literal(const Token& t, bool negative, DType type) {
  std::string spelled = (negative ? "-" : "") + t.text;
  if (type.is_float())
    fail_at(t.line, "integer literal " + spelled + " cannot have type " + tname(type) + "; write " + spelled +
                        ".0:" + tname(type));
  if (type.is_bool()) fail_at(t.line, "write a bool literal as true or false, not " + spelled + ":bool");
  constexpr uint64_t kMaxPositive = uint64_t(std::numeric_limits<int64_t>::max());
  if (!negative && t.magnitude > kMaxPositive)
    fail_at(t.line, "integer literal " + spelled + " does not fit in 64 bits");
  int64_t v = negative ? int64_t(0 - t.magnitude) : int64_t(t.magnitude);  // two's complement wrap is exact
  if (wrap_int_to(type, v) != v) fail_at(t.line, "literal " + spelled + " does not fit in " + tname(type));
  return finish(std::make_shared<IntImm>(type, v), 1, t.line);
}

Expr Parser::float_literal(const Token& t, bool negative, DType type) {
  std::string spelled = (negative ? "-" : "") + t.text;
  if (!type.is_float())
    fail_at(t.line,
            "float literal " + spelled + " cannot have type " + tname(type) + "; write an integer or cast");
  double v;
  if (t.text == "inf")
    v = round_float_to(type, INFINITY);
  else if (t.text == "nan")
    v = std::numeric_limits<double>::quiet_NaN();
  else if (!parse_float_literal(t.text, type, v))
    fail_at(t.line, "float literal " + spelled + " is out of range");
  return finish(std::make_shared<FloatImm>(type, negative ? -v : v, false), 1, t.line);
}

Expr Parser::name_or_load() {
  const Token& t = next();
  if (t.kind != TokKind::Ident) fail_at(t.line, "expected an expression, found " + t.describe());
  if (is_reserved(t.text))
    fail_at(t.line, "'" + t.text + "' is a reserved word and cannot be used as a value");
  const Symbol* s = find(t.text);
  if (!s) fail_at(t.line, "unknown name '" + t.text + "'");
  if (s->var.defined()) {
    if (peek().punct("["))
      fail_at(t.line, "'" + t.text + "' is a variable, not a buffer, and cannot be indexed");
    return s->var;
  }
  Buffer b = s->buffer;
  if (!accept("["))
    fail_at(t.line, "buffer '" + t.text + "' is used as a value; read an element with " + t.text + "[...]");
  std::vector<Expr> idx = indices(b);
  int depth = tree_depth(idx, t.line);
  return finish(std::make_shared<Load>(b->dtype, b.ptr(), std::move(idx)), depth, t.line);
}

// After the opening '[': the indices of one element of b, and the closing ']'.
std::vector<Expr> Parser::indices(const Buffer& b) {
  int line = peek().line;
  std::vector<Expr> idx = expression_list("]", "after indices of " + b->name);
  if (idx.size() != b.rank())
    fail_at(line, b->name + " has rank " + std::to_string(b.rank()) + " but is given " +
                      std::to_string(idx.size()) + (idx.size() == 1 ? " index" : " indices"));
  for (std::size_t i = 0; i < idx.size(); ++i)
    if (!idx[i].dtype().is_int())
      fail_at(line, "index " + std::to_string(i) + " of " + b->name + " has type " + tname(idx[i].dtype()) +
                        "; indices must be integers");
  return idx;
}

std::vector<Expr> Parser::arguments(const std::string& callee, std::size_t count) {
  int line = peek().line;
  expect("(", "after " + callee);
  std::vector<Expr> args = expression_list(")", "after the arguments of " + callee);
  if (args.size() != count)
    fail_at(line, callee + " takes " + std::to_string(count) + " argument" + (count == 1 ? "" : "s") +
                      ", not " + std::to_string(args.size()));
  return args;
}

Expr Parser::call(const std::string& callee, int line) {
  if (callee == "access_check") return access_check(line);
  if (callee == "cast") {
    expect("<", "after cast");
    DType t = expect_dtype("in cast<...>");
    expect(">", "after the type of cast<" + tname(t));
    std::vector<Expr> a = arguments("cast<" + tname(t) + ">", 1);
    int depth = tree_depth(a, line);
    return finish(std::make_shared<Cast>(t, a[0]), depth, line);
  }
  if (callee == "min" || callee == "max") {
    std::vector<Expr> a = arguments(callee, 2);
    return binary_node(callee == "min" ? BinOp::Min : BinOp::Max, a[0], a[1], line);
  }
  if (callee == "select") {
    std::vector<Expr> a = arguments(callee, 3);
    if (!a[0].dtype().is_bool())
      fail_at(line, "the condition of select must be bool, not " + tname(a[0].dtype()));
    if (a[1].dtype() != a[2].dtype())
      fail_at(line, "the values of select have different types " + tname(a[1].dtype()) + " and " +
                        tname(a[2].dtype()) + "; convert one with cast<...>(...)");
    int depth = tree_depth(a, line);
    return finish(std::make_shared<Select>(a[1].dtype(), a[0], a[1], a[2]), depth, line);
  }
  Intrinsic fn = Intrinsic::Exp;
  for (int i = 0; i <= int(Intrinsic::Fma); ++i)
    if (callee == name_of(Intrinsic(i))) fn = Intrinsic(i);
  std::vector<Expr> a = arguments(callee, std::size_t(arity_of(fn)));
  DType t = a[0].dtype();
  for (auto& x : a) {
    if (!x.dtype().is_float())
      fail_at(line,
              callee + " needs float arguments, not " + tname(x.dtype()) + "; convert with cast<f32>(...)");
    if (x.dtype() != t)
      fail_at(line,
              "arguments of " + callee + " have different types " + tname(t) + " and " + tname(x.dtype()));
  }
  int depth = tree_depth(a, line);
  return finish(std::make_shared<Call>(t, fn, std::move(a)), depth, line);
}

// After the word: (cond, store "Y"[tx] of [64], (bx; tx), 0, "/src/user.cpp:12"), as printed.
Expr Parser::access_check(int line) {
  auto n = std::make_shared<AccessCheck>(SourceLoc{});
  expect("(", "after access_check");
  n->cond = expression();
  if (!n->cond.dtype().is_bool())
    fail_at(line, "the condition of access_check must be bool, not " + tname(n->cond.dtype()));
  expect(",", "after the condition of access_check");
  if (accept_word("load"))
    n->access = AccessKind::Load;
  else if (accept_word("store"))
    n->access = AccessKind::Store;
  else if (accept_word("atomic"))
    n->access = AccessKind::Atomic;
  else
    fail("expected load, store or atomic in access_check, found " + peek().describe());
  if (peek().kind != TokKind::String)
    fail("expected the checked buffer's name as a string, found " + peek().describe());
  n->buffer = next().text;
  expect("[", "after the checked buffer's name");
  n->indices = expression_list("]", "after the checked indices");
  expect_word("of", "after the checked indices");
  expect("[", "before the checked buffer's shape");
  n->shape = expression_list("]", "after the checked buffer's shape");
  expect(",", "after the checked buffer's shape");
  expect("(", "before the block indices of access_check");
  n->block = expression_list(";", "after the block indices of access_check");
  n->thread = expression();
  expect(")", "after the thread of access_check");
  expect(",", "after the thread of access_check");
  n->site = expect_small_int("the site of access_check");
  expect(",", "after the site of access_check");
  if (peek().kind != TokKind::String)
    fail("expected the call site as a string (\"file:line\"), found " + peek().describe());
  std::string site = next().text;
  expect(")", "to close access_check");
  std::vector<Expr> children = n->indices;
  children.push_back(n->cond);
  AccessCheck* node = n.get();
  Expr e = finish(std::move(n), tree_depth(children, line), line);
  // The access's call site, not this line: the report names the user's code.
  auto colon = site.rfind(':');
  node->loc = colon == std::string::npos
                  ? SourceLoc()
                  : SourceLoc(site.substr(0, colon), std::atoi(site.c_str() + colon + 1));
  return e;
}

}  // namespace tg::text
