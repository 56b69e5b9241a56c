#pragma once
// What to do next, given the plan and what its steps have produced so far:
// go on in the current step, escalate the region to its next space (the
// current one stopped paying or spent its budget), move to the next region
// (this one is near its speed of light, or out of spaces), or stop (budget
// spent, nothing left). A pure function of the plan and the history, so the
// refinement loop can call it after every candidate, and tests can replay a
// recorded sequence. Each decision carries its reason, for the report.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/knowledge/recipe.h"
#include "engine/plan/planner.h"

namespace hiera::engine::plan {

// A snapshot of one step, cumulative: the loop appends one after each
// evaluated candidate (or batch), in time order.
struct StepOutcome {
  std::string region;
  knowledge::Space space = knowledge::Space::S1;
  int tried = 0;     // candidates proposed in this step so far
  int compiled = 0;
  int correct = 0;   // passed verification
  std::optional<double> best_speedup;  // the step's best correct candidate, over the reference
  double best_fraction_of_sol = 0.0;   // the region's bound over that candidate's time in the region
  bool exhausted = false;              // no proposer has anything new for this step: it is finished
};

enum class Action { Continue, Escalate, NextRegion, Stop };
const char* to_string(Action action);  // "continue", "escalate", "next_region", "stop"

// Why a Stop stops, for the report's one-line answer to "why did it end here?".
enum class StopCause {
  None,              // not a Stop
  BudgetSpent,       // the run's candidate budget is used up
  PlanExhausted,     // every step finished (stopped paying, spent its own budget, nothing new) or no step at all
  NearSpeedOfLight,  // the last region finished at (or the reference starts at) its speed of light
};

struct Decision {
  Action action = Action::Stop;
  StopCause stop = StopCause::PlanExhausted;  // None once action is not Stop
  std::optional<std::size_t> step;  // the plan step to work in (absent for Stop)
  int candidates = 0;               // how many more it may try: its budget, plus what earlier steps left, less tried
  std::string reason;
};

// Walks the plan's steps in order; a step is finished when its region has
// reached near_sol (in any step), when it stopped paying (at least
// stall_window candidates tried and the best over the reference, this
// region's earlier steps and every earlier step included, improved by less
// than min_gain over its last stall_window candidates, or none compiled, or
// none was correct),
// or when it has tried its budget plus what finished steps before it left
// unspent. The first unfinished step is the one to work in. Stops when the
// plan's candidate_budget has been tried or every step is finished. Snapshots
// for steps not in the plan are ignored.
Decision next_action(const Plan& plan, const std::vector<StepOutcome>& history);

}  // namespace hiera::engine::plan
