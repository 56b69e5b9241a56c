// The S3 entry point: every rewrite kind on one graph, non-overlapping and in
// graph order, with the reasons for what was left alone; and the refusal to
// run without the templates.
#include "engine/propose/recipes/kernels/kernel_rewrites.h"

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
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using hiera::testing::slice_arg;
using ::testing::ElementsAre;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// conv -> + bias -> relu -> GroupNorm -> * 2 -> mean over the channels ; softmax(h * 0.1) ;
// u[:, 2:] + u[:, :-2] - 2 * u[:, 1:-1] (a 1D stencil on a batch of rows) ; a lone tanh.
OpGraph mixed_model() {
  GraphBuilder b;
  b.input("x", {8, 3, 64, 64}).input("h", {512, 1024}).input("u", {4, 4096});
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 32}, {"padding", {1, 1}}}, {{"weight", {32, 3, 3, 3}}});
  b.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 32}, {"eps", 1e-5}, {"affine", true}},
           {{"weight", {32}}, {"bias", {32}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {8, 32, 64, 64}, "float32", "self.conv(x)");
  b.parameter("bias", "bias", {32, 1, 1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("conv"), node_arg("bias")}, {}, {8, 32, 64, 64});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("add")}, {}, {8, 32, 64, 64});
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("relu")}, {}, {8, 32, 64, 64}, "float32", "self.gn(relu)");
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("gn"), number_arg(2.0)}, {}, {8, 32, 64, 64});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("h"), number_arg(0.1)}, {}, {512, 1024});
  b.call("softmax", "call_function", "torch.softmax", "softmax", {node_arg("mul_1"), int_arg(-1)}, {}, {512, 1024});
  b.call("mean", "call_method", "mean", "mean", {node_arg("mul"), int_arg(1)}, {}, {8, 64, 64});
  b.call("a", "call_function", "operator.getitem", "getitem", {node_arg("u"), list_arg({slice_arg({}, {}), slice_arg(2, {})})},
         {}, {4, 4094}, "float32", "u[:, 2:]");
  b.call("c", "call_function", "operator.getitem", "getitem", {node_arg("u"), list_arg({slice_arg({}, {}), slice_arg({}, -2)})},
         {}, {4, 4094}, "float32", "u[:, :-2]");
  b.call("m", "call_function", "operator.getitem", "getitem", {node_arg("u"), list_arg({slice_arg({}, {}), slice_arg(1, -1)})},
         {}, {4, 4094}, "float32", "u[:, 1:-1]");
  b.call("add_1", "call_function", "operator.add", "add", {node_arg("a"), node_arg("c")}, {}, {4, 4094});
  b.call("mul_2", "call_function", "operator.mul", "mul", {node_arg("m"), number_arg(2.0)}, {}, {4, 4094});
  b.call("sub", "call_function", "operator.sub", "sub", {node_arg("add_1"), node_arg("mul_2")}, {}, {4, 4094});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("h")}, {}, {512, 1024});
  return b.build({"mean", "softmax", "sub", "tanh"});
}

TEST(KernelRewrites, EveryKindOnOneGraphWithoutOverlap) {
  const OpGraph graph = mixed_model();
  const KernelRewriteResult result = analyze_kernel_rewrites(graph, options());
  std::vector<std::string> produced, recipes;
  for (const auto& r : result.replacements) produced.push_back(r.produces), recipes.push_back(r.recipe);
  // In graph order of what they produce.
  // The stencil comes in three variants for the same nodes (four outputs per thread over float32 rows of
  // 4096, direct reads, then the shared tile): alternatives. So does the softmax (its rows of 1024 held in
  // registers, then streamed); the group norm's groups of 32768 are too long for registers: its statistics
  // split across blocks, then its one-block-per-group kernel.
  EXPECT_THAT(produced, ElementsAre("mul", "mul", "softmax", "softmax", "mean", "sub", "sub", "sub"));
  EXPECT_THAT(recipes, ElementsAre("s3_split_welford_norm", "s3_welford_group_norm", "s3_row_in_registers",
                                   "s3_fused_row_softmax", "s3_warp_shuffle_row_reduction", "s3_stencil2d_vec4_direct",
                                   "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"));
  // The bias add and relu are the group norm's prologue, the scale its epilogue; the lone tanh is left to torch.
  EXPECT_THAT(result.replacements[0].covered, ElementsAre("add", "gn", "mul", "relu"));
  EXPECT_EQ(result.replacements[1].covered, result.replacements[0].covered);
  EXPECT_THAT(result.replacements[2].covered, ElementsAre("mul_1", "softmax"));
  EXPECT_EQ(result.replacements[3].covered, result.replacements[2].covered);
  // The channel mean reads the group norm kernel's output, at stride 64 * 64.
  EXPECT_THAT(result.replacements[4].covered, ElementsAre("mean"));
  EXPECT_EQ(result.replacements[4].kernels[0].name, "fused_mean_strided");
  EXPECT_THAT(result.replacements[5].covered, ElementsAre("a", "add_1", "c", "m", "mul_2", "sub"));
  EXPECT_EQ(result.replacements[6].covered, result.replacements[5].covered);
  EXPECT_EQ(result.replacements[7].covered, result.replacements[5].covered);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < result.replacements.size(); ++i) {
    const auto& r = result.replacements[i];
    const bool alternative = i > 0 && result.replacements[i - 1].produces == r.produces;
    for (const auto& node : r.covered) EXPECT_TRUE(alternative || seen.insert(node).second) << node << " covered twice";
    hiera::testing::expect_kernels_compile(r);
  }
  // The TF32 convolution leaves the bias and relu to the group norm's prologue.
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_EQ(result.skipped[0].node, "conv");
  EXPECT_EQ(result.skipped[0].reason,
            "TF32 implicit-GEMM convolution: conv: the ops after it are the prologue of 'gn' (group_norm)");
  EXPECT_EQ(find_kernel_rewrites(graph, options()).size(), 8u);
}

TEST(KernelRewrites, NeedTheTemplatesAndAGraph) {
  EXPECT_THROW(analyze_kernel_rewrites(mixed_model(), KernelRewriteOptions{}), std::invalid_argument);
  OpGraph empty;
  empty.fallback = "data-dependent control flow";
  EXPECT_TRUE(find_kernel_rewrites(empty, options()).empty());
}

}  // namespace
