// Deciding the next action from the plan and the history (escalation.h).
#include "engine/plan/escalation.h"

#include <algorithm>

#include "engine/plan/units.h"

namespace hiera::engine::plan {
namespace {

std::optional<double> better(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

std::string best_text(std::optional<double> best) {
  return best ? "best " + format_speedup(*best) : "no correct candidate yet";
}

std::string candidates_text(int count) { return count_of(count, "candidate", "candidates"); }

}  // namespace

const char* to_string(Action action) {
  switch (action) {
    case Action::Continue: return "continue";
    case Action::Escalate: return "escalate";
    case Action::NextRegion: return "next_region";
    case Action::Stop: return "stop";
  }
  return "stop";
}

Decision next_action(const Plan& plan, const std::vector<StepOutcome>& history) {
  const PlanContext& context = plan.context;
  const std::vector<PlanStep>& steps = plan.steps;
  Decision decision;
  if (steps.empty()) {
    decision.reason = plan.at_speed_of_light ? "at speed of light: nothing to optimize"
                                             : "nothing to do: the plan has no step";
    decision.stop = plan.at_speed_of_light ? StopCause::NearSpeedOfLight : StopCause::PlanExhausted;
    return decision;
  }

  // Each step's snapshots, in time order; the region's best fraction of its speed of light.
  std::vector<std::vector<const StepOutcome*>> snapshots(steps.size());
  std::optional<double> best_overall;
  for (const StepOutcome& outcome : history) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].region == outcome.region && steps[i].space == outcome.space) {
        snapshots[i].push_back(&outcome);
        best_overall = better(best_overall, outcome.best_speedup);
        break;
      }
    }
  }
  auto tried = [&](std::size_t i) { return snapshots[i].empty() ? 0 : snapshots[i].back()->tried; };
  auto region_fraction = [&](const std::string& region) {
    double fraction = 0.0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].region != region) continue;
      for (const StepOutcome* outcome : snapshots[i]) fraction = std::max(fraction, outcome->best_fraction_of_sol);
    }
    return fraction;
  };

  int total_tried = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) total_tried += tried(i);
  if (total_tried >= context.candidate_budget) {
    decision.reason = "budget spent: " + std::to_string(total_tried) + " of " +
                      std::to_string(context.candidate_budget) + " candidates tried, " +
                      (best_overall ? "best " + format_speedup(*best_overall) : "none correct");
    decision.stop = StopCause::BudgetSpent;
    return decision;
  }

  std::optional<double> prior_best;  // over the reference, from the steps before this one
  int carry = 0;                     // budget finished steps left unspent
  std::optional<std::size_t> last_finished;
  std::string last_reason;
  bool last_was_done_region = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& step = steps[i];
    const std::string where = step.region + ": " + knowledge::to_string(step.space);
    const int budget = step.budget + carry;
    const int t = tried(i);
    std::optional<double> step_best;
    for (const StepOutcome* outcome : snapshots[i]) step_best = better(step_best, outcome->best_speedup);
    const std::optional<double> current = better(prior_best, step_best);

    std::string finished;
    bool done_region = false;
    if (const double fraction = region_fraction(step.region); fraction >= context.near_sol) {
      finished = step.region + " at " + format_percent(fraction) + " of speed of light";
      done_region = true;
    } else if (!snapshots[i].empty() && snapshots[i].back()->exhausted) {
      finished = where + ": the proposers have nothing new (" + candidates_text(t) + " tried), " + best_text(current);
    } else if (t >= context.stall_window) {
      // The best before the last stall_window candidates of this step.
      std::optional<double> before = prior_best;
      for (const StepOutcome* outcome : snapshots[i]) {
        if (outcome->tried <= t - context.stall_window) before = better(before, outcome->best_speedup);
      }
      const double baseline = before.value_or(1.0);
      if (snapshots[i].back()->compiled == 0) {
        finished = where + " stopped paying: none of " + candidates_text(t) + " compiled";
      } else if (snapshots[i].back()->correct == 0) {
        finished = where + " stopped paying: none of " + candidates_text(t) + " was correct";
      } else if (current.value_or(1.0) < baseline * (1.0 + context.min_gain)) {
        finished = where + " stopped paying: " + best_text(current);
        finished += t == context.stall_window
                        ? " after " + candidates_text(t)
                        : ", less than " + format_percent(context.min_gain) + " better than " +
                              candidates_text(context.stall_window) + " earlier (" + std::to_string(t) + " tried)";
      }
    }
    if (finished.empty() && t >= budget) {
      finished = where + " spent its budget of " + candidates_text(budget) + ": " + best_text(current);
    }
    if (!finished.empty()) {
      carry = std::max(0, budget - t);
      prior_best = current;
      last_finished = i;
      last_reason = finished;
      last_was_done_region = done_region;
      continue;
    }

    decision.step = i;
    decision.stop = StopCause::None;
    decision.candidates = std::min(budget - t, context.candidate_budget - total_tried);
    const std::string more = " (" + candidates_text(decision.candidates) + ")";
    if (t == 0 && last_finished) {
      if (steps[*last_finished].region == step.region) {
        decision.action = Action::Escalate;
        decision.reason = last_reason + "; escalating to " + knowledge::to_string(step.space) + more;
      } else {
        decision.action = Action::NextRegion;
        decision.reason = last_reason + "; moving to " + step.region + " in " + knowledge::to_string(step.space) + more;
      }
    } else if (t == 0) {
      decision.action = Action::Continue;
      decision.reason = "start: " + step.region + " in " + knowledge::to_string(step.space) + more;
    } else {
      decision.action = Action::Continue;
      decision.reason = where + " goes on: " + std::to_string(t) + " of " + candidates_text(budget) + " tried, " +
                        best_text(current);
    }
    return decision;
  }
  decision.reason = last_was_done_region ? last_reason + ", stopping" : last_reason + "; no step left";
  decision.stop = last_was_done_region ? StopCause::NearSpeedOfLight : StopCause::PlanExhausted;
  return decision;
}

}  // namespace hiera::engine::plan
