#pragma once
// Where an optimization run spent its wall time: the engine's own phases
// (measured here with std::chrono::steady_clock) and, inside the jobs, the
// worker's phases ("phases_ms" of each evaluate result, JOB_PROTOCOL.md)
// summed over the candidate evaluations and over the delivery. Written in
// result.json ("time_breakdown"), report.md ("Where the time went") and
// run.jsonl (the "time" event).
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/eval/job_results.h"

namespace hiera::engine::optimize {

// The engine's phases, in the order a run goes through them. "candidates" and
// "proposing" add up every round's; a phase the run never reached stays at 0.
inline constexpr const char* kEnginePhases[] = {"probe",     "reference_baseline", "reference_profile", "capture",
                                                "planning",  "proposing",          "candidates",        "delivery"};

struct PhaseSeconds {
  std::string name;
  double seconds = 0.0;
  bool operator==(const PhaseSeconds&) const = default;
};

struct TimeBreakdown {
  double total_s = 0.0;               // the run's wall time (OptimizeResult::wall_s)
  std::vector<PhaseSeconds> engine;   // every kEnginePhases entry, in that order
  // The worker's phases_ms: of the reference against itself, summed over every
  // candidate evaluation (`candidate_evaluations` of them), and summed over the
  // deliveries (the best candidate's; a second when the first failed in its
  // delivered form). In the runner's order (eval::parse_phases).
  std::vector<eval::PhaseTime> reference_phases;
  std::vector<eval::PhaseTime> candidate_phases;
  int candidate_evaluations = 0;
  std::vector<eval::PhaseTime> delivery_phases;

  TimeBreakdown();
  // The engine phase's seconds; 0 for a name that is not one.
  double seconds(const std::string& phase) const;
  // What no engine phase covers: the task spec, the run log, the report (never below 0).
  double other_s() const;
  bool operator==(const TimeBreakdown&) const = default;
};

// Adds each of `phases` to the entry of its name in `sums`, appending the new names.
void add_phases(std::vector<eval::PhaseTime>& sums, const std::vector<eval::PhaseTime>& phases);

// The engine's clock: one phase runs at a time. enter() ends the running phase
// (if any) and starts another, which adds to what that phase already had;
// leave() ends it. The optimizer calls leave() before it writes its records,
// so a run that returns or throws from inside a phase still counts it.
class PhaseClock {
 public:
  void enter(const char* phase);
  void leave();
  // The runner's phases of the jobs, as their results come in.
  void reference(const eval::Evaluation& evaluation);
  void candidate(const eval::Evaluation& evaluation);
  void delivery(const eval::Evaluation& evaluation);
  // Ends the running phase and returns the breakdown of a run of `total_s` seconds.
  TimeBreakdown finish(double total_s);

 private:
  TimeBreakdown breakdown_;
  const char* current_ = nullptr;
  std::chrono::steady_clock::time_point started_;
};

// {"total_s", "phases": [{"phase", "s"}, ...] (kEnginePhases' order), "other_s",
//  "reference_phases_ms": {name: ms}, "candidate_evaluations",
//  "candidate_phases_ms": {name: ms}, "delivery_phases_ms": {name: ms}}.
nlohmann::json to_json(const TimeBreakdown& breakdown);
// The inverse of to_json (other_s is derived, not read). Throws
// nlohmann::json::exception when a field is missing or has the wrong type.
TimeBreakdown time_breakdown_from_json(const nlohmann::json& value);

// "## Where the time went": a table of the engine phases (phase | seconds |
// share of the run), "other" and the total, then the runner's phases inside
// the candidate evaluations and the delivery.
std::string time_breakdown_markdown(const TimeBreakdown& breakdown);

}  // namespace hiera::engine::optimize
