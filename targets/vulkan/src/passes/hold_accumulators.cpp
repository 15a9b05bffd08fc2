// hold_accumulators (see the header).
#include "passes/hold_accumulators.h"

#include <algorithm>
#include <map>

#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/matrix_unit.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"
#include "tilegen/passes/simplify.h"

namespace tg::vulkan {

namespace {

using Regions = std::map<const ir::StmtNode*, std::vector<const ir::BufferNode*>>;

// Unrolling a nest of more iterations than this is not worth the code size.
constexpr int64_t kMaxUnrolled = 64;

// Per buffer: Mma C operand uses, every other access (BufferAccessVisitor's: loads, stores,
// copies, atomics, A/B operands, ldmatrix), atomics.
struct Uses : BufferAccessVisitor {
  std::map<const ir::BufferNode*, int> mma_c, other, atomics;
  std::map<const ir::BufferNode*, std::vector<const ir::Mma*>> mmas;
  void access(const Buffer& b, BufferAccess) override { other[b.get()]++; }
  void visit(const ir::Atomic* op) override {
    atomics[op->buffer.get()]++;
    BufferAccessVisitor::visit(op);
  }
  void visit(const ir::Mma* op) override {  // C counted apart; the operands' index loads as usual
    other[op->a.buffer.get()]++;
    other[op->b.buffer.get()]++;
    mma_c[op->c.buffer.get()]++;
    mmas[op->c.buffer.get()].push_back(op);
    IRVisitor::visit(op);
  }
};

// The loops directly around an Mma (each loop's body the next loop or the Mma), from the
// innermost out, while their bounds are constant and they are not parallel.
std::vector<const ir::For*> constant_chain(const std::vector<const ir::For*>& stack,
                                           const ir::StmtNode* mma) {
  std::vector<const ir::For*> chain;
  const ir::StmtNode* child = mma;
  for (auto it = stack.rbegin(); it != stack.rend() && (*it)->body.get() == child; ++it) {
    if (!(*it)->min.as_int() || !(*it)->extent.as_int() || (*it)->for_kind == ForKind::Parallel) break;
    chain.push_back(*it);
    child = *it;
  }
  return chain;
}

int64_t trips(const std::vector<const ir::For*>& chain) {
  int64_t n = 1;
  for (const ir::For* f : chain) n *= std::max<int64_t>(*f->extent.as_int(), 1);
  return n;
}

// Whether every Mma on b has a C offset that depends only on the variables of its constant
// chain, of at most kMaxUnrolled iterations: then unrolling the chains makes every offset constant.
struct ConstantNests : IRVisitor {
  explicit ConstantNests(const ir::BufferNode* buffer) : b(buffer) {}
  const ir::BufferNode* b;
  bool ok = true;
  std::vector<const ir::For*> stack;
  void visit(const ir::For* op) override {
    stack.push_back(op);
    IRVisitor::visit(op);
    stack.pop_back();
  }
  void visit(const ir::Mma* op) override {
    if (op->c.buffer.get() != b) return;
    std::vector<const ir::For*> chain = constant_chain(stack, op);
    std::set<const ir::VarNode*> vars;
    for (const ir::For* f : chain) vars.insert(f->var.node());
    for (const ir::VarNode* v : vars_in(op->c.offset)) ok = ok && vars.count(v);
    ok = ok && trips(chain) <= kMaxUnrolled;
  }
};

// The outermost statements under s (through Seq, Let and For bodies) that use b only as Mma C
// operands: loops, or several Mmas (a lone Mma gains nothing from the round trip).
void find_regions(const Stmt& s, const ir::BufferNode* b, Regions* regions) {
  if (!s) return;
  Uses u;
  u.visit_stmt(s);
  if (!u.mma_c[b]) return;
  if (!u.other[b]) {
    if (u.mma_c[b] > 1 || s.as<ir::For>()) (*regions)[s.get()].push_back(b);
    return;
  }
  if (const auto* seq = s.as<ir::Seq>())
    for (const Stmt& x : seq->stmts) find_regions(x, b, regions);
  else if (const auto* let = s.as<ir::Let>())
    find_regions(let->body, b, regions);
  else if (const auto* loop = s.as<ir::For>())
    find_regions(loop->body, b, regions);
}

// The unit every Mma on `node` uses, where the buffer can be held in its registers.
const MatrixUnit* holdable(const Buffer& buf, const Uses& all, const Features& device) {
  const ir::BufferNode* node = buf.get();
  auto found = all.mmas.find(node);
  if (node->scope != Scope::Local || found == all.mmas.end() || node->shape.size() != 1) return nullptr;
  const MatrixUnit* u = find_matrix_unit(found->second.front()->unit);
  const auto& units = device.coopmat_units;
  if (!u || u->family != "coopmat" || node->dtype != u->c_type ||
      std::find(units.begin(), units.end(), u->name) == units.end())
    return nullptr;
  // an f32 accumulator that atomics update is held as int bits by the emitter (compare-and-swap)
  if (node->dtype == f32 && all.atomics.count(node)) return nullptr;
  const int64_t regs = u->c_regs();
  bool ok = regs > 0;
  for (const ir::Mma* op : found->second)
    ok = ok && op->unit == u->name && is_multiple_of(op->c.offset, regs);
  std::optional<int64_t> n = buf.const_numel();
  return ok && n && *n % regs == 0 ? u : nullptr;
}

// The outermost loop of each constant chain around an Mma on a buffer of `unroll`, inside one of
// that buffer's regions.
struct UnrollRoots : IRVisitor {
  const Regions* regions;
  const std::set<const ir::BufferNode*>* unroll;
  std::map<const ir::BufferNode*, int> inside;  // regions of the buffer entered
  std::vector<const ir::For*> stack;
  std::set<const ir::For*> roots;
  void visit(const ir::For* op) override {
    enter(op);
    stack.push_back(op);
    IRVisitor::visit(op);
    stack.pop_back();
    leave(op);
  }
  void visit(const ir::Seq* op) override {
    enter(op);
    IRVisitor::visit(op);
    leave(op);
  }
  void visit(const ir::Let* op) override {
    enter(op);
    IRVisitor::visit(op);
    leave(op);
  }
  void visit(const ir::If* op) override {
    enter(op);
    IRVisitor::visit(op);
    leave(op);
  }
  void visit(const ir::Mma* op) override {
    const ir::BufferNode* b = op->c.buffer.get();
    if (!unroll->count(b) || !inside[b]) return;
    std::vector<const ir::For*> chain = constant_chain(stack, op);
    if (!chain.empty()) roots.insert(chain.back());
  }
  void enter(const ir::StmtNode* s) {
    if (auto it = regions->find(s); it != regions->end())
      for (const ir::BufferNode* b : it->second) ++inside[b];
  }
  void leave(const ir::StmtNode* s) {
    if (auto it = regions->find(s); it != regions->end())
      for (const ir::BufferNode* b : it->second) --inside[b];
  }
};

// Each root loop nest → its body once per iteration, the loop variables constant, in order; the
// copies are spliced into the enclosing sequence.
class Unroll : public IRMutator {
 public:
  explicit Unroll(const std::set<const ir::For*>& roots) : roots_(roots) {}

