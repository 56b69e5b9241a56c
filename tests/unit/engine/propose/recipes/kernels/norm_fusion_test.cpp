// Norms fused with the ops around them: layer norm (module, affine) after a
// residual add and before a GELU, group norm with a per-channel affine and a
// swish epilogue, functional instance norm; refusals (instance norm with
// running statistics in eval mode, a normalized_shape that does not match).
#include "engine/propose/recipes/kernels/norm_fusion.h"

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
              ElementsAre("_gelu_in_shape = _broadcast_shapes(x.shape, r.shape)",
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

// self.gn(self.conv(x)): a Conv2d(3, 16) module with a bias, then GroupNorm(4, 16) with affine.
GraphBuilder conv_group_norm() {
  GraphBuilder b;
  b.input("x", {4, 3, 20, 20});
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 16}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {16, 3, 3, 3}}, {"bias", {16}}});
  b.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 16}, {"eps", 1e-5}, {"affine", true}},
           {{"weight", {16}}, {"bias", {16}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {4, 16, 20, 20}, "float32", "self.conv(x)");
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {4, 16, 20, 20}, "float32", "self.gn(conv)");
  return b;
}

// A Conv2d module with a bias feeding the norm alone: the conv runs without
// its bias and the kernel adds it per channel as it reads each element.
TEST(NormFusion, AConvolutionsBiasIsAddedInTheNormKernel) {
  GraphBuilder b = conv_group_norm();
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"gn"}), skipped);
  ASSERT_EQ(found.size(), 3u);  // in channels_last (the next test), then the contiguous rows and stream
  for (std::size_t k = 1; k < found.size(); ++k) {
    const Replacement& r = found[k];
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
  GraphBuilder t = conv_group_norm();
  t.call("add", "call_function", "operator.add", "add", {node_arg("gn"), node_arg("conv")}, {}, {4, 16, 20, 20});
  const auto kept = norms(t.build({"add"}), skipped);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept[0].covered.count("conv"), 0u);
  EXPECT_THAT(kept[0].statements[0], ::testing::Not(HasSubstr("torch.nn.functional.conv2d")));
}

