// Stencils in the spellings the runner captures: a conv3d whose weight is a
// registered (persistent) buffer, and F.pad with a boundary mode before a
// grouped conv2d, folded into the direct stencil kernel's boundary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/graph/normalize.h"
#include "engine/propose/recipes/kernels/stencil_conv.h"
#include "engine/propose/recipes/kernels/stencil_unfold.h"
#include "graph_builder.h"
#include "kernel_test_support.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"

namespace {

using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<Replacement> stencils(const hiera::engine::graph::OpGraph& graph, std::vector<SkippedRewrite>* skipped = nullptr) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> ignored;
  return find_conv_stencils(hiera::engine::graph::normalize(graph).graph, covered, hiera::testing::source_options(),
                            skipped ? *skipped : ignored);
}

TEST(StencilSpellings, AHeatStepWhoseLaplacianIsARegisteredBuffer) {
  const auto found = stencils(captured_graph("heat3d_buffer"));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].recipe, "s3_stencil3d_vec4_direct");
  EXPECT_EQ(found[1].recipe, "s3_stencil3d_27pt");
  // u + dt * conv(u): the step's two ops in the kernel's store (u is the conv's centre), only the step written.
  for (const Replacement& r : found) {
    EXPECT_THAT(r.covered, ElementsAre("add", "conv3d", "mul"));
    EXPECT_EQ(r.produces, "add");
    EXPECT_THAT(r.description, HasSubstr(", with 2 elementwise ops after it in its store"));
    hiera::testing::expect_kernels_compile(r);
  }
  EXPECT_EQ(found[0].statements[0], "_conv3d_x = u.contiguous()");
  EXPECT_THAT(found[0].statements.back(), HasSubstr("_conv3d_x, add, w.contiguous(), None"));
  // The vec4 kernel reads u at the output point from the centre row it holds anyway.
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("const float conv_value = acc + bias_value;"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("TAP(2, 0)"));
}

