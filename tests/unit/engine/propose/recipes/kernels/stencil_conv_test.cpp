// Convolution stencils: a single-channel conv3d with a fixed (buffer, persistent
// or not) 3x3x3 coefficient tensor and a depthwise conv2d become stencil
// kernels that read their coefficients on the device; learned weights
// (parameters: a 2D depthwise conv's are depthwise_conv_test.cpp's), strides
// and real convolutions are left alone.
#include "engine/propose/recipes/kernels/stencil_conv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::node_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// F.conv3d(x, self.stencil, padding=1) on [2, 1, 128, 128, 128].
OpGraph laplacian_conv3d(bool persistent, long long stride = 1, bool learned = false) {
  GraphBuilder b;
  b.input("x", {2, 1, 128, 128, 128});
  if (learned)
    b.parameter("stencil", "stencil", {1, 1, 3, 3, 3});
  else
    b.buffer("stencil", "stencil", {1, 1, 3, 3, 3}, persistent);
  b.call("conv3d", "call_function", "torch.conv3d", "conv3d", {node_arg("x"), node_arg("stencil")},
         {{"padding", int_arg(1)}, {"stride", int_arg(stride)}}, {2, 1, 128, 128, 128});
  return b.build({"conv3d"});
}

TEST(StencilConv, SingleChannelConv3dWithFixedCoefficients) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_conv_stencils(laplacian_conv3d(false), covered, options(), skipped);
  // Direct reads first, then the shared-memory ring, for the same node.
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(skipped.empty());
  const Replacement& direct = found[0];
  // float32: the four-outputs-per-thread kernel, with the scalar direct one for misaligned rows.
  EXPECT_EQ(direct.recipe, "s3_stencil3d_vec4_direct");
  EXPECT_THAT(direct.covered, ElementsAre("conv3d"));
  EXPECT_EQ(direct.description, "conv3d with one channel and 27 fixed coefficients as a 3D stencil kernel (coefficients "
                                "read on the device, four outputs per thread from 16-byte loads, neighbours through the caches)");
  ASSERT_EQ(direct.kernels.size(), 2u);
  // Contracted products, as cuDNN computes the reference conv (not eager's op-by-op rounding of slices).
  for (const auto& k : direct.kernels) EXPECT_THAT(k.options, ElementsAre("--fmad=true"));
  EXPECT_EQ(direct.kernels[0].name, "stencil_conv3d_vec4");
  EXPECT_EQ(direct.kernels[1].name, "stencil_conv3d");
  // Rows of 128 floats are 32 float4s: blocks of 32 x 16 threads, no lane idle.
  EXPECT_EQ(direct.statements.back(),
            "_kernel(\"stencil_conv3d_vec4\")(((_conv3d_shape[-1] + 127) // 128, (_conv3d_shape[-2] + 15) // 16, "
            "_conv3d_shape[:-3].numel() * ((_conv3d_shape[-3] + 7) // 8)), (32, 16), _conv3d_x, conv3d, stencil.contiguous(), "
            "None, _conv3d_x.shape[1], _conv3d_x.shape[-1], _conv3d_x.shape[-2], _conv3d_x.shape[-3], _conv3d_shape[-1], "
            "_conv3d_shape[-2], _conv3d_shape[-3], 8) if _conv3d_x.shape[-3:] == (128, 128, 128) and _conv3d_x.data_ptr() % 16 == 0 "
            "else _kernel(\"stencil_conv3d\")(((_conv3d_shape[-1] + 31) // 32, (_conv3d_shape[-2] + 7) // 8, "
            "_conv3d_shape[:-3].numel() * ((_conv3d_shape[-3] + 31) // 32)), (32, 8), _conv3d_x, conv3d, stencil.contiguous(), "
            "None, _conv3d_x.shape[1], _conv3d_x.shape[-1], _conv3d_x.shape[-2], _conv3d_x.shape[-3], _conv3d_shape[-1], "
            "_conv3d_shape[-2], _conv3d_shape[-3], 32)");
  // Three chains (oy = -1, 0, 1) of three planes; a chain is read only when one of its coefficients is not zero.
  const std::string top_row =
      "    float4 row6[J_N] = {};\n    if (wgt[0] != 0.0f || wgt[1] != 0.0f || wgt[2] != 0.0f || wgt[9] != 0.0f || "
      "wgt[10] != 0.0f || wgt[11] != 0.0f || wgt[18] != 0.0f || wgt[19] != 0.0f || wgt[20] != 0.0f) "
      "hiera_load_row<-1, 1>(row6, at + off6, y6 && (unsigned)(z + (1)) < (unsigned)nz, x4, nx, lane);\n";
  EXPECT_THAT(direct.kernels[0].source, HasSubstr(top_row));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("  const bool y6 = yl + (-1) >= 0 && yl + (-1) < ny;\n"));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("row0[j] = row3[j], row3[j] = row6[j], row1[j] = row4[j], row4[j] = row7[j], "
                                                  "row2[j] = row5[j], row5[j] = row8[j];"));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("#define J_LO (-1)\n#define J_N (3)\n"));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("if (wgt[26] != 0.0f) acc += wgt[26] * TAP(8, 1);\n"));
  EXPECT_THAT(direct.kernels[0].source, HasSubstr("result[i] = acc + bias_value;"));
  EXPECT_THAT(direct.kernels[1].source, HasSubstr("if (wgt[0] != 0.0f) acc += wgt[0] * PLANE(-1, -1, -1);\n"));
  EXPECT_THAT(direct.kernels[1].source, HasSubstr("result[u] = acc + bias_value;"));
  EXPECT_THAT(direct.kernels[1].source, HasSubstr("#define TILE_X 32\n#define TILE_Y 8\n#define Z_UNROLL 4\n"));
  hiera::testing::expect_kernels_compile(direct);

  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_stencil3d_27pt");
  EXPECT_THAT(r.covered, ElementsAre("conv3d"));
  EXPECT_EQ(r.description,
            "conv3d with one channel and 27 fixed coefficients as a 3D stencil kernel (coefficients read on the device)");
  EXPECT_THAT(r.statements,
              ElementsAre("_conv3d_x = x.contiguous()",
                          "assert _conv3d_x.dtype == torch.float32 and stencil.dtype == torch.float32, "
                          "\"kernel stencil_conv3d expects float32 x, float32 stencil\"",
                          "_conv3d_shape = torch.Size([_conv3d_x.shape[0], _conv3d_x.shape[1], _conv3d_x.shape[2], "
                          "_conv3d_x.shape[3], _conv3d_x.shape[4]])",
                          "conv3d = torch.empty(_conv3d_shape, dtype=_conv3d_x.dtype, device=_conv3d_x.device)",
                          "_kernel(\"stencil_conv3d\")(((_conv3d_shape[-1] + 31) // 32, (_conv3d_shape[-2] + 15) // 16, "
                          "_conv3d_shape[:-3].numel() * ((_conv3d_shape[-3] + 31) // 32)), (32, 16), _conv3d_x, conv3d, "
                          "stencil.contiguous(), None, _conv3d_x.shape[1], _conv3d_x.shape[-1], _conv3d_x.shape[-2], "
                          "_conv3d_x.shape[-3], _conv3d_shape[-1], _conv3d_shape[-2], _conv3d_shape[-3], 32)"));
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define LO_Z (-1)\n#define HI_Z (1)\n"));
  EXPECT_THAT(source, HasSubstr("#define COLUMN_Y (0)\n#define COLUMN_X (0)\n#define PLANE_LO (-1)\n#define PLANE_HI (1)\n"));
  EXPECT_THAT(source, HasSubstr(", const float* __restrict__ weight, const float* __restrict__ bias, int channels, int nx"));
  EXPECT_THAT(source, HasSubstr("wgt[k] = static_cast<float>(weight[(long long)channel * 27 + k]);"));
  EXPECT_THAT(source, HasSubstr("if (wgt[0] != 0.0f) acc += wgt[0] * PLANE(-1, -1, -1);\n"));
  EXPECT_THAT(source, HasSubstr("if (wgt[4] != 0.0f) acc += wgt[4] * COL(-1);\n"));
  EXPECT_THAT(source, HasSubstr("if (wgt[26] != 0.0f) acc += wgt[26] * PLANE(1, 1, 1);\n"));
  EXPECT_THAT(source, HasSubstr("static_cast<out_t>(acc + bias_value)"));
  hiera::testing::expect_kernels_compile(r);
}