// The same conv and group norm with the conv in channels_last: the norm's
// statistics gathered per (sample, group of 4 channels) from NHWC rows of 16
// channels by the split-statistics kernels, the output written channels_last
// (forward returns it, which any layout serves).
TEST(NormFusion, AConvolutionsGroupNormReadsItsChannelsLastOutput) {
  GraphBuilder b = conv_group_norm();
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"gn"}), skipped);
  ASSERT_EQ(found.size(), 3u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_channels_last_conv_reduction");
  EXPECT_THAT(r.covered, ElementsAre("conv", "gn"));
  EXPECT_EQ(r.produces, "gn");
  EXPECT_EQ(r.description,
            "'conv' in channels_last, then conv2d + group_norm: group norm (4 groups) with its statistics split across "
            "blocks (partial Welford statistics, their merge, then one elementwise pass); 'conv' without its bias, "
            "added in the kernel");
  const std::string args = "self.conv.bias.contiguous(), _gn_a1, "
                           "_gn_memory_shape[3:4].numel(), nvrtc_runtime.uint64(_divider(_gn_memory_shape[3:4].numel())), "
                           "self.gn.weight.contiguous(), self.gn.bias.contiguous(), _gn_memory_shape[3:4].numel(), "
                           "nvrtc_runtime.uint64(_divider(_gn_memory_shape[3:4].numel()))";
  EXPECT_THAT(
      r.statements,
      ElementsAre(
          "conv = torch.nn.functional.conv2d(_hiera_channels_last(x, \"to_channels_last_float32\", torch.channels_last), "
          "self.conv.weight, None, self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups)",
          "_gn_in_shape = conv.shape", "_gn_memory_shape = torch.Size([_gn_in_shape[d] for d in (0, 2, 3, 1)])",
          "assert self.conv.bias.dtype == torch.float32 and conv.dtype == torch.float32 and self.gn.weight.dtype == "
          "torch.float32 and self.gn.bias.dtype == torch.float32, \"kernel fused_gn_nhwc expects float32 "
          "self.conv.bias, float32 conv, float32 self.gn.weight, float32 self.gn.bias\"",
          "_gn_rows = _gn_in_shape[0]", "_gn_cols = _gn_in_shape[2:].numel()",
          "gn = torch.empty(_gn_in_shape, dtype=self.conv.bias.dtype, device=conv.device, memory_format=torch.channels_last)",
          "assert _gn_in_shape.numel() < 2**31, \"kernel fused_gn_nhwc indexes with 32 bits\"",
          "_gn_a1 = conv.contiguous(memory_format=torch.channels_last)", "_gn_channels = _gn_in_shape[1]", "_gn_per_group = _gn_in_shape[1] // self.gn.num_groups",
          "assert _gn_channels <= 256, \"kernel fused_gn_nhwc takes at most 256 channels\"",
          "_gn_n = _gn_rows * _gn_cols * _gn_channels",
          "_gn_splits = min(max(1, _gn_cols), 65535, -(-_grid(_gn_n, 2048, 16) // max(1, _gn_rows)))",
          "_gn_partial = torch.empty(_gn_rows * (_gn_channels // _gn_per_group) * _gn_splits * 3, dtype=torch.float32, "
          "device=gn.device)",
          "_gn_stats = torch.empty(_gn_rows * _gn_channels * 2, dtype=torch.float32, device=gn.device)",
          "_kernel(\"fused_gn_nhwc_partial\")((_gn_rows, _gn_splits), 256, " + args +
              ", _gn_partial, nvrtc_runtime.int64(_gn_cols), _gn_channels, _gn_per_group, _gn_splits) if _gn_n else None",
          "_kernel(\"fused_gn_nhwc_finalize\")(_grid(_gn_rows * _gn_channels, 256), 256, _gn_partial, _gn_stats, "
          "nvrtc_runtime.int64(_gn_rows), _gn_channels, _gn_per_group, _gn_splits) if _gn_n else None",
          // 16-byte packs of 4 channels when aligned (the conv's output and this one are).
          "_gn_vec = (_gn_a1.data_ptr() | gn.data_ptr()) % 16 == 0 and _gn_cols * _gn_channels % 4 == 0 and "
          "(_gn_channels == 1 or _gn_channels % 4 == 0)",
          "(_kernel(\"fused_gn_nhwc_vec\") if _gn_vec else _kernel(\"fused_gn_nhwc\"))((_gn_rows, min(65535, "
          "-(-_grid(_gn_n // (4 if _gn_vec else 1), 1024, 16) // max(1, _gn_rows)))), 256, " + args +
              ", _gn_stats, gn, nvrtc_runtime.int64(_gn_cols), _gn_channels) if _gn_n else None"));
  ASSERT_EQ(r.kernels.size(), 5u);
  EXPECT_EQ(r.kernels[0].name, "fused_gn_nhwc_partial");
  EXPECT_EQ(r.kernels[1].name, "fused_gn_nhwc_finalize");
  EXPECT_EQ(r.kernels[2].name, "fused_gn_nhwc_vec");
  EXPECT_EQ(r.kernels[3].name, "fused_gn_nhwc");
  EXPECT_EQ(r.kernels[4].name, "to_channels_last_float32");
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source, r.kernels[3].source);
  // The conv's output enters the input function by value: the pass loads it as float4 packs.
  EXPECT_THAT(source, HasSubstr("    const hiera_pack<float> a1_pack = reinterpret_cast<const hiera_pack<float>*>(a1)[v];\n"));
  EXPECT_THAT(source, HasSubstr("const float x = fused_gn_nhwc_input(i, a0, static_cast<float>(a1_pack.v[k]), a0_size0, "
                                "a0_size0_div);"));
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/welford_split.cu\n", 0), 0u);
  // In NHWC memory a per-channel vector is read at i % C: the conv's bias before the norm, its affine after.
  EXPECT_THAT(source, HasSubstr("  const float a0_v = static_cast<float>(a0[hiera_mod(i, a0_size0, a0_size0_div)]);\n"
                                "  const float t0 = a1_v + a0_v;\n"));
  EXPECT_THAT(source, HasSubstr("  const float b0_v = static_cast<float>(b0[hiera_mod(i, b0_size0, b0_size0_div)]);\n"));
  EXPECT_THAT(source, HasSubstr("stats[k] = make_float2(w.mean, rsqrtf(w.m2 / w.count + 1e-05f));"));
  ASSERT_EQ(r.definitions.size(), 1u);
  EXPECT_EQ(r.definitions[0].rfind("def _hiera_channels_last(x, kernel, memory_format):", 0), 0u);
  hiera::testing::expect_kernels_compile(r);

  // A user that is not layout-agnostic (a view) gets the output made contiguous.
  GraphBuilder v = conv_group_norm();
  v.call("flat", "call_method", "view", "view", {node_arg("gn"), int_arg(4), int_arg(-1)}, {}, {4, 6400});
  const auto viewed = norms(v.build({"flat"}), skipped);
  ASSERT_EQ(viewed.size(), 3u);
  EXPECT_EQ(viewed[0].recipe, "s3_channels_last_conv_reduction");
  EXPECT_EQ(viewed[0].statements.back(), "gn = gn.contiguous()");
  EXPECT_THAT(viewed[0].description, ::testing::EndsWith(", made contiguous after"));
}

