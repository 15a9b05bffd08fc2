// bind_sizes and infer_sizes: from symbolic sizes to the constants of one launch.
#include "tilegen/passes/bind_sizes.h"

#include "tilegen/ir/printer.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/grid_limits.h"
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

PassEntry bind_sizes_pass(std::map<std::string, int64_t> sizes) {
  return {kBindSizesPass, [sizes = std::move(sizes)](const Function& f, const TargetInfo& info) {
            Function bound = sizes.empty() ? f : bind_sizes(f, sizes);
            check_grid_limits(bound, info);  // every target's grid limit, in one place
            return bound;
          }};
}

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// How infer_sizes names the tensors of one call and where it reports.
struct Reporter {
  const Function& f;
  const LaunchSite& site;
  std::vector<Buffer> tensors;

  std::string label(std::size_t i) const {
    return i < site.labels.size() ? site.labels[i] : "tensor " + tensors[i]->name;
  }
  SourceLoc at(const SourceLoc& node) const {
    if (site.loc.known()) return site.loc;
    return node.known() ? node : f.loc;
  }
};

void check_ranks(const Reporter& r, const std::vector<std::vector<int64_t>>& shapes) {
  const Function& f = r.f;
  if (shapes.size() != r.tensors.size())
    throw Error(f.name + " takes " + std::to_string(r.tensors.size()) + " tensors (" + tensor_names(f) +
                    ") but " + std::to_string(shapes.size()) + " shapes were given",
                r.at(f.loc));
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    const Buffer& t = r.tensors[i];
    if (shapes[i].size() != t.rank())
      throw Error(r.label(i) + " of " + f.name + " has rank " + std::to_string(t.rank()) +
                      " but a shape of rank " + std::to_string(shapes[i].size()) + " was given",
                  r.at(t->loc));
    for (std::size_t d = 0; d < shapes[i].size(); ++d)
      if (shapes[i][d] < 0)
        throw Error(r.label(i) + ": dimension " + std::to_string(d) + " is " + std::to_string(shapes[i][d]) +
                        "; dimensions cannot be negative",
                    r.at(t->loc));
  }
}

// Each size takes the value of the first dimension that is exactly it.
std::map<const VarNode*, int64_t> bind_direct(const Reporter& r,
                                              const std::vector<std::vector<int64_t>>& shapes) {
  std::map<const VarNode*, int64_t> bound;
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    const Buffer& t = r.tensors[i];
    for (std::size_t d = 0; d < shapes[i].size(); ++d) {
      auto* v = t->shape[d].as<VarNode>();
      if (!v || !size_param(r.f, v) || bound.count(v)) continue;
      int64_t value = shapes[i][d];
      // bind_sizes needs a positive value the size's type holds; say so here, naming the tensor.
      if (value <= 0 || value > type_range(v->dtype).hi)
        throw Error(r.label(i) + ": dimension " + std::to_string(d) + " is " + std::to_string(value) +
                        ", which binds size '" + v->name + "': a size must be positive and fit in " +
                        std::string(v->dtype.name()),
                    r.at(t->loc));
      bound[v] = value;
    }
  }
  return bound;
}

// Every dimension, constant or computed from the sizes, must equal the given one.
void check_shapes(const Reporter& r, const std::vector<std::vector<int64_t>>& shapes,
                  const std::vector<std::pair<Var, Expr>>& sizes) {
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    const Buffer& t = r.tensors[i];
    std::vector<int64_t> want;
    std::string sym;
    bool symbolic = false;
    for (std::size_t d = 0; d < t.rank(); ++d) {
      const Expr& dim = t->shape[d];
      auto value = substitute(dim, sizes).as_int();
      if (!value)
        throw Error(r.label(i) + ": dimension " + std::to_string(d) + " of the kernel's shape (" +
                        print(dim) + ") cannot be computed from the sizes at launch",
                    r.at(t->loc));
      want.push_back(*value);
      symbolic |= !dim.as_int();
      sym += (d ? ", " : "") + print(dim);
    }
    if (want != shapes[i])
      throw Error(r.label(i) + ": shape " + shape_text(shapes[i]) + " does not match the kernel's " +
                      (symbolic ? "[" + sym + "] = " : "") + shape_text(want),
                  r.at(t->loc));
  }
}

}  // namespace

std::map<std::string, int64_t> infer_sizes(const Function& f,
                                           const std::vector<std::vector<int64_t>>& tensor_shapes,
                                           const LaunchSite& site) {
  Reporter r{f, site, f.tensors()};
  check_ranks(r, tensor_shapes);
  std::map<const VarNode*, int64_t> bound = bind_direct(r, tensor_shapes);
  std::map<std::string, int64_t> out;
  std::vector<std::pair<Var, Expr>> subst;
  for (auto& v : f.sizes()) {
    auto it = bound.find(v.node());
    if (it == bound.end())
      throw Error("kernel '" + f.name + "': size '" + v.name() +
                      "' is not a dimension of any tensor parameter, so a launch cannot bind it: use it as a "
                      "tensor's dimension, or make it a scalar parameter",
                  r.at(v->loc));
    out[v.name()] = it->second;
    subst.emplace_back(v, make_int(it->second, v.dtype()));
  }
  check_shapes(r, tensor_shapes, subst);
  return out;
}

}  // namespace tg
