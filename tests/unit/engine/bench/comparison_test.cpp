// The final side-by-side measurement: its task and options, and the problem
// result made of the optimizer's result and that one evaluate job.
#include "engine/bench/comparison.h"

#include <gtest/gtest.h>

#include "bench_fixtures.h"
#include "engine/common/sha256.h"

namespace hiera::engine::bench {
namespace {

using nlohmann::json;
using testing::optimized;
using testing::passed;
using testing::timing;

const Problem kProblem{"relu", "fusion", "/suite/fusion/relu.py"};

knowledge::KnowledgeBase knowledge_with_recipes() {
  knowledge::KnowledgeBase kb;
  knowledge::Recipe s1;
  s1.id = "s1_fused_op";
  s1.space = knowledge::Space::S1;
  knowledge::Recipe s3;
  s3.id = "s3_elementwise_fusion";
  s3.space = knowledge::Space::S3;
  kb.recipes = {s1, s3};
  return kb;
}

TEST(ComparisonTask, TheCandidateIsTheDeliveredSourceOrTheReferenceItself) {
  const json improved = comparison_task(testing::target(), optimized(true));
  EXPECT_EQ(improved["kind"], "pytorch");
  EXPECT_EQ(improved["reference"]["source"], testing::kModelSource);
  EXPECT_EQ(improved["candidate"]["source"], "class ModelNew: pass  # delivered");
  EXPECT_EQ(improved["device"], "cuda");

  const json original = comparison_task(testing::target(), optimized(false, "cpu"));
  const std::string candidate = original["candidate"]["source"].get<std::string>();
  EXPECT_NE(candidate.find("class ModelNew(nn.Module):"), std::string::npos) << candidate;  // the reference, renamed
  EXPECT_EQ(original["device"], "cpu");
}

TEST(ComparisonTask, ASpecThatDoesNotConvertIsAnError) {
  optimize::OptimizeResult r = optimized(true);
  r.spec = {{"target", "x"}, {"kind", "pytorch"}, {"clauses", {{{"name", "no.such.clause"}}}}};
  EXPECT_ANY_THROW(comparison_task(testing::target(), r));
}

TEST(ComparisonOptions, FreshInputsRoomForCompileAndTheBaselinesBesideEager) {
  optimize::OptimizeOptions options;
  options.trials = 7;
  options.timing_trials = 60;
  const eval::EvaluateOptions o = comparison_options(options, {"eager", "compile"}, {});
  EXPECT_EQ(o.trials, 7);
  EXPECT_EQ(o.timing_trials, 60);
  EXPECT_NE(o.seed, options.seed);
  EXPECT_GE(o.timeout, std::chrono::minutes(10));
  EXPECT_EQ(o.baselines, (std::vector<std::string>{"compile"}));
  EXPECT_TRUE(comparison_options(options, {"eager"}, {}).baselines.empty());
}

TEST(ComparisonOptions, APyTorchModuleIsAlsoJudgedByKernelBenchsCriterion) {
  optimize::OptimizeOptions options;
  options.target = testing::target();
  EXPECT_TRUE(comparison_options(options, {"eager"}, {}).kernelbench);
  options.target.kind = spec::TargetKind::Cuda;  // not KernelBench's format
  EXPECT_FALSE(comparison_options(options, {"eager"}, {}).kernelbench);
}

TEST(ComparisonResult, TheKernelBenchVerdictIsTheSideBySideJobsElseTheDeliveredForms) {
  const eval::KernelBenchVerdict side_by_side{false, 5, 1e-4, 1e-4, 2.5e-4, "not allclose"};
  const eval::KernelBenchVerdict delivered{true, 5, 1e-4, 1e-4, 1e-5, ""};
  optimize::OptimizeResult improved = optimized(true);
  improved.best->evaluation.kernelbench = delivered;
  eval::Evaluation comparison = passed(timing(3.0, 1.5));
  comparison.kernelbench = side_by_side;
  EXPECT_EQ(make_problem_result(kProblem, improved, comparison, "", knowledge_with_recipes(), false).kernelbench,
            side_by_side);
  // Nothing faster: the original handed back is judged by the side-by-side job too.
  EXPECT_EQ(make_problem_result(kProblem, optimized(false), comparison, "", knowledge_with_recipes(), false).kernelbench,
            side_by_side);
  // The side-by-side job did not run: the delivered form's verdict stands in.
  EXPECT_EQ(make_problem_result(kProblem, improved, std::nullopt, "bad spec", knowledge_with_recipes(), false).kernelbench,
            delivered);
  // It ran without the criterion (an older runner): none, rather than the delivered form's.
  EXPECT_EQ(make_problem_result(kProblem, improved, passed(timing(3.0, 1.5)), "", knowledge_with_recipes(), false)
                .kernelbench,
            std::nullopt);
}

TEST(DeliveryAsComparison, TheDeliveredFormsEvaluationServesWhenItTimedEveryBaseline) {
  optimize::OptimizeResult r = optimized(true);
  EXPECT_FALSE(delivery_as_comparison(r, {"eager", "compile"}).has_value());  // compile was not timed
  r.best->evaluation.timing->baselines["compile"] = r.best->evaluation.timing->candidate;
  const auto reused = delivery_as_comparison(r, {"eager", "compile"});
  ASSERT_TRUE(reused.has_value());
  EXPECT_DOUBLE_EQ(reused->timing->speedup, r.best->evaluation.timing->speedup);
  EXPECT_TRUE(reused->timing->baselines.count("compile"));
  // A baseline that could not be timed is an answer too: its reason is reported.
  r.best->evaluation.timing->baselines.clear();
  r.best->evaluation.timing->baseline_errors["compile"] = "torch.compile raised";
  EXPECT_TRUE(delivery_as_comparison(r, {"compile"}).has_value());
  EXPECT_TRUE(delivery_as_comparison(optimized(true), {"eager"}).has_value());
}

TEST(DeliveryAsComparison, NothingDeliveredNeedsTheSideBySideJob) {
  EXPECT_FALSE(delivery_as_comparison(optimized(false), {"eager"}).has_value());
}

TEST(ComparisonPlanBound, SumsTheRegionsBounds) {
  EXPECT_EQ(plan_bound_ms(optimized(false).plan), 0.5);
  EXPECT_EQ(plan_bound_ms(json{{"regions", {{{"bound_ms", 0.0}}}}}), std::nullopt);  // no work counted anywhere
  EXPECT_EQ(plan_bound_ms(json::object()), std::nullopt);
  EXPECT_EQ(plan_bound_ms(nullptr), std::nullopt);
}

TEST(ComparisonResult, AnImprovedProblemTakesItsSpeedupsFromTheSideBySideJob) {
  eval::Timing t = timing(3.0, 1.5);
  t.baselines["compile"] = testing::stats(2.25);
  const ProblemResult r = make_problem_result(kProblem, optimized(true, "NVIDIA H200", {"s3_elementwise_fusion", "unknown_id"}),
                                              passed(t), "", knowledge_with_recipes(), true);
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.name, "relu");
  EXPECT_EQ(r.group, "fusion");
  EXPECT_EQ(r.outcome, "improved");
  EXPECT_DOUBLE_EQ(*r.speedup_eager, 2.0);
  EXPECT_DOUBLE_EQ(*r.speedup_compile, 1.5);  // 2.25 / 1.5
  EXPECT_EQ(r.times.eager, (TimeSummary{3.0, 3.0 * 0.95, 3.0 * 1.05}));
  EXPECT_EQ(r.times.best->median_ms, 1.5);
  EXPECT_EQ(r.times.compile->median_ms, 2.25);
  EXPECT_DOUBLE_EQ(*r.sol_ms, 0.5);
  EXPECT_DOUBLE_EQ(*r.sol_fraction, 0.5 / 1.5);
  EXPECT_EQ(r.spaces, (std::vector<std::string>{"S3"}));  // the known recipe's space, not the candidate's S1
  EXPECT_EQ(r.recipes, (std::vector<std::string>{"s3_elementwise_fusion", "unknown_id"}));
  EXPECT_EQ(r.candidates, (CandidateCounts{6, 4, 1}));
  EXPECT_EQ(r.run_dir, "/out/runs/relu");
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.baseline_errors.empty());
}

