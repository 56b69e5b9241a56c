// The TF32 implicit-GEMM convolution with its epilogue: the exact launch
// statements (TF32 or 3xTF32 by cuDNN's flag at each call, the input made
// readable in 16-byte chunks, shared memory and blocks per SM from the
// geometry), the reduction over channels and the elementwise epilogue in the
// kernel text, and the convolutions it leaves alone with the reason. Both
// kernels of each replacement compile with NVRTC; the CPU emulation test runs them.
#include "engine/propose/recipes/kernels/tensor_core_conv.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::bool_arg;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Shape = std::vector<std::int64_t>;

struct ConvSpec {
  std::int64_t cin = 16, cout = 64, size = 256, pad = 0, stride = 1;
  std::string dtype = "float32";
};

// x [8, cin, size, size] -> self.conv (3x3, with a bias); its result's shape.
Shape add_conv(GraphBuilder& b, const ConvSpec& c) {
  const std::int64_t out = (c.size + 2 * c.pad - 3) / c.stride + 1;
  b.input("x", {8, c.cin, c.size, c.size}, c.dtype);
  b.module("conv", "Conv2d",
           {{"in_channels", c.cin}, {"out_channels", c.cout}, {"bias", true}, {"padding", {c.pad, c.pad}},
            {"stride", {c.stride, c.stride}}, {"padding_mode", "zeros"}},
           {{"weight", {c.cout, c.cin, 3, 3}}, {"bias", {c.cout}}});
  const Shape shape = {8, c.cout, out, out};
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, shape, c.dtype, "self.conv(x)");
  return shape;
}

// conv -> min over the channels (keepdim) -> tanh -> tanh (fusion/08).
OpGraph conv_min(const ConvSpec& c = {}) {
  GraphBuilder b;
  Shape shape = add_conv(b, c);
  shape[1] = 1;
  b.call("min", "call_function", "torch.min", "min", {node_arg("conv")}, {{"dim", int_arg(1)}, {"keepdim", bool_arg(true)}},
         {}, "none");
  b.call("values", "call_function", "operator.getitem", "getitem", {node_arg("min"), int_arg(0)}, {}, shape);
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("values")}, {}, shape);
  b.call("tanh_1", "call_function", "torch.tanh", "tanh", {node_arg("tanh")}, {}, shape);
  return b.build({"tanh_1"});
}

// conv -> relu -> * scale [C, 1, 1] (a parameter), optionally also returning the conv's output.
OpGraph conv_relu_scale(const ConvSpec& c = {32, 64, 256, 1}, bool conv_returned = false) {
  GraphBuilder b;
  const Shape shape = add_conv(b, c);
  b.parameter("scale", "scale", {c.cout, 1, 1}, c.dtype);
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("conv")}, {}, shape, c.dtype);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("relu"), node_arg("scale")}, {}, shape, c.dtype);
  return conv_returned ? b.build({"mul", "conv"}) : b.build({"mul"});
}

// conv -> AvgPool2d(2) -> sigmoid -> sum over dims 1, 2, 3 (fusion/20); `mean` for the mean instead.
OpGraph conv_pool_sigmoid_sum(const std::string& reduction = "sum") {
  GraphBuilder b;
  Shape shape = add_conv(b, {});
  shape[2] /= 2, shape[3] /= 2;
  b.module("pool", "AvgPool2d",
           {{"kernel_size", 2}, {"stride", 2}, {"padding", 0}, {"ceil_mode", false}, {"divisor_override", nullptr}});
  b.call("pool", "call_module", "pool", "avg_pool2d", {node_arg("conv")}, {}, shape, "float32", "self.pool(conv)");
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("pool")}, {}, shape);
  b.call("total", "call_function", "torch." + reduction, reduction, {node_arg("sigmoid")},
         {{"dim", hiera::testing::list_arg({int_arg(1), int_arg(2), int_arg(3)})}}, {8});
  return b.build({"total"});
}

