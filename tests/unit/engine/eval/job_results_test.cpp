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
