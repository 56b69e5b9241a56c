#include "server/features/estimate_target.h"

#include "engine/facade/cost_estimates.h"

namespace hiera::server {

EstimateTarget estimate_target(const engine::knowledge::KnowledgeBase& knowledge, const nlohmann::json& setting) {
  EstimateTarget out;
  if (!setting.is_null() && !setting.is_string()) {
    out.problem = "settings: gpu: " + setting.dump() + " is not a GPU; accepted: " + knowledge.accepted_gpus();
    return out;
  }
  const std::string id = setting.is_string() ? setting.get<std::string>() : kDefaultGpu;
  const auto* gpu = knowledge.gpu(id);
  if (!gpu) {
    out.label = id;
    out.problem = "settings: gpu: unknown GPU \"" + id + "\"; accepted: " + knowledge.accepted_gpus();
    return out;
  }
  std::string label = gpu->name.substr(0, gpu->name.find(" ("));
  if (label.rfind("NVIDIA ", 0) == 0) label.erase(0, 7);
  out.label = label.empty() ? gpu->id : label;
  out.roofline = engine::facade::estimate_roofline(*gpu);
  return out;
}

}  // namespace hiera::server
