// Making the plan (planner.h).
#include "engine/plan/planner.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine/plan/allowance.h"
#include "engine/plan/budget.h"
#include "engine/plan/device_spaces.h"
#include "engine/plan/recipe_selection.h"
#include "engine/plan/units.h"
#include "engine/common/number_text.h"

namespace hiera::engine::plan {
namespace {

using knowledge::Recipe;
using knowledge::Space;

constexpr Space kSpaces[] = {Space::S1, Space::S2, Space::S3};
constexpr int kMinimumPerStep = 2;

struct SpaceChoice {
  Space space;
  std::vector<const Recipe*> recipes;  // best first
};

// One region on its way into the plan.
struct Candidate {
  RegionAnalysis analysis;
  std::vector<std::string> lines;  // decisions about it, in the order they were taken
  std::string skip;                // why it is left out, when it is
  std::vector<PlanStep> steps;
  std::string best_recipe;         // the one its expected speedup comes from
  std::vector<std::pair<Space, double>> best_midpoint;  // per space with a recipe for it, from every space
};

std::string up_to(const Recipe& recipe) {
  return recipe.id + ", up to " + format_speedup(recipe.expected_speedup_high);
}

double midpoint(const Recipe& recipe) { return (recipe.expected_speedup_low + recipe.expected_speedup_high) / 2.0; }

// "memory-bound stencil at 12% of speed of light, headroom 1.87 ms"
std::string standing(const Region& region, const RooflinePoint& point) {
  std::string out = std::string(knowledge::to_string(point.bottleneck)) + "-bound " + region.pattern;
  out += point.work_counted || point.bottleneck == knowledge::Bottleneck::Latency
             ? " at " + format_percent(point.fraction_of_sol) + " of speed of light"
             : " (speed of light unknown)";
  return out + ", headroom " + format_time_ms(point.headroom_ms);
}

void plan_region(Candidate& candidate, const PlanContext& context, const std::vector<Recipe>& recipes,
                 double module_ms) {
  const Region& region = candidate.analysis.region;
  const RooflinePoint& point = candidate.analysis.point;
  const std::string& name = region.name;
  const std::string near = format_percent(context.near_sol);
  if (point.faster_than_light) {
    candidate.skip = "skip " + name + ": measured " + format_time_ms(region.measured_ms) +
                     " is below its speed of light " + format_time_ms(point.speed_of_light_ms) +
                     "; the counted work or the timing is wrong";
    return;
  }
  if (point.work_counted && point.fraction_of_sol >= context.near_sol) {
    candidate.skip = "skip " + name + ": at " + format_percent(point.fraction_of_sol) +
                     " of speed of light (the plan stops at " + near + ")";
    return;
  }
  if (point.headroom_ms < context.min_headroom_share * module_ms) {
    candidate.skip = "skip " + name + ": its headroom " + format_time_ms(point.headroom_ms) + " is " +
                     format_percent(point.headroom_ms / module_ms) + " of the module's " + format_time_ms(module_ms) +
                     " (less than " + format_percent(context.min_headroom_share) + ")";
    return;
  }

  const std::vector<std::string> allowances = effective_allowances(context.allowed_precision, region.dtype);
  std::vector<SpaceChoice> choices;
  for (const Space space : kSpaces) {
    const std::string space_name = knowledge::to_string(space);
    if (std::find(context.allowed_spaces.begin(), context.allowed_spaces.end(), space) ==
        context.allowed_spaces.end()) {
      candidate.lines.push_back(name + ": " + space_name + " not allowed by the contract");
      continue;
    }
    RecipeSelection selection = select_recipes(space, region, point.bottleneck, allowances, recipes);
    candidate.lines.insert(candidate.lines.end(), selection.excluded.begin(), selection.excluded.end());
    if (selection.applicable.empty()) {
      candidate.lines.push_back(name + ": no " + space_name + " recipe applies to a " +
                                knowledge::to_string(point.bottleneck) + "-bound " + region.pattern + " (" +
                                (region.dtype.empty() ? std::string("dtype unknown") : region.dtype) +
                                (region.elements >= 0 ? ", " + std::to_string(region.elements) + " elements" : "") +
                                ")");
      continue;
    }
    double best = 1.0;
    for (const Recipe* recipe : selection.applicable) best = std::max(best, midpoint(*recipe));
    candidate.best_midpoint.emplace_back(space, best);
    choices.push_back({space, std::move(selection.applicable)});
  }
  if (choices.empty()) {
    candidate.skip = "skip " + name + ": no recipe applies in an allowed space";
    return;
  }

  // Start in the cheapest space whose best recipe promises the speedup that reaches near_sol.
  const bool sol_known = point.fraction_of_sol > 0.0;
  const double needed = sol_known ? context.near_sol / point.fraction_of_sol : std::numeric_limits<double>::infinity();
  const std::string reach = " that reaches " + near + " of speed of light";
  std::size_t start = 0;
  bool start_can = false;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (choices[i].recipes.front()->expected_speedup_high >= needed) {
      start = i;
      start_can = true;
      break;
    }
  }
  for (std::size_t i = 0; i < start; ++i) {
    candidate.lines.push_back(name + ": " + knowledge::to_string(choices[i].space) + " skipped: its best recipe " +
                              up_to(*choices[i].recipes.front()) + ", falls short of the " + format_speedup(needed) +
                              reach + ", which " + knowledge::to_string(choices[start].space) + " promises (" +
                              up_to(*choices[start].recipes.front()) + ")");
  }
  std::string start_line = name + ": start in " + knowledge::to_string(choices[start].space);
  if (start_can) {
    start_line += ": " + up_to(*choices[start].recipes.front()) + ", enough for the " + format_speedup(needed) + reach;
  } else {
    start_line += ", the cheapest space with a recipe: ";
    if (!sol_known) {
      start_line += "the speed of light is unknown";
    } else {
      const SpaceChoice* best = &choices[start];
      for (const SpaceChoice& choice : choices) {
        const double high = choice.recipes.front()->expected_speedup_high;
        if (high > best->recipes.front()->expected_speedup_high) best = &choice;
      }
      start_line += "none promises the " + format_speedup(needed) + reach + " (best: " + up_to(*best->recipes.front()) +
                    " in " + knowledge::to_string(best->space) + ")";
    }
  }
  if (start + 1 < choices.size()) {
    start_line += "; then ";
    for (std::size_t i = start + 1; i < choices.size(); ++i) {
      start_line += std::string(i == start + 1 ? "" : ", ") + knowledge::to_string(choices[i].space);
    }
    start_line += " when a space stops paying";
  } else {
    start_line += "; no space to escalate to";
  }
  candidate.lines.push_back(start_line);