// The 27 values of a 7-point Laplacian written as a 3x3x3 weight, as the capture reads a buffer built in __init__.
std::vector<double> laplacian_in_27() {
  std::vector<double> w(27, 0.0);
  w[13] = -6.0;
  for (const int i : {4, 10, 12, 14, 16, 22}) w[static_cast<std::size_t>(i)] = 1.0;
  return w;
}

OpGraph with_values(OpGraph graph, const std::string& node, std::vector<double> values) {
  for (auto& n : graph.nodes)
    if (n.name == node) n.facts.values = std::move(values);
  return graph;
}

TEST(StencilConv, CoefficientsTheCaptureReadAreCompiledInWithTheirZeroTapsLeftOut) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_conv_stencils(with_values(laplacian_conv3d(false), "stencil", laplacian_in_27()), covered,
                                        options(), skipped);
  ASSERT_EQ(found.size(), 2u);
  const Replacement& direct = found[0];
  EXPECT_EQ(direct.recipe, "s3_stencil3d_vec4_direct");
  EXPECT_EQ(direct.description,
            "conv3d with one channel and 27 fixed coefficients as a 3D stencil kernel (the buffer's 7 nonzero coefficients "
            "compiled in, checked against the buffer once per change of it, four outputs per thread from 16-byte loads, "
            "neighbours through the caches)");
  // The compiled-in pair first, then the pair that reads any weight (the fallback when the buffer changed).
  ASSERT_EQ(direct.kernels.size(), 4u);
  EXPECT_EQ(direct.kernels[0].name, "stencil_conv3d_vec4");
  EXPECT_EQ(direct.kernels[1].name, "stencil_conv3d");
  EXPECT_EQ(direct.kernels[2].name, "stencil_conv3d_weights_vec4");
  EXPECT_EQ(direct.kernels[3].name, "stencil_conv3d_weights");
  const std::string& vec4 = direct.kernels[0].source;
  // Plane sums: each loaded plane's three rows (oy = -1, 0, 1) add into the slots of the outputs they serve
  // (slot s: the output s planes above the one finished this step), no coefficient loads, no guards.
  EXPECT_THAT(vec4, HasSubstr("float acc_s2[4] = {0.0f, 0.0f, 0.0f, 0.0f};\n"));
  EXPECT_THAT(vec4, HasSubstr("for (int zp = z_begin - 2; zp < z_begin; ++zp) {\n"));
  EXPECT_THAT(vec4, HasSubstr("acc_s2[i] += 1.0f * TAP(1, 0);\n"));   // oz = -1: the output two planes up
  EXPECT_THAT(vec4, HasSubstr("acc_s1[i] += -6.0f * TAP(1, 0);\n"));  // the centre
  EXPECT_THAT(vec4, HasSubstr("acc_s1[i] += 1.0f * TAP(0, 0);\n"));   // oy = -1
  EXPECT_THAT(vec4, HasSubstr("acc_s0[i] += 1.0f * TAP(1, 0);\n"));   // oz = 1: completes the output of this step
  EXPECT_THAT(vec4, HasSubstr("const float acc = acc_s0[i];\n"));
  EXPECT_THAT(vec4, HasSubstr("acc_s0[i] = acc_s1[i];\n"));
  EXPECT_THAT(vec4, Not(HasSubstr("TAP(3,")));
  EXPECT_THAT(vec4, Not(HasSubstr("wgt[")));
  EXPECT_THAT(direct.kernels[1].source, HasSubstr("acc += -6.0f * "));
  EXPECT_THAT(direct.kernels[1].source, Not(HasSubstr("wgt[")));
  EXPECT_THAT(direct.kernels[3].source, HasSubstr("if (wgt[26] != 0.0f) acc += wgt[26] * PLANE(1, 1, 1);\n"));
  ASSERT_EQ(direct.definitions.size(), 2u);
  EXPECT_THAT(direct.definitions[0], HasSubstr("def _hiera_holds(t, values):"));
  EXPECT_EQ(direct.definitions[1], "_conv3d_coefficients = (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, "
                                   "-6.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0,)");
  const std::string& launch = direct.statements.back();
  EXPECT_THAT(launch, HasSubstr("(_kernel(\"stencil_conv3d_vec4\")("));
  EXPECT_THAT(launch, HasSubstr(") if _hiera_holds(stencil, _conv3d_coefficients) else (_kernel(\"stencil_conv3d_weights_vec4\")("));
  hiera::testing::expect_kernels_compile(direct);
  EXPECT_EQ(found[1].recipe, "s3_stencil3d_27pt");
  EXPECT_EQ(found[1].kernels.size(), 2u);
  hiera::testing::expect_kernels_compile(found[1]);
}

