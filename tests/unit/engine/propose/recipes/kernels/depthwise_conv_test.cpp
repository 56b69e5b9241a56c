// Depthwise convolutions with learned weights in the spellings the runner
// captures (tests/fixtures/graphs/depthwise_convs.py): nn.Conv2d with and
// without a bias, with a stride and with padding_mode reflect, and F.conv2d of
// a parameter with padding "same", each one register-blocked kernel marked as
// a library gap; the 1x1 conv between them and what the kernel cannot hold are left to cuDNN.
#include "engine/propose/recipes/kernels/depthwise_conv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/graph/normalize.h"
#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "graph_builder.h"
#include "kernel_test_support.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<Replacement> depthwise(const hiera::engine::graph::OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  return find_depthwise_convs(hiera::engine::graph::normalize(graph).graph, {}, hiera::testing::source_options(), skipped);
}

TEST(DepthwiseConv, EverySpellingOfALearnedDepthwiseConvIsOneKernel) {
  std::vector<SkippedRewrite> skipped;
  const auto found = depthwise(captured_graph("depthwise_convs"), skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 4u);
  std::vector<std::string> produced;
  for (const auto& r : found) {
    produced.push_back(r.produces);
    EXPECT_EQ(r.recipe, "s3_depthwise_conv2d");
    EXPECT_TRUE(r.library_gap);
    EXPECT_THAT(r.covered, ElementsAre(r.produces));
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_THAT(r.kernels[0].options, ElementsAre("--fmad=true"));
    hiera::testing::expect_kernels_compile(r);
  }
  // The 1x1 pointwise conv is a real convolution: not offered, not skipped.
  EXPECT_THAT(produced, ElementsAre("dwconv", "down", "conv2d", "smooth"));

  const Replacement& dw = found[0];
  EXPECT_EQ(dw.description,
            "conv2d with one channel per group and learned 7x7 coefficients as one depthwise kernel (the input tile and "
            "halo in shared memory, the channel's coefficients in registers, 4x4 outputs a thread)");
  EXPECT_THAT(dw.statements,
              ElementsAre("_dwconv_x = x.contiguous()",
                          "assert _dwconv_x.dtype == torch.float32 and self.dwconv.weight.dtype == torch.float32 and "
                          "self.dwconv.weight.shape == (_dwconv_x.shape[1], 1, 7, 7) and self.dwconv.bias.dtype == "
                          "torch.float32, \"kernel depthwise_dwconv expects float32 x and a float32 weight of one channel a group\"",
                          "_dwconv_shape = torch.Size([_dwconv_x.shape[0], _dwconv_x.shape[1], _dwconv_x.shape[2], "
                          "_dwconv_x.shape[3]])",
                          "assert _dwconv_shape.numel() < 2**31, \"kernel depthwise_dwconv indexes with 32 bits\"",
                          "dwconv = torch.empty(_dwconv_shape, dtype=_dwconv_x.dtype, device=_dwconv_x.device)",
                          "_kernel(\"depthwise_dwconv\")(((_dwconv_shape[-1] + 19) // 20, (_dwconv_shape[-2] + 23) // 24, "
                          "max(1, min(_dwconv_shape[:-2].numel(), 65535))), (5, 6), _dwconv_x, dwconv, "
                          "self.dwconv.weight.contiguous(), self.dwconv.bias.contiguous(), _dwconv_x.shape[1], "
                          "_dwconv_x.shape[-1], _dwconv_x.shape[-2], _dwconv_shape[-1], _dwconv_shape[-2], "
                          "nvrtc_runtime.int64(_dwconv_shape[:-2].numel()))"));
  EXPECT_THAT(dw.kernels[0].source, HasSubstr("#define K_Y 7\n#define K_X 7\n#define PAD_Y 3\n#define PAD_X 3\n"
                                              "#define STRIDE_Y 1\n#define STRIDE_X 1\n#define THREADS_X 5\n"
                                              "#define THREADS_Y 6\n#define OUT_Y 4\n"));

  // Stride 2, no bias: the output size divides by the stride, and the bias pointer is None.
  const Replacement& down = found[1];
  EXPECT_THAT(down.description, HasSubstr("learned 3x3 coefficients, stride 2x2 as one depthwise kernel"));
  EXPECT_EQ(down.statements[2], "_down_shape = torch.Size([_down_x.shape[0], _down_x.shape[1], (_down_x.shape[2] - 1) // 2 "
                                "+ 1, (_down_x.shape[3] - 1) // 2 + 1])");
  EXPECT_THAT(down.statements.back(), HasSubstr("self.down.weight.contiguous(), None, _down_x.shape[1]"));

  // F.conv2d of a parameter: its node's name; padding "same" for an odd kernel is k / 2.
  EXPECT_THAT(found[2].statements.back(), HasSubstr("taps.contiguous(), shift.contiguous()"));
  EXPECT_THAT(found[2].kernels[0].source, HasSubstr("#define PAD_Y 1\n#define PAD_X 1\n"));

  // padding_mode reflect: the tile's loads map through hiera_edge.
  const Replacement& smooth = found[3];
  EXPECT_THAT(smooth.description, HasSubstr(", its padding mode mapped at the tile's edges)"));
  EXPECT_THAT(smooth.kernels[0].source, HasSubstr("#define BOUNDARY (2)"));
  EXPECT_THAT(smooth.kernels[0].source, HasSubstr("return g < 0 ? -g : (g >= n ? 2 * n - 2 - g : g);"));
}

