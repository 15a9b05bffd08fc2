// The recursive-descent parser of the IR text form (internal to ir/src). Expressions live in
// parse_expr.cpp, statements and functions in parser.cpp. Every node gets SourceLoc{name, line}.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text_lexer.h"
#include "text_syntax.h"
#include "tilegen/ir/function.h"

namespace tg::text {

class Parser {
 public:
  Parser(std::string_view text, const std::string& source_name);
  Function function();

 private:
  // What a name in scope stands for: exactly one of the two is set.
  struct Symbol {
    Var var;
    Buffer buffer;
  };
  // Counts nesting on entry, so deep text is an error and never a stack overflow.
  class Nest {
   public:
    explicit Nest(Parser& p);
    ~Nest() { --p_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  // ---- Tokens
  const Token& peek(std::size_t ahead = 0) const;
  const Token& next();
  bool accept(std::string_view punct);
  bool accept_word(std::string_view word);
  void expect(std::string_view punct, const std::string& context);
  void expect_word(std::string_view word, const std::string& context);
  std::string expect_name(const std::string& what);
  DType expect_dtype(const std::string& context);
  int expect_small_int(const std::string& what);
  SourceLoc here() const { return SourceLoc(name_, peek().line); }
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_at(int line, const std::string& message) const;

  // ---- Scopes
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void declare(const std::string& name, Symbol s, int line);
  const Symbol* find(const std::string& name) const;
  Buffer expect_buffer(const std::string& what);

  // ---- Expressions (parse_expr.cpp)
  Expr expression();
  std::vector<Expr> expression_list(std::string_view close, const std::string& context);
  Expr binary(int min_prec);
  Expr unary();
  Expr primary();
  Expr literal(bool negative);
  Expr int_literal(const Token& t, bool negative, DType type);
  Expr float_literal(const Token& t, bool negative, DType type);
  Expr name_or_load();
  Expr call(const std::string& callee, int line);
  Expr access_check(int line);
  Expr binary_node(ir::BinOp op, Expr a, Expr b, int line);
  std::vector<Expr> arguments(const std::string& callee, std::size_t count);
  /// Depth of the tree under a node made of `children`; an error past kMaxDepth.
  int tree_depth(const std::vector<Expr>& children, int line);
  Expr finish(std::shared_ptr<ir::ExprNode> node, int depth, int line);

  // ---- Statements (parser.cpp)
  Stmt block(const std::string& context);
  Stmt statements();
  Stmt statement();
  Stmt kernel();
  Var kernel_var(const std::string& what);
  Buffer buffer_decl();
  Layout layout();
  Stmt loop();
  Stmt branch();
  Stmt copy();
  Stmt fill();
  Stmt gemm();
  Stmt reduce();
  Stmt store();
  Stmt atomic();
  Stmt ldmatrix();
  Stmt prefetch();
  Stmt mbarrier();
  Stmt bulk_copy();
  Stmt hold();
  Stmt mma();
  Region region(const std::string& what);
  std::vector<Expr> indices(const Buffer& b);
  void params(Function& f);

  std::string name_;
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  std::unordered_map<const ir::ExprNode*, int> expr_depth_;  // of every node made here
};

}  // namespace tg::text