TEST(StencilConv, ChannelsWithTheirOwnCoefficientsKeepThemOnTheDeviceButOnlyTheTapsTheyUse) {
  // Two channels: a horizontal and a vertical difference in 3x3 weights; the corners are zero in both.
  GraphBuilder b;
  b.input("x", {4, 2, 64, 64});
  b.buffer("d", "d", {2, 1, 3, 3}, false);
  b.call("conv2d", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("x"), node_arg("d")},
         {{"padding", int_arg(1)}, {"groups", int_arg(2)}}, {4, 2, 64, 64});
  const std::vector<double> values = {0, 0, 0, -1, 0, 1, 0, 0, 0, /* */ 0, -1, 0, 0, 0, 0, 0, 1, 0};
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_conv_stencils(with_values(b.build({"conv2d"}), "d", values), covered, options(), skipped);
  // Rows of 64 floats: first the vec4 kernel marching down the planes' rows, its batch the plane, so it reads
  // each plane's channel's coefficients too.
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].recipe, "s3_stencil2d_vec4_direct");
  ASSERT_EQ(found[0].kernels.size(), 4u);
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("  wgt[0] = static_cast<float>(weight[(long long)channel * 9 + 1]);\n"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("const int channel = (int)(batch % channels);"));
  hiera::testing::expect_kernels_compile(found[0]);
  const Replacement& direct = found[1];
  EXPECT_EQ(direct.recipe, "s3_stencil2d_direct_l1");
  EXPECT_THAT(direct.description, HasSubstr("(the 4 taps the buffer uses, coefficients read on the device, checked against"));
  ASSERT_EQ(direct.kernels.size(), 2u);
  const std::string& source = direct.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("  wgt[0] = static_cast<float>(weight[(long long)channel * 9 + 1]);\n"));
  EXPECT_THAT(source, HasSubstr("  wgt[3] = static_cast<float>(weight[(long long)channel * 9 + 7]);\n"));
  EXPECT_THAT(source, HasSubstr("if (wgt[3] != 0.0f) acc += wgt[3] * IN(1, 0);"));
  EXPECT_THAT(source, HasSubstr("  float wgt[4];\n"));
  EXPECT_THAT(source, Not(HasSubstr("wgt[4] != 0.0f")));
  EXPECT_THAT(direct.kernels[1].source, HasSubstr("if (wgt[8] != 0.0f) acc += wgt[8] * IN(1, 1);"));
  hiera::testing::expect_kernels_compile(direct);
}