TEST(ComparisonResult, NothingFasterHandsBackTheOriginalAtExactlyOne) {
  eval::Timing t = timing(2.0, 1.9);  // the reference against itself: noise, not a speed-up
  t.baselines["compile"] = testing::stats(1.0);
  const ProblemResult r = make_problem_result(kProblem, optimized(false), passed(t), "", knowledge_with_recipes(), true);
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.outcome, "no_improvement");
  EXPECT_EQ(r.speedup_eager, 1.0);
  EXPECT_DOUBLE_EQ(*r.speedup_compile, 0.5);    // torch.compile (1.0 ms) against the original (2.0 ms)
  EXPECT_DOUBLE_EQ(*r.sol_fraction, 0.25);      // 0.5 ms over the original's 2.0 ms
  EXPECT_EQ(r.times.best->median_ms, 1.9);      // what was measured is kept
  EXPECT_TRUE(r.spaces.empty());
  EXPECT_TRUE(r.recipes.empty());
  // Without the compile baseline nothing of it is reported.
  const ProblemResult eager_only = make_problem_result(kProblem, optimized(false), passed(t), "", knowledge_with_recipes(), false);
  EXPECT_FALSE(eager_only.speedup_compile);
  EXPECT_FALSE(eager_only.times.compile);
}

TEST(ComparisonResult, ACompileBaselineThatFailedIsReportedNotCounted) {
  eval::Timing t = timing(2.0, 1.0);
  t.baseline_errors["compile"] = "torch.compile failed: no C compiler";
  const ProblemResult r = make_problem_result(kProblem, optimized(true), passed(t), "", knowledge_with_recipes(), true);
  EXPECT_TRUE(r.correct);
  EXPECT_DOUBLE_EQ(*r.speedup_eager, 2.0);
  EXPECT_FALSE(r.speedup_compile);
  EXPECT_EQ(r.baseline_errors, (std::map<std::string, std::string>{{"compile", "torch.compile failed: no C compiler"}}));
  eval::Timing silent = timing(2.0, 1.0);  // asked for, neither timed nor explained
  EXPECT_EQ(make_problem_result(kProblem, optimized(true), passed(silent), "", knowledge_with_recipes(), true).baseline_errors.at("compile"),
            "the worker returned no time for it");
}

