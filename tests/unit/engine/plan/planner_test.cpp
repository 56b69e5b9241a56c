// Planner decisions on recorded profiles: which regions, which spaces, which
// recipes, what budget, and why.
#include "engine/plan/planner.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/plan/plan_test_support.h"

namespace hiera::engine::plan {
namespace {

using knowledge::Space;
using testing::fixture_regions;
using testing::load_fixture;
using testing::plan_fixture;
using testing::plan_fixture_without_tf32;
using testing::probe_ceilings;
using testing::test_recipes;
using Strings = std::vector<std::string>;

const std::string kRoofline =
    "roofline: probe of NVIDIA H200: 4207 GB/s; bfloat16 806.3, float16 771.4, float32 51.0, tf32 416.8 TFLOP/s; "
    "3.00 µs per launch";

struct ExpectedStep {
  std::string region;
  Space space;
  Strings recipes;
  int budget;
};

void expect_steps(const Plan& plan, const std::vector<ExpectedStep>& expected) {
  ASSERT_EQ(plan.steps.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(plan.steps[i].region, expected[i].region);
    EXPECT_EQ(plan.steps[i].space, expected[i].space);
    EXPECT_EQ(plan.steps[i].recipes, expected[i].recipes);
    EXPECT_EQ(plan.steps[i].budget, expected[i].budget);
  }
}

TEST(PlannerTest, GemmBiasGeluStartsInS1AndCanEscalateToS3) {
  const Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json");
  EXPECT_FALSE(plan.at_speed_of_light);
  ASSERT_EQ(plan.regions.size(), 1u);
  const RegionAnalysis& region = plan.regions[0];
  EXPECT_TRUE(region.planned);
  EXPECT_DOUBLE_EQ(region.expected_speedup, 1.25);
  EXPECT_NEAR(region.priority_ms, 0.508608 * 0.2, 1e-12);
  EXPECT_NEAR(region.likelihood, region.priority_ms / region.point.headroom_ms, 1e-12);
  expect_steps(plan, {{"linear+bias+gelu", Space::S1, {"compile-epilogue-fusion", "addmm-bias-epilogue"}, 8},
                      {"linear+bias+gelu", Space::S2, {"cublaslt-epilogue-gelu-bias"}, 8},
                      {"linear+bias+gelu", Space::S3, {"cutlass-evt-epilogue"}, 8}});
  EXPECT_EQ(plan.steps[0].reason,
            "compute-bound gemm_epilogue at 67% of speed of light, headroom 168 µs; the cheapest space that promises "
            "the 1.27× that reaches 85% of speed of light; best recipe compile-epilogue-fusion, up to 1.30×");
  EXPECT_EQ(plan.steps[1].reason,
            "compute-bound gemm_epilogue at 67% of speed of light, headroom 168 µs; escalation from S1 when it stops "
            "paying; best recipe cublaslt-epilogue-gelu-bias, up to 1.35×");
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 linear+bias+gelu: priority 102 µs = headroom 168 µs × likelihood 0.61 (expected 1.25× from "
                     "cutlass-evt-epilogue)",
                     "linear+bias+gelu: start in S1: compile-epilogue-fusion, up to 1.30×, enough for the 1.27× that "
                     "reaches 85% of speed of light; then S2, S3 when a space stops paying",
                     "budget: 24 candidates over 3 steps, 2 each and 18 more by headroom: linear+bias+gelu: S1 8, S2 8, "
                     "S3 8"}));
}

TEST(PlannerTest, GemmBiasGeluFromFamiliesAlone) {
  const Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json", {}, false);
  ASSERT_EQ(plan.regions.size(), 2u);
  EXPECT_EQ(plan.regions[0].region.name, "elementwise_chain");
  EXPECT_TRUE(plan.regions[0].planned);
  EXPECT_EQ(plan.regions[1].region.name, "gemm");
  EXPECT_FALSE(plan.regions[1].planned);
  expect_steps(plan, {{"elementwise_chain", Space::S1, {"compile-epilogue-fusion"}, 24}});
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 elementwise_chain: priority 14.7 µs = headroom 29.1 µs × likelihood 0.51 (expected 1.20× from "
                     "compile-epilogue-fusion)",
                     "elementwise_chain: no S2 recipe applies to a compute-bound elementwise_chain (bfloat16, 33554432 "
                     "elements)",
                     "elementwise_chain: no S3 recipe applies to a compute-bound elementwise_chain (bfloat16, 33554432 "
                     "elements)",
                     "elementwise_chain: start in S1: compile-epilogue-fusion, up to 1.30×, enough for the 1.27× that "
                     "reaches 85% of speed of light; no space to escalate to",
                     "gemm: no S1 recipe applies to a compute-bound gemm (bfloat16, 33554432 elements)",
                     "gemm: no S2 recipe applies to a compute-bound gemm (bfloat16, 33554432 elements)",
                     "gemm: no S3 recipe applies to a compute-bound gemm (bfloat16, 33554432 elements)",
                     "skip gemm: no recipe applies in an allowed space",
                     "budget: 24 candidates over 1 step, 2 each and 22 more by headroom: elementwise_chain: S1 24"}));
}

