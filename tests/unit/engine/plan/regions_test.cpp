// From a worker profile and the counted work to regions.
#include "engine/plan/regions.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/plan/plan_test_support.h"

namespace hiera::engine::plan {
namespace {

using nlohmann::json;
using testing::fixture_regions;
using testing::load_fixture;

GpuCeilings h200() { return ceilings_from_probe(4207.188474203219, {{"float32", 51.03}}, "NVIDIA H200"); }

ProfiledKernel kernel(std::string name, std::int64_t calls, std::int64_t total_ns) {
  ProfiledKernel k;
  k.name = std::move(name);
  k.calls = calls;
  k.total_ns = total_ns;
  k.mean_ns = calls ? total_ns / calls : 0;
  return k;
}

TEST(RegionsTest, AnOpThatClaimsTheGemmAndItsEpilogueIsOneRegion) {
  const json fixture = load_fixture("gemm_bias_gelu_bf16_h200.json");
  const std::vector<Region> regions = fixture_regions("gemm_bias_gelu_bf16_h200.json");
  ASSERT_EQ(regions.size(), 1u);
  const Region& region = regions[0];
  EXPECT_EQ(region.name, "linear+bias+gelu");
  EXPECT_EQ(region.pattern, "gemm_epilogue");
  ASSERT_EQ(region.kernels.size(), 3u);
  EXPECT_EQ(region.kernels[0], fixture["profile"]["kernels"][0]["name"].get<std::string>());
  EXPECT_NEAR(region.measured_ms, 0.508608, 1e-12);
  EXPECT_EQ(region.launches, 3);
  EXPECT_EQ(region.flops, 274945015808.0);
  EXPECT_EQ(region.bytes, 167780352.0);
  EXPECT_EQ(region.dtype, "bfloat16");
  EXPECT_EQ(region.elements, 33554432);
  EXPECT_EQ(region.last_dim, 4096);
  EXPECT_EQ(region.note, "");
}

TEST(RegionsTest, WithoutOpsKernelsGroupByFamilyAndTheTotalsAreApportionedByTime) {
  const std::vector<Region> regions = fixture_regions("gemm_bias_gelu_bf16_h200.json", false);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].name, "gemm");
  EXPECT_EQ(regions[0].pattern, "gemm");
  EXPECT_EQ(regions[0].kernels.size(), 1u);
  EXPECT_EQ(regions[0].launches, 1);
  EXPECT_NEAR(regions[0].measured_ms, 0.420288, 1e-12);
  EXPECT_NEAR(regions[0].flops, 274945015808.0 * 2101440 / 2543040, 1e-3);
  EXPECT_NEAR(regions[0].bytes, 167780352.0 * 2101440 / 2543040, 1e-6);
  EXPECT_EQ(regions[0].note,
            "flops and bytes apportioned by time (83% of the module's kernel time): only the module's totals are counted");
  EXPECT_EQ(regions[1].name, "elementwise_chain");
  EXPECT_EQ(regions[1].pattern, "elementwise_chain");
  EXPECT_EQ(regions[1].kernels.size(), 2u);
  EXPECT_EQ(regions[1].launches, 2);
  EXPECT_NEAR(regions[1].measured_ms, 0.08832, 1e-12);
  EXPECT_EQ(regions[1].note,
            "flops and bytes apportioned by time (17% of the module's kernel time): only the module's totals are counted");
}

TEST(RegionsTest, AUsersKernelTakesTheTasksPatternAndItsName) {
  const std::vector<Region> regions = fixture_regions("laplacian3d_512_fp32_h200.json");
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].name, "laplacian7");
  EXPECT_EQ(regions[0].pattern, "stencil");
  EXPECT_EQ(regions[0].kernels, std::vector<std::string>{"laplacian7"});
  EXPECT_NEAR(regions[0].measured_ms, 2.126848, 1e-12);
  EXPECT_EQ(regions[0].launches, 1);
  EXPECT_EQ(regions[0].flops, 1073741824.0);
  EXPECT_EQ(regions[0].bytes, 1073741824.0);
  EXPECT_EQ(regions[0].elements, 134217728);
  EXPECT_EQ(regions[0].note, "");
}