  Stmt visit(const ir::For* op, const Stmt& self) override {
    if (!roots_.count(op)) return IRMutator::visit(op, self);
    std::vector<Stmt> copies;
    expand(self, {}, &copies);
    Stmt out = make_seq(std::move(copies), op->loc);
    unrolled_.insert(out.get());
    return out;
  }

  Stmt visit(const ir::Seq* op, const Stmt& self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
      Stmt m = mutate(s);
      changed = changed || !m.same_as(s);
      if (const auto* seq = m.as<ir::Seq>(); seq && unrolled_.count(m.get()))
        stmts.insert(stmts.end(), seq->stmts.begin(), seq->stmts.end());
      else
        stmts.push_back(m);
    }
    return changed ? make_seq(std::move(stmts), op->loc) : self;
  }

 private:
  // The loops of a chain, outermost first, down to its Mma: one copy per assignment.
  void expand(const Stmt& s, std::vector<std::pair<Var, Expr>> values, std::vector<Stmt>* out) {
    if (const auto* f = s.as<ir::For>()) {
      const int64_t lo = *f->min.as_int(), n = *f->extent.as_int();
      for (int64_t i = lo; i < lo + n; ++i) {
        values.push_back({f->var, Expr(i)});
        expand(f->body, values, out);
        values.pop_back();
      }
      return;
    }
    out->push_back(simplify_stmt(substitute(s, values)));
  }

