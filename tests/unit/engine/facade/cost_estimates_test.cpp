// Cost estimates before anything is measured: exact sums, roofline times and
// bounds, and when a module's estimate is only a lower bound.
#include "engine/facade/cost_estimates.h"

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

// 1 TB/s and 100 TFLOP/s: a byte costs 1 ps, a flop 0.01 ps.
const engine::GpuCeilings kGpu{1000.0, {{"float32", 100.0}}, 0.0, "test"};

analysis::ForwardOp op(double flops, double bytes, bool in_loop = false) {
  analysis::ForwardOp o;
  o.work = analysis::Work{flops, bytes, "float32", "get_inputs"};
  o.in_loop = in_loop;
  return o;
}

TEST(CostEstimates, WorkOnARooflineHasItsTimeAndBound) {
  const auto e = work_estimate({2e9, 1e9, "float32", "annotations"}, &kGpu);
  ASSERT_TRUE(e && e->seconds);
  EXPECT_EQ(e->flops, 2e9);
  EXPECT_EQ(e->bytes, 1e9);
  EXPECT_EQ(e->source, "annotations");
  EXPECT_DOUBLE_EQ(*e->seconds, 1e-3);  // 1 GB at 1 TB/s beats 2 GFLOP at 100 TFLOP/s
  EXPECT_TRUE(e->memory_bound);
  EXPECT_FALSE(work_estimate({2e9, 1e9, "float32", ""}, nullptr)->seconds.has_value());
}

TEST(CostEstimates, AKernelOrOpWithoutWorkHasNone) {
  EXPECT_EQ(kernel_estimate(analysis::CudaFunction{}, &kGpu), std::nullopt);
  EXPECT_EQ(op_estimate(analysis::ForwardOp{}, &kGpu), std::nullopt);
  EXPECT_TRUE(op_estimate(op(1, 1, true), &kGpu)->lower_bound);  // per iteration
  EXPECT_FALSE(op_estimate(op(1, 1), &kGpu)->lower_bound);
}

TEST(CostEstimates, AModuleSumsItsKnownOpsAndIsALowerBoundWhenSomeAreUnknown) {
  analysis::TorchModule module;
  module.ops = {op(1e12, 1e6), op(0, 2e9), analysis::ForwardOp{}};
  const auto e = module_estimate(module, &kGpu);
  ASSERT_TRUE(e && e->seconds);
  EXPECT_EQ(e->flops, 1e12);
  EXPECT_EQ(e->bytes, 1e6 + 2e9);
  EXPECT_EQ(e->ops_counted, 2u);
  EXPECT_EQ(e->ops_total, 3u);
  EXPECT_TRUE(e->lower_bound);
  EXPECT_DOUBLE_EQ(*e->seconds, 1e-2 + 2e-3);  // the compute-bound op's 10 ms and the memory-bound op's 2 ms
  EXPECT_FALSE(e->memory_bound);                // compute takes most of the time

  analysis::TorchModule unknown;
  unknown.ops = {analysis::ForwardOp{}};
  EXPECT_EQ(module_estimate(unknown, &kGpu), std::nullopt);
}

// An op of forward with a result of `elements` float32s, reading `inputs`.
analysis::ForwardOp forward_op(std::string name, double flops, double bytes, std::int64_t elements, std::vector<int> inputs) {
  analysis::ForwardOp o = op(flops, bytes);
  o.op = std::move(name);
  o.shape = analysis::Shape{elements};
  o.dtype = "float32";
  o.inputs = std::move(inputs);
  return o;
}

TEST(CostEstimates, ElementwiseOpsThatAloneReadTheirProducerRunInItsPass) {
  // linear -> gelu -> add(residual): 1 M floats, 4 MB each way; gelu and add each read 4 MB and write 4 MB.
  analysis::TorchModule module;
  module.ops = {forward_op("linear", 2e8, 12e6, 1 << 20, {}), forward_op("gelu", 1e6, 8e6, 1 << 20, {0}),
                forward_op("add", 1e6, 12e6, 1 << 20, {1})};
  const auto e = module_estimate(module, &kGpu);
  ASSERT_TRUE(e && e->seconds && e->op_by_op_seconds);
  EXPECT_EQ(e->fused_ops, 2u);
  const double kept = 2.0 * 2 * 4 * (1 << 20);  // two intermediates, written and read back
  EXPECT_DOUBLE_EQ(e->bytes, 32e6 - kept);
  EXPECT_DOUBLE_EQ(*e->seconds, (32e6 - kept) * 1e-12);  // one memory-bound pass
  EXPECT_DOUBLE_EQ(*e->op_by_op_seconds, 12e-6 + 8e-6 + 12e-6);
  EXPECT_TRUE(e->memory_bound);

  // A producer read twice keeps its result in memory: nothing fuses.
  analysis::TorchModule shared = module;
  shared.ops.push_back(forward_op("sum", 1e6, 4e6, 1, {0}));
  const auto s = module_estimate(shared, &kGpu);
  EXPECT_EQ(s->fused_ops, 1u);  // only add into gelu
  analysis::TorchModule single;
  single.ops = {op(1, 1)};
  EXPECT_FALSE(module_estimate(single, &kGpu)->op_by_op_seconds);  // nothing fused: no second figure
}

TEST(CostEstimates, TheLaunchFloorHoldsEachPassAndSaysSo) {
  engine::GpuCeilings gpu = kGpu;
  gpu.launch_overhead_us = 3.0;
  analysis::TorchModule module;
  module.ops = {forward_op("relu", 1e3, 8e3, 1000, {}), forward_op("mul", 1e3, 8e3, 1000, {0}),
                forward_op("sum", 1e3, 4e3, 1, {1})};
  const auto e = module_estimate(module, &gpu);
  ASSERT_TRUE(e && e->seconds);
  EXPECT_DOUBLE_EQ(*e->seconds, 6e-6);            // relu+mul one launch, sum another
  EXPECT_DOUBLE_EQ(*e->op_by_op_seconds, 9e-6);   // three launches
  EXPECT_TRUE(e->launch_bound);
  const auto one = op_estimate(module.ops[0], &gpu);
  EXPECT_DOUBLE_EQ(*one->seconds, 3e-6);
  EXPECT_TRUE(one->launch_bound);
}

TEST(CostEstimates, TensorFloat32IsNamedWhenAnOpIsHeldAgainstItsPeak) {
  const engine::GpuCeilings gpu{1000.0, {{"float32", 10.0}, {"tf32", 80.0}}, 0.0, "test"};
  EXPECT_TRUE(work_estimate({8e12, 1e6, "tf32", "get_inputs"}, &gpu)->tensor_float32);
  EXPECT_DOUBLE_EQ(*work_estimate({8e12, 1e6, "tf32", "get_inputs"}, &gpu)->seconds, 0.1);
  EXPECT_FALSE(work_estimate({8e12, 1e6, "float32", "get_inputs"}, &gpu)->tensor_float32);
}

TEST(CostEstimates, TheEstimateRooflineCarriesTheLaunchFloor) {
  knowledge::GpuSpec spec;
  spec.id = "h200";
  spec.memory_bandwidth_gbs = 4800;
  spec.peak_tflops = {{"float32", 67.0}};
  const engine::GpuCeilings r = estimate_roofline(spec);
  EXPECT_EQ(r.source, "h200");
  EXPECT_EQ(r.bandwidth_gbs, 4800);
  EXPECT_EQ(r.launch_overhead_us, engine::kKernelLaunchUs);
}

}  // namespace
}  // namespace hiera::engine::facade
