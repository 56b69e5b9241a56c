#include "server/features/cost_text.h"

#include <gtest/gtest.h>

namespace hiera::server {
namespace {

EstimateTarget h200() {
  EstimateTarget target;
  target.roofline = engine::GpuCeilings{4800, {{"float32", 67.0}}, 0.0, "h200"};
  target.label = "H200";
  return target;
}

engine::facade::CostEstimate memory_estimate() {
  engine::facade::CostEstimate e;
  e.flops = 1e6;
  e.bytes = 8e6;
  e.source = "get_inputs";
  e.seconds = 8e6 / 4800e9;
  e.memory_bound = true;
  return e;
}

TEST(CostText, LensTitles) {
  EXPECT_EQ(lens_title(std::nullopt, std::nullopt, h200()), "not measured yet");
  EXPECT_EQ(lens_title(std::nullopt, memory_estimate(), h200()), "est. 1.67 µs on H200 (memory-bound)");
  auto bound = memory_estimate();
  bound.lower_bound = true;
  bound.memory_bound = false;
  EXPECT_EQ(lens_title(std::nullopt, bound, h200()), "est. ≥ 1.67 µs on H200 (compute-bound)");
  auto untimed = memory_estimate();
  untimed.seconds.reset();
  EXPECT_EQ(lens_title(std::nullopt, untimed, h200()), "not measured yet");
  Measurement m;
  m.median_ms = 0.8;
  EXPECT_EQ(lens_title(m, memory_estimate(), h200()), "800 µs");  // no GPU or speed of light recorded
  m.gpu = "NVIDIA H200";
  m.sol_fraction = 0.126;
  EXPECT_EQ(lens_title(m, std::nullopt, h200()), "800 µs on NVIDIA H200 · 13% of speed of light");
}

TEST(CostText, EstimateWithoutARooflineSaysWhy) {
  EstimateTarget unknown;
  unknown.label = "b999";
  unknown.problem = "settings: unknown gpu 'b999' (known: h200)";
  auto e = memory_estimate();
  e.seconds.reset();
  EXPECT_EQ(estimate_markdown(e, unknown),
            "**Estimate**: 1.0 MFLOP, 8.0 MB (shapes from get_inputs); no roofline time: settings: unknown gpu 'b999' (known: h200)");
}

TEST(CostText, ALowerBoundSaysWhatItLeavesOut) {
  auto e = memory_estimate();
  e.lower_bound = true;
  e.ops_counted = 2;
  e.ops_total = 3;
  EXPECT_EQ(estimate_markdown(e, h200()),
            "**Estimate** on H200: ≥ 1.67 µs at speed of light, memory-bound · 1.0 MFLOP, 8.0 MB over 2 of 3 ops (shapes from "
            "get_inputs); ops in loops count once, ops without shapes not at all");
}

TEST(CostText, TheHoverSaysWhichEstimateItShows) {
  // Launch-bound: the floor and the speed of light under it.
  auto tiny = memory_estimate();
  tiny.speed_of_light_seconds = tiny.seconds;
  tiny.seconds = 3e-6;
  tiny.launch_bound = true;
  EXPECT_EQ(estimate_markdown(tiny, h200()),
            "**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 1.67 µs at speed of light) · 1.0 MFLOP, "
            "8.0 MB (shapes from get_inputs)");
  EXPECT_EQ(lens_title(std::nullopt, tiny, h200()), "est. 3.00 µs on H200 (launch-bound)");
  // Fused: how many ops run in their producer's pass, the op-by-op time, and TF32.
  auto fused = memory_estimate();
  fused.fused_ops = 2;
  fused.op_by_op_seconds = 9e-6;
  fused.tensor_float32 = true;
  EXPECT_EQ(estimate_markdown(fused, h200()),
            "**Estimate** on H200: 1.67 µs at speed of light, memory-bound · 1.0 MFLOP, 8.0 MB (shapes from get_inputs) · "
            "with 2 elementwise ops fused into the pass of the op before (9.00 µs op by op) · float32 convolutions and "
            "matmuls at the TF32 tensor-core peak, as torch's flags allow (cuDNN's default)");
  EXPECT_EQ(lens_title(std::nullopt, fused, h200()), "est. 1.67 µs on H200 (memory-bound, fused)");
}

TEST(CostText, MeasurementPartsAppearOnlyWhenRecorded) {
  Measurement m;
  EXPECT_EQ(measurement_markdown(m), "");
  EXPECT_EQ(measured_summary(m), "");
  m.median_ms = 2.5;
  m.p10_ms = 2.0;  // without p90 there is no spread
  EXPECT_EQ(measurement_markdown(m), "**Measured**: median 2.50 ms\n");
  EXPECT_EQ(measured_summary(m), "median 2.50 ms");
  m.verified_speedup = 12.34;
  m.report_path = "runs/report.md";
  EXPECT_EQ(measurement_markdown(m), "**Measured**: median 2.50 ms\n\n**Optimized**: verified 12.3× faster · report: `runs/report.md`\n");
}

}  // namespace
}  // namespace hiera::server