  double expected = 1.0;
  for (std::size_t i = start; i < choices.size(); ++i) {
    PlanStep step;
    step.region = name;
    step.space = choices[i].space;
    for (const Recipe* recipe : choices[i].recipes) {
      step.recipes.push_back(recipe->id);
      if (midpoint(*recipe) > expected) {
        expected = midpoint(*recipe);
        candidate.best_recipe = recipe->id;
      }
    }
    step.reason = standing(region, point) + "; ";
    if (i > start) {
      step.reason += std::string("escalation from ") + knowledge::to_string(choices[i - 1].space) +
                     " when it stops paying";
    } else if (start_can) {
      step.reason += "the cheapest space that promises the " + format_speedup(needed) + reach;
    } else {
      step.reason += "the cheapest space with a recipe";
    }
    step.reason += "; best recipe " + up_to(*choices[i].recipes.front());
    candidate.steps.push_back(std::move(step));
  }
  RegionAnalysis& analysis = candidate.analysis;
  analysis.planned = true;
  analysis.expected_speedup = expected;
  const double saving = region.measured_ms * (1.0 - 1.0 / expected);
  analysis.likelihood = point.headroom_ms > 0.0 ? std::min(1.0, saving / point.headroom_ms) : 0.0;
  analysis.priority_ms = point.headroom_ms * analysis.likelihood;
}

std::string priority_line(std::size_t rank, const Candidate& candidate) {
  const RegionAnalysis& analysis = candidate.analysis;
  std::string line = "#" + std::to_string(rank) + " " + analysis.region.name + ": priority " +
                     format_time_ms(analysis.priority_ms) + " = headroom " +
                     format_time_ms(analysis.point.headroom_ms) + " × likelihood " + fixed(analysis.likelihood, 2);
  if (!candidate.best_recipe.empty()) {
    line += " (expected " + format_speedup(analysis.expected_speedup) + " from " + candidate.best_recipe + ")";
  } else {
    line += " (no recipe expects a speedup)";
  }
  return line;
}

}  // namespace