TEST(RegionsTest, ALaunchBoundModuleIsOneWholeModuleRegion) {
  const std::vector<Region> regions = fixture_regions("tiny_mlp_launch_bound_h200.json");
  ASSERT_EQ(regions.size(), 1u);
  const Region& region = regions[0];
  EXPECT_EQ(region.name, "whole module");
  EXPECT_EQ(region.pattern, "whole_module");
  EXPECT_EQ(region.kernels.size(), 2u);
  EXPECT_EQ(region.launches, 40);
  EXPECT_DOUBLE_EQ(region.measured_ms, 0.228);  // the timed module, launch gaps included
  EXPECT_EQ(region.flops, 5324800.0);
  EXPECT_EQ(region.bytes, 349184.0);
  EXPECT_EQ(region.note, "one region for the whole module: its launches cost at least half its time (kernels busy "
                         "90.9 µs of 228 µs per call)");

  // Without the module's timing, the kernels' own time is all there is.
  const json fixture = load_fixture("tiny_mlp_launch_bound_h200.json");
  TaskWork work = testing::task_work(fixture);
  work.module_ms.reset();
  const std::vector<Region> kernels_only = regions_from_profile(eval::read_kernel_profile(fixture["profile"]), work, h200());
  ASSERT_EQ(kernels_only.size(), 1u);
  EXPECT_NEAR(kernels_only[0].measured_ms, 0.09088, 1e-12);
  EXPECT_EQ(kernels_only[0].note, "one region for the whole module: its launches cost at least half its time");
}

TEST(RegionsTest, OpsClaimTheirFamiliesAndTheRestShareWhatIsLeft) {
  KernelProfile profile;
  profile.kernels = {kernel("nvjet_sss_128x128_gemm", 2, 800000), kernel("cunn_SoftMaxForward", 2, 300000),
                     kernel("vectorized_elementwise_kernel<add>", 2, 100000)};
  TaskWork work;
  work.runs = 2;
  work.flops = 10e9;
  work.bytes = 100e6;
  work.dtype = "float32";
  OpWork matmul;
  matmul.name = "q @ k";
  matmul.pattern = "gemm";
  matmul.flops = 8e9;
  matmul.bytes = 20e6;
  matmul.dtype = "float16";
  matmul.elements = 4096;
  work.ops = {matmul};
  const std::vector<Region> regions = regions_from_profile(profile, work, h200());
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(regions[0].name, "q @ k");
  EXPECT_EQ(regions[0].flops, 8e9);
  EXPECT_EQ(regions[0].dtype, "float16");
  EXPECT_EQ(regions[0].elements, 4096);
  EXPECT_NEAR(regions[0].measured_ms, 0.4, 1e-12);
  EXPECT_EQ(regions[1].name, "softmax");
  EXPECT_NEAR(regions[1].flops, 1.5e9, 1e-3);
  EXPECT_NEAR(regions[1].bytes, 60e6, 1e-6);
  EXPECT_EQ(regions[1].dtype, "float32");
  EXPECT_EQ(regions[1].note, "flops and bytes apportioned by time (75% of the kernel time outside the counted ops): "
                             "only the module's totals are counted");
  EXPECT_EQ(regions[2].name, "elementwise_chain");
  EXPECT_NEAR(regions[2].bytes, 20e6, 1e-6);

  // One region left over gets the rest whole.
  profile.kernels.pop_back();
  const std::vector<Region> two = regions_from_profile(profile, work, h200());
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(two[1].flops, 2e9, 1e-3);
  EXPECT_NEAR(two[1].bytes, 80e6, 1e-6);
  EXPECT_EQ(two[1].note, "work: the module's counted totals less the counted ops");
}

TEST(RegionsTest, KernelsNoFamilyNamesWithoutATaskPattern) {
  KernelProfile profile;
  profile.kernels = {kernel("my_kernel_a", 1, 500000), kernel("my_kernel_b", 1, 400000), kernel("idle", 1, 0)};
  const std::vector<Region> regions = regions_from_profile(profile, TaskWork{}, h200());
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].name, "other kernels");
  EXPECT_EQ(regions[0].pattern, "whole_module");
  EXPECT_EQ(regions[0].kernels, (std::vector<std::string>{"my_kernel_a", "my_kernel_b"}));
  EXPECT_EQ(regions[0].flops, 0.0);
  EXPECT_EQ(regions[0].note, "");
}

TEST(RegionsTest, EmptyProfilesAndBadRuns) {
  EXPECT_TRUE(regions_from_profile(KernelProfile{}, TaskWork{}, h200()).empty());
  TaskWork work;
  work.runs = 0;
  EXPECT_THROW(regions_from_profile(KernelProfile{}, work, h200()), std::invalid_argument);
}

}  // namespace
}  // namespace hiera::engine::plan