TEST(PlannerTest, TheLaplacianGoesStraightToS3WhichCanReachTheBound) {
  const Plan plan = plan_fixture("laplacian3d_512_fp32_h200.json");
  expect_steps(plan, {{"laplacian7", Space::S3, {"stencil3d-7pt-tiled"}, 24}});
  EXPECT_EQ(plan.steps[0].reason,
            "memory-bound stencil at 12% of speed of light, headroom 1.87 ms; the cheapest space that promises the "
            "7.08× that reaches 85% of speed of light; best recipe stencil3d-7pt-tiled, up to 8.00×");
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 laplacian7: priority 1.74 ms = headroom 1.87 ms × likelihood 0.93 (expected 5.50× from "
                     "stencil3d-7pt-tiled)",
                     "laplacian7: no S2 recipe applies to a memory-bound stencil (float32, 134217728 elements)",
                     "laplacian7: S1 skipped: its best recipe stencil-as-conv3d, up to 1.50×, falls short of the 7.08× "
                     "that reaches 85% of speed of light, which S3 promises (stencil3d-7pt-tiled, up to 8.00×)",
                     "laplacian7: start in S3: stencil3d-7pt-tiled, up to 8.00×, enough for the 7.08× that reaches 85% "
                     "of speed of light; no space to escalate to",
                     "budget: 24 candidates over 1 step, 2 each and 22 more by headroom: laplacian7: S3 24"}));
}

TEST(PlannerTest, OnTheDatasheetNoSpaceReachesTheBoundSoTheLaplacianStartsCheap) {
  knowledge::GpuSpec spec;
  spec.id = "h200";
  spec.memory_bandwidth_gbs = 4800;
  spec.peak_tflops = {{"float32", 67.0}};
  PlanContext context;
  context.dtype = "float32";
  const Plan plan =
      make_plan(fixture_regions("laplacian3d_512_fp32_h200.json"), ceilings_from_spec(spec), context, test_recipes());
  expect_steps(plan, {{"laplacian7", Space::S1, {"stencil-as-conv3d"}, 12},
                      {"laplacian7", Space::S3, {"stencil3d-7pt-tiled"}, 12}});
  EXPECT_EQ(plan.decisions,
            (Strings{"roofline: knowledge: h200 datasheet: 4800 GB/s; float32 67.0 TFLOP/s; 3.00 µs per launch",
                     "#1 laplacian7: priority 1.74 ms = headroom 1.90 ms × likelihood 0.91 (expected 5.50× from "
                     "stencil3d-7pt-tiled)",
                     "laplacian7: no S2 recipe applies to a memory-bound stencil (float32, 134217728 elements)",
                     "laplacian7: start in S1, the cheapest space with a recipe: none promises the 8.08× that reaches "
                     "85% of speed of light (best: stencil3d-7pt-tiled, up to 8.00× in S3); then S3 when a space stops "
                     "paying",
                     "budget: 24 candidates over 2 steps, 2 each and 20 more by headroom: laplacian7: S1 12, S3 12"}));
}

