// The matrix-unit registry and the coverage check. The descriptions themselves are generated in
// matrix_unit_tables.cpp; this file only stores, validates and looks them up.
#include "tilegen/ir/matrix_unit.h"

#include <deque>
#include <mutex>

#include "tilegen/ir/error.h"

namespace tg {

std::vector<MatrixUnit> builtin_matrix_units();  // matrix_unit_tables.cpp

namespace {

// Checks one operand: `layout` holds group_size × regs slots that must cover a rows × cols tile
// exactly once.
void check_operand(const MatrixUnit& u, const char* operand, const std::vector<MatrixUnit::Slot>& layout,
                   int rows, int cols) {
  std::string where = "matrix unit " + u.name + ", operand " + operand;
  if (layout.empty() || layout.size() % std::size_t(u.group_size) != 0)
    throw Error(where + ": the layout has " + std::to_string(layout.size()) +
                " slots, not a multiple of the group size " + std::to_string(u.group_size));
  if (layout.size() != std::size_t(rows) * std::size_t(cols))
    throw Error(where + ": the layout has " + std::to_string(layout.size()) + " slots for a " +
                std::to_string(rows) + "x" + std::to_string(cols) +
                " tile; every element must be held exactly once");
  std::vector<int> seen(std::size_t(rows) * cols, -1);
  int regs = int(layout.size()) / u.group_size;
  for (std::size_t s = 0; s < layout.size(); ++s) {
    auto [r, c] = layout[s];
    std::string slot = "lane " + std::to_string(int(s) / regs) + " register " + std::to_string(int(s) % regs);
    if (r < 0 || r >= rows || c < 0 || c >= cols)
      throw Error(where + ": " + slot + " holds (" + std::to_string(r) + ", " + std::to_string(c) +
                  "), outside the " + std::to_string(rows) + "x" + std::to_string(cols) + " tile");
    int& owner = seen[std::size_t(r) * cols + c];
    if (owner >= 0)
      throw Error(where + ": element (" + std::to_string(r) + ", " + std::to_string(c) +
                  ") is held by both lane " + std::to_string(owner / regs) + " register " +
                  std::to_string(owner % regs) + " and " + slot);
    owner = int(s);
  }
}

bool same_slots(const std::vector<MatrixUnit::Slot>& a, const std::vector<MatrixUnit::Slot>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].row != b[i].row || a[i].col != b[i].col) return false;
  return true;
}

bool same_unit(const MatrixUnit& a, const MatrixUnit& b) {
  return a.family == b.family && a.m == b.m && a.n == b.n && a.k == b.k && a.group_size == b.group_size &&
         a.a_type == b.a_type && a.b_type == b.b_type && a.c_type == b.c_type &&
         same_slots(a.a_layout, b.a_layout) && same_slots(a.b_layout, b.b_layout) &&
         same_slots(a.c_layout, b.c_layout);
}

// A deque keeps the pointers find_matrix_unit hands out valid while plugins add units.
struct Registry {
  std::mutex mu;
  std::deque<MatrixUnit> units;

  Registry() {
    for (auto& u : builtin_matrix_units()) add(std::move(u));
  }
  const MatrixUnit* find(const std::string& name) const {
    for (auto& u : units)
      if (u.name == name) return &u;
    return nullptr;
  }
  void add(MatrixUnit u) {
    u.check();
    if (const MatrixUnit* old = find(u.name)) {
      if (same_unit(*old, u)) return;  // a plugin loaded twice registers the same data twice
      throw Error("matrix unit " + u.name +
                  " is already registered with a different description; give the new one "
                  "another name");
    }
    units.push_back(std::move(u));
  }
};

Registry& registry() {
  static Registry r;  // thread-safe initialisation (C++11 magic statics)
  return r;
}

}  // namespace

void MatrixUnit::check() const {
  if (m <= 0 || n <= 0 || k <= 0 || group_size <= 0)
    throw Error("matrix unit " + name + ": shape " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k) + " with group size " + std::to_string(group_size) + " is not positive");
  check_operand(*this, "A", a_layout, m, k);
  check_operand(*this, "B", b_layout, k, n);
  check_operand(*this, "C", c_layout, m, n);
}

void register_matrix_unit(MatrixUnit unit) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.add(std::move(unit));
}

const MatrixUnit* find_matrix_unit(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.find(name);
}

std::vector<std::string> matrix_unit_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (auto& u : r.units) out.push_back(u.name);
  return out;
}

}  // namespace tg
