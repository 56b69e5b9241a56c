// A convolution in channels_last with its elementwise epilogue as one kernel
// on the NHWC tensor: the exact statements (input converted once, output
// allocated channels_last), the per-channel index i % C, channels_last_3d for
// conv3d, .contiguous() where a view reads the result, the groups left alone,
// and its place before the contiguous fusion in find_kernel_rewrites.
#include "engine/propose/recipes/kernels/channels_last_epilogue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/propose/recipes/kernels/unsupported.h"
#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Shape = std::vector<std::int64_t>;

// x -> conv -> + bias (a [C, 1, 1] parameter, or `bias_shape`) -> leaky_relu(0.2) -> * 2.0 [-> view]
OpGraph conv_epilogue(const std::string& conv_kind = "conv2d", Shape out = {8, 16, 32, 32}, Shape bias_shape = {},
                      bool view_after = false) {
  Shape in = out;
  in[1] = 3;
  if (bias_shape.empty()) {
    bias_shape.assign(out.size() - 1, 1);
    bias_shape[0] = out[1];
  }
  GraphBuilder b;
  b.input("x", in);
  b.module("conv", conv_kind == "conv3d" ? "Conv3d" : "Conv2d", {{"in_channels", 3}, {"out_channels", out[1]}});
  b.call("conv", "call_module", "conv", conv_kind, {node_arg("x")}, {}, out, "float32", "self.conv(x)");
  b.parameter("bias", "bias", bias_shape);
  b.call("add", "call_function", "operator.add", "add", {node_arg("conv"), node_arg("bias")}, {}, out);
  b.call("leaky_relu", "call_function", "torch.nn.functional.leaky_relu", "leaky_relu", {node_arg("add")},
         {{"negative_slope", number_arg(0.2)}}, out);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("leaky_relu"), number_arg(2.0)}, {}, out);
  if (!view_after) return b.build({"mul"});
  b.call("view", "call_method", "view", "view", {node_arg("mul"), int_arg(out[0]), int_arg(-1)}, {}, {out[0], -1},
         "float32", "mul.view(8, -1)");
  return b.build({"view"});
}

std::vector<Replacement> find(const OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  return find_channels_last_epilogues(graph, {}, hiera::testing::source_options(), skipped);
}

const std::string& source_of(const Replacement& r, const std::string& name) {
  for (const auto& k : r.kernels)
    if (k.name == name) return k.source;
  throw std::runtime_error("no kernel " + name);
}

