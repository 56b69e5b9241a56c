// report.md: the header, the fast_p table, the geomeans, a table per group
// listing every problem (failed and unimproved ones too), links to each
// problem's JSON and to the plots.
#include "engine/bench/bench_report.h"

#include <gtest/gtest.h>

namespace hiera::engine::bench {
namespace {

ProblemResult result(std::string group, std::string name, bool correct, std::optional<double> eager,
                     std::optional<double> compile, std::optional<double> sol, std::string outcome) {
  ProblemResult r;
  r.name = std::move(name);
  r.group = std::move(group);
  r.correct = correct;
  r.speedup_eager = eager;
  r.speedup_compile = compile;
  r.sol_fraction = sol;
  r.outcome = std::move(outcome);
  return r;
}

std::vector<ProblemResult> results() {
  std::vector<ProblemResult> out = {
      result(".", "top", true, 1.0, 0.8, 0.05, "no_improvement"),
      result("fusion", "relu", true, 2.5, 1.25, 0.5, "improved"),
      result("fusion", "gelu|x", false, std::nullopt, std::nullopt, std::nullopt, "error"),
  };
  out[1].spaces = {"S1", "S3"};
  out[1].recipes = {"s1_fused_op", "s3_elementwise_fusion"};
  out[2].error = "the reference does not run under the verification harness: runtime: boom\nTraceback";
  out[0].baseline_errors = {{"compile", "inductor: no C compiler"}};
  return out;
}

const SuiteInfo kInfo{"NVIDIA H200", "abc123", "2026-11-30T00:00:00Z", "hiera bench samples --baseline eager,compile",
                      {"eager", "compile"}};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(BenchReport, HeaderFastPAndGeomeans) {
  const std::string md = bench_report_markdown(results(), kInfo, "samples");
  EXPECT_EQ(md.rfind("# hiera bench: samples\n\n- GPU: NVIDIA H200\n- Date: 2026-11-30T00:00:00Z\n- Commit: `abc123`\n"
                     "- Command: `hiera bench samples --baseline eager,compile`\n"
                     "- Problems: 3, 2 correct; baselines: eager, compile\n"
                     "- Wall time: not recorded; workers: not recorded\n\n", 0), 0u) << md;
  EXPECT_TRUE(has(md, "## fast_p\n\n| p | correct and faster than p, over eager | over torch.compile |\n|---|---|---|\n"
                      "| 0 | 66.7% | 66.7% |\n| 1 | 33.3% | 33.3% |\n| 1.5 | 33.3% | 0.0% |\n| 2 | 33.3% | 0.0% |\n")) << md;
  // eager: 1 * 2.5 * 1 -> 1.36; compile: 0.8 * 1.25 * 1 -> 1.00.
  EXPECT_TRUE(has(md, "Geometric mean speed-up: **1.36x** over eager, **1.00x** over torch.compile.\n")) << md;
}

TEST(BenchReport, WallTimeAndWorkersFromTheProblemsRecords) {
  std::vector<ProblemResult> timed = results();
  timed[0].started_at = "2026-11-30T05:00:00.000Z";
  timed[0].finished_at = "2026-11-30T05:01:00.000Z";
  timed[1].started_at = "2026-11-30T05:00:30.000Z";
  timed[1].finished_at = "2026-11-30T05:01:15.400Z";
  timed[0].workers = timed[1].workers = 2;
  const std::string md = bench_report_markdown(timed, kInfo, "samples");
  EXPECT_TRUE(has(md, "- Problems: 3, 2 correct; baselines: eager, compile\n- Wall time: 75.4 s (while problems ran); workers: 2\n\n"))
      << md;
}

TEST(BenchReport, EveryProblemInItsGroupsTableWithLinksAndErrors) {
  const std::string md = bench_report_markdown(results(), kInfo, "samples");
  EXPECT_TRUE(has(md, "## Groups\n\n| group | problems | correct | fast_1 | geomean over eager | fast_1 over compile | "
                      "geomean over compile |\n|---|---|---|---|---|---|---|\n"
                      "| (top level) | 1 | 1 | 0.0% | 1.00x | 0.0% | 0.80x |\n"
                      "| fusion | 2 | 1 | 50.0% | 1.58x | 50.0% | 1.12x |\n")) << md;
  EXPECT_TRUE(has(md, "## Problems: (top level)\n\n| problem | correct | over eager | over compile | of speed of light | spaces | "
                      "recipes | outcome |\n|---|---|---|---|---|---|---|---|\n"
                      "| [top](problems/top.json) | yes | 1.00x | 0.80x | 5.0% | - | - | no_improvement |\n")) << md;
  EXPECT_TRUE(has(md, "- top: no compile time: inductor: no C compiler\n")) << md;
  EXPECT_TRUE(has(md, "## Problems: fusion\n")) << md;
  EXPECT_TRUE(has(md, "| [relu](problems/fusion/relu.json) | yes | 2.50x | 1.25x | 50.0% | S1, S3 | s1_fused_op, "
                      "s3_elementwise_fusion | improved |\n")) << md;
  // A pipe in a name or message cannot break the table; a newline cannot end the row.
  EXPECT_TRUE(has(md, "| [gelu\\|x](problems/fusion/gelu\\|x.json) | no | - | - | - | - | - | error |\n")) << md;
  EXPECT_TRUE(has(md, "- gelu\\|x: the reference does not run under the verification harness: runtime: boom Traceback\n")) << md;
}

TEST(BenchReport, WhereTheTimeWentHasARowPerProblem) {
  std::vector<ProblemResult> timed = results();
  ProblemTimeBreakdown t;
  t.total_s = 122.04;
  t.optimize.total_s = 100.0;
  for (auto& p : t.optimize.engine) {
    if (p.name == "candidates") p.seconds = 70.26;
    if (p.name == "delivery") p.seconds = 20.0;
  }
  t.measure_s = 21.5;
  timed[1].time_breakdown = t;
  t.measure_s.reset();  // the side-by-side job did not run
  timed[0].time_breakdown = t;
  // timed[2]: a record without a breakdown (it never reached the optimizer, or an older hiera wrote it)
  const std::string md = bench_report_markdown(timed, kInfo, "samples");
  const auto table = md.find("## Where the time went\n\n");
  ASSERT_NE(table, std::string::npos) << md;
  EXPECT_TRUE(has(md, "| problem | total | optimize | of which candidates | delivery | measure |\n|---|---|---|---|---|---|\n"
                      "| top | 122.0 s | 100.0 s | 70.3 s | 20.0 s | - |\n"
                      "| fusion/relu | 122.0 s | 100.0 s | 70.3 s | 20.0 s | 21.5 s |\n"
                      "| fusion/gelu\\|x | - | - | - | - | - |\n\n"))
      << md;
  EXPECT_LT(table, md.find("## Plots"));
  EXPECT_GT(table, md.find("## Problems: fusion"));
}

TEST(BenchReport, NoTimeTableWhenNoRecordHasABreakdown) {
  EXPECT_FALSE(has(bench_report_markdown(results(), kInfo, "samples"), "Where the time went"));
}

TEST(BenchReport, LinksThePlotsAndTheSummary) {
  const std::string md = bench_report_markdown(results(), kInfo, "samples");
  EXPECT_TRUE(has(md, "![Delivered speed-up per problem](speedups.svg)")) << md;
  EXPECT_TRUE(has(md, "![Fraction of the speed of light per problem](sol.svg)")) << md;
  EXPECT_TRUE(has(md, "[summary.json](summary.json)")) << md;
}

TEST(BenchReport, WithoutCompileNoCompileColumnsAndOneGroupNoGroupTable) {
  SuiteInfo info = kInfo;
  info.baselines = {"eager"};
  info.command = "hiera bench samples";
  std::vector<ProblemResult> one = {results()[1]};
  const std::string md = bench_report_markdown(one, info, "samples");
  EXPECT_TRUE(has(md, "| p | correct and faster than p, over eager |\n|---|---|\n| 0 | 100.0% |\n")) << md;
  EXPECT_TRUE(has(md, "Geometric mean speed-up: **2.50x** over eager.\n")) << md;
  EXPECT_FALSE(has(md, "## Groups")) << md;
  EXPECT_FALSE(has(md, "compile")) << md;
  EXPECT_TRUE(has(md, "| [relu](problems/fusion/relu.json) | yes | 2.50x | 50.0% | S1, S3 |")) << md;
}

}  // namespace
}  // namespace hiera::engine::bench

