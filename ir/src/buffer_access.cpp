// BufferAccessVisitor (see the header).
#include "tilegen/ir/buffer_access.h"

namespace tg {

using namespace ir;

void BufferAccessVisitor::visit(const Load* op) {
  access(Buffer(op->buffer), BufferAccess::Read);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Store* op) {
  access(op->buffer, BufferAccess::Write);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Atomic* op) {
  access(op->buffer, BufferAccess::ReadWrite);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Copy* op) {
  access(op->src.buffer, BufferAccess::Read);
  access(op->dst.buffer, BufferAccess::Write);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Fill* op) {
  access(op->dst.buffer, BufferAccess::Write);
  IRVisitor::visit(op);
}

// C += A·B (Gemm and Mma).
void BufferAccessVisitor::multiply_accumulate(const Buffer& a, const Buffer& b, const Buffer& c) {
  access(a, BufferAccess::Read);
  access(b, BufferAccess::Read);
  access(c, BufferAccess::ReadWrite);
}

void BufferAccessVisitor::visit(const Gemm* op) {
  multiply_accumulate(op->a.buffer, op->b.buffer, op->c.buffer);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Reduce* op) {
  access(op->src, BufferAccess::Read);
  access(op->dst, BufferAccess::ReadWrite);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Mma* op) {
  multiply_accumulate(op->a.buffer, op->b.buffer, op->c.buffer);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const LdMatrix* op) {
  access(op->src, BufferAccess::Read);
  access(op->regs, BufferAccess::Write);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const MBarrier* op) {
  access(op->buffer, op->op == MBarrier::Op::Init ? BufferAccess::Write : BufferAccess::ReadWrite);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const BulkCopy* op) {
  access(op->src.buffer, BufferAccess::Read);
  access(op->dst.buffer, BufferAccess::Write);
  access(op->barrier, BufferAccess::ReadWrite);
  IRVisitor::visit(op);
}

void BufferAccessVisitor::visit(const Hold* op) {
  access(op->buffer, BufferAccess::ReadWrite);
  IRVisitor::visit(op);
}

namespace {
class CallbackAccess : public BufferAccessVisitor {
 public:
  explicit CallbackAccess(const std::function<void(const Buffer&, BufferAccess)>& f) : f_(f) {}
  void access(const Buffer& b, BufferAccess how) override { f_(b, how); }

 private:
  const std::function<void(const Buffer&, BufferAccess)>& f_;
};
}  // namespace

void for_each_buffer_access(const Stmt& s, const std::function<void(const Buffer&, BufferAccess)>& f) {
  CallbackAccess v(f);
  v.visit_stmt(s);
}

}  // namespace tg