Plan make_plan(const std::vector<Region>& regions, const GpuCeilings& ceilings, const PlanContext& requested,
               const std::vector<Recipe>& recipes) {
  Plan plan;
  plan.ceilings = ceilings;
  plan.context = requested;
  plan.decisions.push_back("roofline: " + describe(ceilings));
  if (auto decision = restrict_to_device(plan.context); !decision.empty()) plan.decisions.push_back(std::move(decision));
  const PlanContext& context = plan.context;
  if (regions.empty()) {
    plan.decisions.push_back("no regions: the profile shows no GPU time");
    return plan;
  }

  double module_ms = 0.0;
  std::vector<Candidate> candidates;
  for (const Region& given : regions) {
    Candidate candidate;
    candidate.analysis.region = given;
    if (candidate.analysis.region.dtype.empty()) candidate.analysis.region.dtype = context.dtype;
    candidate.analysis.point = place(candidate.analysis.region, ceilings, context.allowed_precision);
    module_ms += given.measured_ms;
    candidates.push_back(std::move(candidate));
  }
  for (Candidate& candidate : candidates) plan_region(candidate, context, recipes, module_ms);
  for (const Space space : context.allowed_spaces) {
    double saving = 0.0;
    for (const Candidate& candidate : candidates) {
      if (!candidate.analysis.planned) continue;
      for (const auto& [s, mid] : candidate.best_midpoint)
        if (s == space) saving += candidate.analysis.region.measured_ms * (1.0 - 1.0 / mid);
    }
    plan.expected_saving_ms.emplace_back(space, saving);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    const RegionAnalysis& x = a.analysis;
    const RegionAnalysis& y = b.analysis;
    if (x.planned != y.planned) return x.planned;
    if (!x.planned) return false;  // skipped ones keep their order
    if (x.priority_ms != y.priority_ms) return x.priority_ms > y.priority_ms;
    if (x.point.headroom_ms != y.point.headroom_ms) return x.point.headroom_ms > y.point.headroom_ms;
    return x.region.name < y.region.name;
  });

  std::size_t rank = 0;
  std::vector<double> weights;  // per step: its region's headroom
  std::vector<std::size_t> owners;  // per step: its candidate
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const Candidate& candidate = candidates[c];
    if (candidate.analysis.planned) plan.decisions.push_back(priority_line(++rank, candidate));
    plan.decisions.insert(plan.decisions.end(), candidate.lines.begin(), candidate.lines.end());
    if (!candidate.skip.empty()) plan.decisions.push_back(candidate.skip);
    for (const PlanStep& step : candidate.steps) {
      plan.steps.push_back(step);
      weights.push_back(candidate.analysis.point.headroom_ms);
      owners.push_back(c);
    }
  }

  // Budget: 2 per step, the rest by the step's region headroom.
  const std::size_t affordable =
      static_cast<std::size_t>(std::max(0, context.candidate_budget) / kMinimumPerStep);
  if (plan.steps.size() > affordable) {
    std::string line = "budget: " + std::to_string(context.candidate_budget) + " candidates cannot give " +
                       std::to_string(kMinimumPerStep) + " to each of " + std::to_string(plan.steps.size()) +
                       " steps; dropped the last " + std::to_string(plan.steps.size() - affordable) + ":";
    for (std::size_t i = affordable; i < plan.steps.size(); ++i) {
      line += std::string(i == affordable ? " " : ", ") + plan.steps[i].region + " " +
              knowledge::to_string(plan.steps[i].space);
    }
    plan.decisions.push_back(line);
    plan.steps.resize(affordable);
    weights.resize(affordable);
    owners.resize(affordable);
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (std::find(owners.begin(), owners.end(), c) == owners.end()) candidates[c].analysis.planned = false;
    }
  }
  if (!plan.steps.empty()) {
    const std::vector<int> budgets = split_budget(context.candidate_budget, weights, kMinimumPerStep);
    const int rest = context.candidate_budget - kMinimumPerStep * static_cast<int>(plan.steps.size());
    std::string line = "budget: " + std::to_string(context.candidate_budget) + " candidates over " +
                       count_of(static_cast<long long>(plan.steps.size()), "step", "steps") + ", " +
                       std::to_string(kMinimumPerStep) + " each and " + std::to_string(rest) + " more by headroom: ";
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      plan.steps[i].budget = budgets[i];
      const bool new_region = i == 0 || plan.steps[i - 1].region != plan.steps[i].region;
      line += std::string(i == 0 ? "" : new_region ? "; " : ", ") + (new_region ? plan.steps[i].region + ": " : "") +
              knowledge::to_string(plan.steps[i].space) + " " + std::to_string(budgets[i]);
    }
    plan.decisions.push_back(line);
  }

  for (Candidate& candidate : candidates) plan.regions.push_back(std::move(candidate.analysis));

  // Is the contract's target within the speed of light of what the plan touches?
  if (context.target_speedup > 1.0) {
    double best_ms = 0.0;
    bool known = true;
    for (const RegionAnalysis& analysis : plan.regions) {
      if (analysis.planned && analysis.point.bound_ms <= 0.0) known = false;
      best_ms += analysis.planned ? analysis.point.bound_ms : analysis.region.measured_ms;
    }
    if (known && best_ms > 0.0 && module_ms / best_ms < context.target_speedup) {
      plan.decisions.push_back("target " + format_speedup(context.target_speedup) +
                               " is out of reach: at speed of light the planned regions would take the module from " +
                               format_time_ms(module_ms) + " to " + format_time_ms(best_ms) + ", " +
                               format_speedup(module_ms / best_ms) + " at most");
    }
  }

  plan.at_speed_of_light = std::all_of(plan.regions.begin(), plan.regions.end(), [&](const RegionAnalysis& a) {
    return a.point.work_counted && !a.point.faster_than_light && a.point.fraction_of_sol >= context.near_sol;
  });
  if (plan.at_speed_of_light) {
    plan.decisions.push_back("at speed of light: every region is at " + format_percent(context.near_sol) +
                             " of its speed of light or better; nothing to optimize");
  }
  return plan;
}