TEST(ComparisonResult, ADeliveredCandidateFailingACheckSideBySideIsNotCorrect) {
  eval::Evaluation failed;
  failed.verdict = eval::Verdict::Failed;
  failed.failures.push_back({"values", "max abs error 0.5 > atol"});
  const ProblemResult r = make_problem_result(kProblem, optimized(true), failed, "", knowledge_with_recipes(), true);
  EXPECT_FALSE(r.correct);
  EXPECT_FALSE(r.speedup_eager);
  EXPECT_EQ(*r.error, "the delivered code failed verification side by side with the reference: values: max abs error 0.5 > atol");
}

TEST(ComparisonResult, AJobThatDidNotRunFallsBackOnTheOptimizersEvidence) {
  eval::Evaluation timed_out;
  timed_out.verdict = eval::Verdict::Failed;
  eval::WorkerFailure failure;
  failure.kind = eval::WorkerFailureKind::Timeout;
  failure.message = "the job ran past 600 s";
  timed_out.job_failure = failure;
  timed_out.failures.push_back({"timeout", "the job ran past 600 s"});
  const ProblemResult r = make_problem_result(kProblem, optimized(true), timed_out, "", knowledge_with_recipes(), true);
  EXPECT_TRUE(r.correct);  // verified in its delivered form by the optimizer
  EXPECT_DOUBLE_EQ(*r.speedup_eager, 2.0);
  EXPECT_EQ(r.times.best->median_ms, 1.0);
  EXPECT_DOUBLE_EQ(*r.sol_fraction, 0.5);
  EXPECT_FALSE(r.speedup_compile);
  EXPECT_EQ(*r.error, "the side-by-side measurement did not run (the job ran past 600 s): times from the optimizer's own verification");
  EXPECT_EQ(r.baseline_errors.at("compile"), "not measured: the side-by-side job did not run");

  // The task could not even be built: the same fallback, with that reason; here nothing was faster.
  const ProblemResult original = make_problem_result(kProblem, optimized(false), std::nullopt, "bad spec", knowledge_with_recipes(), false);
  EXPECT_TRUE(original.correct);
  EXPECT_EQ(original.speedup_eager, 1.0);
  EXPECT_EQ(original.times.best, original.times.eager);
  EXPECT_EQ(*original.error, "the side-by-side measurement did not run (bad spec): times from the optimizer's own verification");
}