TEST(ChannelsLastEpilogue, ConvAndEpilogueOnNhwcMemory) {
  std::vector<SkippedRewrite> skipped;
  const auto found = find(conv_epilogue(), skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_channels_last_conv_epilogue");
  EXPECT_EQ(r.space, hiera::engine::knowledge::Space::S3);
  EXPECT_EQ(r.produces, "mul");
  EXPECT_THAT(r.covered, ElementsAre("add", "conv", "leaky_relu", "mul"));
  EXPECT_EQ(r.description,
            "'conv' in channels_last, then add + leaky_relu + mul fused into one elementwise kernel on channels_last "
            "memory (16-byte vector loads when aligned)");
  // 16 channels: the vector kernel reads the bias as one pack per 4 lanes (lane packs).
  EXPECT_THAT(r.statements,
              ElementsAre("conv = self.conv(_hiera_channels_last(x, \"to_channels_last_float32\", torch.channels_last))",
                          "_mul_shape = _broadcast_shapes(conv.shape, bias.shape)",
                          "_mul_memory_shape = torch.Size([_mul_shape[d] for d in (0, 2, 3, 1)])",
                          "assert conv.dtype == torch.float32 and bias.dtype == torch.float32, "
                          "\"kernel fused_mul_nhwc expects float32 conv, float32 bias\"",
                          "mul = torch.empty(_mul_shape, dtype=conv.dtype, device=conv.device, "
                          "memory_format=torch.channels_last)",
                          "_mul_n = mul.numel()",
                          "assert _mul_n < 2**31, \"kernel fused_mul_nhwc indexes with 32 bits\"",
                          "_mul_a0 = conv.contiguous(memory_format=torch.channels_last)",
                          "_mul_a1 = bias.contiguous()",
                          "_mul_vec = (_mul_a0.data_ptr() | _mul_a1.data_ptr() | mul.data_ptr()) % 16 == 0 and "
                          "_mul_memory_shape[3:4].numel() % 4 == 0",
                          "(_kernel(\"fused_mul_nhwc_vec\") if _mul_vec else _kernel(\"fused_mul_nhwc\"))(_grid((_mul_n "
                          "+ 3) // 4 if _mul_vec else _mul_n, 256, 8), 256, _mul_a0, _mul_a1, "
                          "_mul_memory_shape[3:4].numel(), nvrtc_runtime.uint64(_divider(_mul_memory_shape[3:4].numel())), "
                          "mul, nvrtc_runtime.int64(_mul_n))"));
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_nhwc_vec");
  EXPECT_EQ(r.kernels[1].name, "fused_mul_nhwc");
  EXPECT_EQ(r.kernels[2].name, "to_channels_last_float32");
  EXPECT_THAT(r.kernels[2].source, HasSubstr("typedef float scalar_t;"));
  ASSERT_EQ(r.definitions.size(), 1u);
  EXPECT_THAT(r.definitions[0], HasSubstr("def _hiera_channels_last(x, kernel, memory_format):"));
  // The channel is the fastest-moving index of NHWC memory: the bias is read at i % C, without a division.
  EXPECT_THAT(source_of(r, "fused_mul_nhwc"),
              HasSubstr("__device__ __forceinline__ float fused_mul_nhwc_element(const index_t i, const float a0_v, "
                        "const float* __restrict__ a1, const int a1_size0, const unsigned long long a1_size0_div) {\n"
                        "  const float a1_v = static_cast<float>(a1[hiera_mod(i, a1_size0, a1_size0_div)]);\n"));
  EXPECT_THAT(source_of(r, "fused_mul_nhwc_vec"),
              HasSubstr("    const hiera_pack<float> a0_pack = reinterpret_cast<const hiera_pack<float>*>(a0)[v];\n"
                        "    const hiera_pack<float> a1_pack = reinterpret_cast<const hiera_pack<float>*>(a1)"
                        "[hiera_mod(static_cast<index_t>(v * HIERA_VEC), a1_size0, a1_size0_div) / HIERA_VEC];\n"));
  EXPECT_THAT(source_of(r, "fused_mul_nhwc_vec"),
              HasSubstr("fused_mul_nhwc_vec_element(i, static_cast<float>(a0_pack.v[k]), static_cast<float>(a1_pack.v[k]), "
                        "a1_size0, a1_size0_div)"));
  // Its scalar tail reads the bias per element.
  EXPECT_THAT(source_of(r, "fused_mul_nhwc_vec"),
              HasSubstr("fused_mul_nhwc_vec_element(i, static_cast<float>(a0[i]), "
                        "static_cast<float>(a1[hiera_mod(i, a1_size0, a1_size0_div)]), a1_size0, a1_size0_div)"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(ChannelsLastEpilogue, Conv3dIsChannelsLast3d) {
  std::vector<SkippedRewrite> skipped;
  const auto found = find(conv_epilogue("conv3d", {2, 16, 6, 10, 12}), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.statements[0],
            "conv = self.conv(_hiera_channels_last(x, \"to_channels_last_float32\", torch.channels_last_3d))");
  EXPECT_EQ(r.statements[2], "_mul_memory_shape = torch.Size([_mul_shape[d] for d in (0, 2, 3, 4, 1)])");
  EXPECT_EQ(r.statements[4], "mul = torch.empty(_mul_shape, dtype=conv.dtype, device=conv.device, "
                             "memory_format=torch.channels_last_3d)");
  EXPECT_THAT(r.statements.back(), HasSubstr("_mul_a1, _mul_memory_shape[4:5].numel(), "
                                             "nvrtc_runtime.uint64(_divider(_mul_memory_shape[4:5].numel())), mul,"));
  EXPECT_EQ(r.kernels[1].name, "fused_mul_ndhwc");
  EXPECT_THAT(r.description, HasSubstr("'conv' in channels_last_3d, then "));
  hiera::testing::expect_kernels_compile(r);
}

// An nn.Conv2d with a bias runs without it; the epilogue adds it per channel,
// so eager's separate bias pass over the output is gone.
TEST(ChannelsLastEpilogue, ModuleBiasMovesIntoTheEpilogue) {
  GraphBuilder b;
  b.input("x", {8, 3, 32, 32}, "bfloat16");
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 16}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {16, 3, 3, 3}}, {"bias", {16}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {8, 16, 32, 32}, "bfloat16", "self.conv(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("conv")}, {}, {8, 16, 32, 32}, "bfloat16");
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("relu"), number_arg(2.0)}, {}, {8, 16, 32, 32},
         "bfloat16");
  OpGraph graph = b.build({"mul"});
  graph.parameters["conv.weight"].dtype = graph.parameters["conv.bias"].dtype = "bfloat16";
  std::vector<SkippedRewrite> skipped;
  const auto found = find(graph, skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.description,
            "'conv' in channels_last without its bias, then bias + relu + mul fused into one elementwise kernel on "
            "channels_last memory (16-byte vector loads when aligned)");
  EXPECT_EQ(r.statements[0],
            "conv = torch.nn.functional.conv2d(_hiera_channels_last(x, \"to_channels_last_bfloat16\", "
            "torch.channels_last), self.conv.weight, None, self.conv.stride, self.conv.padding, self.conv.dilation, "
            "self.conv.groups)");
  EXPECT_EQ(r.statements.back(),
            "(_kernel(\"fused_mul_nhwc_vec\") if _mul_vec else _kernel(\"fused_mul_nhwc\"))(_grid((_mul_n + 7) // 8 "
            "if _mul_vec else _mul_n, 256, 8), 256, _mul_a0, _mul_a1, "
            "_mul_memory_shape[3:4].numel(), nvrtc_runtime.uint64(_divider(_mul_memory_shape[3:4].numel())), mul, "
            "nvrtc_runtime.int64(_mul_n))");
  // conv + bias is rounded to bfloat16 before the relu, as eager's separate add stores it.
  EXPECT_THAT(source_of(r, "fused_mul_nhwc"),
              HasSubstr("  const float a0_v = static_cast<float>(a0[hiera_mod(i, a0_size0, a0_size0_div)]);\n"
                        "  const float t0 = a1_v + a0_v;\n"
                        "  const float t1 = hiera_round_bfloat16(t0);\n"
                        "  const float t2 = hiera_clamp_min(t1, 0.0f);\n"));
  hiera::testing::expect_kernels_compile(r);

  // Circular padding is the module's own (F.conv2d pads with zeros): the module is called as written.
  graph.submodules["conv"].attrs["padding_mode"] = "circular";
  EXPECT_EQ(find(graph, skipped)[0].statements[0],
            "conv = self.conv(_hiera_channels_last(x, \"to_channels_last_bfloat16\", torch.channels_last))");
}

// A view cannot read channels_last memory: the result is made contiguous for it.
TEST(ChannelsLastEpilogue, ContiguousAgainWhereAViewReadsTheResult) {
  std::vector<SkippedRewrite> skipped;
  const auto found = find(conv_epilogue("conv2d", {8, 16, 32, 32}, {}, true), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].statements.back(), "mul = mul.contiguous()");
  EXPECT_THAT(found[0].description, HasSubstr("(16-byte vector loads when aligned), made contiguous after"));
}

