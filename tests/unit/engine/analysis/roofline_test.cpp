// Roofline time: the larger of compute at the dtype's peak and bytes at the bandwidth.
#include "engine/analysis/roofline.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

const Roofline kGpu{"test", 1000.0, {{"float32", 10.0}, {"float16", 100.0}}};

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
  EXPECT_FALSE(roofline_time(w, Roofline{"none", 0.0, {}}));
}

}  // namespace
}  // namespace hiera::engine::analysis
