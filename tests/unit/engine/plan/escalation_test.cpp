// Escalation: replaying recorded outcome sequences against a plan.
#include "engine/plan/escalation.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/plan/plan_test_support.h"

namespace hiera::engine::plan {
namespace {

using knowledge::Space;
using testing::plan_fixture;
using testing::plan_fixture_without_tf32;
using testing::test_recipes;

// linear+bias+gelu: S1 8, S2 8, S3 8.
Plan gemm_plan() { return plan_fixture("gemm_bias_gelu_bf16_h200.json"); }

StepOutcome outcome(std::string region, Space space, int tried, int correct, std::optional<double> best,
                    double fraction = 0.7) {
  StepOutcome o;
  o.region = std::move(region);
  o.space = space;
  o.tried = tried;
  o.compiled = tried;
  o.correct = correct;
  o.best_speedup = best;
  o.best_fraction_of_sol = fraction;
  return o;
}

StepOutcome gelu(Space space, int tried, int correct, std::optional<double> best, double fraction = 0.7) {
  return outcome("linear+bias+gelu", space, tried, correct, best, fraction);
}

void expect_decision(const Decision& decision, Action action, std::optional<std::size_t> step, int candidates,
                     const std::string& reason) {
  EXPECT_EQ(decision.action, action) << to_string(decision.action);
  EXPECT_EQ(decision.step, step);
  EXPECT_EQ(decision.candidates, candidates);
  EXPECT_EQ(decision.reason, reason);
}

TEST(EscalationTest, ActionsHaveNames) {
  EXPECT_STREQ(to_string(Action::Continue), "continue");
  EXPECT_STREQ(to_string(Action::Escalate), "escalate");
  EXPECT_STREQ(to_string(Action::NextRegion), "next_region");
  EXPECT_STREQ(to_string(Action::Stop), "stop");
}

TEST(EscalationTest, AnEmptyHistoryStartsTheFirstStep) {
  expect_decision(next_action(gemm_plan(), {}), Action::Continue, 0, 8, "start: linear+bias+gelu in S1 (8 candidates)");
}

TEST(EscalationTest, AStepGoesOnUntilItHasTriedItsWindow) {
  const Plan plan = gemm_plan();
  expect_decision(next_action(plan, {gelu(Space::S1, 1, 0, std::nullopt), gelu(Space::S1, 2, 1, 1.05)}),
                  Action::Continue, 0, 6, "linear+bias+gelu: S1 goes on: 2 of 8 candidates tried, best 1.05×");
  expect_decision(next_action(plan, {gelu(Space::S1, 3, 0, std::nullopt)}), Action::Continue, 0, 5,
                  "linear+bias+gelu: S1 goes on: 3 of 8 candidates tried, no correct candidate yet");
}

TEST(EscalationTest, S1StopsPayingAndTheRegionEscalatesToS2WithWhatS1LeftOver) {
  const Plan plan = gemm_plan();
  const std::vector<StepOutcome> history = {gelu(Space::S1, 1, 1, 1.01), gelu(Space::S1, 2, 2, 1.015),
                                            gelu(Space::S1, 3, 2, 1.015), gelu(Space::S1, 4, 3, 1.018)};
  expect_decision(next_action(plan, history), Action::Escalate, 1, 12,
                  "linear+bias+gelu: S1 stopped paying: best 1.02× after 4 candidates; escalating to S2 (12 candidates)");
}

TEST(EscalationTest, APayingStepGoesOnAndIsJudgedOverItsLastWindow) {
  const Plan plan = gemm_plan();
  std::vector<StepOutcome> history = {gelu(Space::S1, 2, 2, 1.05), gelu(Space::S1, 4, 4, 1.10),
                                      gelu(Space::S1, 6, 6, 1.15)};
  expect_decision(next_action(plan, history), Action::Continue, 0, 2,
                  "linear+bias+gelu: S1 goes on: 6 of 8 candidates tried, best 1.15×");
  // 1.16 over the 1.10 of four candidates earlier: still paying, but the budget is spent.
  history.push_back(gelu(Space::S1, 8, 8, 1.16));
  expect_decision(next_action(plan, history), Action::Escalate, 1, 8,
                  "linear+bias+gelu: S1 spent its budget of 8 candidates: best 1.16×; escalating to S2 (8 candidates)");
  // 1.12 over the 1.10 of four candidates earlier: less than 2 %.
  const std::vector<StepOutcome> stalling = {gelu(Space::S1, 2, 2, 1.05), gelu(Space::S1, 4, 4, 1.10),
                                             gelu(Space::S1, 6, 6, 1.11), gelu(Space::S1, 8, 8, 1.12)};
  expect_decision(next_action(plan, stalling), Action::Escalate, 1, 8,
                  "linear+bias+gelu: S1 stopped paying: best 1.12×, less than 2% better than 4 candidates earlier "
                  "(8 tried); escalating to S2 (8 candidates)");
}

TEST(EscalationTest, ALaterSpaceMustBeatTheBestOfTheEarlierOnes) {
  const Plan plan = gemm_plan();
  // S2 finds 1.25×, below S1's 1.30×: it does not pay.
  const std::vector<StepOutcome> history = {gelu(Space::S1, 2, 2, 1.2), gelu(Space::S1, 4, 4, 1.3),
                                            gelu(Space::S1, 8, 8, 1.3), gelu(Space::S2, 4, 4, 1.25)};
  expect_decision(next_action(plan, history), Action::Escalate, 2, 12,
                  "linear+bias+gelu: S2 stopped paying: best 1.30× after 4 candidates; escalating to S3 (12 candidates)");
}

TEST(EscalationTest, ASpaceWithNoCorrectCandidateStopsPaying) {
  const Plan plan = gemm_plan();
  const std::vector<StepOutcome> history = {gelu(Space::S1, 8, 8, 1.2), gelu(Space::S2, 4, 0, std::nullopt)};
  expect_decision(next_action(plan, history), Action::Escalate, 2, 12,
                  "linear+bias+gelu: S2 stopped paying: none of 4 candidates was correct; escalating to S3 "
                  "(12 candidates)");
}

TEST(EscalationTest, ASpaceWhereNothingCompilesSaysSo) {
  StepOutcome broken = gelu(Space::S1, 4, 0, std::nullopt);
  broken.compiled = 0;
  expect_decision(next_action(gemm_plan(), {broken}), Action::Escalate, 1, 12,
                  "linear+bias+gelu: S1 stopped paying: none of 4 candidates compiled; escalating to S2 (12 candidates)");
}

TEST(EscalationTest, NearTheSpeedOfLightItStops) {
  const Plan plan = gemm_plan();
  const std::vector<StepOutcome> history = {gelu(Space::S1, 4, 3, 1.1, 0.74), gelu(Space::S1, 5, 4, 1.38, 0.91)};
  expect_decision(next_action(plan, history), Action::Stop, std::nullopt, 0,
                  "linear+bias+gelu at 91% of speed of light, stopping");
  EXPECT_EQ(next_action(plan, history).stop, StopCause::NearSpeedOfLight);
}

TEST(EscalationTest, TheLastSpaceStoppingPayingEndsThePlan) {
  const Plan plan = gemm_plan();
  const std::vector<StepOutcome> history = {gelu(Space::S1, 8, 8, 1.2), gelu(Space::S2, 8, 8, 1.3),
                                            gelu(Space::S3, 4, 0, std::nullopt)};
  expect_decision(next_action(plan, history), Action::Stop, std::nullopt, 0,
                  "linear+bias+gelu: S3 stopped paying: none of 4 candidates was correct; no step left");
  EXPECT_EQ(next_action(plan, history).stop, StopCause::PlanExhausted);
  EXPECT_EQ(next_action(plan, {}).stop, StopCause::None);  // not a stop
}

TEST(EscalationTest, TheWholeBudgetSpentStops) {
  const Plan plan = gemm_plan();
  expect_decision(next_action(plan, {gelu(Space::S1, 8, 8, 1.2), gelu(Space::S2, 16, 9, 1.31)}), Action::Stop,
                  std::nullopt, 0, "budget spent: 24 of 24 candidates tried, best 1.31×");
  expect_decision(next_action(plan, {gelu(Space::S1, 24, 0, std::nullopt)}), Action::Stop, std::nullopt, 0,
                  "budget spent: 24 of 24 candidates tried, none correct");
  EXPECT_EQ(next_action(plan, {gelu(Space::S1, 24, 0, std::nullopt)}).stop, StopCause::BudgetSpent);
}

TEST(EscalationTest, TheLaunchBoundMlpSequence) {
  const Plan plan = plan_fixture("tiny_mlp_launch_bound_h200.json");  // whole module: S1 12, S3 12
  std::vector<StepOutcome> history;
  auto mlp = [](Space space, int tried, int correct, std::optional<double> best, double fraction = 0.03) {
    return outcome("whole module", space, tried, correct, best, fraction);
  };
  expect_decision(next_action(plan, history), Action::Continue, 0, 12, "start: whole module in S1 (12 candidates)");
  history = {mlp(Space::S1, 1, 1, 1.8), mlp(Space::S1, 2, 2, 2.1), mlp(Space::S1, 3, 3, 2.12),
             mlp(Space::S1, 4, 4, 2.13)};
  expect_decision(next_action(plan, history), Action::Continue, 0, 8,
                  "whole module: S1 goes on: 4 of 12 candidates tried, best 2.13×");
  for (int tried = 5; tried <= 8; ++tried) history.push_back(mlp(Space::S1, tried, tried, 2.14));
  expect_decision(next_action(plan, history), Action::Escalate, 1, 16,
                  "whole module: S1 stopped paying: best 2.14×, less than 2% better than 4 candidates earlier (8 "
                  "tried); escalating to S3 (16 candidates)");
  history.push_back(mlp(Space::S3, 2, 1, 6.5, 0.09));
  expect_decision(next_action(plan, history), Action::Continue, 1, 14,
                  "whole module: S3 goes on: 2 of 16 candidates tried, best 6.50×");
  history.push_back(mlp(Space::S3, 3, 2, 40.0, 0.88));
  expect_decision(next_action(plan, history), Action::Stop, std::nullopt, 0,
                  "whole module at 88% of speed of light, stopping");
}

TEST(EscalationTest, MovingToTheNextRegion) {
  GpuCeilings ceilings;
  ceilings.bandwidth_gbs = 1000.0;
  ceilings.peak_tflops = {{"float32", 50.0}};
  ceilings.source = "test";
  auto region = [](std::string name, std::string pattern, double measured_ms, double bytes) {
    Region r;
    r.name = std::move(name);
    r.pattern = std::move(pattern);
    r.measured_ms = measured_ms;
    r.bytes = bytes;
    r.launches = 1;
    r.dtype = "float32";
    return r;
  };
  // stencil: S1 8, S3 8; relu: S1 4, S3 4.
  const Plan plan = make_plan({region("relu", "elementwise_chain", 0.5, 200e6), region("stencil", "stencil", 1.0, 100e6)},
                              ceilings, {}, test_recipes());
  ASSERT_EQ(plan.steps.size(), 4u);
  const std::vector<StepOutcome> history = {outcome("stencil", Space::S1, 4, 0, std::nullopt, 0.1),
                                            outcome("stencil", Space::S3, 3, 3, 6.0, 0.6),
                                            outcome("stencil", Space::S3, 5, 5, 7.9, 0.86)};
  // S1 left 4 of its 8 unspent; the stencil is done, so its S3 leaves 8 + 4 - 5 = 7 to relu's 4.
  expect_decision(next_action(plan, history), Action::NextRegion, 2, 11,
                  "stencil at 86% of speed of light; moving to relu in S1 (11 candidates)");
  // Outcomes for steps the plan does not have are ignored.
  std::vector<StepOutcome> with_stray = history;
  with_stray.push_back(outcome("stencil", Space::S2, 20, 0, std::nullopt));
  expect_decision(next_action(plan, with_stray), Action::NextRegion, 2, 11,
                  "stencil at 86% of speed of light; moving to relu in S1 (11 candidates)");
}

TEST(EscalationTest, APlanWithNoStepsStopsAtOnce) {
  // cuBLAS's SGEMM at 92% of a GPU without TF32 (testing::without_tf32): at speed of light.
  expect_decision(next_action(plan_fixture_without_tf32("sgemm_8192_fp32_h200.json"), {}), Action::Stop, std::nullopt,
                  0, "at speed of light: nothing to optimize");
  PlanContext context;
  context.near_sol = 0.95;
  expect_decision(next_action(plan_fixture_without_tf32("sgemm_8192_fp32_h200.json", context), {}), Action::Stop,
                  std::nullopt, 0, "nothing to do: the plan has no step");
}

}  // namespace
}  // namespace hiera::engine::plan

namespace hiera::engine::plan {
namespace {

TEST(EscalationTest, AnExhaustedStepEndsAtOnceAndItsBudgetCarriesOn) {
  // The proposers had nothing new after 1 candidate of S1's 8: S2 starts with 8 + 7.
  StepOutcome exhausted = gelu(Space::S1, 1, 1, 1.02);
  exhausted.exhausted = true;
  expect_decision(next_action(gemm_plan(), {gelu(Space::S1, 1, 1, 1.02), exhausted}), Action::Escalate, 1, 15,
                  "linear+bias+gelu: S1: the proposers have nothing new (1 candidate tried), best 1.02×; "
                  "escalating to S2 (15 candidates)");
}

}  // namespace
}  // namespace hiera::engine::plan
