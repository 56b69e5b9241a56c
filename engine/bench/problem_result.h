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

struct ProblemResult {
  std::string name;
  std::string group;
  std::filesystem::path file;
  // The delivered code passed verification: the faster candidate, or the
  // original (which then ran under the harness). False when the reference
  // itself failed or nothing ran.
  bool correct = false;
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
// missing or has the wrong type (a file from an older hiera, or damaged).
ProblemResult problem_result_from_json(const nlohmann::json& value);

}  // namespace hiera::engine::bench
