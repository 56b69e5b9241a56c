#pragma once
// The GPU the editor's estimates are for: the settings' `gpu` (a
// knowledge/gpus id or a usual name such as "H200" or "NVIDIA A100-SXM4-80GB",
// any case; "h200" when unset) resolved against the knowledge base
// (KnowledgeBase::gpu).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/facade/estimates.h"
#include "engine/facade/knowledge.h"

namespace hiera::server {

inline constexpr const char* kDefaultGpu = "h200";

struct EstimateTarget {
  std::optional<engine::GpuCeilings> roofline;  // absent when the GPU is unknown
  std::string label;    // short, for lenses: "H200" (the spec's name without "NVIDIA " and its parenthesis)
  std::string problem;  // why there is no roofline, for the user; "" when there is one
};

// `setting` is the settings' value at /gpu: null for the default, else a string id.
EstimateTarget estimate_target(const engine::knowledge::KnowledgeBase& knowledge, const nlohmann::json& setting);

}  // namespace hiera::server