std::vector<PlanStep> lead_with_graph_steps(Plan& plan, std::size_t graph_nodes) {
  auto saving = [&](Space space) {
    for (const auto& [s, ms] : plan.expected_saving_ms)
      if (s == space) return ms;
    return 0.0;
  };
  std::vector<Space> order = plan.context.allowed_spaces;
  const auto after_s1 = !order.empty() && order.front() == Space::S1 ? order.begin() + 1 : order.begin();
  std::stable_sort(after_s1, order.end(), [&](Space a, Space b) { return saving(a) > saving(b); });
  std::vector<PlanStep> graph_steps;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Space space = order[i];
    PlanStep step;
    step.region = "op graph";
    step.space = space;
    step.budget = 3;
    step.reason = std::string("the captured op graph (") + std::to_string(graph_nodes) + " nodes) in " +
                  knowledge::to_string(space) + ": rewrites of the whole forward, across kernels";
    // Say why a space comes before a cheaper one: what the regions' recipes expect of each.
    for (std::size_t j = i + 1; j < order.size(); ++j) {
      if (order[j] >= space) continue;
      step.reason += "; before " + std::string(knowledge::to_string(order[j])) + ": the regions' " +
                     knowledge::to_string(space) + " recipes expect to save " + format_time_ms(saving(space)) + ", " +
                     knowledge::to_string(order[j]) + "'s " + format_time_ms(saving(order[j]));
    }
    graph_steps.push_back(std::move(step));
  }
  plan.steps.insert(plan.steps.begin(), graph_steps.begin(), graph_steps.end());
  return graph_steps;
}

}  // namespace hiera::engine::plan
