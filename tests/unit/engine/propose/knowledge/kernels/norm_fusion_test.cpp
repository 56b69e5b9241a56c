// Norms fused with the ops around them: layer norm (module, affine) after a
// residual add and before a GELU, group norm with a per-channel affine and a
// swish epilogue, functional instance norm; refusals (instance norm with
// running statistics in eval mode, a normalized_shape that does not match).
#include "engine/propose/knowledge/kernels/norm_fusion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.h"
#include "kernel_test_support.h"

namespace {

using namespace hiera::engine::propose::knowledge_proposer;
using namespace hiera::engine::propose::knowledge_proposer::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

std::vector<Replacement> norms(const OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  std::set<std::string> covered;
  return find_norm_fusions(graph, covered, options(), skipped);
}

// gelu(LayerNorm(x + r)) over the last dimension (768).
TEST(NormFusion, ResidualLayerNormGelu) {
  GraphBuilder b;
  b.input("x", {32, 128, 768}).input("r", {32, 128, 768});
  b.module("ln", "LayerNorm", {{"normalized_shape", {768}}, {"eps", 1e-5}, {"elementwise_affine", true}},
           {{"weight", {768}}, {"bias", {768}}});
  b.call("add", "call_function", "operator.add", "add", {node_arg("x"), node_arg("r")}, {}, {32, 128, 768});
  b.call("ln", "call_module", "ln", "layer_norm", {node_arg("add")}, {}, {32, 128, 768}, "float32", "self.ln(add)");
  b.call("gelu", "call_function", "torch.nn.functional.gelu", "gelu", {node_arg("ln")}, {}, {32, 128, 768});
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"gelu"}), skipped);
  ASSERT_EQ(found.size(), 2u);  // the row in registers first, then the streaming Welford kernel
  EXPECT_TRUE(skipped.empty());
  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_welford_layer_norm");
  EXPECT_THAT(r.covered, ElementsAre("add", "gelu", "ln"));
  EXPECT_EQ(r.description,
            "add + layer_norm + gelu: layer norm over the last dimension fused into one kernel (one warp per segment)");
  EXPECT_THAT(r.statements,
              ElementsAre("_gelu_in_shape = torch.broadcast_shapes(x.shape, r.shape)",
                          "assert x.dtype == torch.float32 and r.dtype == torch.float32 and self.ln.weight.dtype == "
                          "torch.float32 and self.ln.bias.dtype == torch.float32, \"kernel fused_gelu expects float32 x, "
                          "float32 r, float32 self.ln.weight, float32 self.ln.bias\"",
                          "_gelu_rows = _gelu_in_shape[:2].numel()", "_gelu_cols = _gelu_in_shape[2:].numel()",
                          "gelu = torch.empty(_gelu_in_shape, dtype=x.dtype, device=x.device)",
                          "assert _gelu_in_shape.numel() < 2**31, \"kernel fused_gelu indexes with 32 bits\"",
                          "_kernel(\"fused_gelu\")(_grid(_gelu_rows, 8), (32, 8), x.contiguous(), r.contiguous(), "
                          "self.ln.weight.contiguous(), self.ln.bias.contiguous(), _gelu_in_shape[2:3].numel(), "
                          "nvrtc_runtime.uint64(_divider(_gelu_in_shape[2:3].numel())), gelu, "
                          "nvrtc_runtime.int64(_gelu_rows), nvrtc_runtime.int64(_gelu_cols))"));
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/welford_layernorm.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("rstd = rsqrtf(w.m2 / (float)length + 1e-05f);"));
  EXPECT_THAT(source, HasSubstr("  const float b0_v = static_cast<float>(b0[hiera_mod(i, b0_size0, b0_size0_div)]);\n"
                                "  const float b1_v = static_cast<float>(b1[hiera_mod(i, b0_size0, b0_size0_div)]);\n"
                                "  const float t0 = (x - mean) * rstd * b0_v + b1_v;\n"
                                "  const float t1 = hiera_gelu_erf(t0);\n  return t1;"));
  hiera::testing::expect_kernels_compile(r);

  // Rows of 768, a warp each: 24 values a lane, mean and variance in two exact passes over them.
  const Replacement& rows = found[0];
  EXPECT_EQ(rows.recipe, "s3_row_in_registers");
  EXPECT_EQ(rows.covered, r.covered);
  EXPECT_EQ(rows.description, "add + layer_norm + gelu: layer norm over the last dimension fused into one kernel (rows "
                              "of 768 held in registers, one warp per row)");
  EXPECT_EQ(rows.statements.back(),
            "_kernel(\"fused_gelu_rows\")((_gelu_rows + 4 - 1) // 4, (32, 4), x.contiguous(), r.contiguous(), "
            "self.ln.weight.contiguous(), self.ln.bias.contiguous(), _gelu_in_shape[2:3].numel(), "
            "nvrtc_runtime.uint64(_divider(_gelu_in_shape[2:3].numel())), gelu, nvrtc_runtime.int64(_gelu_rows)) if "
            "_gelu_cols == 768 else " +
                r.statements.back());
  const std::string& row_source = rows.kernels[0].source;
  EXPECT_THAT(row_source, HasSubstr("#define COLS 768\n#define SEGMENT_THREADS 32\n#define ROWS_PER_BLOCK 4\n"));
  EXPECT_THAT(row_source, HasSubstr("#define STATS 2\n"));
  EXPECT_THAT(row_source, HasSubstr("rstd = rsqrtf(fused_gelu_rows_row_reduce<MERGE_SUM>(d, 0.0f) * (1.0f / (float)COLS) + 1e-05f);"));
  EXPECT_THAT(row_source, HasSubstr("  const float t0 = (x - mean) * rstd * b0_v + b1_v;\n"
                                    "  const float t1 = hiera_gelu_erf(t0);\n  return t1;"));
  hiera::testing::expect_kernels_compile(rows);
}

