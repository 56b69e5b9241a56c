// Cost estimates before anything is measured: exact sums, roofline times and
// bounds, and when a module's estimate is only a lower bound.
#include "engine/facade/cost_estimates.h"

#include <gtest/gtest.h>

namespace hiera::engine::facade {
namespace {

// 1 TB/s and 100 TFLOP/s: a byte costs 1 ps, a flop 0.01 ps.
const analysis::Roofline kGpu{"test", 1000.0, {{"float32", 100.0}}};

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

}  // namespace
}  // namespace hiera::engine::facade
