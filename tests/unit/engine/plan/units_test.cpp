// How the planner writes quantities in its reasons.
#include "engine/plan/units.h"

#include <gtest/gtest.h>

namespace hiera::engine::plan {
namespace {

TEST(PlanUnitsTest, TimesHaveThreeFiguresInTheirUnit) {
  EXPECT_EQ(format_time_ms(0.0000831), "0.0831 µs");
  EXPECT_EQ(format_time_ms(0.0019), "1.90 µs");
  EXPECT_EQ(format_time_ms(0.0062), "6.20 µs");
  EXPECT_EQ(format_time_ms(0.0123), "12.3 µs");
  EXPECT_EQ(format_time_ms(0.255), "255 µs");
  EXPECT_EQ(format_time_ms(2.126848), "2.13 ms");
  EXPECT_EQ(format_time_ms(23.4), "23.4 ms");
  EXPECT_EQ(format_time_ms(1250.0), "1.25 s");
}

TEST(PlanUnitsTest, BytesAndFlopsUseDecimalPrefixes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(8200), "8.2 KB");
  EXPECT_EQ(format_bytes(8e6), "8.0 MB");
  EXPECT_EQ(format_bytes(167780352), "167.8 MB");
  EXPECT_EQ(format_bytes(1073741824), "1.07 GB");
  EXPECT_EQ(format_bytes(12.9e9), "12.9 GB");
  EXPECT_EQ(format_flops(5324800), "5.3 MFLOP");
  EXPECT_EQ(format_flops(274945015808.0), "275 GFLOP");
  EXPECT_EQ(format_flops(1099511627776.0), "1.10 TFLOP");
}

TEST(PlanUnitsTest, RatesPercentagesSpeedupsAndCounts) {
  EXPECT_EQ(format_bandwidth(4207.188), "4207 GB/s");
  EXPECT_EQ(format_tflops(806.339), "806.3 TFLOP/s");
  EXPECT_EQ(format_percent(0.306), "31%");
  EXPECT_EQ(format_percent(0.92), "92%");
  EXPECT_EQ(format_speedup(1.018), "1.02×");
  EXPECT_EQ(format_speedup(64.6), "64.6×");
  EXPECT_EQ(format_speedup(120.4), "120×");
  EXPECT_EQ(count_of(1, "launch", "launches"), "1 launch");
  EXPECT_EQ(count_of(40, "launch", "launches"), "40 launches");
}

}  // namespace
}  // namespace hiera::engine::plan
