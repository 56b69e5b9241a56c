#pragma once
// The third phase, a round at a time: plan::next_action says which plan step
// to work in (or that the run stops: budget spent, plan exhausted, near the
// speed of light; or the time limit is reached), the proposers take turns at
// it (one with nothing new for a step is not asked there again), the
// candidates are deduplicated by source against the run's history and
// submitted together so the pool spreads them over its workers, and each
// evaluation is booked: the attempt, the figures, the step's outcome, and
// whether it is faster (passed, beyond timing noise, at the target speedup).
#include <cstddef>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/eval/evaluation_client.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/optimize/reference_facts.h"
#include "engine/optimize/run_context.h"
#include "engine/optimize/run_plan.h"
#include "engine/plan/escalation.h"
#include "engine/propose/proposer.h"

namespace hiera::engine::optimize {

// What the rounds read and do not change.
struct RoundInputs {
  const ReferenceFacts& facts;
  const RunPlan& plan;
  const std::vector<std::shared_ptr<propose::Proposer>>& proposers;
  int parallel = 1;          // candidates asked for per round at most
  std::string profile_text;  // the prompt's profile (propose::profile_text)
};

// What the rounds carry from one to the next.
struct RoundState {
  std::vector<propose::Attempt> history;  // every attempt, oldest first (the proposers see it)
  std::string best_source;                // the fastest verified candidate's, empty until one
  std::vector<std::size_t> faster;        // indexes into result.attempts, verified faster
  int next_id = 1;                        // the next candidate's id number ("c1", ...)
  std::size_t rounds = 0;                 // rounds that asked (or looked for) a proposer: whose turn it is
  std::vector<plan::StepOutcome> outcomes;  // cumulative snapshots, one per round
  std::map<std::size_t, std::set<std::string>> exhausted;  // per plan step: proposers with nothing new
  std::optional<std::size_t> current_step;
};

enum class RoundOutcome { Continue, Stop };

// One round. Stop when the time limit or next_action ends the run (the stop
// reason and detail set, the decision recorded). Throws Cancelled.
RoundOutcome run_round(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                       const RoundInputs& inputs, RoundState& state);
// Rounds until one stops; none without proposers.
RoundState run_rounds(RunContext& run, eval::EvaluationClient& client, const knowledge::KnowledgeBase& knowledge,
                      const RoundInputs& inputs);

// The parts of a round, each on its own.
// Candidates per round: options.candidates_per_round, else one per worker; at least 1.
int candidates_per_round(const OptimizeOptions& options, std::size_t workers);
// The prompt's profile: the reference's time and device, the plan's regions with their roofline, the worker's profile.
std::string round_profile_text(const ReferenceFacts& facts, const plan::Plan& plan, const std::string& gpu);
// The step's latest outcome so far, or a fresh one.
plan::StepOutcome step_snapshot(const std::vector<plan::StepOutcome>& outcomes, const plan::PlanStep& step);
// The first proposer, from the one whose turn it is, not exhausted at this step; null when all are.
std::shared_ptr<propose::Proposer> next_proposer(const std::vector<std::shared_ptr<propose::Proposer>>& proposers,
                                                 std::size_t turn, const std::set<std::string>& exhausted);
// A candidate being evaluated: its record in result.attempts and the evaluation to come.
struct PendingEvaluation {
  std::size_t record;
  std::future<eval::Evaluation> evaluation;
};
// Books every candidate (an id, the figures, a record; a repeat of an earlier
// source is rejected) and submits the usable ones.
std::vector<PendingEvaluation> submit_candidates(RunContext& run, eval::EvaluationClient& client, const RoundInputs& inputs,
                                                 RoundState& state, std::vector<propose::Candidate>& candidates,
                                                 plan::StepOutcome& snapshot);
// Books one evaluation into its attempt record, the figures, the step's snapshot and the state.
void book_evaluation(RunContext& run, const RoundInputs& inputs, RoundState& state, const plan::PlanStep& step,
                     plan::StepOutcome& snapshot, std::size_t record_index, const eval::Evaluation& evaluation);
// The region's bound over its time in a candidate that saved (reference - candidate) there: what next_action
// compares with near_sol.
double fraction_of_sol(const plan::Plan& plan, const std::string& region, double reference_ms, double speedup);

}  // namespace hiera::engine::optimize
