// The text form of the IR: readable, and read back by parse_function (print → parse → print is
// the identity). Example:
//
//   func gemm(A: f16[M, K] global, B: f16[K, N] global, C: f16[M, N] global, M: size, N: size, K: size) {
//     kernel grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) -> (bx, by; tx) {
//       ...
//     }
//   }
#pragma once
#include <string>

#include "tilegen/ir/function.h"

namespace tg {

struct PrintOptions {
  bool locations = false;  // append "  # file:line" to statements made by the builder
};

std::string print(const Function& f, const PrintOptions& opt = {});
std::string print(const Stmt& s, const PrintOptions& opt = {});
std::string print(const Expr& e);

}  // namespace tg
