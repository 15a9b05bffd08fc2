#include "text_lexer.h"

#include <array>
#include <cstdio>

#include "text_syntax.h"
#include "tilegen/ir/error.h"

namespace tg::text {

namespace {

// Longest first, so "->" wins over "-" and "+:" over "+".
constexpr std::array<std::string_view, 32> kPuncts = {
    "->", "+:", "<=", ">=", "==", "!=", "&&", "||", "<<", ">>", "(", ")", "[", "]", "{", "}",
    ",",  ";",  ":",  "=",  "+",  "-",  "*",  "/",  "%",  "<",  ">", "!", "~", "&", "|", "^",
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string show_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", u);
  return buf;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.line = line_;
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      char c = s_[i_];
      if (is_ident_start(c))
        lex_ident(t);
      else if (is_digit(c))
        lex_number(t);
      else if (c == '"')
        lex_string(t);
      else
        lex_punct(t);
      out.push_back(std::move(t));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error(msg, SourceLoc(name_, line_)); }

  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n')
        ++line_, ++i_;
      else if (c == ' ' || c == '\t' || c == '\r')
        ++i_;
      else if (c == '#')
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      else
        return;
    }
  }

  void lex_ident(Token& t) {
    std::size_t b = i_;
    while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
    t.kind = TokKind::Ident;
    t.text = std::string(s_.substr(b, i_ - b));
  }

  // Integers are decimal digits; floats have a fraction and/or an exponent: 1.5, 2.0e-3, 1e+20.
  void lex_number(Token& t) {
    std::size_t b = i_;
    while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    bool is_float = false;
    if (i_ + 1 < s_.size() && s_[i_] == '.' && is_digit(s_[i_ + 1])) {
      is_float = true;
      ++i_;
      while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      std::size_t j = i_ + 1;
      if (j < s_.size() && (s_[j] == '+' || s_[j] == '-')) ++j;
      if (j < s_.size() && is_digit(s_[j])) {
        is_float = true;
        i_ = j;
        while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
      }
    }
    t.text = std::string(s_.substr(b, i_ - b));
    if (i_ < s_.size() && (is_ident_char(s_[i_]) || s_[i_] == '.'))
      fail("malformed number '" + t.text + s_[i_] +
           "...'; write a literal's type after a colon, as in 1.5:f16");
    t.kind = is_float ? TokKind::Float : TokKind::Int;
    if (is_float) return;
    constexpr uint64_t kLimit = uint64_t(1) << 63;  // |INT64_MIN|
    uint64_t v = 0;
    for (char c : t.text) {
      uint64_t d = uint64_t(c - '0');
      if (v > (kLimit - d) / 10) fail("integer literal " + t.text + " is too large (the limit is 64-bit)");
      v = v * 10 + d;
    }
    t.magnitude = v;
  }

  void lex_string(Token& t) {
    ++i_;  // opening quote
    t.kind = TokKind::String;
    for (;;) {
      if (i_ >= s_.size() || s_[i_] == '\n') fail("unterminated string; close it with '\"' on the same line");
      char c = s_[i_++];
      if (c == '"') return;
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated string; close it with '\"' on the same line");
      char e = s_[i_++];
      if (e == '"' || e == '\\')
        t.text += e;
      else if (e == 'n')
        t.text += '\n';
      else if (e == 't')
        t.text += '\t';
      else if (e == 'x' && i_ + 1 < s_.size() && hex_value(s_[i_]) >= 0 && hex_value(s_[i_ + 1]) >= 0) {
        t.text += char(hex_value(s_[i_]) * 16 + hex_value(s_[i_ + 1]));
        i_ += 2;
      } else {
        fail("unknown escape '\\" + std::string(1, e) + "' in string; use \\\", \\\\, \\n, \\t or \\xHH");
      }
    }
  }

  void lex_punct(Token& t) {
    for (std::string_view p : kPuncts) {
      if (s_.substr(i_, p.size()) == p) {
        t.kind = TokKind::Punct;
        t.text = std::string(p);
        i_ += p.size();
        return;
      }
    }
    fail("unexpected character " + show_char(s_[i_]));
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t i_ = 0;
  int line_ = 1;
};

}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case TokKind::Ident: return "'" + text + "'";
    case TokKind::Int:
    case TokKind::Float: return "number " + text;
    case TokKind::String: return "a string";
    case TokKind::Punct: return "'" + text + "'";
    case TokKind::End: return "end of text";
  }
  return "?";
}

std::vector<Token> tokenize(std::string_view text, const std::string& source_name) {
  return Lexer(text, source_name).run();
}

}  // namespace tg::text
