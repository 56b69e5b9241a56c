#include "engine/plan/device_spaces.h"

#include <algorithm>

namespace hiera::engine::plan {

std::string restrict_to_device(PlanContext& context) {
  if (context.cuda) return "";
  std::string removed;
  for (const knowledge::Space space : context.allowed_spaces) {
    if (space != knowledge::Space::S1) removed += (removed.empty() ? "" : ", ") + std::string(knowledge::to_string(space));
  }
  if (removed.empty()) return "";
  std::erase_if(context.allowed_spaces, [](knowledge::Space space) { return space != knowledge::Space::S1; });
  return "the run is on the CPU: " + removed + " left out (CUDA only); " +
         (context.allowed_spaces.empty() ? std::string("the spec allows no S1, so nothing is planned")
                                         : std::string("S1 (PyTorch operators) only"));
}

}  // namespace hiera::engine::plan
