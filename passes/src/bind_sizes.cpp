// bind_sizes and infer_sizes: from symbolic sizes to the constants of one launch.
#include "tilegen/passes/bind_sizes.h"

#include "tilegen/ir/visitor.h"
#include "tilegen/passes/range_analysis.h"

namespace tg {

using namespace ir;

namespace {

std::string size_names(const Function& f) {
  std::string out;
  for (auto& v : f.sizes()) out += (out.empty() ? "" : ", ") + v.name();
  return out.empty() ? "(none)" : out;
}

std::string tensor_names(const Function& f) {
  std::string out;
  for (auto& t : f.tensors()) out += (out.empty() ? "" : ", ") + t->name;
  return out;
}

class SizeBinder : public IRMutator {
 public:
  explicit SizeBinder(std::vector<std::pair<const VarNode*, Expr>> m) : map_(std::move(m)) {}
  Expr visit(const VarNode* op, const Expr& self) override {
    for (auto& [v, e] : map_)
      if (v == op) return e;
    return self;
  }

 private:
  std::vector<std::pair<const VarNode*, Expr>> map_;
};

const Param* size_param(const Function& f, const VarNode* v) {
  for (auto& p : f.params)
    if (p.kind == Param::Kind::Size && p.var.get() == v) return &p;
  return nullptr;
}

}  // namespace

Function bind_sizes(const Function& f, const std::map<std::string, int64_t>& sizes) {
  std::vector<std::pair<const VarNode*, Expr>> map;
  for (auto& [name, value] : sizes) {
    const Param* p = f.find_param(name);
    if (!p || p->kind != Param::Kind::Size)
      throw Error("bind_sizes: " + f.name + " has no size parameter named '" + name + "'; its sizes are " +
                      size_names(f),
                  f.loc);
    Interval fits = type_range(p->var.dtype());
    if (value <= 0 || value > fits.hi)
      throw Error("bind_sizes: size " + name + " = " + std::to_string(value) + " of " + f.name +
                      "; a size must be positive and fit in " + std::string(p->var.dtype().name()),
                  p->var->loc.known() ? p->var->loc : f.loc);
    map.emplace_back(p->var.node(), make_int(value, p->var.dtype()));
  }
  SizeBinder binder(map);
  Function out = binder.mutate_function(f);
  std::erase_if(out.params, [&](const Param& p) {
    if (p.kind != Param::Kind::Size) return false;
    for (auto& [v, e] : map)
      if (v == p.var.get()) return true;
    return false;
  });
  return out;
}

namespace {

std::string dim_name(const Buffer& t, std::size_t d) {
  return "tensor " + t->name + " dimension " + std::to_string(d);
}

// Binds sizes from dimensions that are exactly a size; checks constant dimensions.
void bind_direct(const Function& f, const Buffer& t, const std::vector<int64_t>& shape,
                 std::map<const VarNode*, std::pair<int64_t, std::string>>& bound) {
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const Expr& dim = t->shape[d];
    if (shape[d] < 0)
      throw Error(dim_name(t, d) + " is " + std::to_string(shape[d]) + "; dimensions cannot be negative",
                  t->loc);
    if (auto c = dim.as_int()) {
      if (*c != shape[d])
        throw Error(dim_name(t, d) + " is " + std::to_string(shape[d]) + " but " + f.name +
                        " was built for " + std::to_string(*c),
                    t->loc);
      continue;
    }
    auto* v = dim.as<VarNode>();
    if (!v || !size_param(f, v)) continue;
    auto [it, fresh] = bound.try_emplace(v, shape[d], dim_name(t, d));
    if (!fresh && it->second.first != shape[d])
      throw Error("size " + v->name + " is " + std::to_string(it->second.first) + " from " +
                      it->second.second + " but " + std::to_string(shape[d]) + " from " + dim_name(t, d) +
                      "; the tensors' shapes disagree",
                  t->loc);
  }
}

}  // namespace

std::map<std::string, int64_t> infer_sizes(const Function& f,
                                           const std::vector<std::vector<int64_t>>& tensor_shapes) {
  std::vector<Buffer> tensors = f.tensors();
  if (tensor_shapes.size() != tensors.size())
    throw Error(f.name + " takes " + std::to_string(tensors.size()) + " tensors (" + tensor_names(f) +
                    ") but " + std::to_string(tensor_shapes.size()) + " shapes were given",
                f.loc);
  std::map<const VarNode*, std::pair<int64_t, std::string>> bound;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Buffer& t = tensors[i];
    if (tensor_shapes[i].size() != t.rank())
      throw Error("tensor " + t->name + " of " + f.name + " has rank " + std::to_string(t.rank()) +
                      " but a shape of rank " + std::to_string(tensor_shapes[i].size()) + " was given",
                  t->loc);
    bind_direct(f, t, tensor_shapes[i], bound);
  }
  std::map<std::string, int64_t> out;
  std::vector<std::pair<Var, Expr>> subst;
  for (auto& v : f.sizes()) {
    auto it = bound.find(v.node());
    if (it == bound.end())
      throw Error("size " + v.name() + " is not the dimension of any tensor of " + f.name +
                      "; make it one tensor dimension, or pass it as a scalar",
                  v->loc.known() ? v->loc : f.loc);
    out[v.name()] = it->second.first;
    subst.emplace_back(v, make_int(it->second.first, v.dtype()));
  }
  // Dimensions computed from sizes (N * 2, N + 1) must agree once the sizes are known.
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (std::size_t d = 0; d < tensors[i].rank(); ++d) {
      const Expr& dim = tensors[i]->shape[d];
      if (dim.as_int() || dim.as<VarNode>()) continue;
      auto value = substitute(dim, subst).as_int();
      if (value && *value != tensor_shapes[i][d])
        throw Error(dim_name(tensors[i], d) + " is " + std::to_string(tensor_shapes[i][d]) +
                        " but its shape gives " + std::to_string(*value) + " for these sizes",
                    tensors[i]->loc);
    }
  }
  return out;
}

}  // namespace tg