namespace hiera::engine::bench {
namespace {

// With KernelBench verdicts in the records: fast_p again on that criterion,
// and each problem's verdict beside hiera's. Without any (older records), neither.
TEST(BenchReport, KernelBenchsCriterionWhenTheRecordsHaveIt) {
  std::vector<ProblemResult> judged = results();
  judged[0].kernelbench = eval::KernelBenchVerdict{true, 5, 1e-4, 1e-4, 0.0, ""};
  judged[1].kernelbench = eval::KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "not allclose"};
  const std::string md = bench_report_markdown(judged, kInfo, "samples");
  EXPECT_TRUE(has(md, "## fast_p by KernelBench's criterion\n\n")) << md;
  EXPECT_TRUE(has(md, "| p | passed KernelBench's criterion and faster than p, over eager | over torch.compile |\n"
                      "|---|---|---|\n| 0 | 33.3% | 33.3% |\n| 1 | 0.0% | 0.0% |\n| 1.5 | 0.0% | 0.0% |\n"
                      "| 2 | 0.0% | 0.0% |\n"))
      << md;
  EXPECT_TRUE(has(md, "| problem | correct | KernelBench | over eager | over compile | of speed of light | spaces | "
                      "recipes | outcome |\n|---|---|---|---|---|---|---|---|---|\n"
                      "| [top](problems/top.json) | yes | passed (max abs error 0) | 1.00x | 0.80x | 5.0% | - | - | "
                      "no_improvement |\n"))
      << md;
  EXPECT_TRUE(has(md, "| [relu](problems/fusion/relu.json) | yes | failed (max abs error 0.00025) | 2.50x |")) << md;
  EXPECT_TRUE(has(md, "| [gelu\\|x](problems/fusion/gelu\\|x.json) | no | - | - |")) << md;

  const std::string older = bench_report_markdown(results(), kInfo, "samples");
  EXPECT_FALSE(has(older, "KernelBench")) << older;
}

}  // namespace
}  // namespace hiera::engine::bench
