// The whole module's speed-of-light bound from its op graph.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/graph/op_graph.h"
#include "engine/optimize/optimizer.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"

namespace hiera::engine::optimize {
namespace {

using nlohmann::json;

// x [1024, 1024] fp32 -> linear(1024 -> 512) -> relu: 2*1024*1024*512 flops,
// and at least x, the weight, the bias and the output moved once.
graph::OpGraph linear_relu() {
  const json meta_x = {{"shape", {1024, 1024}}, {"stride", {1024, 1}}, {"dtype", "float32"}};
  const json meta_y = {{"shape", {1024, 512}}, {"stride", {512, 1}}, {"dtype", "float32"}};
  return graph::parse_op_graph(json{
      {"method", "fx"}, {"class_name", "Model"}, {"forward_params", {"x"}},
      {"parameters", {{"fc.weight", {{"shape", {512, 1024}}, {"dtype", "float32"}}}, {"fc.bias", {{"shape", {512}}, {"dtype", "float32"}}}}},
      {"buffers", json::object()}, {"submodules", json::object()},
      {"nodes", json::array({
          {{"name", "x"}, {"op", "placeholder"}, {"target", "x"}, {"kind", "input"}, {"args", json::array()}, {"kwargs", json::object()}, {"meta", meta_x}, {"code", "x"}},
          {{"name", "fc"}, {"op", "call_module"}, {"target", "fc"}, {"kind", "linear"}, {"args", {{{"node", "x"}}}}, {"kwargs", json::object()}, {"meta", meta_y}, {"flops", 2.0 * 1024 * 1024 * 512}, {"code", "self.fc(x)"}},
          {{"name", "relu"}, {"op", "call_function"}, {"target", "torch.relu"}, {"kind", "relu"}, {"args", {{{"node", "fc"}}}}, {"kwargs", json::object()}, {"meta", meta_y}, {"flops", 1024.0 * 512}, {"code", "torch.relu(fc)"}},
          {{"name", "output"}, {"op", "output"}, {"target", "output"}, {"kind", "output"}, {"args", {{{"node", "relu"}}}}, {"kwargs", json::object()}, {"meta", nullptr}, {"code", "relu"}}})},
      {"total_flops", 2.0 * 1024 * 1024 * 512 + 1024.0 * 512}});
}

TEST(ModuleSpeedOfLight, TheSlowerOfBytesOverBandwidthAndFlopsOverPeak) {
  GpuCeilings memory_bound;
  memory_bound.bandwidth_gbs = 1.0;  // 1 GB/s: the bytes dominate
  memory_bound.peak_tflops["float32"] = 50.0;
  const double bytes = 4.0 * (1024 * 1024 + 512 * 1024 + 512 + 1024 * 512);
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(linear_relu(), memory_bound), bytes / 1e9 * 1e3);

  GpuCeilings compute_bound;
  compute_bound.bandwidth_gbs = 4000.0;
  compute_bound.peak_tflops["float32"] = 0.001;  // 1 GFLOP/s: the flops dominate
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(linear_relu(), compute_bound),
                   (2.0 * 1024 * 1024 * 512 + 1024.0 * 512) / 1e9 * 1e3);
}

// x [8, 64, 56, 56] fp32 -> conv2d(64 -> 64, 3x3) -> relu.
graph::OpGraph conv_relu() {
  const json meta = {{"shape", {8, 64, 56, 56}}, {"stride", {200704, 3136, 56, 1}}, {"dtype", "float32"}};
  const double conv_flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9;
  return graph::parse_op_graph(json{
      {"method", "fx"}, {"class_name", "Model"}, {"forward_params", {"x"}},
      {"parameters", {{"conv.weight", {{"shape", {64, 64, 3, 3}}, {"dtype", "float32"}}}}},
      {"buffers", json::object()}, {"submodules", json::object()},
      {"nodes", json::array({
          {{"name", "x"}, {"op", "placeholder"}, {"target", "x"}, {"kind", "input"}, {"args", json::array()}, {"kwargs", json::object()}, {"meta", meta}, {"code", "x"}},
          {{"name", "conv"}, {"op", "call_module"}, {"target", "conv"}, {"kind", "conv2d"}, {"args", {{{"node", "x"}}}}, {"kwargs", json::object()}, {"meta", meta}, {"flops", conv_flops}, {"code", "self.conv(x)"}},
          {{"name", "relu"}, {"op", "call_function"}, {"target", "torch.relu"}, {"kind", "relu"}, {"args", {{{"node", "conv"}}}}, {"kwargs", json::object()}, {"meta", meta}, {"flops", 8.0 * 64 * 56 * 56}, {"code", "torch.relu(conv)"}},
          {{"name", "output"}, {"op", "output"}, {"target", "output"}, {"kind", "output"}, {"args", {{{"node", "relu"}}}}, {"kwargs", json::object()}, {"meta", nullptr}, {"code", "relu"}}})},
      {"total_flops", conv_flops + 8.0 * 64 * 56 * 56}});
}

