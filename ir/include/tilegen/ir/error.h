// tg::Error: every user-facing failure of tilegen. It carries the user's call site (the builder
// call, the text line, or the launch) so a message reads "matmul.cpp:42: gemm: K of A (32) ...".
#pragma once
#include <source_location>
#include <stdexcept>
#include <string>

namespace tg {

/// Where a node or a call came from: a C++ call site, or a line of the IR text form.
struct SourceLoc {
  std::string file;
  int line = 0;
  std::string function;

  SourceLoc() = default;
  SourceLoc(std::string f, int l, std::string fn = {}) : file(std::move(f)), line(l), function(std::move(fn)) {}
  static SourceLoc from(const std::source_location& s) { return SourceLoc(s.file_name(), int(s.line()), s.function_name()); }
  bool known() const { return line > 0; }
  /// "file:line" with the directories stripped, or "<unknown>".
  std::string str() const;
};

class Error : public std::runtime_error {
 public:
  /// what() is "file:line: message" when the location is known.
  Error(const std::string& message, SourceLoc where = {});
  const std::string& message() const { return message_; }
  const SourceLoc& where() const { return where_; }

 private:
  std::string message_;
  SourceLoc where_;
};

}  // namespace tg
