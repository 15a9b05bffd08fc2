// The registry of sample kernels, and parameter resolution.
#include <algorithm>
#include <sstream>

#include "sample_support.h"

namespace tg::samples {

const std::vector<Sample>& all() {
  static const std::vector<Sample> samples = [] {
    using namespace detail;
    std::vector<Sample> v{gemm_sample(),    gemm_relu_sample(),       softmax_sample(),
                          rmsnorm_sample(), flash_attention_sample(), dequant_gemm_sample(),
                          conv2d_sample(),  block_reduce_sample(),    gemm_softmax_sample(),
                          fp8_gemm_sample()};
    for (Sample& s : v) s.tune_space = tune_space_of(s.name);
    return v;
  }();
  return samples;
}

const Sample* find(const std::string& name) {
  for (const Sample& s : all())
    if (s.name == name) return &s;
  return nullptr;
}

namespace {
std::string parameter_list(const Sample& s) {
  std::string out;
  for (const ParamInfo& p : s.params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}
}  // namespace

Params resolve(const Sample& s, const Params& overrides) {
  Params out;
  for (const ParamInfo& p : s.params) out[p.name] = p.default_value;
  for (const auto& [name, value] : overrides) {
    auto it =
        std::find_if(s.params.begin(), s.params.end(), [&](const ParamInfo& p) { return p.name == name; });
    if (it == s.params.end())
      throw Error("unknown parameter '" + name + "' for sample " + s.name +
                  "; parameters: " + parameter_list(s));
    if (value < it->min_value || value > it->max_value) {
      std::ostringstream msg;
      msg << "parameter '" << name << "' of sample " << s.name << " is " << value << "; it must be ";
      if (it->min_value == 0 && it->max_value == 1)
        msg << "0 or 1";
      else
        msg << "between " << it->min_value << " and " << it->max_value;
      throw Error(msg.str());
    }
    out[name] = value;
  }
  return out;
}

Params resolve_for(const Sample& s, const Params& overrides, const TargetInfo& target, DType t) {
  Params p = resolve(s, overrides);
  if (!s.tuned) return p;
  Params merged = overrides;
  for (const auto& [name, value] : s.tuned(target, p, t)) merged.emplace(name, value);  // the user's win
  return resolve(s, merged);  // checks the tuned names and ranges as the user's
}

}  // namespace tg::samples
