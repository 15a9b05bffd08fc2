#include "null_device.h"

#include "tilegen/ir/parser.h"

namespace tg::null_target {

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
  interpret_launch(*static_cast<const Function*>(loaded.get()), args);
}

}  // namespace tg::null_target
