// Ceilings and placing regions on the roofline, with their reasons.
#include "engine/plan/roofline.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/plan/plan_test_support.h"

namespace hiera::engine::plan {
namespace {

using knowledge::Bottleneck;
using testing::fixture_regions;
using testing::load_fixture;
using testing::probe_ceilings;

// Round numbers, so the expected times are easy to check by hand.
GpuCeilings round_ceilings() {
  GpuCeilings ceilings;
  ceilings.bandwidth_gbs = 1000.0;
  ceilings.peak_tflops = {{"float32", 50.0}, {"tf32", 400.0}, {"float16", 800.0}};
  ceilings.source = "test";
  return ceilings;
}

Region region(double measured_ms, double flops, double bytes, int launches, std::string dtype = "float32",
              std::string pattern = "elementwise_chain") {
  Region r;
  r.name = "r";
  r.kernels = {"k"};
  r.measured_ms = measured_ms;
  r.flops = flops;
  r.bytes = bytes;
  r.launches = launches;
  r.pattern = std::move(pattern);
  r.dtype = std::move(dtype);
  return r;
}

knowledge::GpuSpec h200_spec() {
  knowledge::GpuSpec spec;
  spec.id = "h200";
  spec.name = "NVIDIA H200 (SXM, 141 GB HBM3e)";
  spec.match = {"H200"};
  spec.compute_capability = "9.0";
  spec.sm_count = 132;
  spec.memory_bandwidth_gbs = 4800;
  spec.peak_tflops = {{"float32", 67.0}, {"tf32", 494.7}, {"float16", 989.4}, {"bfloat16", 989.4},
                      {"float64", 67.0}, {"int8", 1978.9}};
  spec.source = "NVIDIA H200 Tensor Core GPU datasheet";
  return spec;
}

TEST(CeilingsTest, FromTheProbeKeepPositiveRatesAndNameTheDevice) {
  const GpuCeilings ceilings =
      ceilings_from_probe(4207.188, {{"float32", 51.03}, {"tf32", 416.8}, {"float16", 0.0}}, "NVIDIA H200");
  EXPECT_EQ(ceilings.source, "probe of NVIDIA H200");
  EXPECT_DOUBLE_EQ(ceilings.bandwidth_gbs, 4207.188);
  EXPECT_EQ(ceilings.peak_tflops, (std::map<std::string, double>{{"float32", 51.03}, {"tf32", 416.8}}));
  EXPECT_DOUBLE_EQ(ceilings.launch_overhead_us, 3.0);
  EXPECT_EQ(describe(ceilings), "probe of NVIDIA H200: 4207 GB/s; float32 51.0, tf32 416.8 TFLOP/s; 3.00 µs per launch");
  EXPECT_THROW(ceilings_from_probe(0.0, {}, "NVIDIA H200"), std::invalid_argument);
}

TEST(CeilingsTest, FromADatasheetWhenThereIsNoProbe) {
  const GpuCeilings ceilings = ceilings_from_spec(h200_spec());
  EXPECT_EQ(ceilings.source, "knowledge: h200 datasheet");
  EXPECT_DOUBLE_EQ(ceilings.bandwidth_gbs, 4800.0);
  EXPECT_EQ(ceilings.peak_tflops.size(), 6u);
  EXPECT_EQ(describe(ceilings),
            "knowledge: h200 datasheet: 4800 GB/s; bfloat16 989.4, float16 989.4, float32 67.0, float64 67.0, "
            "int8 1978.9, tf32 494.7 TFLOP/s; 3.00 µs per launch");
  knowledge::GpuSpec empty = h200_spec();
  empty.memory_bandwidth_gbs = 0;
  EXPECT_THROW(ceilings_from_spec(empty), std::invalid_argument);
}

TEST(RooflineTest, MemoryBound) {
  GpuCeilings ceilings = round_ceilings();
  ceilings.bandwidth_gbs = 4207.0;
  const RooflinePoint point = place(region(0.0062, 0.0, 8e6, 1), ceilings);
  EXPECT_EQ(point.bottleneck, Bottleneck::Memory);
  EXPECT_NEAR(point.speed_of_light_ms, 8e6 / 4207.0 / 1e6, 1e-15);
  EXPECT_DOUBLE_EQ(point.bound_ms, point.speed_of_light_ms);
  EXPECT_NEAR(point.headroom_ms, 0.0062 - point.speed_of_light_ms, 1e-15);
  EXPECT_NEAR(point.fraction_of_sol, point.speed_of_light_ms / 0.0062, 1e-12);
  EXPECT_EQ(point.reason, "memory-bound: 8.0 MB at 4207 GB/s is 1.90 µs; measured 6.20 µs (31% of speed of light)");
}

TEST(RooflineTest, ComputeBoundAgainstItsDtypesPeak) {
  const RooflinePoint point = place(region(0.1, 1e9, 1e6, 1, "float16"), round_ceilings());
  EXPECT_EQ(point.bottleneck, Bottleneck::Compute);
  EXPECT_EQ(point.compute_dtype, "float16");
  EXPECT_NEAR(point.flop_ms, 0.00125, 1e-15);
  EXPECT_EQ(point.reason,
            "compute-bound: 1.00 GFLOP at 800.0 TFLOP/s (float16) is 1.25 µs; measured 100 µs (1% of speed of light)");
}

TEST(RooflineTest, AnAllowedPrecisionRaisesTheComputeCeiling) {
  const Region fp32 = region(0.1, 1e9, 1e6, 1);
  // float32's accuracy as 3xTF32 (a third of the TF32 peak) is above the float32 peak: float32 flops count at it.
  EXPECT_EQ(place(fp32, round_ceilings()).reason,
            "compute-bound: 1.00 GFLOP at 133.3 TFLOP/s (float32 as 3xTF32) is 7.50 µs; measured 100 µs (7% of "
            "speed of light)");
  GpuCeilings no_tf32 = round_ceilings();
  no_tf32.peak_tflops.erase("tf32");
  EXPECT_EQ(place(fp32, no_tf32).reason,
            "compute-bound: 1.00 GFLOP at 50.0 TFLOP/s (float32) is 20.0 µs; measured 100 µs (20% of speed of light)");
  const RooflinePoint tf32 = place(region(0.05, 1e9, 1e6, 1), round_ceilings(), {"TF32"});
  EXPECT_EQ(tf32.compute_dtype, "tf32");
  EXPECT_EQ(tf32.reason, "compute-bound: 1.00 GFLOP at 400.0 TFLOP/s (tf32, allowed for float32) is 2.50 µs; "
                         "measured 50.0 µs (5% of speed of light)");
  // "half" is fp16; bfloat16 has no ceiling here, so it changes nothing.
  EXPECT_EQ(place(fp32, round_ceilings(), {"half", "tf32"}).compute_dtype, "float16");
  EXPECT_EQ(place(fp32, round_ceilings(), {"bfloat16"}).compute_dtype, "float32");
  // A lower ceiling is never chosen: a float16 region with tf32 allowed stays at the float16 peak.
  EXPECT_EQ(place(region(0.1, 1e9, 1e6, 1, "float16"), round_ceilings(), {"tf32"}).compute_dtype, "float16");
}

TEST(RooflineTest, ADtypeWithoutACeilingFallsBackToFloat32AndSaysSo) {
  EXPECT_EQ(place(region(0.1, 1e9, 1e6, 1, "float64"), round_ceilings()).reason,
            "compute-bound: 1.00 GFLOP at 50.0 TFLOP/s (float32: no float64 ceiling) is 20.0 µs; measured 100 µs "
            "(20% of speed of light)");
  GpuCeilings no_compute = round_ceilings();
  no_compute.peak_tflops.clear();
  const RooflinePoint point = place(region(0.1, 1e9, 1e7, 1), no_compute);
  EXPECT_EQ(point.bottleneck, Bottleneck::Memory);
  EXPECT_EQ(point.compute_dtype, "");
  EXPECT_EQ(point.reason, "memory-bound: 10.0 MB at 1000 GB/s is 10.0 µs; measured 100 µs (10% of speed of light); "
                          "no compute ceiling for float32, so its flops are not counted");
}

TEST(RooflineTest, LatencyBoundWhenLaunchesCostHalfTheTime) {
  const RooflinePoint point = place(region(0.05, 0.0, 10e6, 10), round_ceilings());
  EXPECT_EQ(point.bottleneck, Bottleneck::Latency);
  EXPECT_NEAR(point.launch_ms, 0.03, 1e-15);
  EXPECT_NEAR(point.bound_ms, 0.01, 1e-15);
  EXPECT_EQ(point.reason, "latency-bound: 10 launches × 3.00 µs = 30.0 µs of fixed cost in 50.0 µs measured; "
                          "the work needs 10.0 µs (20% of speed of light)");
  // Just under half: memory-bound.
  EXPECT_EQ(place(region(0.0601, 0.0, 10e6, 10), round_ceilings()).bottleneck, Bottleneck::Memory);
}

TEST(RooflineTest, LatencyBoundWorkBelowOneLaunchIsBoundByOneLaunch) {
  const RooflinePoint point = place(region(0.02, 0.0, 1000.0, 1), round_ceilings());
  EXPECT_EQ(point.bottleneck, Bottleneck::Latency);
  EXPECT_NEAR(point.speed_of_light_ms, 1e-6, 1e-18);
  EXPECT_NEAR(point.bound_ms, 0.003, 1e-15);
  EXPECT_NEAR(point.headroom_ms, 0.017, 1e-15);
  EXPECT_EQ(point.reason, "latency-bound: the work needs 0.001 µs, far below one launch (3.00 µs); measured 20.0 µs "
                          "in 1 launch, so the bound is one launch (15% of speed of light)");
}

TEST(RooflineTest, UncountedWork) {
  const RooflinePoint gemm = place(region(5.0, 0.0, 0.0, 1, "float32", "gemm"), round_ceilings());
  EXPECT_EQ(gemm.bottleneck, Bottleneck::Compute);
  EXPECT_FALSE(gemm.work_counted);
  EXPECT_EQ(gemm.bound_ms, 0.0);
  EXPECT_EQ(gemm.headroom_ms, 5.0);
  EXPECT_EQ(gemm.fraction_of_sol, 0.0);
  EXPECT_EQ(gemm.reason, "compute-bound by its pattern (gemm): no flops or bytes counted, so no speed of light; "
                         "measured 5.00 ms");
  EXPECT_EQ(place(region(5.0, 0.0, 0.0, 1, "float32", "softmax"), round_ceilings()).bottleneck, Bottleneck::Memory);
  const RooflinePoint launches = place(region(0.01, 0.0, 0.0, 4), round_ceilings());
  EXPECT_EQ(launches.bottleneck, Bottleneck::Latency);
  EXPECT_EQ(launches.reason, "latency-bound: 4 launches × 3.00 µs = 12.0 µs of fixed cost in 10.0 µs measured; "
                             "the work is not counted, so the bound is one launch, 3.00 µs (30% of speed of light)");
}

TEST(RooflineTest, FasterThanLightIsFlaggedNotCelebrated) {
  const RooflinePoint point = place(region(0.05, 0.0, 100e6, 1), round_ceilings());
  EXPECT_TRUE(point.faster_than_light);
  EXPECT_EQ(point.bottleneck, Bottleneck::Memory);
  EXPECT_EQ(point.headroom_ms, 0.0);
  EXPECT_NEAR(point.fraction_of_sol, 2.0, 1e-12);
  EXPECT_EQ(point.reason, "memory-bound: 100.0 MB at 1000 GB/s is 100 µs; measured 50.0 µs, faster than the speed "
                          "of light: the counted work or the timing is wrong");
}

TEST(RooflineTest, TheRegionsNoteEndsTheReasonAndTimeMustBePositive) {
  Region r = region(0.0062, 0.0, 8e6, 1);
  r.note = "work apportioned";
  EXPECT_EQ(place(r, round_ceilings()).reason,
            "memory-bound: 8.0 MB at 1000 GB/s is 8.00 µs; measured 6.20 µs, faster than the speed of light: the "
            "counted work or the timing is wrong; work apportioned");
  EXPECT_THROW(place(region(0.0, 0.0, 8e6, 1), round_ceilings()), std::invalid_argument);
}

TEST(RooflineTest, RecordedProfilesOnTheProbedRoofline) {
  struct Case {
    const char* fixture;
    Bottleneck bottleneck;
    const char* reason;
  };
  const Case cases[] = {
      {"gemm_bias_gelu_bf16_h200.json", Bottleneck::Compute,
       "compute-bound: 275 GFLOP at 806.3 TFLOP/s (bfloat16) is 341 µs; measured 509 µs (67% of speed of light)"},
      {"laplacian3d_512_fp32_h200.json", Bottleneck::Memory,
       "memory-bound: 1.07 GB at 4207 GB/s is 255 µs; measured 2.13 ms (12% of speed of light)"},
      {"tiny_mlp_launch_bound_h200.json", Bottleneck::Latency,
       "latency-bound: 40 launches × 3.00 µs = 120 µs of fixed cost in 228 µs measured; the work needs 0.083 µs, so "
       "the bound is one launch, 3.00 µs (1% of speed of light); one region for the whole module: its launches cost "
       "at least half its time (kernels busy 90.9 µs of 228 µs per call)"},
      {"sgemm_8192_fp32_h200.json", Bottleneck::Compute,
       // cuBLAS's float32 SGEMM at 92% of the float32 peak, 34% of 3xTF32's (PlannerTest.AFloat32GemmHasTheHeadroomOf3xTf32).
       "compute-bound: 1.10 TFLOP at 138.9 TFLOP/s (float32 as 3xTF32) is 7.91 ms; measured 23.4 ms (34% of speed of "
       "light)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fixture);
    const std::vector<Region> regions = fixture_regions(c.fixture);
    ASSERT_EQ(regions.size(), 1u);
    const RooflinePoint point = place(regions[0], probe_ceilings(load_fixture(c.fixture)));
    EXPECT_EQ(point.bottleneck, c.bottleneck);
    EXPECT_EQ(point.reason, c.reason);
  }
}

TEST(RooflineTest, TheLaplacianAtTwelvePercentOfTheProbedBandwidth) {
  const Region laplacian = fixture_regions("laplacian3d_512_fp32_h200.json")[0];
  const RooflinePoint probed = place(laplacian, probe_ceilings(load_fixture("laplacian3d_512_fp32_h200.json")));
  EXPECT_NEAR(probed.speed_of_light_ms, 1073741824.0 / 4207.188474203219 / 1e6, 1e-12);
  EXPECT_NEAR(probed.fraction_of_sol, 0.12, 0.0005);
  EXPECT_NEAR(probed.headroom_ms, 2.126848 - probed.speed_of_light_ms, 1e-12);
  // The datasheet's bandwidth is higher than the probe's, so the same kernel is further from it.
  const RooflinePoint datasheet = place(laplacian, ceilings_from_spec(h200_spec()));
  EXPECT_EQ(datasheet.reason, "memory-bound: 1.07 GB at 4800 GB/s is 224 µs; measured 2.13 ms (11% of speed of light)");
}

// A GPU recording: the worker's profile of tests/fixtures/optimize/strided_scaled_relu.cu
// during `hiera optimize` on the H200. CUPTI measured 11.2% DRAM throughput; the
// roofline from the counted bytes says the same kernel runs at 12% of its speed of light.
TEST(RooflineTest, TheRecordedStridedKernelIsMemoryBoundFarFromItsSpeedOfLight) {
  const nlohmann::json fixture = load_fixture("strided_scaled_relu_h200.json");
  const std::vector<Region> regions = fixture_regions("strided_scaled_relu_h200.json");
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].kernels, std::vector<std::string>{"strided_scaled_relu"});
  EXPECT_NEAR(regions[0].measured_ms, 0.254046, 1e-12);
  const RooflinePoint point = place(regions[0], probe_ceilings(fixture));
  EXPECT_EQ(point.bottleneck, knowledge::Bottleneck::Memory);
  EXPECT_NEAR(point.speed_of_light_ms, 8.0 * 16777216 / 4258.0 / 1e6, 1e-12);
  EXPECT_NEAR(point.fraction_of_sol, 0.124, 0.0005);
  EXPECT_NEAR(point.fraction_of_sol * 100, fixture["profile"]["metrics"]["dram_throughput_pct"].get<double>(), 1.5);
  // A CUDA kernel target may only be rewritten as a kernel: the plan works in S3.
  PlanContext context;
  context.allowed_spaces = {knowledge::Space::S3};
  const Plan plan = testing::plan_fixture("strided_scaled_relu_h200.json", context);
  ASSERT_FALSE(plan.steps.empty());
  EXPECT_EQ(plan.steps[0].space, knowledge::Space::S3);
  EXPECT_FALSE(plan.at_speed_of_light);
}

}  // namespace
}  // namespace hiera::engine::plan
