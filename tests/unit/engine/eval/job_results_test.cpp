// Parsing the worker's JSON results into typed structs.
#include "engine/eval/job_results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "thrown_message.h"

namespace hiera::engine::eval {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string parse_error(const json& value) {
  return hiera::testing::thrown_message<MalformedResult>([&] { parse_evaluation(value); });
}

TEST(JobResultsTest, MinimalEvaluation) {
  const Evaluation evaluation = parse_evaluation(json{{"verdict", "passed"}});
  EXPECT_EQ(evaluation.verdict, Verdict::Passed);
  EXPECT_TRUE(evaluation.passed());
  EXPECT_TRUE(evaluation.failures.empty());
  EXPECT_FALSE(evaluation.timing);
  EXPECT_FALSE(evaluation.speed_of_light_ms);
}

TEST(JobResultsTest, TheSandboxIsReadAsProtectionsByName) {
  const Evaluation e = parse_evaluation(json{{"verdict", "failed"},
                                             {"sandbox", {{"network", "in force (an empty network namespace)"},
                                                          {"dies_with_parent", "in force"},
                                                          {"unprivileged_user", "not in force: not root"},
                                                          {"odd", 3}}}});
  ASSERT_EQ(e.sandbox.size(), 4u);
  EXPECT_EQ(e.sandbox[0], (Protection{"dies_with_parent", "in force"}));
  EXPECT_EQ(e.sandbox[1], (Protection{"network", "in force (an empty network namespace)"}));
  EXPECT_EQ(e.sandbox[2], (Protection{"odd", "3"}));
  EXPECT_EQ(e.sandbox[3], (Protection{"unprivileged_user", "not in force: not root"}));
  EXPECT_TRUE(e.sandbox[1].in_force());
  EXPECT_FALSE(e.sandbox[3].in_force());
  // A protection in force may be reported by its detail alone (sandbox.py's ok(name, detail)).
  EXPECT_TRUE((Protection{"hidden_secret_places", "/root/.cache/hiera"}).in_force());
  EXPECT_TRUE((Protection{"no_network", "a network namespace of its own, with no interfaces up"}).in_force());
  // Not an object: no protections, and no error (a detail never decides a verdict).
  EXPECT_TRUE(parse_evaluation(json{{"verdict", "passed"}, {"sandbox", "yes"}}).sandbox.empty());
}

TEST(JobResultsTest, PassedWithFailuresListedIsNotPassed) {
  const Evaluation evaluation =
      parse_evaluation(json{{"verdict", "passed"}, {"failures", {{{"check", "static"}, {"message", "m"}}}}});
  EXPECT_FALSE(evaluation.passed());
}

TEST(JobResultsTest, NullOptionalFieldsStayDefault) {
  const Evaluation evaluation = parse_evaluation(
      json{{"verdict", "failed"}, {"failures", nullptr}, {"timing", nullptr}, {"speed_of_light_ms", nullptr}});
  EXPECT_TRUE(evaluation.failures.empty());
  EXPECT_FALSE(evaluation.timing);
  EXPECT_FALSE(evaluation.speed_of_light_ms);
}

TEST(JobResultsTest, IntegralFloatsAreAcceptedAsCounts) {
  const Evaluation evaluation =
      parse_evaluation(json{{"verdict", "failed"}, {"trials", {{{"seed", 5.0}, {"mismatches", 2.0}}}}});
  EXPECT_EQ(evaluation.trials[0].seed, 5);
  EXPECT_EQ(evaluation.trials[0].mismatches, 2);
}

TEST(JobResultsTest, ATrialCarriesTheFloat64ArbitersFigures) {
  const Evaluation e = parse_evaluation(json{
      {"verdict", "passed"},
      {"trials",
       {{{"seed", 1}, {"distribution", "large"}, {"max_abs_error", 2.5e-4}, {"max_rel_error", 1e-4}, {"mismatches", 0},
         {"float64_arbitrated", 12}, {"max_abs_error_float64", 3e-5}, {"reference_error_float64", 2e-4}},
        {{"seed", 2}, {"distribution", "uniform"}, {"max_abs_error", 1e-6}, {"max_rel_error", 1e-6}, {"mismatches", 0}}}}});
  ASSERT_EQ(e.trials.size(), 2u);
  EXPECT_EQ(e.trials[0].float64_arbitrated, 12);
  EXPECT_EQ(e.trials[0].max_abs_error_float64, 3e-5);
  EXPECT_EQ(e.trials[0].reference_error_float64, 2e-4);
  EXPECT_EQ(e.trials[1].float64_arbitrated, 0);
  EXPECT_FALSE(e.trials[1].max_abs_error_float64.has_value());
  EXPECT_THAT(parse_error(json{{"verdict", "passed"}, {"trials", {{{"seed", 1}, {"float64_arbitrated", "many"}}}}}),
              HasSubstr("float64_arbitrated"));
}

TEST(JobResultsTest, MalformedEvaluationsNameTheField) {
  EXPECT_THAT(parse_error(json::array()), HasSubstr("evaluation must be an object"));
  EXPECT_THAT(parse_error(json::object()), HasSubstr("evaluation.verdict is missing"));
  EXPECT_THAT(parse_error(json{{"verdict", "maybe"}}), HasSubstr("\"maybe\""));
  EXPECT_THAT(parse_error(json{{"verdict", "failed"}, {"failures", {{{"message", "m"}}}}}),
              HasSubstr("evaluation.failures[0].check is missing"));
  EXPECT_THAT(parse_error(json{{"verdict", "failed"}, {"trials", {{{"mismatches", 1.5}}}}}),
              HasSubstr("evaluation.trials[0].mismatches must be an integer"));
  EXPECT_THAT(parse_error(json{{"verdict", "failed"}, {"trials", {{{"mismatches", 1e300}}}}}),
              HasSubstr("must be an integer"));
  EXPECT_THAT(parse_error(json{{"verdict", "passed"}, {"timing", {{"speedup", "fast"}}}}),
              HasSubstr("evaluation.timing.speedup must be a number"));
}

TEST(JobResultsTest, BaselinesAndTheirErrorsAreParsed) {
  const json stats = {{"median_ms", 0.08}, {"min_ms", 0.07}, {"p10_ms", 0.075}, {"p90_ms", 0.09}, {"trials", 50}};
  const Evaluation evaluation = parse_evaluation(
      json{{"verdict", "passed"},
           {"timing", {{"speedup", 2.0},
                       {"baselines", {{"compile", stats}}},
                       {"baseline_errors", {{"cudagraphs", "torch.compile is not available in torch 1.13.0a0"}}}}}});
  ASSERT_TRUE(evaluation.timing);
  ASSERT_EQ(evaluation.timing->baselines.size(), 1u);
  const TimingStats& compiled = evaluation.timing->baselines.at("compile");
  EXPECT_DOUBLE_EQ(compiled.median_ms, 0.08);
  EXPECT_DOUBLE_EQ(compiled.min_ms, 0.07);
  EXPECT_DOUBLE_EQ(compiled.p10_ms, 0.075);
  EXPECT_DOUBLE_EQ(compiled.p90_ms, 0.09);
  EXPECT_EQ(compiled.trials, 50);
  EXPECT_EQ(evaluation.timing->baseline_errors.at("cudagraphs"), "torch.compile is not available in torch 1.13.0a0");
}

TEST(JobResultsTest, TimingWithoutBaselinesHasNone) {
  const Evaluation evaluation =
      parse_evaluation(json{{"verdict", "passed"}, {"timing", {{"speedup", 1.5}, {"baselines", nullptr}}}});
  ASSERT_TRUE(evaluation.timing);
  EXPECT_TRUE(evaluation.timing->baselines.empty());
  EXPECT_TRUE(evaluation.timing->baseline_errors.empty());
}

TEST(JobResultsTest, MalformedBaselinesNameTheField) {
  EXPECT_THAT(parse_error(json{{"verdict", "passed"}, {"timing", {{"baselines", json::array()}}}}),
              HasSubstr("evaluation.timing.baselines must be an object"));
  EXPECT_THAT(parse_error(json{{"verdict", "passed"}, {"timing", {{"baselines", {{"compile", {{"median_ms", "x"}}}}}}}}),
              HasSubstr("evaluation.timing.baselines.compile.median_ms must be a number"));
  EXPECT_THAT(parse_error(json{{"verdict", "passed"}, {"timing", {{"baseline_errors", {{"compile", 3}}}}}}),
              HasSubstr("evaluation.timing.baseline_errors.compile must be a string"));
}

TEST(JobResultsTest, KernelBenchVerdictIsParsedBesideHierasOwn) {
  const json kernelbench = {{"passed", false}, {"trials", 5},   {"atol", 1e-4},
                            {"rtol", 1e-4},    {"max_abs_error", 2.5e-4}, {"message", "output 0: not allclose"}};
  const Evaluation evaluation = parse_evaluation(json{{"verdict", "passed"}, {"kernelbench", kernelbench}});
  EXPECT_TRUE(evaluation.passed());  // it never changes hiera's verdict
  ASSERT_TRUE(evaluation.kernelbench);
  EXPECT_EQ(*evaluation.kernelbench, (KernelBenchVerdict{false, 5, 1e-4, 1e-4, 2.5e-4, "output 0: not allclose"}));

  // Absent or null: none; only passed is required.
  EXPECT_FALSE(parse_evaluation(json{{"verdict", "passed"}}).kernelbench);
  EXPECT_FALSE(parse_evaluation(json{{"verdict", "passed"}, {"kernelbench", nullptr}}).kernelbench);
  const Evaluation bare = parse_evaluation(json{{"verdict", "failed"}, {"kernelbench", {{"passed", true}, {"max_abs_error", nullptr}}}});
  ASSERT_TRUE(bare.kernelbench);
  EXPECT_EQ(*bare.kernelbench, (KernelBenchVerdict{true, 0, 0.0, 0.0, std::nullopt, ""}));
}

TEST(JobResultsTest, MalformedKernelBenchVerdictsNameTheField) {
  const auto with = [](json kernelbench) { return json{{"verdict", "passed"}, {"kernelbench", std::move(kernelbench)}}; };
  EXPECT_EQ(parse_error(with(true)), "evaluation.kernelbench must be an object, got boolean");
  EXPECT_EQ(parse_error(with(json::object())), "evaluation.kernelbench.passed is missing");
  EXPECT_EQ(parse_error(with({{"passed", "yes"}})), "evaluation.kernelbench.passed must be true or false");
  EXPECT_EQ(parse_error(with({{"passed", true}, {"trials", 4.5}})), "evaluation.kernelbench.trials must be an integer");
  EXPECT_EQ(parse_error(with({{"passed", true}, {"atol", "1e-4"}})), "evaluation.kernelbench.atol must be a number");
  EXPECT_EQ(parse_error(with({{"passed", true}, {"max_abs_error", "big"}})),
            "evaluation.kernelbench.max_abs_error must be a number");
  EXPECT_EQ(parse_error(with({{"passed", true}, {"message", 3}})), "evaluation.kernelbench.message must be a string");
}

TEST(JobResultsTest, ADeliveryCarriesTheKernelBenchVerdictBesideOrInsideItsEvaluation) {
  const json kernelbench = {{"passed", true}, {"trials", 5}, {"atol", 1e-2}, {"rtol", 1e-2}, {"max_abs_error", 3e-3}};
  const Delivery beside = parse_delivery(
      json{{"delivered_source", "src"}, {"evaluation", {{"verdict", "passed"}}}, {"kernelbench", kernelbench}});
  ASSERT_TRUE(beside.evaluation.kernelbench);
  EXPECT_EQ(*beside.evaluation.kernelbench, (KernelBenchVerdict{true, 5, 1e-2, 1e-2, 3e-3, ""}));
  const Delivery inside = parse_delivery(
      json{{"delivered_source", "src"}, {"evaluation", {{"verdict", "passed"}, {"kernelbench", kernelbench}}}});
  ASSERT_TRUE(inside.evaluation.kernelbench);
  EXPECT_TRUE(inside.evaluation.kernelbench->passed);
  EXPECT_FALSE(parse_delivery(json{{"evaluation", {{"verdict", "passed"}}}}).evaluation.kernelbench);
  EXPECT_EQ(hiera::testing::thrown_message<MalformedResult>([&] {
              parse_delivery(json{{"evaluation", {{"verdict", "passed"}}}, {"kernelbench", {{"passed", 1}}}});
            }),
            "deliver.kernelbench.passed must be true or false");
}

TEST(JobResultsTest, PhasesAreParsedInTheRunnersOrder) {
  // A JSON object arrives by name; the phases come back in the order the runner goes through them.
  const Evaluation python = parse_evaluation(json{{"verdict", "passed"},
                                                  {"phases_ms", {{"timing", 30.5}, {"reference_load", 12.25},
                                                                 {"verification", 8.0}, {"zz_new", 1.0},
                                                                 {"candidate_start", 0}, {"aa_new", 2.0}}}});
  EXPECT_EQ(python.phases, (std::vector<PhaseTime>{{"reference_load", 12.25}, {"candidate_start", 0.0}, {"verification", 8.0},
                                                   {"timing", 30.5}, {"aa_new", 2.0}, {"zz_new", 1.0}}));
  const Evaluation native =
      parse_evaluation(json{{"verdict", "failed"}, {"phases_ms", {{"time", 0.0}, {"verify", 95.0}, {"compile", 180.5}}}});
  EXPECT_EQ(native.phases, (std::vector<PhaseTime>{{"compile", 180.5}, {"verify", 95.0}, {"time", 0.0}}));
  EXPECT_TRUE(parse_evaluation(json{{"verdict", "passed"}}).phases.empty());
  EXPECT_TRUE(parse_evaluation(json{{"verdict", "passed"}, {"phases_ms", nullptr}}).phases.empty());
}

TEST(JobResultsTest, MalformedPhasesAreIgnoredNotFatal) {
  // Timing is a detail: a value that is no number of milliseconds is left out, the verdict stands.
  const Evaluation evaluation = parse_evaluation(
      json{{"verdict", "passed"},
           {"phases_ms", {{"timing", "slow"}, {"verification", nullptr}, {"calibration", true}, {"baselines", -3.0},
                          {"second_shape", {{"ms", 1}}}, {"candidate_load", json::array({1})}, {"kernelbench", 4.5}}}});
  EXPECT_TRUE(evaluation.passed());
  EXPECT_EQ(evaluation.phases, (std::vector<PhaseTime>{{"kernelbench", 4.5}}));
  for (const json& odd : {json("12 ms"), json::array({1, 2}), json(7), json(false)}) {
    const Evaluation e = parse_evaluation(json{{"verdict", "passed"}, {"phases_ms", odd}});
    EXPECT_TRUE(e.passed()) << odd;
    EXPECT_TRUE(e.phases.empty()) << odd;
  }
}

TEST(JobResultsTest, ADeliveryCarriesItsEvaluationsPhases) {
  const Delivery delivery = parse_delivery(json{
      {"delivered_source", "src"},
      {"evaluation", {{"verdict", "passed"}, {"phases_ms", {{"verification", 100.0}, {"kernelbench", 20.0}}}}}});
  EXPECT_EQ(delivery.evaluation.phases, (std::vector<PhaseTime>{{"verification", 100.0}, {"kernelbench", 20.0}}));
}

TEST(JobResultsTest, CaptureKeepsTheGraphOrNull) {
  const json graph = {{"method", "fx"}, {"nodes", json::array()}};
  const CaptureResult captured = parse_capture(json{{"graph", graph}, {"pid", 12}});
  EXPECT_TRUE(captured.ok());
  EXPECT_EQ(captured.graph, graph);
  EXPECT_TRUE(parse_capture(json{{"graph", nullptr}}).graph.is_null());
  const auto capture_error = [](const json& value) {
    return hiera::testing::thrown_message<MalformedResult>([&] { parse_capture(value); });
  };
  EXPECT_THAT(capture_error(json::array()), HasSubstr("capture must be an object"));
  EXPECT_THAT(capture_error(json::object()), HasSubstr("capture.graph is missing"));
  EXPECT_THAT(capture_error(json{{"graph", "fx"}}), HasSubstr("capture.graph must be an object or null, got string"));
}

TEST(JobResultsTest, CompileResultNeedsOk) {
  EXPECT_THROW(parse_compile_result(json{{"log", ""}}), MalformedResult);
  const CompileResult compiled = parse_compile_result(json{{"ok", true}, {"cache_hit", true}, {"key", "abc"}});
  EXPECT_TRUE(compiled.ok);
  EXPECT_TRUE(compiled.cache_hit);
  EXPECT_EQ(compiled.key, "abc");
}

TEST(JobResultsTest, ProbeAcceptsNumericVersions) {
  const DeviceProbe probe = parse_probe(json{{"name", "NVIDIA H200"}, {"driver", 570}, {"cuda_runtime", "12.8"}});
  EXPECT_EQ(probe.driver, "570");
  EXPECT_EQ(probe.cuda_runtime, "12.8");
  EXPECT_THROW(parse_probe(json{{"cc", "9.0"}}), MalformedResult);
}

}  // namespace
}  // namespace hiera::engine::eval
