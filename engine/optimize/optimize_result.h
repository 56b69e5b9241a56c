#pragma once
// What an optimization run ends with: the outcome, the best verified
// candidate in its delivered form with its evidence, the plan with its reasons,
// every attempt, and the sample-efficiency figures. The CLI prints it, the
// server turns it into an edit; only `improved()` may become one.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/eval/lost_attempt.h"
#include "engine/eval/job_results.h"
#include "engine/optimize/time_breakdown.h"
#include "engine/propose/candidate.h"

namespace hiera::engine::optimize {

enum class Outcome {
  Improved,       // a verified, faster candidate, verified again in delivered form
  NoImprovement,  // the run finished; nothing verified beat the reference
  Cancelled,      // stopped by the caller; the best so far is not delivered
  Error,          // the run could not start or the reference does not run
};
const char* to_string(Outcome outcome);

// Why the run ended where it did: a --budget is a ceiling, and a run that
// tried fewer candidates says which of the other limits came first.
enum class StopReason {
  BudgetSpent,       // the candidate budget is used up
  TimeLimit,         // the wall-time limit was reached
  PlanExhausted,     // every plan step finished (stopped paying, nothing new, its share spent)
  NearSpeedOfLight,  // the result (or the reference already) is near the speed-of-light bound
  Cancelled,         // the caller cancelled
  MeasureOnly,       // only the reference was measured, as asked
  NoProposer,        // nothing to propose candidates
  Error,             // the run could not go on (see message)
};
// "budget_spent", "time_limit", "plan_exhausted", "near_speed_of_light", "cancelled", "measure_only", "no_proposer", "error".
const char* to_string(StopReason reason);
// "the budget was spent", "the time limit was reached", ...: for the report.
const char* describe(StopReason reason);

// One evaluated (or rejected) candidate, as the run log and the report list it.
struct AttemptRecord {
  propose::Attempt attempt;
  std::string verdict;                       // "passed", "failed", "rejected"
  std::optional<eval::Timing> timing;
  std::optional<double> speed_of_light_ms;
  std::vector<eval::Trial> trials;
  int worker = -1;
  std::vector<std::string> worker_command;   // how that worker was started (local, ssh://, a Slurm step)
  std::vector<eval::LostAttempt> lost;       // earlier runs on workers lost under it (requeued)
  std::string step;                          // "S1 / module"
};

struct Figures {
  int proposed = 0;   // candidates the proposers returned, rejected replies included
  int rejected = 0;   // no usable code in the reply
  int compiled = 0;   // reached the GPU (compiled / imported)
  int correct = 0;    // passed verification
  int faster = 0;     // passed and beat the reference beyond the timing spread
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
};

struct BestResult {
  propose::Candidate candidate;
  std::string delivered_source;  // standalone: torch only, or the kernel source
  eval::Evaluation evaluation;   // the verification of the delivered form
  double speedup = 0.0;
  std::filesystem::path file;    // the delivered source, written in the run directory
};

struct OptimizeResult {
  Outcome outcome = Outcome::Error;
  std::string message;             // one line: what happened
  std::optional<StopReason> stop_reason;  // set by every run the optimizer ends
  std::string stop_detail;         // the decision that ended the run ("budget spent: 12 of 12 candidates tried, ...")
  std::string target;              // "model.py::Model"
  std::string gpu;                 // the device that measured, or "cpu"
  nlohmann::json spec;             // the task spec (TaskSpec::to_json)
  std::string spec_markdown;
  nlohmann::json plan;             // plan::to_json
  std::string plan_markdown;
  std::vector<std::string> decisions;  // every planner and loop decision, with its reason
  std::optional<eval::Timing> reference_timing;  // the reference against itself
  // The worker's profile of the reference (JOB_PROTOCOL.md `profile`: kernels,
  // metrics), covering `profiled_calls` calls of it; null when there was none.
  nlohmann::json reference_profile;
  int profiled_calls = 1;
  std::optional<BestResult> best;
  std::vector<AttemptRecord> attempts;
  // The protections of the first candidate process the worker reported
  // (eval::Evaluation::sandbox), and which candidate that was; empty when none was.
  std::vector<eval::Protection> candidate_isolation;
  std::string candidate_isolation_of;
  Figures figures;
  double wall_s = 0.0;
  TimeBreakdown time_breakdown;  // where wall_s went (time_breakdown.h)
  std::filesystem::path run_dir;
  bool improved() const { return outcome == Outcome::Improved && best && best->evaluation.passed(); }
};

nlohmann::json to_json(const OptimizeResult& result);

}  // namespace hiera::engine::optimize