// An EfficientNet MBConv stage (tests/fixtures/graphs/depthwise_bn_silu.py): the 5x5 depthwise conv's batch
// norm and SiLU are computed in its store, the norm's statistics read at the block's channel; the 1x1 expansion
// is cuDNN's.
TEST(DepthwiseConv, TheBatchNormAndActivationAfterItRunInItsStore) {
  std::vector<SkippedRewrite> skipped;
  const auto found = depthwise(captured_graph("depthwise_bn_silu"), skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.produces, "silu_1");
  EXPECT_THAT(r.covered, ElementsAre("bn2", "depthwise", "silu_1"));
  EXPECT_THAT(r.description, HasSubstr("learned 5x5 coefficients as one depthwise kernel"));
  EXPECT_THAT(r.description, HasSubstr("), with batch_norm + silu in its store"));
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].name, "depthwise_silu_1");
  EXPECT_THAT(r.kernels[0].source, HasSubstr("depthwise_silu_1_element(e0 + i, acc[j][i] + bias_value, channel, "));
  EXPECT_THAT(r.statements.back(), HasSubstr("self.bn2.running_mean"));
  EXPECT_THAT(r.statements, ::testing::Contains("silu_1 = torch.empty(_silu_1_shape, dtype=_silu_1_x.dtype, "
                                                "device=_silu_1_x.device)"));
  hiera::testing::expect_kernels_compile(r);
}

// Sequence models' depthwise conv1d (tests/fixtures/graphs/depthwise_conv1d.py): a Conformer module's 15 taps with
// its batch norm and SiLU in the store, and a Mamba-style causal conv of 4 taps whose slice stays torch's: planes
// one row high, the blocks along the row; the pointwise conv1d and the GLU are not depthwise.
TEST(DepthwiseConv, Conv1dOfSequenceModelsRunsAsPlanesOneRowHigh) {
  std::vector<SkippedRewrite> skipped;
  const auto found = depthwise(captured_graph("depthwise_conv1d"), skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 2u);
  const Replacement& conformer = found[0];
  EXPECT_EQ(conformer.produces, "silu");
  EXPECT_THAT(conformer.covered, ElementsAre("depthwise", "norm", "silu"));
  EXPECT_EQ(conformer.description,
            "conv1d with one channel per group and learned 15-tap coefficients as one depthwise kernel (the input tile "
            "and halo in shared memory, the channel's coefficients in registers, 4x1 outputs a thread), with batch_norm + "
            "silu in its store");
  EXPECT_THAT(conformer.statements[1], HasSubstr("self.depthwise.weight.shape == (_silu_x.shape[1], 1, 15)"));
  EXPECT_EQ(conformer.statements[2], "_silu_shape = torch.Size([_silu_x.shape[0], _silu_x.shape[1], _silu_x.shape[2]])");
  EXPECT_THAT(conformer.statements.back(),
              HasSubstr("_kernel(\"depthwise_silu\")(((_silu_shape[-1] + 39) // 40, 1, max(1, min(_silu_shape[:-1].numel(), "
                        "65535))), (10, 1), _silu_x, silu, self.depthwise.weight.contiguous(), self.depthwise.bias.contiguous(), "));
  EXPECT_THAT(conformer.statements.back(),
              HasSubstr("_silu_x.shape[1], _silu_x.shape[-1], 1, _silu_shape[-1], 1, "
                        "nvrtc_runtime.int64(_silu_shape[:-1].numel()))"));
  EXPECT_THAT(conformer.kernels[0].source, HasSubstr("#define K_Y 1\n#define K_X 15\n#define PAD_Y 0\n#define PAD_X 7\n"));
  const Replacement& causal = found[1];
  EXPECT_EQ(causal.produces, "conv1d");
  EXPECT_EQ(causal.statements[2], "_conv1d_shape = torch.Size([_conv1d_x.shape[0], _conv1d_x.shape[1], _conv1d_x.shape[2] + 3])");
  for (const auto& r : found) hiera::testing::expect_kernels_compile(r);
  // A 200000-long sequence: one row, blocks of 128 threads along it.
  EXPECT_EQ(depthwise_block(1, 200000, 1, 31, 1, 1), (DepthwiseBlock{128, 1, 1}));
}