// A [C, H, W] operand lies C-first in memory, NHWC puts C last: no single index walks both.
TEST(ChannelsLastEpilogue, LeavesOperandsInAnotherOrderToTheContiguousKernel) {
  std::vector<SkippedRewrite> skipped;
  const auto found = find(conv_epilogue("conv2d", {8, 16, 32, 32}, {16, 32, 32}), skipped);
  EXPECT_TRUE(found.empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].node, "mul");
  EXPECT_EQ(skipped[0].reason,
            "channels_last epilogue of 'conv': bias [16, 32, 32] lies in memory in another order than the output");
  // A per-position operand [H, W] keeps its order (H before W) and is read at (i / C) % (H * W).
  skipped.clear();
  const auto rows = find(conv_epilogue("conv2d", {8, 16, 32, 32}, {32, 32}), skipped);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(source_of(rows[0], "fused_mul_nhwc"), HasSubstr("static_cast<float>(a1[hiera_mod(hiera_div(i, a1_inner0_div), a1_size0, a1_size0_div)]);"));
  EXPECT_THAT(rows[0].statements.back(),
              HasSubstr("bias.contiguous(), _mul_memory_shape[3:].numel(), nvrtc_runtime.uint64(_divider(_mul_memory_shape[3:].numel())), "
                        "_mul_memory_shape[1:3].numel(), nvrtc_runtime.uint64(_divider(_mul_memory_shape[1:3].numel())), mul,"));
}

