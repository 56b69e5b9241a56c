#include "engine/bench/summary.h"

#include <algorithm>
#include <ctime>

#include "engine/bench/suite_figures.h"
#include "engine/bench/wall_time.h"

namespace hiera::engine::bench {

using nlohmann::json;

namespace {

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// The figures every level of the summary shares: the suite, and each group.
void put_figures(json& out, const std::vector<ProblemResult>& results, bool with_compile) {
  const SuiteFigures figures = compute_figures(results, with_compile);
  out["fast_p"] = figures.fast_p;
  out["fast_p_compile"] = figures.fast_p_compile ? json(*figures.fast_p_compile) : json(nullptr);
  out["fast_p_kernelbench"] = figures.fast_p_kernelbench;
  out["fast_p_kernelbench_compile"] =
      figures.fast_p_kernelbench_compile ? json(*figures.fast_p_kernelbench_compile) : json(nullptr);
  out["geomean_eager"] = figures.geomean_eager;
  out["geomean_compile"] = optional_json(figures.geomean_compile);
}

}  // namespace

std::string results_commit(const std::vector<ProblemResult>& results) {
  std::vector<std::pair<std::string, int>> commits;  // in order of first appearance
  for (const auto& r : results) {
    auto it = std::find_if(commits.begin(), commits.end(), [&](const auto& c) { return c.first == r.commit; });
    if (it == commits.end()) commits.emplace_back(r.commit, 1);
    else ++it->second;
  }
  if (commits.empty()) return "unknown";
  if (commits.size() == 1) return commits.front().first;
  std::string out = "mixed:";
  for (std::size_t i = 0; i < commits.size(); ++i)
    out += (i ? ", " : " ") + commits[i].first + " (" + std::to_string(commits[i].second) + ")";
  return out;
}

bool SuiteInfo::with_compile() const {
  return std::find(baselines.begin(), baselines.end(), "compile") != baselines.end();
}

std::string iso8601_utc(std::chrono::system_clock::time_point time) {
  const std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::vector<std::pair<std::string, std::vector<ProblemResult>>> by_group(const std::vector<ProblemResult>& results) {
  std::vector<std::pair<std::string, std::vector<ProblemResult>>> groups;
  for (const auto& r : results) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == r.group; });
    if (it == groups.end()) it = groups.insert(groups.end(), {r.group, {}});
    it->second.push_back(r);
  }
  return groups;
}

json summary_json(const std::vector<ProblemResult>& results, const SuiteInfo& info) {
  json problems = json::array();
  for (const auto& r : results) {
    problems.push_back({{"name", r.id()},
                        {"correct", r.correct},
                        {"kernelbench_passed", r.kernelbench ? json(r.kernelbench->passed) : json(nullptr)},
                        {"speedup_eager", optional_json(r.speedup_eager)},
                        {"speedup_compile", optional_json(r.speedup_compile)},
                        {"sol_fraction", optional_json(r.sol_fraction)},
                        {"spaces", r.spaces}});
  }
  json summary = {{"gpu", info.gpu}, {"commit", info.commit}, {"date", info.date}, {"problems", problems}};
  put_figures(summary, results, info.with_compile());
  json groups = json::object();
  for (const auto& [group, members] : by_group(results)) {
    json figures = json::object();
    put_figures(figures, members, info.with_compile());
    groups[group] = figures;
  }
  summary["groups"] = groups;
  summary["wall_s"] = optional_json(wall_seconds(results));
  summary["workers"] = worker_counts(results);
  return summary;
}

}  // namespace hiera::engine::bench
