#include "tilegen/ir/error.h"

namespace tg {

std::string SourceLoc::str() const {
  if (!known()) return "<unknown>";
  std::string f = file;
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

static std::string located(const std::string& message, const SourceLoc& where) {
  return where.known() ? where.str() + ": " + message : message;
}

Error::Error(const std::string& message, SourceLoc where)
    : std::runtime_error(located(message, where)), message_(message), where_(std::move(where)) {}

}  // namespace tg