TEST(PlannerTest, TheLaunchBoundMlpStartsWithGraphsAndCanEscalateToOneKernel) {
  const Plan plan = plan_fixture("tiny_mlp_launch_bound_h200.json");
  expect_steps(plan, {{"whole module", Space::S1, {"cuda-graph-capture", "compile-reduce-overhead"}, 12},
                      {"whole module", Space::S3, {"fused-mlp-persistent"}, 12}});
  EXPECT_EQ(plan.steps[0].reason,
            "latency-bound whole_module at 1% of speed of light, headroom 225 µs; the cheapest space with a recipe; "
            "best recipe cuda-graph-capture, up to 5.00×");
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 whole module: priority 210 µs = headroom 225 µs × likelihood 0.93 (expected 12.5× from "
                     "fused-mlp-persistent)",
                     "whole module: no S2 recipe applies to a latency-bound whole_module (float32, 2048 elements)",
                     "whole module: start in S1, the cheapest space with a recipe: none promises the 64.6× that reaches "
                     "85% of speed of light (best: fused-mlp-persistent, up to 20.0× in S3); then S3 when a space "
                     "stops paying",
                     "budget: 24 candidates over 2 steps, 2 each and 20 more by headroom: whole module: S1 12, S3 12"}));
}

TEST(PlannerTest, AGemmAtNinetyTwoPercentOfPeakIsLeftAlone) {
  // cuBLAS's float32 SGEMM at 92% of the float32 peak, on a GPU whose probe lists no TF32 rate: at speed of light.
  const Plan plan = plan_fixture_without_tf32("sgemm_8192_fp32_h200.json");
  EXPECT_TRUE(plan.at_speed_of_light);
  EXPECT_TRUE(plan.steps.empty());
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_FALSE(plan.regions[0].planned);
  EXPECT_NEAR(plan.regions[0].point.fraction_of_sol, 0.92, 1e-6);
  EXPECT_EQ(plan.decisions,
            (Strings{"roofline: probe of NVIDIA H200: 4207 GB/s; bfloat16 806.3, float16 771.4, float32 51.0 TFLOP/s; "
                     "3.00 µs per launch",
                     "skip gemm: at 92% of speed of light (the plan stops at 85%)",
                     "at speed of light: every region is at 85% of its speed of light or better; nothing to optimize"}));
}

TEST(PlannerTest, AFloat32GemmHasTheHeadroomOf3xTf32) {
  // The H200's probe lists TF32 at 416.8 TFLOP/s: a float32-accurate product as 3xTF32 runs at 138.9, so the
  // same SGEMM is at 34% of its speed of light, and planned.
  auto recipes = test_recipes();
  recipes.push_back(testing::recipe("split-tf32", knowledge::Space::S2, {knowledge::Bottleneck::Compute}, {"gemm"},
                                    {"float32"}, 1.3, 2.2));
  PlanContext context;
  context.dtype = "float32";
  const Plan plan = make_plan(fixture_regions("sgemm_8192_fp32_h200.json"),
                              probe_ceilings(load_fixture("sgemm_8192_fp32_h200.json")), context, recipes);
  EXPECT_FALSE(plan.at_speed_of_light);
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_TRUE(plan.regions[0].planned);
  EXPECT_NEAR(plan.regions[0].point.fraction_of_sol, 0.92 * 51.0 / (416.8 / 3), 0.005);
  EXPECT_EQ(plan.regions[0].point.compute_dtype, "float32");
  ASSERT_FALSE(plan.steps.empty());
  EXPECT_EQ(plan.steps[0].space, knowledge::Space::S2);
}

TEST(PlannerTest, AllowingTf32MovesTheSpeedOfLightAndOpensTheTf32Recipes) {
  PlanContext context;
  context.allowed_precision = {"tf32"};
  const Plan plan = plan_fixture("sgemm_8192_fp32_h200.json", context);
  EXPECT_FALSE(plan.at_speed_of_light);
  EXPECT_EQ(plan.regions[0].point.compute_dtype, "tf32");
  expect_steps(plan, {{"gemm", Space::S1, {"tf32-matmul"}, 12}, {"gemm", Space::S2, {"cublaslt-tf32"}, 12}});
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 gemm: priority 19.3 ms = headroom 20.8 ms × likelihood 0.93 (expected 5.75× from cublaslt-tf32)",
                     "gemm: no S3 recipe applies to a compute-bound gemm (float32, 67108864 elements)",
                     "gemm: start in S1: tf32-matmul, up to 8.00×, enough for the 7.55× that reaches 85% of speed of "
                     "light; then S2 when a space stops paying",
                     "budget: 24 candidates over 2 steps, 2 each and 20 more by headroom: gemm: S1 12, S2 12"}));
}

