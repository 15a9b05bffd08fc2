// A function: the unit the builder produces and targets compile. Parameters are tensors (Global
// buffers), scalars (values passed at launch) and sizes (symbolic dimensions, bound from the
// tensors' shapes at launch and specialised by the bind_sizes pass).
#pragma once
#include <string>
#include <vector>

#include "tilegen/ir/stmt.h"

namespace tg {

struct Param {
  enum class Kind : uint8_t { Tensor, Scalar, Size } kind = Kind::Tensor;
  Buffer buffer;  // Tensor
  Var var;        // Scalar, Size
  const std::string& name() const;
};

struct Function {
  std::string name;
  std::vector<Param> params;
  Stmt body;  // a Kernel, or a Seq of Kernels run in order
  SourceLoc loc;

  std::vector<Buffer> tensors() const;
  std::vector<Var> sizes() const;
  std::vector<Var> scalars() const;
  /// The first parameter of this name, or nullptr.
  const Param* find_param(const std::string& name) const;
};

}  // namespace tg