// A conv stencil's epilogue reading a tensor other than the conv's input at the output point (a diffusivity
// field k in u + dt * k * laplacian(u) on a circular pad): the scalar direct kernel takes it as a field; the
// vec4 kernel (four outputs a thread) is not offered.
TEST(StencilSpellings, AConvStencilsEpilogueReadsAnotherFieldAtTheOutputPoint) {
  std::vector<SkippedRewrite> skipped;
  const auto found = stencils(captured_graph("heat3d_diffusivity_field"), &skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_stencil3d_direct_l1");
  EXPECT_EQ(r.produces, "add");
  EXPECT_THAT(r.covered, ElementsAre("add", "conv3d", "mul", "mul_1", "pad"));
  EXPECT_THAT(r.description, HasSubstr("the circular pad folded in, with 3 elementwise ops after it in its store, reading k "
                                       "at each output point"));
  EXPECT_THAT(r.statements, ::testing::Contains("assert k.dtype == torch.float32 and k.shape == _conv3d_shape, \"kernel "
                                                "stencil_conv3d_weights expects float32 k of the output's shape\""));
  EXPECT_THAT(r.statements.back(), HasSubstr("_conv3d_x, add, lap.contiguous(), None, _conv3d_x.shape[1], k.contiguous()"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const float* __restrict__ field0"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilSpellings, ReplicatePadBeforeAGroupedConvIsTheStencilsBoundary) {
  const auto found = stencils(captured_graph("stencil2d_pad_modes"));
  ASSERT_EQ(found.size(), 2u);  // only the direct kernels map taps through a boundary mode: vec4 over planes, scalar
  // Rows of 24 floats: the vec4 kernel marches down each of the 8 planes' 20 rows, a row above or below the
  // plane mapped to the replicated edge; its scalar twin takes misaligned inputs, and the kernels that read the
  // weight (vec4 and scalar, the plane's channel from the batch) a changed buffer.
  const Replacement& v = found[0];
  EXPECT_EQ(v.recipe, "s3_stencil2d_vec4_direct");
  EXPECT_THAT(v.covered, ElementsAre("conv2d", "pad"));
  ASSERT_EQ(v.kernels.size(), 4u);
  EXPECT_EQ(v.kernels[0].name, "stencil_conv2d_vec4");
  EXPECT_EQ(v.kernels[1].name, "stencil_conv2d");
  EXPECT_EQ(v.kernels[2].name, "stencil_conv2d_weights_vec4");
  EXPECT_EQ(v.kernels[3].name, "stencil_conv2d_weights");
  EXPECT_THAT(v.kernels[0].source, HasSubstr("#define BOUNDARY (1)\n"));
  // The rows' replicated edge is the march's: each load maps its row (the kernel's plane) through hiera_edge,
  // the rows below a chunk's first output (the plane sums' prologue) too.
  EXPECT_THAT(v.kernels[0].source, HasSubstr("hiera_load_row<-1, 1>(row0, volume + (long long)hiera_edge(zp + (1), nz) * plane + "
                                             "row0_at, true, x4, nx, lane);"));
  EXPECT_THAT(v.kernels[0].source, HasSubstr("hiera_load_row<-1, 1>(row0, volume + (long long)hiera_edge(z + (1), nz) * plane + "
                                             "row0_at, true, x4, nx, lane);"));
  EXPECT_THAT(v.kernels[0].source, HasSubstr("nz = 20, ny = 1, nx = 24, oz_n = 20, oy_n = 1, ox_n = 24;"));
  EXPECT_THAT(v.statements.back(), HasSubstr("_kernel(\"stencil_conv2d_vec4\")((1, 1, (_conv2d_x.numel() // 480) * 2), (32, 1), "
                                             "_conv2d_x, conv2d"));
  EXPECT_THAT(v.statements.back(), HasSubstr("if _conv2d_x.shape[-2:] == (20, 24) and (_conv2d_x.numel() // 480) * 2 <= 65535 and "
                                             "_conv2d_x.data_ptr() % 16 == 0 else _kernel(\"stencil_conv2d\")"));
  hiera::testing::expect_kernels_compile(v);
  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_stencil2d_direct_l1");
  EXPECT_THAT(r.covered, ElementsAre("conv2d", "pad"));
  EXPECT_EQ(r.description, "conv2d with one channel per group and 9 fixed coefficients as a 2D stencil kernel "
                           "(the buffer's 9 nonzero coefficients compiled in, checked against the buffer once per change "
                           "of it, the replicate pad folded in, neighbours read through the caches)");
  EXPECT_EQ(r.statements[0], "_conv2d_x = u.contiguous()");
  EXPECT_EQ(r.statements[2], "_conv2d_shape = torch.Size([_conv2d_x.shape[0], _conv2d_x.shape[1], _conv2d_x.shape[2], "
                             "_conv2d_x.shape[3]])");
  // The Gaussian the capture read, as literals; the kernel that reads the weight is the fallback.
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define BOUNDARY (1)\n"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("acc += 0.25f * IN(1, 1);"));
  EXPECT_THAT(r.kernels[0].source, Not(HasSubstr("weight[")));
  EXPECT_THAT(r.kernels[1].source, HasSubstr("#define BOUNDARY (1)\n"));
  EXPECT_THAT(r.kernels[1].source, HasSubstr("if (wgt[8] != 0.0f) acc += wgt[8] * IN(1, 1);"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilSpellings, EveryPadModeFoldsIn) {
  for (const auto& [mode, boundary] : std::vector<std::pair<std::string, std::string>>{
           {"reflect", "2"}, {"circular", "3"}, {"constant", "0"}}) {
    SCOPED_TRACE(mode);
    auto g = captured_graph("stencil2d_pad_modes");
    node_named(g, "pad").kwargs["mode"].text = mode;
    (*node_named(g, "pad").normalized)["mode"].text = mode;
    const auto found = stencils(g);
    ASSERT_FALSE(found.empty());
    // The vec4 kernel over planes and the scalar direct one; zero padding keeps the shared-tile variant too.
    EXPECT_EQ(found.size(), mode == "constant" ? 3u : 2u);
    EXPECT_EQ(found[0].recipe, "s3_stencil2d_vec4_direct");
    EXPECT_THAT(found[0].covered, ElementsAre("conv2d", "pad"));
    EXPECT_THAT(found[0].kernels[0].source, HasSubstr("#define BOUNDARY (" + boundary + ")\n"));
    hiera::testing::expect_kernels_compile(found[0]);
  }
}

TEST(StencilSpellings, PadsThatDoNotFoldLeaveThePadInTheGraph) {
  auto g = captured_graph("stencil2d_pad_modes");
  node_named(g, "pad").args[1].items[0].number = 2;  // (2, 1, 1, 1): not the same on both sides
  auto found = stencils(g);
  ASSERT_EQ(found.size(), 2u);  // a stencil over the padded tensor, the pad itself left to torch
  EXPECT_THAT(found[0].covered, ElementsAre("conv2d"));
  EXPECT_EQ(found[0].statements[0], "_conv2d_x = pad.contiguous()");

  auto both = captured_graph("stencil2d_pad_modes");
  (*node_named(both, "conv2d").normalized)["padding"] = Arg{};
  auto& padding = (*node_named(both, "conv2d").normalized)["padding"];
  padding.kind = Arg::Kind::List;
  padding.items = {Arg{}, Arg{}};
  for (auto& item : padding.items) item.kind = Arg::Kind::Number, item.number = 1, item.is_integer = true;
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(stencils(both, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "conv2d: a replicate pad and the conv's own zero padding");
}

}  // namespace

namespace {

// A Sobel x / y pair per field (two outputs per group) read as conv[:, ::2] and conv[:, 1::2] by
// sqrt(gx ** 2 + gy ** 2): one kernel computes both and writes only the combination.
TEST(StencilSpellings, ASobelPairPerFieldIsOneKernelWritingOnlyItsCombination) {
  std::vector<SkippedRewrite> skipped;
  const auto found = stencils(captured_graph("stencil2d_sobel_pairs"), &skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(found.size(), 3u);  // vec4 over planes, scalar direct, shared tile (zero padding)
  EXPECT_EQ(found[0].recipe, "s3_stencil2d_vec4_direct");
  EXPECT_EQ(found[1].recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(found[2].recipe, "s3_stencil2d_shared_tile");
  for (const Replacement& r : found) {
    EXPECT_EQ(r.produces, "sqrt");
    EXPECT_THAT(r.covered, ElementsAre("add", "conv2d", "getitem", "getitem_1", "pow_1", "pow_2", "sqrt"));
    EXPECT_THAT(r.statements, ::testing::Contains(
                                  "sqrt = torch.empty(_conv2d_shape, dtype=_conv2d_x.dtype, device=_conv2d_x.device)"));
    hiera::testing::expect_kernels_compile(r);
  }
  const Replacement& v = found[0];
  EXPECT_THAT(v.description, HasSubstr(", its 2 outputs per group combined into sqrt in the kernel (only that is written)"));
  // The pair's literals, the zero column of each left out; the other kernels (vec4 and scalar) read both rows
  // of the group, the plane's channel from the batch.
  ASSERT_EQ(v.kernels.size(), 4u);
  EXPECT_EQ(v.kernels[2].name, "stencil_conv2d_weights_vec4");
  const std::string& literal = v.kernels[0].source;
  EXPECT_THAT(literal, HasSubstr("const float acc0 = acc0_s0[i];"));
  EXPECT_THAT(literal, HasSubstr("const float acc1 = acc1_s0[i];"));
  EXPECT_THAT(literal, HasSubstr("acc0_s1[i] += 2.0f * TAP(0, "));
  EXPECT_THAT(literal, HasSubstr("acc1_s0[i] += -2.0f * TAP(0, "));
  EXPECT_THAT(literal, Not(HasSubstr("0.0f * TAP")));
  EXPECT_THAT(literal, HasSubstr("sqrtf("));
  EXPECT_THAT(v.kernels[2].source, HasSubstr("for (int k = 0; k < 18; ++k) wgt[k] = static_cast<float>(weight[(long long)channel * 18 + k]);"));
  EXPECT_THAT(v.kernels[3].source, HasSubstr("if (wgt[17] != 0.0f) acc1 += wgt[17] * IN(1, 1);"));
}

TEST(StencilSpellings, OutputsPerGroupReadOtherwiseAreNoStencil) {
  auto g = captured_graph("stencil2d_sobel_pairs");
  // conv[:, 1::3]: not one of the group's two outputs.
  node_named(g, "getitem_1").args[1].items[1].items[2].number = 3;
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(stencils(g, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "conv2d: 2 outputs per group, not read as channel slices by one elementwise group");
}

}  // namespace

namespace {

std::vector<Replacement> unfold_stencils(const hiera::engine::graph::OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  std::set<std::string> covered;
  return find_unfold_stencils(hiera::engine::graph::normalize(graph).graph, covered, hiera::testing::source_options(), skipped);
}

// im2col spelled out (F.unfold, reshape to [B, C, 25, L], * a per-channel buffer, sum(-2), reshape back):
// a 5x5 stencil whose windows never reach memory.
TEST(StencilSpellings, UnfoldWindowsWeightedAndSummedAreAStencil) {
  std::vector<SkippedRewrite> skipped;
  const auto found = unfold_stencils(captured_graph("stencil2d_unfold_windows"), skipped);
  EXPECT_TRUE(skipped.empty());
  for (const auto& r : found)
    for (const auto& k : r.kernels) EXPECT_THAT(k.options, ElementsAre("--fmad=true")) << k.name;
  // Per-channel coefficients: the vec4 kernel marching down the planes' rows reads each plane's channel (its
  // batch), then the scalar direct kernel.
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].recipe, "s3_stencil2d_vec4_direct");
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("const long long first = (long long)(batch % channels) * 25;"));
  hiera::testing::expect_kernels_compile(found[0]);
  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_stencil2d_direct_l1");
  EXPECT_EQ(r.produces, "reshape_1");
  EXPECT_THAT(r.covered, ElementsAre("mul", "reshape", "reshape_1", "sum_1", "unfold"));
  EXPECT_EQ(r.description, "F.unfold's 5x5 windows weighted by weights and summed (im2col spelled out) as a 2D stencil "
                           "kernel (25 coefficients per channel read on the device, the windows never written, neighbours "
                           "read through the caches)");
  EXPECT_THAT(r.statements, ElementsAre(
      "_reshape_1_x = x.contiguous()",
      "assert _reshape_1_x.dtype == torch.float32 and weights.dtype == torch.float32 and weights.numel() == 25 * "
      "_reshape_1_x.shape[1], \"kernel stencil_reshape_1 expects float32 x and 25 * _reshape_1_x.shape[1] float32 "
      "coefficients in weights\"",
      "_reshape_1_shape = torch.Size([_reshape_1_x.shape[0], _reshape_1_x.shape[1], _reshape_1_x.shape[2], "
      "_reshape_1_x.shape[3]])",
      "reshape_1 = torch.empty(_reshape_1_shape, dtype=_reshape_1_x.dtype, device=_reshape_1_x.device)",
      HasSubstr("_kernel(\"stencil_reshape_1\")(")));
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const long long first = (long long)(batch % channels) * 25;"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("if (wgt[24] != 0.0f) acc += wgt[24] * IN(2, 2);"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(StencilSpellings, UnfoldWindowsTheKernelsDoNotTakeAreSaidSo) {
  auto strided = captured_graph("stencil2d_unfold_windows");
  node_named(strided, "unfold").kwargs["stride"] = hiera::testing::int_arg(2);
  (*node_named(strided, "unfold").normalized)["stride"] = hiera::testing::int_arg(2);
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(unfold_stencils(strided, skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "unfold: unfold with stride 2");
  // A sum over the positions, not the taps: no stencil, and said so.
  auto positions = captured_graph("stencil2d_unfold_windows");
  node_named(positions, "sum_1").args[1].number = -1;
  skipped.clear();
  EXPECT_TRUE(unfold_stencils(positions, skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "sum_1: not a sum over the taps alone");
  // A learned weight is no fixed stencil.
  auto learned = captured_graph("stencil2d_unfold_windows");
  learned.parameters["weights"] = learned.buffers["weights"];
  skipped.clear();
  EXPECT_TRUE(unfold_stencils(learned, skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, "mul: the windows are weighted by something other than a buffer or constant");
}

}  // namespace
