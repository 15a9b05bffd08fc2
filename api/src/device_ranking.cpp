// Target::select()'s order of devices, read off each device's TargetInfo: no plugin is named
// here, so a new target is ranked by what its probe() reports, like the ones in the tree.
//
//   tier 0  a hardware GPU through its vendor's own target    cuda, hip
//   tier 1  a hardware GPU through a portable API (portable)  vulkan on a GPU
//   tier 2  the native CPU (is_cpu)                           cpu
//   tier 3  a software device (software)                      vulkan on lavapipe, interp
//
// Within a tier the order is the discovery order (plugins by file name in each directory, then
// each plugin's own device order, interp always last), so the sort is stable.
#include <algorithm>

#include "tilegen/runtime.h"

namespace tg {

namespace {

int tier(const TargetInfo& d) {
  if (d.software) return 3;
  if (d.is_cpu) return 2;
  return d.portable ? 1 : 0;
}

}  // namespace

std::vector<DeviceChoice> selection_order(const std::vector<TargetStatus>& all) {
  std::vector<DeviceChoice> out;
  for (std::size_t t = 0; t < all.size(); ++t)
    if (all[t].available)
      for (std::size_t i = 0; i < all[t].devices.size(); ++i) out.push_back({t, int(i)});
  std::stable_sort(out.begin(), out.end(), [&](const DeviceChoice& a, const DeviceChoice& b) {
    return tier(all[a.target].devices[std::size_t(a.device)]) <
           tier(all[b.target].devices[std::size_t(b.device)]);
  });
  return out;
}

}  // namespace tg