TEST(PlannerTest, Tf32RecipesAreExcludedUnlessTheContractAllowsTf32) {
  PlanContext context;
  context.near_sol = 0.95;  // so the 92% GEMM is planned at all
  const Plan plan = plan_fixture("sgemm_8192_fp32_h200.json", context);
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_FALSE(plan.at_speed_of_light);
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "gemm: S1 recipe tf32-matmul excluded: needs \"tf32\", which numerics.allow does not grant",
                     "gemm: no S1 recipe applies to a compute-bound gemm (float32, 67108864 elements)",
                     "gemm: S2 recipe cublaslt-tf32 excluded: needs \"tf32\", which numerics.allow does not grant",
                     "gemm: no S2 recipe applies to a compute-bound gemm (float32, 67108864 elements)",
                     "gemm: no S3 recipe applies to a compute-bound gemm (float32, 67108864 elements)",
                     "skip gemm: no recipe applies in an allowed space"}));
}

TEST(PlannerTest, AContractThatAllowsS1OnlyGetsOneStepWithTheWholeBudget) {
  PlanContext context;
  context.allowed_spaces = {Space::S1};
  const Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json", context);
  expect_steps(plan, {{"linear+bias+gelu", Space::S1, {"compile-epilogue-fusion", "addmm-bias-epilogue"}, 24}});
  EXPECT_EQ(plan.decisions,
            (Strings{kRoofline,
                     "#1 linear+bias+gelu: priority 84.8 µs = headroom 168 µs × likelihood 0.51 (expected 1.20× from "
                     "compile-epilogue-fusion)",
                     "linear+bias+gelu: S2 not allowed by the contract",
                     "linear+bias+gelu: S3 not allowed by the contract",
                     "linear+bias+gelu: start in S1: compile-epilogue-fusion, up to 1.30×, enough for the 1.27× that "
                     "reaches 85% of speed of light; no space to escalate to",
                     "budget: 24 candidates over 1 step, 2 each and 22 more by headroom: linear+bias+gelu: S1 24"}));
}

TEST(PlannerTest, ACpuRunPlansS1OnlyAndNoWholeGraphStepInACudaSpace) {
  PlanContext context;
  context.cuda = false;
  Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json", context);
  expect_steps(plan, {{"linear+bias+gelu", Space::S1, {"compile-epilogue-fusion", "addmm-bias-epilogue"}, 24}});
  ASSERT_GE(plan.decisions.size(), 2u);
  EXPECT_EQ(plan.decisions[1], "the run is on the CPU: S2, S3 left out (CUDA only); S1 (PyTorch operators) only");
  EXPECT_EQ(plan.context.allowed_spaces, (std::vector<Space>{Space::S1}));
  const auto graph_steps = lead_with_graph_steps(plan, 5);
  ASSERT_EQ(graph_steps.size(), 1u);
  EXPECT_EQ(graph_steps[0].space, Space::S1);
}

std::vector<Space> spaces_of(const std::vector<PlanStep>& steps) {
  std::vector<Space> out;
  for (const PlanStep& step : steps) out.push_back(step.space);
  return out;
}

// The op graph's steps: S1 first (torch.compile of the reference is an S1 candidate), then the space whose
// recipes the regions expect most of, so a budget of two steps reaches it. Here cutlass-evt-epilogue (S3,
// midpoint 1.25x) expects more of the 509 us region than cublaslt-epilogue-gelu-bias (S2, 1.225x).
TEST(PlannerTest, TheOpGraphStepsLeadWithS1ThenTheSpaceExpectedToSaveMost) {
  Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json");
  ASSERT_EQ(plan.expected_saving_ms.size(), 3u);
  EXPECT_EQ(plan.expected_saving_ms[0].first, Space::S1);
  EXPECT_NEAR(plan.expected_saving_ms[0].second, 0.508608 * (1.0 - 1.0 / 1.2), 1e-9);
  EXPECT_NEAR(plan.expected_saving_ms[1].second, 0.508608 * (1.0 - 1.0 / 1.225), 1e-9);
  EXPECT_NEAR(plan.expected_saving_ms[2].second, 0.508608 * (1.0 - 1.0 / 1.25), 1e-9);
  const auto graph_steps = lead_with_graph_steps(plan, 7);
  EXPECT_EQ(spaces_of(graph_steps), (std::vector<Space>{Space::S1, Space::S3, Space::S2}));
  ASSERT_EQ(graph_steps.size(), 3u);
  EXPECT_EQ(graph_steps[0].reason, "the captured op graph (7 nodes) in S1: rewrites of the whole forward, across kernels");
  EXPECT_EQ(graph_steps[1].reason,
            "the captured op graph (7 nodes) in S3: rewrites of the whole forward, across kernels; before S2: the "
            "regions' S3 recipes expect to save 102 µs, S2's 93.4 µs");
  EXPECT_EQ(graph_steps[2].reason, "the captured op graph (7 nodes) in S2: rewrites of the whole forward, across kernels");
  // They lead the plan, each with 3 candidates, before the region's own steps.
  ASSERT_EQ(plan.steps.size(), 6u);
  EXPECT_EQ(plan.steps[1].space, Space::S3);
  EXPECT_EQ(plan.steps[1].budget, 3);
  EXPECT_EQ(plan.steps[3].region, "linear+bias+gelu");
}

