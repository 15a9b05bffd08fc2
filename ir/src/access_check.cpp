// The access record's host side (see access_check.h): one formatter for every target.
#include "tilegen/ir/access_check.h"

#include "tilegen/ir/printer.h"
#include "tilegen/ir/visitor.h"

namespace tg {

using namespace ir;

namespace {

struct FindSite : IRVisitor {
  int site = 0;
  const AccessCheck* found = nullptr;
  using IRVisitor::visit;
  void visit(const AccessCheck* op) override {
    if (op->site == site && !found) found = op;
    IRVisitor::visit(op);
  }
};

int64_t signed_word(uint32_t w) { return int64_t(int32_t(w)); }

std::string list_text(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

std::string where_text(const AccessCheck& c, const uint32_t* words) {
  std::vector<std::string> block;
  for (std::size_t d = 0; d < c.block.size() && d < 3; ++d)
    block.push_back(std::to_string(signed_word(words[kAccessRecordBlock + d])));
  std::string s = block.size() == 1 ? "block " + block[0] : "block (" + list_text(block) + ")";
  int64_t thread = signed_word(words[kAccessRecordThread]);
  return s + (thread < 0 ? " in a parallel loop" : " thread " + std::to_string(thread));
}

}  // namespace

Buffer make_access_record() {
  return Buffer::make(kAccessRecordName, {make_int(kAccessRecordWords)}, u32, Scope::Global);
}

const Param* find_access_record(const Function& f) {
  const Param* p = f.find_param(kAccessRecordName);
  return p && p->kind == Param::Kind::Tensor ? p : nullptr;
}

std::optional<Error> access_error(const Function& lowered, const uint32_t* words) {
  if (words[kAccessRecordSite] == 0) return std::nullopt;
  FindSite find;
  find.site = int(words[kAccessRecordSite] - 1);
  find.visit_stmt(lowered.body);
  if (!find.found)
    return Error("kernel '" + lowered.name + "' reported an out-of-range access at check " +
                     std::to_string(find.site) + ", which it does not have: the access record is corrupt",
                 lowered.loc);
  return access_error(*find.found, words);
}

std::vector<uint32_t> access_record(const AccessCheck& check, const std::vector<int64_t>& block,
                                    int64_t thread, const std::vector<int64_t>& indices) {
  std::vector<uint32_t> w(kAccessRecordWords, 0);
  w[kAccessRecordSite] = uint32_t(check.site + 1);
  for (std::size_t d = 0; d < block.size() && d < 3; ++d) w[kAccessRecordBlock + d] = uint32_t(block[d]);
  w[kAccessRecordThread] = uint32_t(thread);
  for (std::size_t d = 0; d < indices.size() && d < std::size_t(kAccessRecordMaxIndices); ++d) {
    w[kAccessRecordIndex + 2 * d] = uint32_t(uint64_t(indices[d]));
    w[kAccessRecordIndex + 2 * d + 1] = uint32_t(uint64_t(indices[d]) >> 32);
  }
  return w;
}

Error access_error(const AccessCheck& c, const uint32_t* words) {
  std::vector<std::string> index, shape;
  for (std::size_t d = 0; d < c.indices.size(); ++d) {
    if (d == std::size_t(kAccessRecordMaxIndices)) {
      index.push_back("...");
      break;
    }
    const uint32_t* w = words + kAccessRecordIndex + 2 * d;
    index.push_back(std::to_string(int64_t(uint64_t(w[0]) | uint64_t(w[1]) << 32)));
  }
  for (const Expr& e : c.shape) shape.push_back(print(e));
  const char* verb = c.access == AccessKind::Load    ? "load from"
                     : c.access == AccessKind::Store ? "store to"
                                                     : "atomic on";
  return Error("out-of-range " + std::string(verb) + " " + c.buffer + "[" + list_text(index) + "] (shape {" +
                   list_text(shape) + "}) by " + where_text(c, words) +
                   "; each index must lie in [0, extent)",
               c.loc);
}

}  // namespace tg
