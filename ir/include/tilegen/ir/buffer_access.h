// Which buffers a statement touches, and how: one walk that every pass asking "what does this
// read, what does this write" shares, so a new statement kind is taught to all of them at once.
//
//   copy A[by*64 .. +64, 0 .. +32] -> S          A: Read      S: Write
//   C[i] = S[i, 0] + 1                           S: Read      C: Write
//   gemm S, T -> Cf                              S, T: Read   Cf: ReadWrite
//   atomic_add C[i], x                           C: ReadWrite
//
// Accesses are reported once per occurrence (a buffer read twice is reported twice), the
// statement's own operands before the loads in its index and value expressions.
#pragma once
#include <functional>

#include "tilegen/ir/visitor.h"

namespace tg {

enum class BufferAccess { Read, Write, ReadWrite };

inline bool is_read(BufferAccess a) { return a != BufferAccess::Write; }
inline bool is_write(BufferAccess a) { return a != BufferAccess::Read; }

/// An IRVisitor that reports each buffer access through access(). Load: Read. Store, Fill's
/// and Copy's destination: Write. Copy's source, Gemm's and Mma's A and B, Reduce's source:
/// Read. Atomic, Gemm's C, Mma's C and Reduce's destination: ReadWrite — the last two also
/// when they clear first, since a target may lower the clear as a write followed by the
/// accumulation. Hold: ReadWrite of its buffer (moved into the unit's registers and back),
/// then its body. A subclass may override other visits too (to track loops), calling these.
class BufferAccessVisitor : public IRVisitor {
 public:
  virtual void access(const Buffer& b, BufferAccess how) = 0;

  using IRVisitor::visit;
  void visit(const ir::Load* op) override;
  void visit(const ir::Store* op) override;
  void visit(const ir::Atomic* op) override;
  void visit(const ir::Copy* op) override;
  void visit(const ir::Fill* op) override;
  void visit(const ir::Gemm* op) override;
  void visit(const ir::Reduce* op) override;
  void visit(const ir::Mma* op) override;
  void visit(const ir::LdMatrix* op) override;  // reads src's rows, writes the registers
  void visit(const ir::MBarrier* op) override;  // init writes the barrier, the others update it
  void visit(const ir::BulkCopy* op) override;  // reads src, writes dst, updates the barrier
  void visit(const ir::Hold* op) override;

 private:
  void multiply_accumulate(const Buffer& a, const Buffer& b, const Buffer& c);
};

/// f(buffer, how) for every buffer access in s (see BufferAccessVisitor).
void for_each_buffer_access(const Stmt& s, const std::function<void(const Buffer&, BufferAccess)>& f);

}  // namespace tg
