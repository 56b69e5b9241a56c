#pragma once
// OUT/summary.json: the suite's figures (suite_figures.h) with where and when
// they were measured. Exactly these keys: gpu, commit, date, problems (one
// {name, correct, kernelbench_passed, speedup_eager, speedup_compile,
// sol_fraction, spaces} per problem, name being Problem::id() so that problems
// of different groups stay apart; kernelbench_passed null without that
// verdict), fast_p, fast_p_compile, fast_p_kernelbench,
// fast_p_kernelbench_compile, geomean_eager, geomean_compile, groups ({group:
// {the same six figures}}),
// wall_s (wall_time.h: the union of the problems' running intervals; null when
// no record has them) and workers (the distinct pool sizes that ran them). The
// compile figures are null when that baseline did not run.
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

struct SuiteInfo {
  std::string gpu;      // the device that measured, or "cpu"
  std::string commit;   // of the hiera source, or "unknown"
  std::string date;     // ISO 8601, UTC
  std::string command;  // as typed, for the report
  std::vector<std::string> baselines;  // "eager" and, when it ran, "compile"
  bool with_compile() const;
};

// The commit results were measured at: the one they share, or, when a report
// gathers records of several commits, "mixed: <commit> (<records>), ..." in
// order of first appearance; "unknown" for none.
std::string results_commit(const std::vector<ProblemResult>& results);

// "2026-11-30T00:24:03Z".
std::string iso8601_utc(std::chrono::system_clock::time_point time);

nlohmann::json summary_json(const std::vector<ProblemResult>& results, const SuiteInfo& info);

// The results by group, groups in the order they first appear.
std::vector<std::pair<std::string, std::vector<ProblemResult>>> by_group(const std::vector<ProblemResult>& results);

}  // namespace hiera::engine::bench
