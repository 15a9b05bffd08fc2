// Reads the text form written by print(). Errors are tg::Error located at "<name>:line".
#pragma once
#include <string>
#include <string_view>

#include "tilegen/ir/function.h"

namespace tg {

/// `source_name` names the text in locations and errors (a file name, or "<text>").
Function parse_function(std::string_view text, const std::string& source_name = "<text>");

}  // namespace tg
