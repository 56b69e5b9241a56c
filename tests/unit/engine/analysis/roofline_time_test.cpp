// GpuCeilings time: the larger of compute at the dtype's peak and bytes at the bandwidth.
#include "engine/analysis/roofline_time.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

const GpuCeilings kGpu{1000.0, {{"float32", 10.0}, {"float16", 100.0}}, 0.0, "test"};

TEST(AnalysisRooflineTest, MemoryAndComputeBound) {
  Work w;
  w.flops = 1e9;
  w.bytes = 4e9;
  const auto memory = roofline_time(w, kGpu);
  ASSERT_TRUE(memory);
  EXPECT_DOUBLE_EQ(memory->memory_seconds, 4e-3);
  EXPECT_DOUBLE_EQ(memory->compute_seconds, 1e-4);
  EXPECT_DOUBLE_EQ(memory->seconds, 4e-3);
  EXPECT_TRUE(memory->memory_bound);
  w.flops = 1e12;
  w.dtype = "float16";
  const auto compute = roofline_time(w, kGpu);
  EXPECT_DOUBLE_EQ(compute->seconds, 1e-2);
  EXPECT_FALSE(compute->memory_bound);
  EXPECT_EQ(compute->peak_dtype, "float16");
}

TEST(AnalysisRooflineTest, DtypesWithoutAPeakUseFloat32AndNoBandwidthIsNoEstimate) {
  Work w;
  w.flops = 1e10;
  w.dtype = "int64";
  EXPECT_EQ(roofline_time(w, kGpu)->peak_dtype, "float32");
  EXPECT_DOUBLE_EQ(roofline_time(w, kGpu)->seconds, 1e-3);
  EXPECT_FALSE(roofline_time(w, GpuCeilings{0.0, {}, 0.0, "none"}));
}

TEST(AnalysisRooflineTest, TheLaunchFloorHoldsTinyWorkButNotNothing) {
  GpuCeilings gpu = kGpu;
  gpu.launch_overhead_us = 3.0;
  Work tiny;
  tiny.bytes = 1e4;  // 10 ns of memory traffic
  const auto t = roofline_time(tiny, gpu);
  EXPECT_DOUBLE_EQ(t->speed_of_light_seconds, 1e-8);
  EXPECT_DOUBLE_EQ(t->seconds, 3e-6);
  EXPECT_TRUE(t->launch_bound);
  Work big;
  big.bytes = 4e9;
  EXPECT_FALSE(roofline_time(big, gpu)->launch_bound);
  EXPECT_DOUBLE_EQ(roofline_time(big, gpu)->seconds, 4e-3);
  // A view moves nothing and launches nothing.
  EXPECT_DOUBLE_EQ(roofline_time(Work{}, gpu)->seconds, 0.0);
  EXPECT_FALSE(roofline_time(Work{}, gpu)->launch_bound);
}

}  // namespace
}  // namespace hiera::engine::analysis
