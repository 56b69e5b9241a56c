// The plan for the report (plan_report.h).
#include "engine/plan/plan_report.h"

#include "engine/plan/units.h"

namespace hiera::engine::plan {
namespace {

using nlohmann::json;

std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

json region_json(const RegionAnalysis& analysis) {
  const Region& region = analysis.region;
  const RooflinePoint& point = analysis.point;
  return {{"name", region.name},
          {"kernels", region.kernels},
          {"pattern", region.pattern},
          {"dtype", region.dtype},
          {"elements", region.elements},
          {"last_dim", region.last_dim ? json(*region.last_dim) : json(nullptr)},
          {"measured_ms", region.measured_ms},
          {"flops", region.flops},
          {"bytes", region.bytes},
          {"launches", region.launches},
          {"note", region.note},
          {"bottleneck", knowledge::to_string(point.bottleneck)},
          {"speed_of_light_ms", point.speed_of_light_ms},
          {"bound_ms", point.bound_ms},
          {"headroom_ms", point.headroom_ms},
          {"fraction_of_sol", point.fraction_of_sol},
          {"flop_ms", point.flop_ms},
          {"byte_ms", point.byte_ms},
          {"launch_ms", point.launch_ms},
          {"compute_dtype", point.compute_dtype},
          {"work_counted", point.work_counted},
          {"faster_than_light", point.faster_than_light},
          {"reason", point.reason},
          {"planned", analysis.planned},
          {"expected_speedup", analysis.expected_speedup},
          {"likelihood", analysis.likelihood},
          {"priority_ms", analysis.priority_ms}};
}

}  // namespace

json to_json(const GpuCeilings& ceilings) {
  return {{"source", ceilings.source},
          {"bandwidth_gbs", ceilings.bandwidth_gbs},
          {"tflops", ceilings.peak_tflops},
          {"launch_overhead_us", ceilings.launch_overhead_us}};
}

json to_json(const Plan& plan) {
  const PlanContext& context = plan.context;
  json spaces = json::array();
  for (const knowledge::Space space : context.allowed_spaces) spaces.push_back(knowledge::to_string(space));
  json regions = json::array();
  for (const RegionAnalysis& analysis : plan.regions) regions.push_back(region_json(analysis));
  json steps = json::array();
  for (const PlanStep& step : plan.steps) {
    steps.push_back({{"region", step.region},
                     {"space", knowledge::to_string(step.space)},
                     {"recipes", step.recipes},
                     {"budget", step.budget},
                     {"reason", step.reason}});
  }
  return {{"ceilings", to_json(plan.ceilings)},
          {"context",
           {{"allowed_spaces", spaces},
            {"allowed_precision", context.allowed_precision},
            {"target_speedup", context.target_speedup},
            {"candidate_budget", context.candidate_budget},
            {"near_sol", context.near_sol},
            {"dtype", context.dtype},
            {"stall_window", context.stall_window},
            {"min_gain", context.min_gain},
            {"min_headroom_share", context.min_headroom_share}}},
          {"regions", regions},
          {"steps", steps},
          {"decisions", plan.decisions},
          {"at_speed_of_light", plan.at_speed_of_light}};
}

json to_json(const Decision& decision) {
  return {{"action", to_string(decision.action)},
          {"step", decision.step ? json(*decision.step) : json(nullptr)},
          {"candidates", decision.candidates},
          {"reason", decision.reason}};
}

std::string to_markdown(const Plan& plan) {
  std::string out = "**Roofline:** " + describe(plan.ceilings) + "\n\n";
  if (plan.at_speed_of_light) out += "**At speed of light:** nothing to optimize.\n\n";
  if (!plan.regions.empty()) {
    out += "| region | bound | measured | speed of light | of speed of light | headroom | priority |\n";
    out += "|---|---|---|---|---|---|---|\n";
    for (const RegionAnalysis& analysis : plan.regions) {
      const RooflinePoint& point = analysis.point;
      out += "| " + cell(analysis.region.name) + " | " + knowledge::to_string(point.bottleneck) + " | " +
             format_time_ms(analysis.region.measured_ms) + " | " +
             (point.work_counted ? format_time_ms(point.speed_of_light_ms) : std::string("unknown")) + " | " +
             format_percent(point.fraction_of_sol) + " | " + format_time_ms(point.headroom_ms) + " | " +
             (analysis.planned ? format_time_ms(analysis.priority_ms) : std::string("skipped")) + " |\n";
    }
    out += "\n";
  }
  if (!plan.steps.empty()) {
    out += "| step | region | space | recipes | budget | why |\n|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      const PlanStep& step = plan.steps[i];
      std::string recipes;
      for (const std::string& recipe : step.recipes) recipes += (recipes.empty() ? "" : ", ") + recipe;
      out += "| " + std::to_string(i + 1) + " | " + cell(step.region) + " | " + knowledge::to_string(step.space) +
             " | " + cell(recipes) + " | " + std::to_string(step.budget) + " | " + cell(step.reason) + " |\n";
    }
    out += "\n";
  }
  if (!plan.regions.empty()) {
    out += "**Where each region stands**\n\n";
    for (const RegionAnalysis& analysis : plan.regions) {
      out += "- " + analysis.region.name + ": " + analysis.point.reason + "\n";
    }
    out += "\n";
  }
  out += "**Decisions**\n\n";
  for (std::size_t i = 0; i < plan.decisions.size(); ++i) {
    out += std::to_string(i + 1) + ". " + plan.decisions[i] + "\n";
  }
  return out;
}

}  // namespace hiera::engine::plan
