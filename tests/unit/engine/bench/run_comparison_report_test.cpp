// What `hiera bench-compare` prints: the Markdown, exactly, and the same
// content as JSON.
#include "engine/bench/run_comparison_report.h"

#include <gtest/gtest.h>

namespace hiera::engine::bench {
namespace {

using nlohmann::json;

ProblemResult problem(const std::string& group, const std::string& name, bool correct, std::optional<double> speedup,
                      const std::string& outcome) {
  ProblemResult r;
  r.name = name;
  r.group = group;
  r.correct = correct;
  r.speedup_eager = speedup;
  r.outcome = outcome;
  return r;
}

RunComparison comparison() {
  RunComparison c;
  c.a.dir = "out/one";
  c.a.wall_s = 120.0;
  c.a.workers = {1};
  c.a.results = {problem("fusion", "relu", true, 1.5, "improved"), problem("fusion", "gelu", true, 1.0, "no_improvement"),
                 problem(".", "top|x", false, std::nullopt, "error")};
  c.b.dir = "out/two";
  c.b.wall_s = 64.0;
  c.b.workers = {2};
  c.b.results = {problem("fusion", "relu", true, 1.25, "improved"), problem("fusion", "gelu", false, std::nullopt, "no_improvement"),
                 problem("norm", "layer", true, 1.0, "no_improvement")};
  c.wall_ratio = 120.0 / 64.0;
  ProblemComparison relu{"fusion/relu", c.a.results[0], c.b.results[0], true, {}};
  ProblemComparison gelu{"fusion/gelu", c.a.results[1], c.b.results[1], false,
                         {{"c2", "passed, code 0123456789ab", "failed, code 0123456789ab"}, {"delivered result", "correct", "not correct"}}};
  ProblemComparison top{"top|x", c.a.results[2], std::nullopt, false, {}};
  ProblemComparison layer{"norm/layer", std::nullopt, c.b.results[2], false, {}};
  c.problems = {relu, gelu, top, layer};
  return c;
}

TEST(RunComparisonReport, MarkdownSidesRatioTableAndDifferences) {
  EXPECT_EQ(run_comparison_markdown(comparison()),
            "# hiera bench-compare\n\n"
            "| | A | B |\n|---|---|---|\n"
            "| directory | `out/one` | `out/two` |\n"
            "| problems | 3 | 3 |\n"
            "| wall time | 120.0 s | 64.0 s |\n"
            "| workers | 1 | 2 |\n\n"
            "Wall-time ratio A/B: **1.88x** (above 1: B took less time)\n\n"
            "Verdicts identical: 1 of 2 shared problem(s); 1 only in A, 1 only in B.\n\n"
            "| problem | correct A/B | outcome A/B | verdicts identical | speedup_eager A/B |\n|---|---|---|---|---|\n"
            "| fusion/relu | yes/yes | improved/improved | yes | 1.50x/1.25x |\n"
            "| fusion/gelu | yes/no | no_improvement/no_improvement | no | 1.00x/- |\n"
            "| top\\|x | no/- | error/- | only in A | -/- |\n"
            "| norm/layer | -/yes | -/no_improvement | only in B | -/1.00x |\n\n"
            "## Differences\n\n"
            "- fusion/gelu: c2: A passed, code 0123456789ab; B failed, code 0123456789ab\n"
            "- fusion/gelu: delivered result: A correct; B not correct\n");
}

TEST(RunComparisonReport, MarkdownWithoutTimesOrDifferences) {
  RunComparison c = comparison();
  c.a.wall_s.reset();
  c.a.workers.clear();
  c.wall_ratio.reset();
  c.problems = {c.problems[0]};
  const std::string md = run_comparison_markdown(c);
  EXPECT_NE(md.find("| wall time | not recorded | 64.0 s |\n| workers | not recorded | 2 |\n\n"
                    "Wall-time ratio A/B: not recorded\n\n"
                    "Verdicts identical: 1 of 1 shared problem(s); 0 only in A, 0 only in B.\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("## Differences"), std::string::npos) << md;
}

TEST(RunComparisonReport, JsonCarriesTheSameContent) {
  const json j = run_comparison_json(comparison());
  EXPECT_EQ(j["a"], (json{{"dir", "out/one"}, {"problems", 3}, {"wall_s", 120.0}, {"workers", {1}}}));
  EXPECT_EQ(j["b"], (json{{"dir", "out/two"}, {"problems", 3}, {"wall_s", 64.0}, {"workers", {2}}}));
  EXPECT_DOUBLE_EQ(j["wall_ratio"].get<double>(), 1.875);
  EXPECT_EQ(j["identical"], false);
  ASSERT_EQ(j["problems"].size(), 4u);
  EXPECT_EQ(j["problems"][0], (json{{"name", "fusion/relu"}, {"only_in", nullptr}, {"correct", {true, true}},
                                    {"outcome", {"improved", "improved"}}, {"speedup_eager", {1.5, 1.25}},
                                    {"verdicts_identical", true}, {"differences", json::array()}}));
  EXPECT_EQ(j["problems"][1]["differences"],
            (json{{{"what", "c2"}, {"a", "passed, code 0123456789ab"}, {"b", "failed, code 0123456789ab"}},
                  {{"what", "delivered result"}, {"a", "correct"}, {"b", "not correct"}}}));
  EXPECT_EQ(j["problems"][1]["speedup_eager"], (json{1.0, nullptr}));
  EXPECT_EQ(j["problems"][2], (json{{"name", "top|x"}, {"only_in", "A"}, {"correct", {false, nullptr}},
                                    {"outcome", {"error", nullptr}}, {"speedup_eager", {nullptr, nullptr}},
                                    {"verdicts_identical", false}, {"differences", json::array()}}));
  EXPECT_EQ(j["problems"][3]["only_in"], "B");
}

}  // namespace
}  // namespace hiera::engine::bench
