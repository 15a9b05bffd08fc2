// Pieces of the IR text form shared by the printer and the parser (internal to ir/src): the
// reserved words, identifier rules, the spelling of float literals and the nesting limit.
// The grammar itself is documented in docs/ir_text.md.
#pragma once
#include <string>
#include <string_view>

#include "tilegen/ir/dtype.h"

namespace tg::text {

/// The deepest nesting the parser accepts (blocks, lets, expression trees, parentheses); deeper
/// text is an error rather than a stack overflow.
inline constexpr int kMaxDepth = 256;

/// Words that cannot name a variable or buffer: keywords, dtype names, intrinsic names.
bool is_reserved(std::string_view word);
bool is_identifier(std::string_view word);
inline bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
/// A valid, non-reserved identifier made from `raw` (builder names may be anything).
std::string sanitize_name(std::string_view raw);

/// The shortest decimal spelling of v as a literal of type t: parse_float_literal(spelling, t)
/// gives back round_float_to(t, v) exactly. Always contains '.' or 'e', or is inf/-inf/nan.
std::string format_float(double v, DType t);
/// Inverse of format_float for a finite spelling (digits, '.', exponent), rounded to t.
/// Returns false when the text is not a number or out of double range.
bool parse_float_literal(std::string_view spelling, DType t, double& out);

/// "\"name\"" with quotes, backslashes and non-printable bytes escaped.
std::string quote(std::string_view s);

}  // namespace tg::text