// Instance norm planes of 160 x 160 (25600 values, too many for registers):
// the statistics split across blocks first, then one block per plane.
TEST(NormFusion, LongSegmentsSplitTheirStatisticsAcrossBlocks) {
  GraphBuilder b;
  b.input("x", {2, 4, 160, 160});
  b.call("instance_norm", "call_function", "torch.nn.functional.instance_norm", "instance_norm", {node_arg("x")}, {},
         {2, 4, 160, 160});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("instance_norm")}, {}, {2, 4, 160, 160});
  std::vector<SkippedRewrite> skipped;
  const auto found = norms(b.build({"relu"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].recipe, "s3_welford_group_norm");
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_split_welford_norm");
  EXPECT_THAT(r.covered, ElementsAre("instance_norm", "relu"));
  EXPECT_EQ(r.description, "instance_norm + relu: instance norm with its statistics split across blocks (partial Welford "
                           "statistics, their merge, then one elementwise pass)");
  EXPECT_THAT(
      r.statements,
      ElementsAre("_relu_in_shape = x.shape",
                  "assert x.dtype == torch.float32, \"kernel fused_relu expects float32 x\"",
                  "_relu_rows = _relu_in_shape[:2].numel()", "_relu_cols = _relu_in_shape[2:].numel()",
                  "relu = torch.empty(_relu_in_shape, dtype=x.dtype, device=x.device)",
                  "assert _relu_in_shape.numel() < 2**31, \"kernel fused_relu indexes with 32 bits\"",
                  "_relu_a0 = x.contiguous()",
                  // Each plane is a sample of one channel.
                  "_relu_channels = 1", "_relu_per_group = 1", "_relu_n = _relu_rows * _relu_cols * _relu_channels",
                  "_relu_splits = min(max(1, _relu_cols), 65535, -(-_grid(_relu_n, 2048, 16) // max(1, _relu_rows)))",
                  "_relu_partial = torch.empty(_relu_rows * (_relu_channels // _relu_per_group) * _relu_splits * 3, "
                  "dtype=torch.float32, device=relu.device)",
                  "_relu_stats = torch.empty(_relu_rows * _relu_channels * 2, dtype=torch.float32, device=relu.device)",
                  "_kernel(\"fused_relu_partial\")((_relu_rows, _relu_splits), 256, _relu_a0, _relu_partial, "
                  "nvrtc_runtime.int64(_relu_cols), _relu_channels, _relu_per_group, _relu_splits) if _relu_n else None",
                  "_kernel(\"fused_relu_finalize\")(_grid(_relu_rows * _relu_channels, 256), 256, _relu_partial, "
                  "_relu_stats, nvrtc_runtime.int64(_relu_rows), _relu_channels, _relu_per_group, _relu_splits) if _relu_n "
                  "else None",
                  "_relu_vec = (_relu_a0.data_ptr() | relu.data_ptr()) % 16 == 0 and _relu_cols * _relu_channels % 4 == 0 "
                  "and (_relu_channels == 1 or _relu_channels % 4 == 0)",
                  "(_kernel(\"fused_relu_vec\") if _relu_vec else _kernel(\"fused_relu\"))((_relu_rows, min(65535, "
                  "-(-_grid(_relu_n // (4 if _relu_vec else 1), 1024, 16) // max(1, _relu_rows)))), 256, _relu_a0, "
                  "_relu_stats, relu, nvrtc_runtime.int64(_relu_cols), _relu_channels) if _relu_n else None"));
  ASSERT_EQ(r.kernels.size(), 4u);
  EXPECT_THAT(r.kernels[2].source, HasSubstr("  const float t0 = (x - mean) * rstd;\n  const float t1 = hiera_clamp_min(t0, 0.0f);"));
  hiera::testing::expect_kernels_compile(r);
  // The one-block kernel, as before, in the other variant.
  EXPECT_EQ(found[1].kernels.size(), 1u);
  EXPECT_EQ(found[1].kernels[0].name, "fused_relu");
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