TEST(ComparisonResult, EveryCandidatesVerdictInProposalOrderWithItsCodeHash) {
  const ProblemResult r =
      make_problem_result(kProblem, optimized(true), passed(timing(2.0, 1.0)), "", knowledge_with_recipes(), false);
  ASSERT_TRUE(r.candidate_verdicts);
  EXPECT_EQ(*r.candidate_verdicts,
            (std::vector<CandidateVerdict>{
                {"c1", {}, "S3", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "rejected"},  // sha256("")
                {"c2", {"s1_fused_op"}, "S1", sha256_hex("class ModelNew: pass  # candidate"), "passed"},
                {"c3", {"s3_elementwise_fusion", "s3_vectorize"}, "S3", sha256_hex("class ModelNew: pass  # other"), "passed"}}));
  EXPECT_EQ(make_problem_result(kProblem, optimized(false), passed(timing(2.0, 2.0)), "", knowledge_with_recipes(), false)
                .candidate_verdicts->at(1)
                .verdict,
            "failed");
  // An attempt the optimizer never judged (it stopped first) says so rather than passing for one.
  optimize::OptimizeResult stopped = optimized(false);
  stopped.attempts[2].verdict.clear();
  EXPECT_EQ(candidate_verdicts(stopped)[2].verdict, "not_evaluated");
  EXPECT_EQ(candidate_verdicts(optimize::OptimizeResult{}), std::vector<CandidateVerdict>{});
}

TEST(ComparisonResult, TheTimeBreakdownJoinsTheOptimizersAndTheMeasurements) {
  optimize::OptimizeResult r = optimized(true);
  r.time_breakdown.total_s = 40.0;
  r.time_breakdown.candidate_evaluations = 2;
  r.time_breakdown.candidate_phases = {{"verification", 2000.0}, {"timing", 1000.0}};
  eval::Evaluation comparison = passed(timing(2.0, 1.0));
  comparison.phases = {{"reference_load", 50.0}, {"timing", 700.0}};
  const ProblemTimeBreakdown t = problem_time_breakdown(r, comparison, 3.5, 44.0);
  EXPECT_EQ(t.total_s, 44.0);
  EXPECT_EQ(t.optimize, r.time_breakdown);
  EXPECT_EQ(t.measure_s, 3.5);
  EXPECT_EQ(t.measure_phases, (std::vector<eval::PhaseTime>{{"reference_load", 50.0}, {"timing", 700.0}}));
  // The job did not run (its task could not be built): no measure, no phases.
  const ProblemTimeBreakdown none = problem_time_breakdown(r, std::nullopt, std::nullopt, 40.5);
  EXPECT_FALSE(none.measure_s);
  EXPECT_TRUE(none.measure_phases.empty());
  EXPECT_EQ(none.optimize.candidate_phases, r.time_breakdown.candidate_phases);
}

TEST(ComparisonResult, AnOptimizerErrorIsNotCorrectAndKeepsItsMessage) {
  optimize::OptimizeResult failed = optimized(false);
  failed.outcome = optimize::Outcome::Error;
  failed.message = "the reference does not run under the verification harness: runtime: boom";
  failed.reference_timing.reset();
  const ProblemResult r = make_problem_result(kProblem, failed, std::nullopt, "", knowledge_with_recipes(), true);
  EXPECT_FALSE(r.correct);
  EXPECT_EQ(r.outcome, "error");
  EXPECT_EQ(*r.error, failed.message);
  EXPECT_FALSE(r.speedup_eager);
  EXPECT_FALSE(r.speedup_compile);
  EXPECT_FALSE(r.sol_fraction);
  EXPECT_FALSE(r.times.eager);
  EXPECT_TRUE(r.baseline_errors.empty());
}

}  // namespace
}  // namespace hiera::engine::bench