TEST(DepthwiseConv, WhatTheKernelCannotHoldIsLeftToCudnnWithItsReason) {
  auto g = captured_graph("depthwise_convs");
  // A dilated depthwise conv, and one of 11x11 coefficients (more than the 81 registers it keeps).
  g.submodules.at("dwconv").attrs["dilation"] = {2, 2};
  g.parameters.at("down.weight").shape = {8, 1, 11, 11};
  std::vector<SkippedRewrite> skipped;
  const auto found = depthwise(g, skipped);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].node, "dwconv");
  EXPECT_EQ(skipped[0].reason, "dwconv: dilation 2");
  EXPECT_EQ(skipped[1].node, "down");
  EXPECT_EQ(skipped[1].reason, "down: a 11x11 kernel (up to 81 coefficients in registers)");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].produces, "conv2d");
}

TEST(DepthwiseConv, TheWholeKernelAnalysisOffersEachLearnedDepthwiseConv) {
  // Nothing else claims these convs (the fixture has no epilogue to fuse), and the 1x1 conv is cuDNN's.
  const auto graph = hiera::engine::graph::normalize(captured_graph("depthwise_convs")).graph;
  const auto result = analyze_kernel_rewrites(graph, hiera::testing::source_options());
  std::vector<std::string> recipes;
  for (const auto& r : result.replacements) recipes.push_back(r.recipe + ":" + r.produces);
  EXPECT_THAT(recipes, ElementsAre("s3_depthwise_conv2d:dwconv", "s3_depthwise_conv2d:down", "s3_depthwise_conv2d:conv2d",
                                   "s3_depthwise_conv2d:smooth"));
}

TEST(DepthwiseConv, BlocksCoverAPlaneWithinSharedMemory) {
  // ConvNeXt's 56 x 56: one block of 14 x 14 threads, 4 x 4 outputs each.
  EXPECT_EQ(depthwise_block(56, 56, 7, 7, 1, 1), (DepthwiseBlock{14, 14, 4}));
  // 112 x 112: 16 x 16 threads (256), tiles of 64 x 64.
  EXPECT_EQ(depthwise_block(112, 112, 3, 3, 1, 1), (DepthwiseBlock{16, 16, 4}));
  // One output row: one row a thread.
  EXPECT_EQ(depthwise_block(1, 30, 3, 3, 1, 1), (DepthwiseBlock{8, 1, 1}));
  // Stride 4 with a 9x9 kernel: a 64 x 64 tile's input would be 261 x 264 floats; its rows halve until
  // the tile's input fits 40 KiB (64 x 8 outputs: 37 x 264 floats).
  EXPECT_EQ(depthwise_block(200, 200, 9, 9, 4, 4), (DepthwiseBlock{16, 2, 4}));
}

}  // namespace
