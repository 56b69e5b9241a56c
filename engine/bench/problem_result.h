#pragma once
// What `hiera bench` records for one problem (OUT/problems/<group>/<name>.json):
// whether the delivered code is correct, its speed-ups over eager PyTorch and
// torch.compile measured side by side, its share of the speed of light, how it
// was found, and the provenance that decides whether a later run may reuse it.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bench/problem.h"
#include "engine/eval/job_results.h"
#include "engine/optimize/time_breakdown.h"

namespace hiera::engine::bench {

struct TimeSummary {
  double median_ms = 0.0;
  double p10_ms = 0.0;
  double p90_ms = 0.0;
  bool operator==(const TimeSummary&) const = default;
};

struct ProblemTimes {
  std::optional<TimeSummary> eager;    // the reference module as written
  std::optional<TimeSummary> compile;  // torch.compile(reference), when that baseline ran
  std::optional<TimeSummary> best;     // what hiera hands back (the original when nothing was faster)
  bool operator==(const ProblemTimes&) const = default;
};

struct CandidateCounts {
  int tried = 0;
  int correct = 0;
  int faster = 0;
  bool operator==(const CandidateCounts&) const = default;
};

// What the optimizer said about one candidate it was given: pure correctness,
// no timing (a timing differs from run to run; a verdict should not).
struct CandidateVerdict {
  std::string id;                    // "c3": in proposal order
  std::vector<std::string> recipes;  // the recipes it applies; empty when none
  std::string space;                 // "S1", "S2", "S3"
  std::string source_sha256;         // of the candidate's code (engine/common/sha256.h)
  std::string verdict;               // the optimizer's: passed, failed, rejected (not_evaluated if it never got one)
  bool operator==(const CandidateVerdict&) const = default;
};

// Where a problem's wall time went: the optimizer (its own breakdown: engine
// phases, the worker's phases inside its jobs) and the side-by-side job.
struct ProblemTimeBreakdown {
  double total_s = 0.0;               // from loading the problem to the end of its side-by-side job
  optimize::TimeBreakdown optimize;   // OptimizeResult::time_breakdown (its total_s: the optimizer's wall time)
  std::optional<double> measure_s;    // the side-by-side job; empty when it did not run
  std::vector<eval::PhaseTime> measure_phases;  // that job's phases_ms
  bool operator==(const ProblemTimeBreakdown&) const = default;
};

struct ProblemResult {
  std::string name;
  std::string group;
  std::filesystem::path file;
  // The delivered code passed verification: the faster candidate, or the
  // original (which then ran under the harness). False when the reference
  // itself failed or nothing ran.
  bool correct = false;
  // KernelBench's own criterion on what is handed back (the side-by-side
  // job's, else the delivered form's verification); empty when neither
  // applied it (an older hiera or runner, a CUDA task, a job that did not run).
  std::optional<eval::KernelBenchVerdict> kernelbench;
  // Over eager: 1.0 exactly when nothing was faster (the original is handed
  // back). Over torch.compile: compile time / delivered time. Empty when not measured.
  std::optional<double> speedup_eager;
  std::optional<double> speedup_compile;
  ProblemTimes times;
  std::optional<double> sol_ms;        // the plan's speed-of-light bound of the whole problem
  std::optional<double> sol_fraction;  // sol_ms / delivered time
  std::vector<std::string> spaces;     // of the delivered candidate's recipes; empty when none
  std::vector<std::string> recipes;
  CandidateCounts candidates;
  std::string outcome;  // the optimizer's: improved, no_improvement, error
  std::filesystem::path run_dir;
  // When this problem's optimize began and its final comparison ended
  // ("2026-11-30T05:28:10.123Z", wall_time.h), the pool size of the invocation
  // that ran it, and every candidate's verdict in proposal order. Empty in a
  // record from an older hiera (the JSON then lacks them, or has null).
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
  std::optional<int> workers;
  std::optional<std::vector<CandidateVerdict>> candidate_verdicts;
  // Empty when the problem never reached the optimizer, and in a record from an older hiera.
  std::optional<ProblemTimeBreakdown> time_breakdown;
  std::optional<std::string> error;              // why it stopped, or what could not be measured
  std::map<std::string, std::string> baseline_errors;  // a baseline that could not be timed: why

  // Provenance (resume.h): a later run reuses this only when all of it matches.
  std::string gpu;
  std::string commit;
  std::string source_sha256;
  nlohmann::json options = nlohmann::json::object();

  std::string id() const { return Problem{name, group, file}.id(); }
  bool operator==(const ProblemResult&) const = default;
};

// Where a problem's JSON lives, relative to the output directory:
// problems/<group>/<name>.json, or problems/<name>.json for the top group.
std::filesystem::path result_path(const Problem& problem);

nlohmann::json to_json(const ProblemResult& result);
// The inverse of to_json. Throws nlohmann::json::exception when a field is
// missing or has the wrong type (damaged, or from a much older hiera); the
// fields started_at, finished_at, workers, candidate_verdicts, kernelbench and
// time_breakdown may be missing or null (an older record) and are then empty.
ProblemResult problem_result_from_json(const nlohmann::json& value);

}  // namespace hiera::engine::bench
