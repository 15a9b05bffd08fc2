#include "null_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/parser.h"

namespace tg::null_target {

// Host memory stands in for the device's. (A target that really runs on the host derives its
// context from tilegen/host_device_context.h instead, which does this once for cpu and interp.)
void* NullContext::allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
  if (!p) throw Error("null: out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void NullContext::release(void* ptr) { std::free(ptr); }

void NullContext::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void NullContext::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

std::shared_ptr<void> NullContext::load(const Artifact& a, const Function& lowered) {
  Function module = parse_function(a.source, "null artifact of " + lowered.name);
  if (module.name != a.entry)
    throw Error("null: the artifact's entry is '" + a.entry + "' but its source defines '" + module.name +
                "'");
  return std::make_shared<Function>(std::move(module));
}

void NullContext::launch(const std::shared_ptr<void>& loaded, const Function&,
                         const std::vector<LaunchArg>& args) {
  if (!loaded) throw Error("null: launch of a kernel that load() did not return");
  std::vector<HostArg> host;
  host.reserve(args.size());
  for (const LaunchArg& a : args) host.push_back({a.device_ptr, a.shape, a.dtype, a.scalar, a.is_tensor});
  InterpretOptions opt;
  opt.report_access_record = false;  // with check_bounds=all the runtime reads the record itself
  interpret(*static_cast<const Function*>(loaded.get()), host, opt);
}

}  // namespace tg::null_target