// cuDNN runs a float32 convolution in TF32 by default: its flops count at TF32's peak. The others count at
// the rate of a float32-accurate product: float32's, or 3xTF32's (a third of TF32's) where that is higher.
// (On the H200 the float32 peak put fusion/02's bound at 1.84x its measured eager time.)
TEST(ModuleSpeedOfLight, Float32ConvolutionsCountAtTheTf32Peak) {
  GpuCeilings c;
  c.bandwidth_gbs = 1e9;  // bytes negligible
  c.peak_tflops["float32"] = 0.001;
  c.peak_tflops["tf32"] = 0.008;
  const double conv_flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9, relu_flops = 8.0 * 64 * 56 * 56;
  const double split = 0.008 / 3;  // 3xTF32, above float32's 0.001
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(conv_relu(), c), conv_flops / 8e9 * 1e3 + relu_flops / (split * 1e12) * 1e3);
  // Without a TF32 ceiling (a GPU without tensor cores) they stay at float32's.
  c.peak_tflops.erase("tf32");
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(conv_relu(), c), (conv_flops + relu_flops) / 1e9 * 1e3);
  // A linear layer's float32 matmul is not a convolution: TF32 is off for matmuls by default, and its
  // float32-accurate bound is 3xTF32's.
  c.peak_tflops["tf32"] = 0.008;
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(linear_relu(), c),
                   (2.0 * 1024 * 1024 * 512 + 1024.0 * 512) / (split * 1e12) * 1e3);
  // Where float32's own rate is higher than a third of TF32's, it stays.
  c.peak_tflops["float32"] = 0.004;
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(linear_relu(), c), (2.0 * 1024 * 1024 * 512 + 1024.0 * 512) / 4e9 * 1e3);
}

// x @ torch.diag(d) counts as the column scale it is: an algebraic rewrite is measured against that
// work, never above 100% of its bound (the H200 run of 2026-12-02 reported 3193% for one).
TEST(ModuleSpeedOfLight, CountsTheLeastWorkOfAProductWithADiagonalMatrix) {
  GpuCeilings c;
  c.bandwidth_gbs = 1e9;  // bytes negligible
  c.peak_tflops["float32"] = 0.001;
  const graph::OpGraph g = hiera::testing::captured_graph("structured_matmul");
  // As written: 8192 + 8192 + 210 + 840 flops (17434 in all). Least: two 16x16 scales, 105 multiplies, the bmm.
  EXPECT_EQ(g.total_flops, 17434.0);
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(g, c), (256.0 + 256.0 + 105.0 + 840.0) / 1e9 * 1e3);
  // A node whose dtype has no peak puts the whole module at one peak: still its least work, the products
  // after that node included.
  graph::OpGraph unbounded = g;
  hiera::testing::node_named(unbounded, "matmul").meta->dtype = "float16";
  EXPECT_DOUBLE_EQ(*module_speed_of_light_ms(unbounded, c), (256.0 + 256.0 + 105.0 + 840.0) / 1e9 * 1e3);
}

TEST(ModuleSpeedOfLight, NoneWithoutCeilings) {
  EXPECT_FALSE(module_speed_of_light_ms(linear_relu(), GpuCeilings{}).has_value());
}

}  // namespace
}  // namespace hiera::engine::optimize