// A space no region's recipe expects anything of keeps the cheapest-first order behind the others.
TEST(PlannerTest, OpGraphStepsKeepTheCheapestFirstOrderWhereNoRecipeSaysOtherwise) {
  Region gemm;
  gemm.name = "gemm";
  gemm.pattern = "gemm";
  gemm.dtype = "float32";
  gemm.measured_ms = 2.0;
  gemm.launches = 1;
  PlanContext context;
  context.allowed_precision = {"tf32"};
  Plan plan = make_plan({gemm}, probe_ceilings(load_fixture("gemm_bias_gelu_bf16_h200.json")), context, test_recipes());
  ASSERT_EQ(plan.expected_saving_ms.size(), 3u);
  EXPECT_NEAR(plan.expected_saving_ms[0].second, 2.0 * (1.0 - 1.0 / 5.5), 1e-9);   // tf32-matmul
  EXPECT_NEAR(plan.expected_saving_ms[1].second, 2.0 * (1.0 - 1.0 / 5.75), 1e-9);  // cublaslt-tf32
  EXPECT_EQ(plan.expected_saving_ms[2].second, 0.0);                              // no S3 recipe for a float32 gemm
  const auto graph_steps = lead_with_graph_steps(plan, 3);
  EXPECT_EQ(spaces_of(graph_steps), (std::vector<Space>{Space::S1, Space::S2, Space::S3}));
  ASSERT_EQ(graph_steps.size(), 3u);
  EXPECT_EQ(graph_steps[1].reason, "the captured op graph (3 nodes) in S2: rewrites of the whole forward, across kernels");
}

TEST(PlannerTest, ALastDimensionTheRecipeCannotTakeExcludesIt) {
  std::vector<Region> regions = fixture_regions("gemm_bias_gelu_bf16_h200.json");
  regions[0].last_dim = 4100;
  const Plan plan = make_plan(regions, probe_ceilings(load_fixture("gemm_bias_gelu_bf16_h200.json")), {},
                              test_recipes());
  expect_steps(plan, {{"linear+bias+gelu", Space::S1, {"compile-epilogue-fusion", "addmm-bias-epilogue"}, 12},
                      {"linear+bias+gelu", Space::S2, {"cublaslt-epilogue-gelu-bias"}, 12}});
  EXPECT_EQ(plan.decisions[2],
            "linear+bias+gelu: S3 recipe cutlass-evt-epilogue excluded: needs the last dimension a multiple of 8, "
            "it is 4100");
}

TEST(PlannerTest, ATargetBeyondTheSpeedOfLightIsCalledOutOfReach) {
  PlanContext context;
  context.target_speedup = 2.0;
  const Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json", context);
  EXPECT_EQ(plan.decisions.back(),
            "target 2.00× is out of reach: at speed of light the planned regions would take the module from 509 µs "
            "to 341 µs, 1.49× at most");
  context.target_speedup = 1.4;
  EXPECT_EQ(plan_fixture("gemm_bias_gelu_bf16_h200.json", context).decisions.size(), 4u);
}

TEST(PlannerTest, ABudgetTooSmallForTwoPerStepDropsTheLastSteps) {
  PlanContext context;
  context.candidate_budget = 5;
  const Plan plan = plan_fixture("gemm_bias_gelu_bf16_h200.json", context);
  expect_steps(plan, {{"linear+bias+gelu", Space::S1, {"compile-epilogue-fusion", "addmm-bias-epilogue"}, 3},
                      {"linear+bias+gelu", Space::S2, {"cublaslt-epilogue-gelu-bias"}, 2}});
  EXPECT_EQ(plan.decisions[3],
            "budget: 5 candidates cannot give 2 to each of 3 steps; dropped the last 1: linear+bias+gelu S3");
  EXPECT_EQ(plan.decisions[4],
            "budget: 5 candidates over 2 steps, 2 each and 1 more by headroom: linear+bias+gelu: S1 3, S2 2");
  context.candidate_budget = 1;
  const Plan none = plan_fixture("gemm_bias_gelu_bf16_h200.json", context);
  EXPECT_TRUE(none.steps.empty());
  EXPECT_FALSE(none.regions[0].planned);
}