std::vector<Replacement> find(const OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  return find_tensor_core_convs(graph, {}, hiera::testing::source_options(), skipped);
}

// The one replacement for `graph`, nothing skipped (a failure, and an exception that ends the test, otherwise).
Replacement only(const OpGraph& graph) {
  std::vector<SkippedRewrite> skipped;
  auto found = find(graph, skipped);
  EXPECT_TRUE(skipped.empty());
  if (found.size() != 1) throw std::runtime_error(std::to_string(found.size()) + " replacements, not one");
  return found[0];
}

TEST(TensorCoreConv, ReductionOverChannelsInTheEpilogue) {
  const Replacement r = only(conv_min());
  EXPECT_EQ(r.recipe, "s3_tf32_implicit_gemm_conv");
  EXPECT_EQ(r.space, hiera::engine::knowledge::Space::S3);
  EXPECT_TRUE(r.risky);
  EXPECT_EQ(r.produces, "tanh_1");
  EXPECT_THAT(r.covered, ElementsAre("conv", "min", "tanh", "tanh_1", "values"));
  EXPECT_EQ(r.description,
            "'conv' (16 -> 64 channels, 3x3) on TF32 tensor cores with min over channels + tanh + tanh in its "
            "epilogue: the convolution's output never reaches memory (3xTF32 when cuDNN may not use TF32)");
  // Weights 36 KiB + two tiles of 16 channels x 10 rows x 36 floats (a channel stride of 360 = 8 mod 32):
  // 82944 bytes, two blocks an SM.
  EXPECT_THAT(r.statements,
              ElementsAre("_tanh_1_hw = (x.shape[2] - 2, x.shape[3] - 2)",
                          "_tanh_1_shape = torch.Size((x.shape[0], 1) + _tanh_1_hw)",
                          "assert x.dim() == 4 and x.shape[1] == 16 and x.dtype == torch.float32 and "
                          "self.conv.weight.shape == (64, 16, 3, 3), \"kernel conv_tc_tanh_1 computes a float32 conv2d "
                          "of 16 channels into 64\"",
                          "assert x.shape[0] * 64 * _tanh_1_hw[0] * _tanh_1_hw[1] < 2**31, \"kernel conv_tc_tanh_1 "
                          "indexes with 32 bits\"",
                          "_tanh_1_x = _hiera_conv_input(x)",
                          "tanh_1 = torch.empty(_tanh_1_shape, dtype=torch.float32, device=x.device)",
                          "_kernel(\"conv_tc_tanh_1\" if _hiera_cudnn_tf32() else \"conv_tc_tanh_1_3xtf32\")(_grid("
                          "x.shape[0] * ((_tanh_1_hw[0] + 7) // 8) * ((_tanh_1_hw[1] + 31) // 32) * 256, 256, 2), 256, "
                          "_tanh_1_x, self.conv.weight.contiguous(), self.conv.bias.contiguous(), tanh_1, x.shape[0], "
                          "x.shape[2], _tanh_1_x.shape[3], _tanh_1_hw[0], _tanh_1_hw[1], shared_mem=82944)"));
  ASSERT_EQ(r.definitions.size(), 2u);
  EXPECT_THAT(r.definitions[0], HasSubstr("def _hiera_conv_input(x):"));
  EXPECT_THAT(r.definitions[1], HasSubstr("return bool(torch.backends.cudnn.allow_tf32)"));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "conv_tc_tanh_1");
  EXPECT_EQ(r.kernels[1].name, "conv_tc_tanh_1_3xtf32");
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define CIN 16\n"));
  EXPECT_THAT(source, HasSubstr("#define COUT 64\n"));
  EXPECT_THAT(source, HasSubstr("#define PAD_H 0\n#define PAD_W 0\n#define ROWS 8\n#define BW 32\n#define MT 2\n"
                                "#define PITCH 36\n#define CS 360\n#define SPLIT 0\n#define REDUCE 1\n"));
  EXPECT_THAT(r.kernels[1].source, HasSubstr("#define SPLIT 1\n"));
  // Registers capped for the two blocks an SM that the shared memory allows.
  EXPECT_THAT(source, HasSubstr("extern \"C\" __global__ void __launch_bounds__(THREADS, 2)\nconv_tc_tanh_1("));
  // The minimum with torch's NaN rule, over the thread's channels and then the position's four lanes.
  EXPECT_THAT(source, HasSubstr("        float a = HIERA_INF;\n"));
  EXPECT_THAT(source, HasSubstr("            a = (a != a || a < b) ? a : b;\n"));
  EXPECT_THAT(source, HasSubstr("__device__ __forceinline__ float conv_tc_tanh_1_element(const index_t i, const float v, "
                                "const int c) {\n"
                                "  const float t0 = tanhf(v);\n  const float t1 = tanhf(t0);\n  return t1;\n}"));
  EXPECT_THAT(source, HasSubstr("          const float acc = a;\n"
                                "          const index_t e = ((index_t)n * out_height + oh) * out_width + ow;\n"
                                "          out[e] = conv_tc_tanh_1_element(e, acc, 0);\n"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(TensorCoreConv, ElementwiseEpilogueReadsPerChannelOperands) {
  const Replacement r = only(conv_relu_scale());
  EXPECT_EQ(r.produces, "mul");
  EXPECT_THAT(r.covered, ElementsAre("conv", "mul", "relu"));
  EXPECT_EQ(r.description,
            "'conv' (32 -> 64 channels, 3x3) on TF32 tensor cores with relu + mul in its epilogue: the convolution's "
            "output never reaches memory (3xTF32 when cuDNN may not use TF32)");
  // 72 KiB of weights and two tiles of 32 channels x 10 rows x 40 floats (padding 1 starts the tile's
  // chunks 4 columns early): one block an SM. The scale is read at the value's channel, which the kernel knows.
  ASSERT_EQ(r.statements.size(), 8u);
  EXPECT_EQ(r.statements[0], "_mul_hw = (x.shape[2], x.shape[3])");
  EXPECT_EQ(r.statements[1], "_mul_shape = torch.Size((x.shape[0], 64) + _mul_hw)");
  EXPECT_EQ(r.statements[4], "assert scale.dtype == torch.float32, \"kernel conv_tc_mul expects float32 scale\"");
  EXPECT_EQ(r.statements[7],
            "_kernel(\"conv_tc_mul\" if _hiera_cudnn_tf32() else \"conv_tc_mul_3xtf32\")(_grid(x.shape[0] * "
            "((_mul_hw[0] + 7) // 8) * ((_mul_hw[1] + 31) // 32) * 256, 256, 1), 256, _mul_x, "
            "self.conv.weight.contiguous(), self.conv.bias.contiguous(), scale.contiguous(), mul, x.shape[0], "
            "x.shape[2], _mul_x.shape[3], _mul_hw[0], _mul_hw[1], shared_mem=182272)");
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define PITCH 40\n#define CS 424\n"));
  EXPECT_THAT(source, HasSubstr("#define REDUCE 0\n"));
  EXPECT_THAT(source, HasSubstr("__launch_bounds__(THREADS, 1)\n"));
  EXPECT_THAT(source, HasSubstr("float conv_tc_mul_element(const index_t i, const float v, const int c, "
                                "const float* __restrict__ a0) {\n  const float t0 = hiera_clamp_min(v, 0.0f);\n"
                                "  const float a0_v = static_cast<float>(a0[c]);\n  const float t1 = t0 * a0_v;\n"));
  EXPECT_THAT(source, HasSubstr("              const float v = conv_tc_mul_element(e, frag[i][j][2 * h + k] + "
                                "bias_of[j][k], j * 8 + 2 * t + k, a0);\n#if REDUCE == 2\n              total += v;\n"
                                "#else\n              out[e] = v;\n#endif\n"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(TensorCoreConv, PoolAndSumOfEachImageInTheEpilogue) {
  const Replacement r = only(conv_pool_sigmoid_sum());
  EXPECT_EQ(r.produces, "total");
  EXPECT_THAT(r.covered, ElementsAre("conv", "pool", "sigmoid", "total"));
  EXPECT_EQ(r.description,
            "'conv' (16 -> 64 channels, 3x3) on TF32 tensor cores with avg_pool2d + sigmoid + sum of each image in its "
            "epilogue: the convolution's output never reaches memory (3xTF32 when cuDNN may not use TF32)");
  // Each tile's sum into _total_sums, then one block per image sums its tiles.
  EXPECT_THAT(r.statements,
              ElementsAre("_total_hw = (x.shape[2] - 2, x.shape[3] - 2)",
                          "_total_shape = torch.Size((x.shape[0], 64) + (_total_hw[0] // 2, _total_hw[1] // 2))",
                          "assert x.dim() == 4 and x.shape[1] == 16 and x.dtype == torch.float32 and "
                          "self.conv.weight.shape == (64, 16, 3, 3), \"kernel conv_tc_total computes a float32 conv2d "
                          "of 16 channels into 64\"",
                          "assert x.shape[0] * 64 * _total_hw[0] * _total_hw[1] < 2**31, \"kernel conv_tc_total "
                          "indexes with 32 bits\"",
                          "_total_x = _hiera_conv_input(x)",
                          "_total_sums = torch.empty(x.shape[0] * ((_total_hw[0] + 7) // 8) * ((_total_hw[1] + 31) // "
                          "32), dtype=torch.float32, device=x.device)",
                          "total = torch.empty((x.shape[0],), dtype=torch.float32, device=x.device)",
                          "_kernel(\"conv_tc_total\" if _hiera_cudnn_tf32() else \"conv_tc_total_3xtf32\")(_grid("
                          "x.shape[0] * ((_total_hw[0] + 7) // 8) * ((_total_hw[1] + 31) // 32) * 256, 256, 2), 256, "
                          "_total_x, self.conv.weight.contiguous(), self.conv.bias.contiguous(), _total_sums, x.shape[0], "
                          "x.shape[2], _total_x.shape[3], _total_hw[0], _total_hw[1], shared_mem=82944)",
                          "_kernel(\"conv_tc_total_images\")(max(x.shape[0], 1), 256, _total_sums, total, x.shape[0], "
                          "((_total_hw[0] + 7) // 8) * ((_total_hw[1] + 31) // 32), 1.0)"));
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.kernels[2].name, "conv_tc_total_images");
  EXPECT_EQ(r.kernels[2].source, r.kernels[0].source);
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define REDUCE 2\n#define POOL 1\n"));
  // The window: the thread's two rows, then the next column's lane.
  EXPECT_THAT(r.kernels[0].source,
              HasSubstr("            total += conv_tc_total_element(e, window * 0.25f, c);\n"));
  hiera::testing::expect_kernels_compile(r);
  // The mean multiplies by 1 / (C * pooled height * pooled width).
  EXPECT_THAT(only(conv_pool_sigmoid_sum("mean")).statements.back(),
              HasSubstr(", 1.0 / (64 * _total_shape[2] * _total_shape[3]))"));
}

// conv -> F.avg_pool2d(conv, `window`) -> sum over dims 1, 2, 3.
OpGraph conv_functional_pool_sum(std::int64_t window) {
  GraphBuilder b;
  Shape shape = add_conv(b, {});
  shape[2] /= window, shape[3] /= window;
  b.call("pool", "call_function", "torch.nn.functional.avg_pool2d", "avg_pool2d", {node_arg("conv"), int_arg(window)}, {},
         shape);
  b.call("total", "call_function", "torch.sum", "sum", {node_arg("pool")},
         {{"dim", hiera::testing::list_arg({int_arg(1), int_arg(2), int_arg(3)})}}, {8});
  return b.build({"total"});
}

TEST(TensorCoreConv, ImageSumsWithoutAPoolOrThroughTheFunctionalOne) {
  // conv -> relu -> mean over dims 1, 2, 3 with keepdim: no pool; the mean's 1 / (C * H * W).
  GraphBuilder b;
  const Shape shape = add_conv(b, {});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("conv")}, {}, shape);
  b.call("avg", "call_method", "mean", "mean",
         {node_arg("relu"), hiera::testing::list_arg({int_arg(1), int_arg(2), int_arg(-1)})}, {{"keepdim", bool_arg(true)}},
         {8, 1, 1, 1});
  std::vector<SkippedRewrite> skipped;
  const auto found = find(b.build({"avg"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].covered, ElementsAre("avg", "conv", "relu"));
  EXPECT_EQ(found[0].statements[1], "_avg_shape = torch.Size((x.shape[0], 64) + _avg_hw)");
  EXPECT_EQ(found[0].statements[6], "avg = torch.empty((x.shape[0], 1, 1, 1), dtype=torch.float32, device=x.device)");
  EXPECT_THAT(found[0].statements.back(), HasSubstr(", 1.0 / (64 * _avg_shape[2] * _avg_shape[3]))"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("#define REDUCE 2\n#define POOL 0\n"));
  hiera::testing::expect_kernels_compile(found[0]);
  // F.avg_pool2d(conv, 2): the 2x2 window, as the module's.
  const auto pooled = find(conv_functional_pool_sum(2), skipped);
  ASSERT_EQ(pooled.size(), 1u);
  EXPECT_THAT(pooled[0].covered, ElementsAre("conv", "pool", "total"));
  EXPECT_THAT(pooled[0].kernels[0].source, HasSubstr("#define REDUCE 2\n#define POOL 1\n"));
  // A 3x3 window is not one the kernel pools.
  EXPECT_TRUE(skipped.empty());
  EXPECT_TRUE(find(conv_functional_pool_sum(3), skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "TF32 implicit-GEMM convolution: conv: its output does not go whole into an elementwise "
                               "group, a reduction over channels or a sum of each image");
}

TEST(TensorCoreConv, OddChannelCountsArePadded) {
  // 3 input channels (zero channels up to 8) into 24 outputs (zero weights up to 32).
  std::vector<SkippedRewrite> skipped;
  const auto found = find(conv_min({3, 24, 64, 0}), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("#define CIN 3\n#define CINP ((CIN + 7) / 8 * 8)\n#define COUT 24\n"));
  EXPECT_THAT(found[0].statements.back(), HasSubstr(", shared_mem=" + std::to_string(4 * (9 * 8 * 32 + 2 * 8 * 360)) + ")"));
  hiera::testing::expect_kernels_compile(found[0]);
}

TEST(TensorCoreConv, LeftAloneWithTheReason) {
  const auto reason = [](const OpGraph& graph) {
    std::vector<SkippedRewrite> skipped;
    EXPECT_TRUE(find(graph, skipped).empty());
    return skipped.size() == 1 ? skipped[0].node + ": " + skipped[0].reason : std::to_string(skipped.size()) + " skipped";
  };
  const std::string prefix = "conv: TF32 implicit-GEMM convolution: conv: ";
  EXPECT_EQ(reason(conv_min({16, 64, 256, 0, 2})), prefix + "stride 2");
  EXPECT_EQ(reason(conv_min({16, 128})), prefix + "128 output channels (up to 64)");
  EXPECT_EQ(reason(conv_relu_scale({32, 64, 256, 1, 1, "bfloat16"})),
            prefix + "a bfloat16 convolution (TF32 is for float32)");
  EXPECT_EQ(reason(conv_relu_scale({32, 64, 256, 1}, true)),
            prefix + "its output does not go whole into an elementwise group, a reduction over channels or a sum of each "
                     "image");
  // 64 -> 64 channels: 144 KiB of weights and two tiles of 64 channels.
  EXPECT_EQ(reason(conv_relu_scale({64, 64, 256, 1})),
            "conv: TF32 implicit-GEMM convolution: weights and two input tiles take 356 KiB of shared memory, over 226");
}

}  // namespace
