// plan_shared_memory (see the header).
#include "tilegen/passes/shared_memory_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "tilegen/ir/buffer_access.h"

namespace tg {

namespace {

// The shared buffers one statement reads or writes, each once.
std::vector<const ir::BufferNode*> shared_buffers_used(const Stmt& s) {
  std::vector<const ir::BufferNode*> found;
  for_each_buffer_access(s, [&](const Buffer& b, BufferAccess) {
    if (b->scope == Scope::Shared && std::find(found.begin(), found.end(), b.get()) == found.end())
      found.push_back(b.get());
  });
  return found;
}

struct Life {
  Buffer buffer;
  int64_t bytes = 0;
  int first = -1, last = -1;
  int64_t align = 16;  // a swizzled tile: 1024, the period of the hardware's 128-byte swizzle;
                       // a bulk copy's destination: 128
};

// Whether a and b may overlap in memory: one dies, a barrier passes, then the other is born.
bool may_share(const Life& a, const Life& b, const std::vector<int>& barriers) {
  if (a.first < 0 || b.first < 0) return true;  // a buffer never used holds nothing
  const Life& early = a.last < b.first ? a : b;
  const Life& late = a.last < b.first ? b : a;
  if (early.last >= late.first) return false;
  return std::any_of(barriers.begin(), barriers.end(),
                     [&](int i) { return i > early.last && i < late.first; });
}

}  // namespace

SharedMemoryPlan plan_shared_memory(const ir::Kernel& k,
                                    const std::function<int64_t(const Buffer&)>& bytes_of, int64_t limit,
                                    const std::string& device_name) {
  std::vector<Stmt> top = k.body.as<ir::Seq>() ? k.body.as<ir::Seq>()->stmts : std::vector<Stmt>{k.body};
  std::vector<Life> lives;
  std::map<const ir::BufferNode*, std::size_t> index;
  // A bulk copy's destination: 128 bytes, where the copy engine writes boxes (bulk_copies.h).
  struct BulkDsts : IRVisitor {
    std::set<const ir::BufferNode*> dst;
    using IRVisitor::visit;
    void visit(const ir::BulkCopy* op) override { dst.insert(op->dst.buffer.get()); }
  } bulk;
  bulk.visit_stmt(k.body);
  for (const Buffer& b : k.buffers)
    if (b->scope == Scope::Shared)
      index[b.get()] = lives.size(),
      lives.push_back({b, (bytes_of(b) + 15) / 16 * 16, -1, -1,
                       b->layout.kind == Layout::Kind::Swizzle ? 1024 : bulk.dst.count(b.get()) ? 128 : 16});
  std::vector<int> barriers;
  for (int i = 0; i < int(top.size()); ++i) {
    if (top[std::size_t(i)]->kind == ir::StmtKind::Barrier) barriers.push_back(i);
    for (const ir::BufferNode* b : shared_buffers_used(top[std::size_t(i)])) {
      auto it = index.find(b);
      if (it == index.end()) continue;
      Life& l = lives[it->second];
      if (l.first < 0) l.first = i;
      l.last = i;
    }
  }
  std::vector<std::size_t> order(lives.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return lives[a].bytes > lives[b].bytes; });
  std::vector<int64_t> offset(lives.size(), -1);
  SharedMemoryPlan plan;
  for (std::size_t i : order) {
    int64_t at = 0;
    const int64_t align = lives[i].align;
    for (bool moved = true; moved;) {  // first fit: bump past every placed conflicting buffer
      moved = false;
      for (std::size_t j : order) {
        if (offset[j] < 0 || may_share(lives[i], lives[j], barriers)) continue;
        if (at < offset[j] + lives[j].bytes && offset[j] < at + lives[i].bytes)
          at = (offset[j] + lives[j].bytes + align - 1) / align * align, moved = true;
      }
    }
    offset[i] = at;
    plan.bytes = std::max(plan.bytes, at + lives[i].bytes);
  }
  for (std::size_t i = 0; i < lives.size(); ++i) plan.offsets.emplace_back(lives[i].buffer, offset[i]);
  if (plan.bytes > limit) {
    std::vector<const Life*> big;
    for (const Life& l : lives) big.push_back(&l);
    std::sort(big.begin(), big.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
    std::string list;
    for (const Life* l : big)
      list += (list.empty() ? "" : ", ") + l->buffer->name + " (" + std::to_string(l->bytes) + " B)";
    throw Error("the kernel needs " + std::to_string(plan.bytes) + " bytes of shared memory but " +
                    device_name + " offers " + std::to_string(limit) +
                    " per block; shrink the block's tiles: " + list,
                k.loc);
  }
  return plan;
}

}  // namespace tg