Region synthetic(std::string name, std::string pattern, double measured_ms, double bytes) {
  Region region;
  region.name = std::move(name);
  region.kernels = {region.name + "_kernel"};
  region.pattern = std::move(pattern);
  region.measured_ms = measured_ms;
  region.bytes = bytes;
  region.launches = 1;
  return region;
}

TEST(PlannerTest, RegionsAreOrderedByHeadroomTimesLikelihoodAndBudgetFollowsHeadroom) {
  GpuCeilings ceilings;
  ceilings.bandwidth_gbs = 1000.0;
  ceilings.peak_tflops = {{"float32", 50.0}};
  ceilings.source = "test";
  PlanContext context;
  context.dtype = "float32";
  const std::vector<Region> regions = {synthetic("relu", "elementwise_chain", 0.5, 200e6),
                                       synthetic("stencil", "stencil", 1.0, 100e6),
                                       synthetic("transpose", "copy_transpose", 0.02, 10e6),
                                       synthetic("bogus", "elementwise_chain", 0.05, 100e6)};
  const Plan plan = make_plan(regions, ceilings, context, test_recipes());
  ASSERT_EQ(plan.regions.size(), 4u);
  EXPECT_EQ(plan.regions[0].region.name, "stencil");
  EXPECT_EQ(plan.regions[0].region.dtype, "float32");  // from the context
  EXPECT_EQ(plan.regions[1].region.name, "relu");
  EXPECT_EQ(plan.regions[2].region.name, "transpose");
  EXPECT_EQ(plan.regions[3].region.name, "bogus");
  expect_steps(plan, {{"stencil", Space::S1, {"stencil-as-conv3d"}, 8},
                      {"stencil", Space::S3, {"stencil3d-7pt-tiled"}, 8},
                      {"relu", Space::S1, {"compile-epilogue-fusion"}, 4},
                      {"relu", Space::S3, {"vectorized-elementwise"}, 4}});
  EXPECT_EQ(plan.decisions,
            (Strings{"roofline: test: 1000 GB/s; float32 50.0 TFLOP/s; 3.00 µs per launch",
                     "#1 stencil: priority 818 µs = headroom 900 µs × likelihood 0.91 (expected 5.50× from "
                     "stencil3d-7pt-tiled)",
                     "stencil: no S2 recipe applies to a memory-bound stencil (float32)",
                     "stencil: start in S1, the cheapest space with a recipe: none promises the 8.50× that reaches 85% "
                     "of speed of light (best: stencil3d-7pt-tiled, up to 8.00× in S3); then S3 when a space stops "
                     "paying",
                     "#2 relu: priority 115 µs = headroom 300 µs × likelihood 0.38 (expected 1.30× from "
                     "vectorized-elementwise)",
                     "relu: no S2 recipe applies to a memory-bound elementwise_chain (float32)",
                     "relu: start in S1, the cheapest space with a recipe: none promises the 2.12× that reaches 85% of "
                     "speed of light (best: vectorized-elementwise, up to 1.50× in S3); then S3 when a space stops "
                     "paying",
                     "skip transpose: its headroom 10.0 µs is 1% of the module's 1.57 ms (less than 2%)",
                     "skip bogus: measured 50.0 µs is below its speed of light 100 µs; the counted work or the timing "
                     "is wrong",
                     "budget: 24 candidates over 4 steps, 2 each and 16 more by headroom: stencil: S1 8, S3 8; relu: "
                     "S1 4, S3 4"}));
}

TEST(PlannerTest, NoRegionsNoPlan) {
  const Plan plan = make_plan({}, probe_ceilings(load_fixture("sgemm_8192_fp32_h200.json")), {}, test_recipes());
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_FALSE(plan.at_speed_of_light);
  EXPECT_EQ(plan.decisions, (Strings{kRoofline, "no regions: the profile shows no GPU time"}));
}

}  // namespace
}  // namespace hiera::engine::plan