  const std::set<const ir::For*>& roots_;
  std::set<const ir::StmtNode*> unrolled_;
};

// s with a hold around each region statement (the first buffer outermost), reached through Seq,
// Let and For bodies as find_regions reaches them.
Stmt wrap_regions(const Stmt& s, const Regions& regions,
                  const std::map<const ir::BufferNode*, Buffer>& buffers,
                  const std::map<const ir::BufferNode*, const MatrixUnit*>& units) {
  if (!s) return s;
  Stmt out = s;
  if (const auto* seq = s.as<ir::Seq>()) {
    auto n = std::make_shared<ir::Seq>(*seq);
    for (Stmt& x : n->stmts) x = wrap_regions(x, regions, buffers, units);
    out = Stmt(std::move(n));
  } else if (const auto* let = s.as<ir::Let>()) {
    auto n = std::make_shared<ir::Let>(*let);
    n->body = wrap_regions(let->body, regions, buffers, units);
    out = Stmt(std::move(n));
  } else if (const auto* loop = s.as<ir::For>()) {
    auto n = std::make_shared<ir::For>(*loop);
    n->body = wrap_regions(loop->body, regions, buffers, units);
    out = Stmt(std::move(n));
  }
  auto it = regions.find(s.get());
  if (it == regions.end()) return out;
  for (auto b = it->second.rbegin(); b != it->second.rend(); ++b) {
    auto h = std::make_shared<ir::Hold>(s->loc);
    h->buffer = buffers.at(*b);
    h->unit = units.at(*b)->name;
    h->body = out;
    out = Stmt(std::move(h));
  }
  return out;
}

class HoldAccumulators : public IRMutator {
 public:
  explicit HoldAccumulators(const Features& device) : device_(device) {}

  Stmt visit(const ir::Kernel* op, const Stmt& self) override {
    if (device_.subgroup_size != 32 || op->threads % 32 != 0) return self;
    Uses all;
    all.visit_stmt(op->body);
    std::map<const ir::BufferNode*, const MatrixUnit*> units;
    std::map<const ir::BufferNode*, Buffer> buffers;
    std::vector<const ir::BufferNode*> order;
    Regions regions;
    std::set<const ir::BufferNode*> unroll;
    for (const Buffer& b : op->buffers) {
      const MatrixUnit* u = holdable(b, all, device_);
      if (!u) continue;
      Regions mine;
      find_regions(op->body, b.get(), &mine);
      if (mine.empty()) continue;
      units[b.get()] = u;
      buffers[b.get()] = b;
      order.push_back(b.get());
      for (auto& [s, bufs] : mine) regions[s].insert(regions[s].end(), bufs.begin(), bufs.end());
      ConstantNests nests(b.get());
      nests.visit_stmt(op->body);
      if (nests.ok) unroll.insert(b.get());
    }
    if (order.empty()) return self;
    UnrollRoots roots;
    roots.regions = &regions;
    roots.unroll = &unroll;
    roots.visit_stmt(op->body);
    Stmt body = Unroll(roots.roots).mutate(op->body);
    // The unrolled body has new nodes: find the regions again (unrolling changes no use).
    regions.clear();
    for (const ir::BufferNode* b : order) find_regions(body, b, &regions);
    auto k = std::make_shared<ir::Kernel>(*op);
    k->body = wrap_regions(body, regions, buffers, units);
    return Stmt(std::move(k));
  }

 private:
  const Features& device_;
};

}  // namespace

Function hold_accumulators(const Function& f, const Features& device) {
  HoldAccumulators pass(device);
  return pass.mutate_function(f);
}

}  // namespace tg::vulkan
