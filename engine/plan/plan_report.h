#pragma once
// The plan as the report shows it: JSON for the run log and the editor
// (every number and every reason), Markdown for people (the regions on the
// roofline, the steps with their budgets, and the decisions in order).
#include <string>

#include <nlohmann/json.hpp>

#include "engine/plan/escalation.h"
#include "engine/plan/planner.h"

namespace hiera::engine::plan {

nlohmann::json to_json(const GpuCeilings& ceilings);
nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const Decision& decision);

// Markdown: a roofline line, a table of regions, a table of steps, why each
// region stands where it does, and the numbered decisions. Table cells have
// their '|' escaped.
std::string to_markdown(const Plan& plan);

}  // namespace hiera::engine::plan