TEST(StencilConv, DepthwiseConv2dIsATiledStencilPerChannel) {
  GraphBuilder b;
  b.input("x", {8, 16, 256, 256});
  b.buffer("blur", "blur", {16, 1, 5, 5}, false);
  b.call("conv2d", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("x"), node_arg("blur")},
         {{"padding", int_arg(2)}, {"groups", int_arg(16)}}, {8, 16, 256, 256});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_conv_stencils(b.build({"conv2d"}), covered, options(), skipped);
  ASSERT_EQ(found.size(), 3u);
  // The vec4 kernel over the planes' rows reads each plane's 25 coefficients (its batch is the plane).
  EXPECT_EQ(found[0].recipe, "s3_stencil2d_vec4_direct");
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("if (wgt[24] != 0.0f) acc += wgt[24] * TAP(4, 2);"));
  EXPECT_EQ(found[1].recipe, "s3_stencil2d_direct_l1");
  EXPECT_THAT(found[1].kernels[0].source, HasSubstr("if (wgt[24] != 0.0f) acc += wgt[24] * IN(2, 2);"));
  hiera::testing::expect_kernels_compile(found[1]);
  const Replacement& r = found[2];
  EXPECT_EQ(r.recipe, "s3_stencil2d_shared_tile");
  EXPECT_EQ(r.statements.back(),
            "_kernel(\"stencil_conv2d\")(((_conv2d_shape[-1] + 31) // 32, (_conv2d_shape[-2] + 7) // 8, max(1, min("
            "_conv2d_shape[:-2].numel(), 65535))), (32, 8), _conv2d_x, conv2d, blur.contiguous(), None, "
            "_conv2d_x.shape[1], _conv2d_x.shape[-1], _conv2d_x.shape[-2], _conv2d_shape[-1], _conv2d_shape[-2], "
            "nvrtc_runtime.int64(_conv2d_shape[:-2].numel()))");
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define LO_Y (-2)\n#define HI_Y (2)\n#define LO_X (-2)\n#define HI_X (2)\n"));
  EXPECT_THAT(source, HasSubstr("if (wgt[24] != 0.0f) acc += wgt[24] * IN(2, 2);"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilConv, LeavesLearnedWeightsStridesAndRealConvolutionsAlone) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  // A persistent buffer is as fixed as a non-persistent one: the kernel reads whatever it holds.
  EXPECT_EQ(find_conv_stencils(laplacian_conv3d(true), covered, options(), skipped).size(), 2u);
  EXPECT_TRUE(skipped.empty());
  covered.clear();
  EXPECT_TRUE(find_conv_stencils(laplacian_conv3d(false, 1, true), covered, options(), skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason,
            "conv3d: learned weights (not a buffer or constant): only a 2D depthwise conv has a kernel for them");
  skipped.clear();
  EXPECT_TRUE(find_conv_stencils(laplacian_conv3d(false, 2), covered, options(), skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "conv3d: stride 2");
  // Three input channels: a real convolution, no stencil and no complaint.
  GraphBuilder b;
  b.input("x", {2, 3, 32, 32});
  b.buffer("w", "w", {8, 3, 3, 3}, false);
  b.call("conv2d", "call_function", "torch.conv2d", "conv2d", {node_arg("x"), node_arg("w")}, {}, {2, 8, 30, 30});
  skipped.clear();
  EXPECT_TRUE(find_conv_stencils(b.build({"conv2d"}), covered, options(), skipped).empty());
  EXPECT_TRUE(skipped.empty());
  EXPECT_TRUE(covered.empty());
}

}  // namespace

namespace {

// F.pad(mode="replicate") then a 27-point conv3d over rows of 64 floats: the vec4 kernel with the border
// folded in, each load naming its mapped plane and each row its mapped y; NVRTC compiles it without a warning.
TEST(StencilConv, A3dBorderModeTakesTheVec4Kernel) {
  using hiera::testing::list_arg;
  using hiera::testing::string_arg;
  GraphBuilder b;
  b.input("x", {2, 1, 32, 32, 64});
  b.buffer("box", "box", {1, 1, 3, 3, 3}, true);
  b.call("pad", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("x"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1)})},
         {{"mode", string_arg("replicate")}}, {2, 1, 34, 34, 66});
  b.call("conv3d", "call_function", "torch.conv3d", "conv3d", {node_arg("pad"), node_arg("box")}, {}, {2, 1, 32, 32, 64});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_conv_stencils(b.build({"conv3d"}), covered, options(), skipped);
  EXPECT_TRUE(skipped.empty());
  // A border mode: the direct kernels only, the vec4 one first, the scalar one (not yet timed against it) after.
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].recipe, "s3_stencil3d_vec4_direct");
  EXPECT_EQ(found[1].recipe, "s3_stencil3d_direct_l1");
  EXPECT_THAT(found[1].covered, ElementsAre("conv3d", "pad"));
  ASSERT_EQ(found[1].kernels.size(), 1u);  // no values captured: the scalar kernel that reads the weight
  EXPECT_EQ(found[1].kernels[0].name, "stencil_conv3d");
  EXPECT_THAT(found[1].kernels[0].source, HasSubstr("#define BOUNDARY (1)\n"));
  EXPECT_THAT(found[0].covered, ElementsAre("conv3d", "pad"));
  ASSERT_EQ(found[0].kernels.size(), 2u);
  const std::string& vec4 = found[0].kernels[0].source;
  EXPECT_THAT(vec4, HasSubstr("#define BOUNDARY (1)\n"));
  EXPECT_THAT(vec4, HasSubstr("const long long row0_at = (long long)hiera_edge(yl + (-1), ny) * nx + x4;"));
  EXPECT_THAT(vec4, HasSubstr("volume + (long long)hiera_edge(z + (1), nz) * plane + row"));
  EXPECT_THAT(vec4, HasSubstr("volume + (long long)hiera_edge(z_begin + (-1), nz) * plane + row"));
  hiera::testing::expect_kernels_compile(found[0]);
}

}  // namespace
