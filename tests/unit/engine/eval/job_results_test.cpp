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