// An input [N, 1, 1, W]: its sample run has a stride, the product of its own
// dimensions after it in NHWC order (W, then the broadcast H and C).
TEST(ChannelsLastEpilogue, NodeOperandStridesFollowTheMemoryOrder) {
  GraphBuilder b;
  b.input("x", {8, 3, 32, 32}).input("m", {8, 1, 1, 32});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {8, 16, 32, 32}, "float32", "self.conv(x)");
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("conv"), node_arg("m")}, {}, {8, 16, 32, 32});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("mul")}, {}, {8, 16, 32, 32});
  std::vector<SkippedRewrite> skipped;
  const auto found = find(b.build({"relu"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(source_of(found[0], "fused_relu_nhwc"),
              HasSubstr("a1[hiera_div(i, a1_inner0_div) * a1_stride0 + hiera_mod(hiera_div(i, a1_inner1_div), a1_size1, a1_size1_div)]"));
  EXPECT_THAT(found[0].statements.back(),
              HasSubstr("m.contiguous(), _relu_memory_shape[1:].numel(), nvrtc_runtime.uint64(_divider(_relu_memory_shape[1:].numel())), "
                        "(m.shape[2] * m.shape[3] * m.shape[1]), _relu_memory_shape[3:].numel(), "
                        "nvrtc_runtime.uint64(_divider(_relu_memory_shape[3:].numel())), _relu_memory_shape[2:3].numel(), "
                        "nvrtc_runtime.uint64(_divider(_relu_memory_shape[2:3].numel())), relu,"));
}

// The convolution's value must go only into the epilogue; a linear layer is no convolution.
TEST(ChannelsLastEpilogue, OnlyConvolutionsWhoseWholeOutputIsTheEpilogues) {
  GraphBuilder b;
  b.input("x", {8, 3, 32, 32});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {8, 16, 32, 32}, "float32", "self.conv(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("conv")}, {}, {8, 16, 32, 32});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("relu")}, {}, {8, 16, 32, 32});
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(find(b.build({"tanh", "conv"}), skipped).empty());  // conv is returned too
  GraphBuilder l;
  l.input("x", {8, 64});
  l.call("fc", "call_module", "fc", "linear", {node_arg("x")}, {}, {8, 16}, "float32", "self.fc(x)");
  l.call("relu", "call_function", "torch.relu", "relu", {node_arg("fc")}, {}, {8, 16});
  l.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("relu")}, {}, {8, 16});
  EXPECT_TRUE(find(l.build({"tanh"}), skipped).empty());
  EXPECT_TRUE(skipped.empty());
  EXPECT_THROW(channels_last_layout(3), Unsupported);
}

// find_kernel_rewrites: the variant first, then the contiguous fusion it overlaps (same `produces`).
TEST(ChannelsLastEpilogue, OfferedBeforeTheContiguousFusion) {
  const auto all = find_kernel_rewrites(conv_epilogue(), hiera::testing::source_options());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].recipe, "s3_channels_last_conv_epilogue");
  EXPECT_EQ(all[1].recipe, "s3_elementwise_fusion");
  EXPECT_EQ(all[0].produces, all[1].produces);
}

}  // namespace
