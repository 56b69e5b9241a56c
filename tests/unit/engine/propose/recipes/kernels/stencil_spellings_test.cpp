// Stencils in the spellings the runner captures: a conv3d whose weight is a
// registered (persistent) buffer, and F.pad with a boundary mode before a
// grouped conv2d, folded into the direct stencil kernel's boundary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/graph/normalize.h"
#include "engine/propose/recipes/kernels/stencil_conv.h"
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
  EXPECT_THAT(found[0].covered, ElementsAre("conv3d"));
  EXPECT_EQ(found[0].statements[0], "_conv3d_x = u.contiguous()");
  EXPECT_THAT(found[0].statements.back(), HasSubstr("_conv3d_x, conv3d, w.contiguous(), None"));
  hiera::testing::expect_kernels_compile(found[0]);
}

TEST(StencilSpellings, ReplicatePadBeforeAGroupedConvIsTheStencilsBoundary) {
  const auto found = stencils(captured_graph("stencil2d_pad_modes"));
  ASSERT_EQ(found.size(), 1u);  // only the direct kernel maps taps through a boundary mode
  const Replacement& r = found[0];
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
    // Zero padding keeps the shared-tile variant too.
    EXPECT_EQ(found.size(), mode == "constant" ? 2u : 1u);
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
