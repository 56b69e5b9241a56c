// What a run measured, as front ends show it: exact timing, roofline
// fraction, bottleneck, per-kernel shares and the verified speed-up.
#include "engine/facade/run_measurement.h"

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

using nlohmann::json;

optimize::OptimizeResult measured_result() {
  optimize::OptimizeResult r;
  r.gpu = "NVIDIA H200";
  r.run_dir = "/runs/model-Model-1";
  r.reference_timing = eval::Timing{{2.0, 1.8, 1.9, 2.2, 50}, {2.0, 1.8, 1.9, 2.2, 50}, 1.0, {}, {}};
  r.plan = json{{"regions", json::array({
                              {{"work_counted", true}, {"bound_ms", 0.3}, {"measured_ms", 0.5}, {"bottleneck", "compute"}},
                              {{"work_counted", true}, {"bound_ms", 0.2}, {"measured_ms", 1.5}, {"bottleneck", "memory"}},
                              {{"work_counted", false}, {"bound_ms", 9.0}, {"measured_ms", 0.1}, {"bottleneck", "latency"}},
                          })}};
  r.reference_profile = json{{"kernels", json::array({{{"name", "gemm"}, {"total_ns", 3e6}}, {{"name", "relu"}, {"total_ns", 1e6}}})}};
  r.profiled_calls = 2;
  return r;
}

TEST(RunMeasurement, TheReferenceOnlyWithoutTheOptimization) {
  const auto m = run_measurement(measured_result(), false);
  EXPECT_EQ(m.gpu, "NVIDIA H200");
  EXPECT_EQ(m.median_ms, 2.0);
  EXPECT_EQ(m.p10_ms, 1.9);
  EXPECT_EQ(m.p90_ms, 2.2);
  ASSERT_TRUE(m.sol_fraction);
  EXPECT_DOUBLE_EQ(*m.sol_fraction, 0.5 / 2.0);  // the counted regions' bounds over the median
  EXPECT_EQ(m.bottleneck, "memory-bound");       // the costliest region's
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].name, "gemm");
  EXPECT_DOUBLE_EQ(m.kernels[0].ms, 1.5);  // 3 ms over 2 calls
  EXPECT_DOUBLE_EQ(m.kernels[0].fraction, 0.75);
  EXPECT_DOUBLE_EQ(m.kernels[1].fraction, 0.25);
  EXPECT_FALSE(m.verified_speedup);
  EXPECT_EQ(m.report_path, "");
}

TEST(RunMeasurement, TheModulesOwnBoundWinsOverTheRegions) {
  auto r = measured_result();
  r.plan["module_speed_of_light_ms"] = 1.0;
  EXPECT_DOUBLE_EQ(*run_measurement(r, false).sol_fraction, 0.5);
}

TEST(RunMeasurement, AnImprovedRunAddsItsVerifiedSpeedupAndReport) {
  auto r = measured_result();
  r.outcome = optimize::Outcome::Improved;
  optimize::BestResult best;
  best.speedup = 4.0;
  best.evaluation.verdict = eval::Verdict::Passed;
  best.evaluation.timing = eval::Timing{{2.0, 1.8, 1.9, 2.2, 50}, {0.5, 0.4, 0.45, 0.6, 50}, 4.0, {}, {}};
  r.best = best;
  const auto m = run_measurement(r, true);
  EXPECT_EQ(m.verified_speedup, 4.0);
  EXPECT_EQ(m.optimized_median_ms, 0.5);
  EXPECT_EQ(m.report_path, "/runs/model-Model-1/report.md");
}

TEST(RunMeasurement, NoPlanAndNoProfileLeaveThemUnknown) {
  optimize::OptimizeResult r;
  const auto m = run_measurement(r, true);
  EXPECT_FALSE(m.median_ms);
  EXPECT_FALSE(m.sol_fraction);
  EXPECT_EQ(m.bottleneck, "");
  EXPECT_TRUE(m.kernels.empty());
}

}  // namespace
}  // namespace hiera::engine::facade
