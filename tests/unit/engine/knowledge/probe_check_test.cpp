// Probed ceilings against the datasheet: our H200's measurements pass, an
// impossible or a throttled figure is flagged with a message that says why.
#include "engine/knowledge/probe_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/knowledge/knowledge_base.h"
#include "knowledge_test_dir.h"

namespace hiera::engine::knowledge {
namespace {

GpuSpec real_h200() {
  const KnowledgeBase kb = load_knowledge(testing::source_knowledge_dir());
  const GpuSpec* spec = kb.gpu("h200");
  EXPECT_NE(spec, nullptr);
  return spec ? *spec : GpuSpec{};
}

GpuSpec small_gpu() {
  GpuSpec spec;
  spec.id = "small";
  spec.name = "Small GPU";
  spec.memory_bandwidth_gbs = 1000;
  spec.peak_tflops = {{"float32", 20.0}, {"bfloat16", 300.0}};
  return spec;
}

TEST(ProbeCheckTest, OurH200MeasurementsAreWithinTheSpec) {
  const GpuSpec h200 = real_h200();
  const auto deviations = check_against_probe(
      h200, 4207.0, {{"float32", 51.0}, {"tf32", 416.8}, {"float16", 771.4}, {"bfloat16", 806.3}});
  for (const auto& deviation : deviations) ADD_FAILURE() << deviation.message;
  EXPECT_TRUE(deviations.empty());
}

TEST(ProbeCheckTest, ImpossibleCopyBandwidthIsFlagged) {
  const GpuSpec h200 = real_h200();
  const auto deviations = check_against_probe(h200, 5200.0, {{"float32", 51.0}});
  ASSERT_EQ(deviations.size(), 1u);
  EXPECT_EQ(deviations[0].kind, ProbeDeviation::Kind::AbovePeak);
  EXPECT_EQ(deviations[0].quantity, "copy_gbs");
  EXPECT_DOUBLE_EQ(deviations[0].measured, 5200.0);
  EXPECT_DOUBLE_EQ(deviations[0].peak, 4800.0);
  EXPECT_DOUBLE_EQ(deviations[0].fraction, 5200.0 / 4800.0);
  EXPECT_EQ(deviations[0].message,
            "measured copy bandwidth 5200.0 GB/s is 108% of the NVIDIA H200 (SXM, 141 GB HBM3e) peak of 4800.0 GB/s: "
            "above the peak is impossible, so the probe or the spec (h200) is wrong");
}

TEST(ProbeCheckTest, ImpossibleGemmRateIsFlagged) {
  // A dense FP32 SGEMM at 120 TFLOP/s on an H200 (peak 67): TF32 was on, or the timing is wrong.
  const auto deviations = check_against_probe(real_h200(), 4207.0, {{"float32", 120.0}, {"bfloat16", 806.3}});
  ASSERT_EQ(deviations.size(), 1u);
  EXPECT_EQ(deviations[0].kind, ProbeDeviation::Kind::AbovePeak);
  EXPECT_EQ(deviations[0].quantity, "gemm_tflops.float32");
}

TEST(ProbeCheckTest, FarBelowPeakIsFlagged) {
  const auto deviations = check_against_probe(small_gpu(), 450.0, {{"float32", 9.0}, {"bfloat16", 150.0}});
  ASSERT_EQ(deviations.size(), 2u);
  EXPECT_EQ(deviations[0].kind, ProbeDeviation::Kind::FarBelowPeak);
  EXPECT_EQ(deviations[0].quantity, "copy_gbs");
  EXPECT_EQ(deviations[0].message,
            "measured copy bandwidth 450.0 GB/s is 45% of the Small GPU peak of 1000.0 GB/s: below 50%, the GPU may be "
            "throttled or shared, or it is not the GPU the spec describes");
  EXPECT_EQ(deviations[1].quantity, "gemm_tflops.float32");
  EXPECT_EQ(deviations[1].message,
            "measured float32 GEMM 9.0 TFLOP/s is 45% of the Small GPU peak of 20.0 TFLOP/s: below 50%, the GPU may be "
            "throttled or shared, or it is not the GPU the spec describes");
}

TEST(ProbeCheckTest, BoundariesAreNotFlagged) {
  // Exactly the peak and exactly half of it are plausible.
  EXPECT_TRUE(check_against_probe(small_gpu(), 1000.0, {{"float32", 10.0}, {"bfloat16", 300.0}}).empty());
}

TEST(ProbeCheckTest, UnmeasuredAndUnknownFiguresAreSkipped) {
  EXPECT_TRUE(check_against_probe(small_gpu(), 0.0, {{"float64", 0.01}, {"float32", -1.0}, {"tf32", 1e9}}).empty());
}

}  // namespace
}  // namespace hiera::engine::knowledge
