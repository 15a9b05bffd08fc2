// The builder's private state: the function under construction and the stack of open statement
// lists. Each lambda body (kernel body, loop body, if branch) pushes a list; closing it wraps the
// statements in a Seq. A `let` leaves a marker in the list, so that when the list is closed the
// statements after the marker become the Let's body:
//
//   k.let("x", e); k.copy(...); k.gemm(...);    →    let x = e { copy; gemm }
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/builder.h"

namespace tg {

struct BuilderState {
  enum class Phase { Declaring, InBody, AfterBody, Built };

  /// One recorded item: a statement, or a Let marker (body filled when the list closes).
  struct Entry {
    Stmt stmt;
    std::shared_ptr<ir::Let> let;
  };
  struct Frame {
    std::vector<Entry> entries;
  };
  /// Where the most recent if_ sits, so else_ can patch it.
  struct OpenIf {
    std::size_t depth, index;
  };
  struct LayoutNote {
    Buffer buffer;
    Layout layout;
    SourceLoc loc;
  };

  std::string name;
  SourceLoc loc;
  Phase phase = Phase::Declaring;

  std::vector<Param> params;  // tensors and scalars, in declaration order
  std::vector<Param> sizes;   // appended after them by build()
  std::vector<std::string> names;

  std::vector<Expr> grid;
  std::vector<Var> block_vars;
  SourceLoc grid_loc, body_loc;
  int threads = 128;
  Var thread_var;
  std::vector<Buffer> buffers;  // Shared, Fragment and Local buffers of the kernel
  int scope_counters[4] = {0, 0, 0, 0};
  std::vector<LayoutNote> layouts;

  std::vector<Frame> frames;
  std::optional<OpenIf> last_if;
  Stmt kernel_body;
  /// The first lambda body that an exception left (what, where, the exception's message): its
  /// statements were dropped, so the kernel is incomplete and build() refuses it.
  struct Abandoned {
    std::string what, message;
    SourceLoc loc;
  };
  std::optional<Abandoned> abandoned;

  // ---- Checks shared by the builder calls. Each throws tg::Error at `at`.
  /// Builder calls after build() are errors.
  void check_not_built(const char* what, const SourceLoc& at) const;
  /// Statement-recording calls need an open body(); `used` names the buffers the call touches
  /// so a call after the body can say which on-chip buffer outlived its kernel.
  void require_body(const char* what, const SourceLoc& at, const std::vector<Buffer>& used = {}) const;
  /// The buffer belongs to this builder (a parameter or one of its kernel's buffers).
  void check_owned(const Buffer& b, const char* what, const SourceLoc& at) const;
  /// A new name: an identifier not used yet by a parameter or a named buffer.
  void claim_name(const std::string& n, const char* what, const SourceLoc& at);

  // ---- Statement lists
  /// Run a lambda body (a loop's, an if_ branch's) in a new list and close it. An exception
  /// out of it drops the list, records `abandoned` and continues, so a caller that catches it
  /// finds the enclosing list as it was, and build() refuses the incomplete kernel.
  Stmt collect(const char* what, const SourceLoc& at, const std::function<void()>& body);
  void push();
  /// Close the innermost list: let markers take the statements after them as bodies.
  Stmt pop(const SourceLoc& seq_loc);
  /// Append to the innermost list; returns its index there.
  std::size_t record(Stmt s);
  void record_let(std::shared_ptr<ir::Let> marker);
  Entry& entry(std::size_t depth, std::size_t index) { return frames.at(depth).entries.at(index); }
};

namespace builder_detail {
/// "shared As", "global A", "fragment frag_0": how messages name a buffer.
std::string describe(const Buffer& b);
/// "64x32", with symbolic dimensions by name: how messages show a shape.
std::string shape_str(const std::vector<Expr>& dims);
/// Names must survive the text form: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& n);
}  // namespace builder_detail

}  // namespace tg
