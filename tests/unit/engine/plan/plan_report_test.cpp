// The plan in the report: JSON and Markdown.
#include "engine/plan/plan_report.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/plan/plan_test_support.h"

namespace hiera::engine::plan {
namespace {

using nlohmann::json;
using testing::fixture_regions;
using testing::load_fixture;
using testing::plan_fixture;
using testing::probe_ceilings;
using testing::without_tf32;
using testing::test_recipes;

Plan gemm_plan() { return plan_fixture("gemm_bias_gelu_bf16_h200.json"); }  // dtype bfloat16

TEST(PlanReportTest, JsonCarriesEveryNumberAndReason) {
  const Plan plan = gemm_plan();
  const json out = to_json(plan);
  EXPECT_EQ(out["ceilings"]["source"], "probe of NVIDIA H200");
  EXPECT_EQ(out["ceilings"]["bandwidth_gbs"], 4207.188474203219);
  EXPECT_EQ(out["ceilings"]["tflops"]["bfloat16"], 806.3394658751788);
  EXPECT_EQ(out["ceilings"]["launch_overhead_us"], 3.0);
  EXPECT_EQ(out["context"]["allowed_spaces"], json({"S1", "S2", "S3"}));
  EXPECT_EQ(out["context"]["allowed_precision"], json::array());
  EXPECT_EQ(out["context"]["candidate_budget"], 24);
  EXPECT_EQ(out["context"]["near_sol"], 0.85);
  EXPECT_EQ(out["context"]["dtype"], "bfloat16");
  ASSERT_EQ(out["regions"].size(), 1u);
  const json region = out["regions"][0];
  EXPECT_EQ(region["name"], "linear+bias+gelu");
  EXPECT_EQ(region["pattern"], "gemm_epilogue");
  EXPECT_EQ(region["kernels"].size(), 3u);
  EXPECT_EQ(region["launches"], 3);
  EXPECT_EQ(region["elements"], 33554432);
  EXPECT_EQ(region["last_dim"], 4096);
  EXPECT_EQ(region["bottleneck"], "compute");
  EXPECT_EQ(region["compute_dtype"], "bfloat16");
  EXPECT_EQ(region["planned"], true);
  EXPECT_EQ(region["work_counted"], true);
  EXPECT_EQ(region["faster_than_light"], false);
  EXPECT_EQ(region["reason"], plan.regions[0].point.reason);
  EXPECT_EQ(region["speed_of_light_ms"], plan.regions[0].point.speed_of_light_ms);
  EXPECT_EQ(region["headroom_ms"], plan.regions[0].point.headroom_ms);
  EXPECT_EQ(region["priority_ms"], plan.regions[0].priority_ms);
  ASSERT_EQ(out["steps"].size(), 3u);
  EXPECT_EQ(out["steps"][0], json({{"region", "linear+bias+gelu"},
                                   {"space", "S1"},
                                   {"recipes", {"compile-epilogue-fusion", "addmm-bias-epilogue"}},
                                   {"budget", 8},
                                   {"reason", plan.steps[0].reason}}));
  EXPECT_EQ(out["decisions"], json(plan.decisions));
  EXPECT_EQ(out["at_speed_of_light"], false);
}

TEST(PlanReportTest, DecisionsAsJson) {
  EXPECT_EQ(to_json(next_action(gemm_plan(), {})),
            json({{"action", "continue"}, {"step", 0}, {"candidates", 8},
                  {"reason", "start: linear+bias+gelu in S1 (8 candidates)"}}));
  Decision stop;
  stop.reason = "done";
  EXPECT_EQ(to_json(stop), json({{"action", "stop"}, {"step", nullptr}, {"candidates", 0}, {"reason", "done"}}));
}

TEST(PlanReportTest, Markdown) {
  EXPECT_EQ(to_markdown(gemm_plan()),
            "**Roofline:** probe of NVIDIA H200: 4207 GB/s; bfloat16 806.3, float16 771.4, float32 51.0, tf32 416.8 "
            "TFLOP/s; 3.00 µs per launch\n"
            "\n"
            "| region | bound | measured | speed of light | of speed of light | headroom | priority |\n"
            "|---|---|---|---|---|---|---|\n"
            "| linear+bias+gelu | compute | 509 µs | 341 µs | 67% | 168 µs | 102 µs |\n"
            "\n"
            "| step | region | space | recipes | budget | why |\n"
            "|---|---|---|---|---|---|\n"
            "| 1 | linear+bias+gelu | S1 | compile-epilogue-fusion, addmm-bias-epilogue | 8 | compute-bound "
            "gemm_epilogue at 67% of speed of light, headroom 168 µs; the cheapest space that promises the 1.27× that "
            "reaches 85% of speed of light; best recipe compile-epilogue-fusion, up to 1.30× |\n"
            "| 2 | linear+bias+gelu | S2 | cublaslt-epilogue-gelu-bias | 8 | compute-bound gemm_epilogue at 67% of "
            "speed of light, headroom 168 µs; escalation from S1 when it stops paying; best recipe "
            "cublaslt-epilogue-gelu-bias, up to 1.35× |\n"
            "| 3 | linear+bias+gelu | S3 | cutlass-evt-epilogue | 8 | compute-bound gemm_epilogue at 67% of speed of "
            "light, headroom 168 µs; escalation from S2 when it stops paying; best recipe cutlass-evt-epilogue, up to "
            "1.40× |\n"
            "\n"
            "**Where each region stands**\n"
            "\n"
            "- linear+bias+gelu: compute-bound: 275 GFLOP at 806.3 TFLOP/s (bfloat16) is 341 µs; measured 509 µs (67% "
            "of speed of light)\n"
            "\n"
            "**Decisions**\n"
            "\n"
            "1. roofline: probe of NVIDIA H200: 4207 GB/s; bfloat16 806.3, float16 771.4, float32 51.0, tf32 416.8 "
            "TFLOP/s; 3.00 µs per launch\n"
            "2. #1 linear+bias+gelu: priority 102 µs = headroom 168 µs × likelihood 0.61 (expected 1.25× from "
            "cutlass-evt-epilogue)\n"
            "3. linear+bias+gelu: start in S1: compile-epilogue-fusion, up to 1.30×, enough for the 1.27× that "
            "reaches 85% of speed of light; then S2, S3 when a space stops paying\n"
            "4. budget: 24 candidates over 3 steps, 2 each and 18 more by headroom: linear+bias+gelu: S1 8, S2 8, S3 "
            "8\n");
}

TEST(PlanReportTest, MarkdownAtSpeedOfLightAndEscapedCells) {
  PlanContext context;
  context.dtype = "float32";
  std::vector<Region> regions = fixture_regions("sgemm_8192_fp32_h200.json");
  regions[0].name = "a|b";
  // Without a TF32 rate the SGEMM's float32 peak is its only one (testing::without_tf32): at speed of light.
  const std::string markdown = to_markdown(
      make_plan(regions, without_tf32(probe_ceilings(load_fixture("sgemm_8192_fp32_h200.json"))), context, {}));
  EXPECT_NE(markdown.find("**At speed of light:** nothing to optimize.\n"), std::string::npos);
  EXPECT_NE(markdown.find("| a\\|b | compute | 23.4 ms | 21.5 ms | 92% | 1.87 ms | skipped |\n"), std::string::npos);
  EXPECT_EQ(markdown.find("| step |"), std::string::npos);
}

}  // namespace
}  // namespace hiera::engine::plan
