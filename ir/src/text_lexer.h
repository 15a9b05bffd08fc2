// Tokens of the IR text form (internal to ir/src). The whole text is tokenised up front so the
// parser can look ahead and come back (tensor shapes name sizes declared later in the list).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tg::text {

enum class TokKind : uint8_t { Ident, Int, Float, String, Punct, End };

struct Token {
  TokKind kind = TokKind::End;
  std::string text;        // identifier, punctuation, string contents, or a number's spelling
  uint64_t magnitude = 0;  // Int: the value, at most 2^63 (a sign is applied by the parser)
  int line = 1;
  bool is(TokKind k, std::string_view t) const { return kind == k && text == t; }
  bool punct(std::string_view t) const { return is(TokKind::Punct, t); }
  bool ident(std::string_view t) const { return is(TokKind::Ident, t); }
  /// How an error message shows it: "','", "identifier 'foo'", "end of text".
  std::string describe() const;
};

/// Throws tg::Error located at "<source_name>:line" on a character or literal it cannot read.
/// The last token is always End.
std::vector<Token> tokenize(std::string_view text, const std::string& source_name);

}  // namespace tg::text
