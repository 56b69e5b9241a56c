#pragma once
// What every phase of Optimizer::run shares: the caller's options, progress
// and cancellation, the result being filled, the run log, the engine's phase
// clock, the budget and time limit once the spec sets them. The phases
// (reference_facts.h, run_plan.h, round.h, delivery.h) take it and their own
// typed inputs; `finish` ends a run with its outcome, from any phase.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/cancellation.h"
#include "engine/common/number_text.h"
#include "engine/eval/job_results.h"
#include "engine/optimize/optimize_progress.h"
#include "engine/optimize/optimize_result.h"
#include "engine/optimize/optimizer.h"
#include "engine/optimize/run_log.h"
#include "engine/optimize/time_breakdown.h"
#include "engine/spec/task_spec.h"

namespace hiera::engine::optimize {

struct RunContext {
  RunContext(const OptimizeOptions& o, const ProgressCallback& p, const CancellationToken& c)
      : options(o), progress(p), cancel(c) {}
  const OptimizeOptions& options;
  const ProgressCallback& progress;
  const CancellationToken& cancel;
  OptimizeResult result;
  std::unique_ptr<RunLog> log;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int budget = kDefaultBudget;
  double time_limit_s = kDefaultTimeLimitS;
  std::optional<double> best_speedup;
  std::string step_label;
  PhaseClock clock;  // where the time goes (time_breakdown.h)

  // A progress event with the run's figures so far.
  void report(const std::string& phase, const std::string& message);
  // A decision, in the result and the run log.
  void decide(const std::string& decision);
  bool out_of_time() const;
};

// How a phase ends the run early (an error, measure only, ...): the outcome and its one line.
struct Ending {
  Outcome outcome = Outcome::Error;
  std::string message;
};

// A phase's typed output, or the ending it came to instead.
template <class T>
class PhaseResult {
 public:
  PhaseResult(T value) : value_(std::move(value)) {}
  PhaseResult(Ending ending) : ending_(std::move(ending)) {}
  explicit operator bool() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const Ending& ending() const { return *ending_; }

 private:
  std::optional<T> value_;
  std::optional<Ending> ending_;
};

// Creates the run directory and its log ("start" event, the knowledge's
// problems as decisions); the ending when the directory cannot be made.
std::optional<Ending> open_run_log(RunContext& run, std::size_t workers, const std::vector<std::string>& proposers);

// Sets the outcome (a cancellation or an error also the stop reason), the wall
// time and its breakdown, writes "time", "done", result.json and report.md,
// reports "done" and returns the result.
OptimizeResult finish(RunContext& run, Ending ending);

// Helpers the phases share (numbers: engine/common/number_text.h).
double seconds_since(std::chrono::steady_clock::time_point start);
std::string failure_text(const eval::CheckFailure& failure);
// An evaluation as the run log records it: verdict, failures, worker, speedup, phases_ms.
nlohmann::json evaluation_json(const eval::Evaluation& evaluation);
// The worker's task for a candidate. A CUDA candidate may launch differently
// from the reference: its own `hiera: launch` annotation says how.
nlohmann::json candidate_task(const spec::TaskSpec& spec, const std::string& reference_source,
                              const std::string& candidate_source, const std::string& kernel, const std::string& device);

}  // namespace hiera::engine::optimize
