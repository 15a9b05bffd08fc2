// bind_sizes: specialise symbolic sizes to the values of one launch.
//
// Before, with sizes = {N: 1000}:
//   func add(A: f32[N] global, C: f32[N] global, N: size) {
//     kernel grid((N + 127) / 128) threads(128) -> (bx; tx) { ... i < N ... }
//   }
// After:
//   func add(A: f32[1000] global, C: f32[1000] global) {
//     kernel grid(8) threads(128) -> (bx; tx) { ... i < 1000 ... }
//   }
// The runtime calls infer_sizes on the launch's tensor shapes and hands the values to the
// target's pipeline, whose first pass is bind_sizes_pass; constant folding happens as the
// expressions are rebuilt, the rest in simplify.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/pass_manager.h"

namespace tg {

/// Replace the named size parameters by constants everywhere (body, buffer shapes, tensor
/// parameters' shapes) and remove them from the parameters. Sizes not named stay symbolic.
/// Throws tg::Error for a name that is not a size parameter or a value that is not positive.
Function bind_sizes(const Function& f, const std::map<std::string, int64_t>& sizes);

/// The first pass of every target's pipeline, named "bind_sizes": bind_sizes(f, sizes), then
/// check_grid_limits (grid_limits.h) on the grid that is now constant. With no sizes to bind it
/// returns f itself. The pass manager holds its output to the rules of its input (it is still
/// the user's IR, with values put in), and reports its errors as the input's.
PassEntry bind_sizes_pass(std::map<std::string, int64_t> sizes);
inline constexpr const char* kBindSizesPass = "bind_sizes";

/// Where infer_sizes' errors point and how they name each tensor. By default an error names
/// "tensor A" and points at the node it is about (the tensor's or the size's declaration); the
/// runtime passes the user's launch call site and labels like "argument 2 (B)", so a bad launch
/// is reported at the user's line, naming the argument.
struct LaunchSite {
  SourceLoc loc;                    // unknown: at the node's own declaration
  std::vector<std::string> labels;  // one per tensor parameter, in order; empty: "tensor <name>"
};

/// The size values a launch implies: `tensor_shapes` holds one shape per tensor parameter, in
/// parameter order. A dimension that is exactly a size binds it (the first such dimension, in
/// parameter order); then every dimension, constant or computed from sizes (N * 2), must equal
/// the given one. Throws tg::Error naming the tensor (and dimension) for a bad count, rank or
/// dimension, a size bound to a value that is not positive or does not fit its type, a shape
/// that does not match ("tensor B: shape [6, 5] does not match the kernel's [K, N] = [8, 5]"),
/// and a size that no tensor dimension binds.
std::map<std::string, int64_t> infer_sizes(const Function& f,
                                           const std::vector<std::vector<int64_t>>& tensor_shapes,
                                           const LaunchSite& site = {});

}  // namespace tg
