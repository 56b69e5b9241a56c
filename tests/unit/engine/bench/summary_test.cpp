// summary.json: exactly the documented keys, the problems list, the figures
// for the suite and for each group, and the date format.
#include "engine/bench/summary.h"

#include <gtest/gtest.h>

namespace hiera::engine::bench {
namespace {

using nlohmann::json;

ProblemResult result(std::string group, std::string name, bool correct, std::optional<double> eager,
                     std::optional<double> compile, std::optional<double> sol, std::vector<std::string> spaces = {}) {
  ProblemResult r;
  r.name = std::move(name);
  r.group = std::move(group);
  r.correct = correct;
  r.speedup_eager = eager;
  r.speedup_compile = compile;
  r.sol_fraction = sol;
  r.spaces = std::move(spaces);
  return r;
}

std::vector<std::string> keys(const json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}

const std::vector<ProblemResult> kResults = {
    result(".", "top", true, 2.0, 1.0, 0.5, {"S1"}),
    result("fusion", "relu", true, 4.0, 2.0, 0.25, {"S1", "S3"}),
    result("fusion", "gelu", false, std::nullopt, std::nullopt, std::nullopt),
    result("norm", "layer", true, 1.0, 0.5, 0.8),
};

TEST(BenchSummary, HasExactlyTheDocumentedKeysAndValues) {
  const SuiteInfo info{"NVIDIA H200", "abc123", "2026-11-30T00:00:00Z", "hiera bench samples", {"eager", "compile"}};
  const json s = summary_json(kResults, info);
  EXPECT_EQ(keys(s), (std::vector<std::string>{"commit", "date", "fast_p", "fast_p_compile", "fast_p_kernelbench",
                                               "fast_p_kernelbench_compile", "geomean_compile", "geomean_eager", "gpu",
                                               "groups", "problems", "wall_s", "workers"}));
  EXPECT_EQ(s["gpu"], "NVIDIA H200");
  EXPECT_EQ(s["commit"], "abc123");
  EXPECT_EQ(s["date"], "2026-11-30T00:00:00Z");
  EXPECT_EQ(s["fast_p"], (json{{"0", 0.75}, {"1", 0.5}, {"1.5", 0.5}, {"2", 0.25}}));
  EXPECT_EQ(s["fast_p_compile"], (json{{"0", 0.75}, {"1", 0.25}, {"1.5", 0.25}, {"2", 0.0}}));
  EXPECT_DOUBLE_EQ(s["geomean_eager"].get<double>(), std::sqrt(std::sqrt(8.0)));   // 2 * 4 * 1 * 1
  EXPECT_DOUBLE_EQ(s["geomean_compile"].get<double>(), 1.0);                      // 1 * 2 * 1 * 0.5

  ASSERT_EQ(s["problems"].size(), 4u);
  EXPECT_EQ(s["problems"][0], (json{{"name", "top"}, {"correct", true}, {"kernelbench_passed", nullptr},
                                    {"speedup_eager", 2.0}, {"speedup_compile", 1.0}, {"sol_fraction", 0.5},
                                    {"spaces", {"S1"}}}));
  EXPECT_EQ(s["problems"][1]["name"], "fusion/relu");  // group/name: unique across groups
  EXPECT_EQ(s["problems"][2], (json{{"name", "fusion/gelu"}, {"correct", false}, {"kernelbench_passed", nullptr},
                                    {"speedup_eager", nullptr}, {"speedup_compile", nullptr}, {"sol_fraction", nullptr},
                                    {"spaces", json::array()}}));
}

// fast_p again with "correct" meaning KernelBench's criterion passed: a
// problem hiera verified but KernelBench rejects, or one without that
// verdict, is not correct there.
TEST(BenchSummary, FastPKernelBenchCountsOnlyProblemsThatPassKernelBenchsCriterion) {
  std::vector<ProblemResult> results = kResults;
  results[0].kernelbench = eval::KernelBenchVerdict{true, 5, 1e-4, 1e-4, 1e-5, ""};                  // 2.0x, 1.0x
  results[1].kernelbench = eval::KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "not allclose"};   // 4.0x, 2.0x
  results[2].kernelbench = eval::KernelBenchVerdict{true, 5, 1e-4, 1e-4, 0.0, ""};  // hiera: not correct, no speed-up
  // results[3] (1.0x, 0.5x): no verdict.
  const SuiteInfo info{"cpu", "unknown", "2026-11-30T00:00:00Z", "", {"eager", "compile"}};
  const json s = summary_json(results, info);
  EXPECT_EQ(s["fast_p"], (json{{"0", 0.75}, {"1", 0.5}, {"1.5", 0.5}, {"2", 0.25}}));  // hiera's own: unchanged
  EXPECT_EQ(s["fast_p_kernelbench"], (json{{"0", 0.5}, {"1", 0.25}, {"1.5", 0.25}, {"2", 0.0}}));
  EXPECT_EQ(s["fast_p_kernelbench_compile"], (json{{"0", 0.5}, {"1", 0.0}, {"1.5", 0.0}, {"2", 0.0}}));
  EXPECT_EQ(s["problems"][0]["kernelbench_passed"], true);
  EXPECT_EQ(s["problems"][1]["kernelbench_passed"], false);
  EXPECT_EQ(s["problems"][3]["kernelbench_passed"], nullptr);
  EXPECT_EQ(s["groups"]["fusion"]["fast_p_kernelbench"], (json{{"0", 0.5}, {"1", 0.0}, {"1.5", 0.0}, {"2", 0.0}}));
  EXPECT_TRUE(summary_json(results, SuiteInfo{"cpu", "unknown", "", "", {"eager"}})["fast_p_kernelbench_compile"].is_null());
}

TEST(BenchSummary, CommitOfResultsGatheredFromSeveralRuns) {
  EXPECT_EQ(results_commit({}), "unknown");
  std::vector<ProblemResult> results = kResults;
  for (auto& r : results) r.commit = "abc123";
  EXPECT_EQ(results_commit(results), "abc123");
  results[1].commit = "def456";
  results[3].commit = "def456";
  EXPECT_EQ(results_commit(results), "mixed: abc123 (2), def456 (2)");
}

TEST(BenchSummary, WallTimeIsTheUnionOfTheProblemsRunningTimes) {
  const SuiteInfo info{"cpu", "unknown", "2026-11-30T00:00:00Z", "", {"eager"}};
  EXPECT_TRUE(summary_json(kResults, info)["wall_s"].is_null());  // records without times
  EXPECT_EQ(summary_json(kResults, info)["workers"], json::array());
  std::vector<ProblemResult> timed = kResults;
  timed[0].started_at = "2026-11-30T05:00:00.000Z";
  timed[0].finished_at = "2026-11-30T05:00:30.000Z";
  timed[1].started_at = "2026-11-30T05:00:10.000Z";
  timed[1].finished_at = "2026-11-30T05:00:40.500Z";
  timed[3].started_at = "2026-11-30T07:00:00.000Z";  // resumed two hours later: the gap does not count
  timed[3].finished_at = "2026-11-30T07:00:02.000Z";
  timed[0].workers = timed[1].workers = 2;
  timed[3].workers = 1;
  const json s = summary_json(timed, info);
  EXPECT_DOUBLE_EQ(s["wall_s"].get<double>(), 42.5);
  EXPECT_EQ(s["workers"], (json{1, 2}));
}

TEST(BenchSummary, GroupsCarryTheSameFiguresForTheirProblems) {
  const SuiteInfo info{"cpu", "unknown", "2026-11-30T00:00:00Z", "", {"eager", "compile"}};
  const json groups = summary_json(kResults, info)["groups"];
  EXPECT_EQ(keys(groups), (std::vector<std::string>{".", "fusion", "norm"}));
  const json& fusion = groups["fusion"];
  EXPECT_EQ(keys(fusion), (std::vector<std::string>{"fast_p", "fast_p_compile", "fast_p_kernelbench",
                                                    "fast_p_kernelbench_compile", "geomean_compile", "geomean_eager"}));
  EXPECT_EQ(fusion["fast_p"], (json{{"0", 0.5}, {"1", 0.5}, {"1.5", 0.5}, {"2", 0.5}}));
  EXPECT_EQ(fusion["fast_p_compile"], (json{{"0", 0.5}, {"1", 0.5}, {"1.5", 0.5}, {"2", 0.0}}));
  EXPECT_DOUBLE_EQ(fusion["geomean_eager"].get<double>(), 2.0);    // 4 and the failed problem's 1
  EXPECT_DOUBLE_EQ(fusion["geomean_compile"].get<double>(), std::sqrt(2.0));
  EXPECT_EQ(groups["norm"]["fast_p"], (json{{"0", 1.0}, {"1", 0.0}, {"1.5", 0.0}, {"2", 0.0}}));
}

TEST(BenchSummary, WithoutCompileTheCompileFiguresAreNull) {
  const SuiteInfo info{"cpu", "unknown", "2026-11-30T00:00:00Z", "", {"eager"}};
  const json s = summary_json(kResults, info);
  EXPECT_TRUE(s["fast_p_compile"].is_null());
  EXPECT_TRUE(s["geomean_compile"].is_null());
  EXPECT_TRUE(s["groups"]["fusion"]["fast_p_compile"].is_null());
  EXPECT_TRUE(s["groups"]["fusion"]["geomean_compile"].is_null());
}

TEST(BenchSummary, DatesAreIso8601InUtc) {
  EXPECT_EQ(iso8601_utc(std::chrono::system_clock::from_time_t(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso8601_utc(std::chrono::system_clock::from_time_t(1795998243)), "2026-11-30T00:24:03Z");
}

}  // namespace
}  // namespace hiera::engine::bench