// GroupNorm(8 groups, 64 channels) then x * sigmoid(x) then * 2.0.
TEST(NormFusion, GroupNormWithPerChannelAffineAndSwish) {
  GraphBuilder b;
  b.input("conv", {16, 64, 32, 32});
  b.module("gn", "GroupNorm", {{"num_groups", 8}, {"num_channels", 64}, {"eps", 1e-5}, {"affine", true}},
           {{"weight", {64}}, {"bias", {64}}});
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {16, 64, 32, 32}, "float32", "self.gn(conv)");
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("gn")}, {}, {16, 64, 32, 32});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("gn"), node_arg("sigmoid")}, {}, {16, 64, 32, 32});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("mul"), number_arg(2.0)}, {}, {16, 64, 32, 32});
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"mul_1"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  // 8 channels of 32 x 32 per group (8192 values): 512 threads hold a group, 16 values each.
  EXPECT_THAT(found[0].statements.back(), HasSubstr("_kernel(\"fused_mul_1_rows\")((_mul_1_rows + 1 - 1) // 1, (512, 1), "));
  EXPECT_THAT(found[0].statements.back(), HasSubstr(" if _mul_1_cols == 8192 else "));
  hiera::testing::expect_kernels_compile(found[0]);
  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_welford_group_norm");
  EXPECT_THAT(r.covered, ElementsAre("gn", "mul", "mul_1", "sigmoid"));
  // The module's group count as it is at run time (8 when captured).
  EXPECT_EQ(r.statements[2], "_mul_1_rows = _mul_1_in_shape[0] * self.gn.num_groups");
  EXPECT_EQ(r.statements[3], "_mul_1_cols = _mul_1_in_shape[1:].numel() // self.gn.num_groups");
  // 8 channels of 32 x 32 per group: one block of 1024 threads per group; the affine is per channel.
  EXPECT_THAT(r.statements.back(), HasSubstr("(_grid(_mul_1_rows, 1), (1024, 1), conv.contiguous(), "
                                             "self.gn.weight.contiguous(), self.gn.bias.contiguous(), "
                                             "_mul_1_in_shape[2:].numel(), "
                                             "nvrtc_runtime.uint64(_divider(_mul_1_in_shape[2:].numel())), "
                                             "_mul_1_in_shape[1:2].numel(), "
                                             "nvrtc_runtime.uint64(_divider(_mul_1_in_shape[1:2].numel())), mul_1,"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const float b0_v = static_cast<float>(b0[hiera_mod(hiera_div(i, "
                                             "b0_inner0_div), b0_size0, b0_size0_div)]);"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("  const float t1 = hiera_sigmoid(t0);\n  const float t2 = t0 * t1;\n"
                                             "  const float t3 = t2 * 2.0f;"));
  hiera::testing::expect_kernels_compile(r);
}

// A Conv2d module with a bias feeding the norm alone: the conv runs without
// its bias and the kernel adds it per channel as it reads each element.
TEST(NormFusion, AConvolutionsBiasIsAddedInTheNormKernel) {
  GraphBuilder b;
  b.input("x", {4, 3, 20, 20});
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 16}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {16, 3, 3, 3}}, {"bias", {16}}});
  b.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 16}, {"eps", 1e-5}, {"affine", true}},
           {{"weight", {16}}, {"bias", {16}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {4, 16, 20, 20}, "float32", "self.conv(x)");
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {4, 16, 20, 20}, "float32", "self.gn(conv)");
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"gn"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  for (const auto& r : found) {
    EXPECT_THAT(r.covered, ElementsAre("conv", "gn"));
    EXPECT_EQ(r.statements[0],
              "conv = torch.nn.functional.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding, "
              "self.conv.dilation, self.conv.groups)");
    EXPECT_THAT(r.description, HasSubstr("; 'conv' without its bias, added in the kernel"));
    EXPECT_THAT(r.kernels[0].source,
                HasSubstr("  const float a0_v = static_cast<float>(a0[hiera_mod(hiera_div(i, a0_inner0_div), a0_size0, "
                          "a0_size0_div)]);\n  const float a1_v = static_cast<float>(a1[i]);\n"
                          "  const float t0 = a1_v + a0_v;\n  return t0;\n"));
    EXPECT_THAT(r.statements.back(), HasSubstr("self.conv.bias.contiguous(), conv.contiguous(), "));
    hiera::testing::expect_kernels_compile(r);
  }
  // Something else reads the conv's output too: the module keeps its bias.
  GraphBuilder t;
  t.input("x", {4, 3, 20, 20});
  t.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 16}, {"bias", true}}, {{"weight", {16, 3, 3, 3}}, {"bias", {16}}});
  t.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 16}, {"eps", 1e-5}, {"affine", true}},
           {{"weight", {16}}, {"bias", {16}}});
  t.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {4, 16, 20, 20}, "float32", "self.conv(x)");
  t.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {4, 16, 20, 20}, "float32", "self.gn(conv)");
  t.call("add", "call_function", "operator.add", "add", {node_arg("gn"), node_arg("conv")}, {}, {4, 16, 20, 20});
  const auto kept = norms(t.build({"add"}), skipped);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept[0].covered.count("conv"), 0u);
  EXPECT_THAT(kept[0].statements[0], ::testing::Not(HasSubstr("torch.nn.functional.conv2d")));
}

TEST(NormFusion, FunctionalInstanceNormWithoutAffine) {
  GraphBuilder b;
  b.input("x", {8, 32, 64, 64});
  b.call("instance_norm", "call_function", "torch.nn.functional.instance_norm", "instance_norm", {node_arg("x")},
         {{"eps", number_arg(1e-3)}}, {8, 32, 64, 64});
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"instance_norm"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("#define COLS 4096\n#define SEGMENT_THREADS 256\n"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("const float t0 = (x - mean) * rstd;"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("+ 0.001f);"));
  const Replacement& r = found[1];
  EXPECT_EQ(r.statements[2], "_instance_norm_rows = _instance_norm_in_shape[:2].numel()");
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const float t0 = (x - mean) * rstd;"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("+ 0.001f);"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(NormFusion, RefusalsSayWhy) {
  GraphBuilder b;
  b.input("x", {8, 32, 64, 64});
  b.module("inorm", "InstanceNorm2d", {{"num_features", 32}, {"eps", 1e-5}, {"track_running_stats", true}}, {},
           {{"running_mean", {32}}, {"running_var", {32}}});
  b.call("inorm", "call_module", "inorm", "instance_norm", {node_arg("x")}, {}, {8, 32, 64, 64});
  b.call("ln", "call_function", "torch.nn.functional.layer_norm", "layer_norm", {node_arg("x"), list_arg({int_arg(32)})},
         {}, {8, 32, 64, 64});
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(norms(b.build({"inorm", "ln"}), skipped).empty());
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].reason, "inorm: instance norm with running statistics in eval mode");
  EXPECT_EQ(skipped[1].reason, "ln: normalized_shape does not match the input's trailing dimensions");
}

}  // namespace
