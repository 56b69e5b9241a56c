// Row reductions fused with the ops around them: sum with keepdim and an
// epilogue, mean over trailing dims (global average pooling), amax's NaN
// rule, logsumexp; and refusals (inner dims, indices, too few rows).
#include "engine/propose/recipes/kernels/row_reduction.h"
#include "engine/propose/recipes/kernels/row_fusion.h"

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
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

// max_1 = torch.max(x, dim=1) (a tuple), getitem = max_1[0], tanh = torch.tanh(getitem).
void engine_node_tuple(GraphBuilder& b) {
  b.call("max_1", "call_function", "torch.max", "max", {node_arg("x")}, {{"dim", int_arg(1)}}, {}, "none");
  b.call("getitem", "call_function", "operator.getitem", "getitem", {node_arg("max_1"), int_arg(0)}, {}, {32, 16, 16});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("getitem")}, {}, {32, 16, 16});
}

std::vector<Replacement> reductions(const OpGraph& graph, std::vector<SkippedRewrite>& skipped) {
  std::set<std::string> covered;
  return find_row_reductions(graph, covered, options(), skipped);
}

// sigmoid(linear) -> sum(dim=-1, keepdim=True) -> * 0.5
TEST(RowReduction, SumWithKeepdimAndAnEpilogue) {
  GraphBuilder b;
  b.input("h", {4096, 512});
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("h")}, {}, {4096, 512});
  b.call("sum_1", "call_method", "sum", "sum", {node_arg("sigmoid")}, {{"dim", int_arg(-1)}, {"keepdim", bool_arg(true)}},
         {4096, 1});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("sum_1"), number_arg(0.5)}, {}, {4096, 1});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"mul"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_warp_shuffle_row_reduction");
  EXPECT_THAT(r.covered, ElementsAre("mul", "sigmoid", "sum_1"));
  EXPECT_EQ(r.description,
            "sigmoid + sum + mul: sum over the last dimension fused into one kernel (one warp per segment)");
  EXPECT_THAT(r.statements,
              ElementsAre("_mul_in_shape = h.shape", "assert h.dtype == torch.float32, \"kernel fused_mul expects float32 h\"",
                          "_mul_rows = _mul_in_shape[:1].numel()", "_mul_cols = _mul_in_shape[1:2].numel()",
                          "_mul_out_shape = _mul_in_shape[:1] + (1,)",
                          "mul = torch.empty(_mul_out_shape, dtype=h.dtype, device=h.device)",
                          "assert _mul_in_shape.numel() < 2**31, \"kernel fused_mul indexes with 32 bits\"",
                          "_kernel(\"fused_mul\")(_grid(_mul_rows, 8), (32, 8), h.contiguous(), mul, "
                          "nvrtc_runtime.int64(_mul_rows), nvrtc_runtime.int64(_mul_cols))"));
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/row_reduce.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("  const float t0 = hiera_sigmoid(a0_v);\n  return t0;"));
  EXPECT_THAT(source, HasSubstr("fused_mul_output(const index_t i, const float acc, const long long cols) {\n"
                                "  const float t0 = acc;\n  const float t1 = t0 * 0.5f;\n  return t1;"));
  EXPECT_THAT(source, HasSubstr("fused_mul_combine(const float a, const float b) { return a + b; }"));
  EXPECT_THAT(source, HasSubstr("    float acc = 0.0f;\n"));
  hiera::testing::expect_kernels_compile(r);
}

// Global average pooling after a conv: mean over (2, 3), no keepdim, torch's float factor 1 / cols.
TEST(RowReduction, MeanOverTrailingDimensions) {
  GraphBuilder b;
  b.input("conv", {64, 256, 56, 56});
  b.call("mean", "call_method", "mean", "mean", {node_arg("conv"), list_arg({int_arg(2), int_arg(3)})}, {}, {64, 256});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"mean"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.description, "mean: mean over the last 2 dimensions fused into one kernel (one block of 512 threads per segment)");
  EXPECT_EQ(r.statements[2], "_mean_rows = _mean_in_shape[:2].numel()");
  EXPECT_EQ(r.statements[4], "_mean_out_shape = _mean_in_shape[:2]");
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const float t0 = acc * (1.0f / (float)cols);"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define SEGMENT_THREADS 512\n#define ROWS_PER_BLOCK 1\n"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(RowReduction, AmaxLetsNanWinAndLogsumexpKeepsInfiniteMaxima) {
  GraphBuilder b;
  b.input("x", {1024, 1000});
  b.call("amax", "call_function", "torch.amax", "amax", {node_arg("x")}, {{"dim", int_arg(1)}}, {1024});
  b.call("logsumexp", "call_function", "torch.logsumexp", "logsumexp", {node_arg("x"), int_arg(-1)},
         {{"keepdim", bool_arg(true)}}, {1024, 1});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"amax", "logsumexp"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("{ return (a != a || a > b) ? a : b; }"));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("    float acc = -HIERA_INF;\n"));
  EXPECT_EQ(found[1].recipe, "s3_fused_logsumexp");
  EXPECT_THAT(found[1].kernels[0].source,
              HasSubstr("const float t0 = fabsf(row_max) == HIERA_INF ? row_max : row_max + logf(row_sum);"));
  EXPECT_THAT(found[1].kernels[0].source, HasSubstr("#define PER_ELEMENT 0\n"));
  EXPECT_EQ(found[1].statements[4], "_logsumexp_out_shape = _logsumexp_in_shape[:1] + (1,)");
  for (const auto& r : found) hiera::testing::expect_kernels_compile(r);
}

// torch.logsumexp(x, dim=-1) over [16384, 8192]: 256 threads a row, 8 loads in flight each, two rows a block.
TEST(RowReduction, LogsumexpOverLongRowsKeepsSeveralRowsLoadingPerBlock) {
  GraphBuilder b;
  b.input("x", {16384, 8192});
  b.call("logsumexp", "call_function", "torch.logsumexp", "logsumexp", {node_arg("x")}, {{"dim", int_arg(-1)}}, {16384});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"logsumexp"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_fused_logsumexp");
  EXPECT_THAT(r.description, HasSubstr("(256 threads per segment, 2 segments per block)"));
  EXPECT_THAT(r.statements.back(), HasSubstr("(_grid(_logsumexp_rows, 2), (256, 2), "));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define SEGMENT_THREADS 256\n#define ROWS_PER_BLOCK 2\n"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("accumulate(acc, values);"));
  hiera::testing::expect_kernels_compile(r);
  // Shorter rows keep one warp per row; longer ones 512 threads, one row a block.
  EXPECT_EQ(online_softmax_config(1000).segment_threads, 32);
  EXPECT_EQ(online_softmax_config(3000).segment_threads, 128);
  EXPECT_EQ(online_softmax_config(3000).rows_per_block, 4);
  EXPECT_EQ(online_softmax_config(65536).segment_threads, 512);
  EXPECT_EQ(online_softmax_config(65536).rows_per_block, 1);
}

// sum over the channels of [N, C, H, W]: one thread per (n, h, w) column, reading at stride H * W.
TEST(RowReduction, InnerDimensionsAreStridedColumns) {
  GraphBuilder b;
  b.input("x", {32, 64, 16, 16});
  b.call("sum_1", "call_function", "torch.sum", "sum", {node_arg("x"), int_arg(1)}, {{"keepdim", bool_arg(true)}},
         {32, 1, 16, 16});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("sum_1")}, {}, {32, 1, 16, 16});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"relu"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.description, "sum + relu: sum over dims (1,) fused into one kernel (one thread per strided column)");
  EXPECT_THAT(r.statements,
              ElementsAre("_relu_in_shape = x.shape", "assert x.dtype == torch.float32, \"kernel fused_relu expects float32 x\"",
                          "_relu_rows = _relu_in_shape[:1].numel()", "_relu_cols = _relu_in_shape[1:2].numel()",
                          "_relu_inner = _relu_in_shape[2:].numel()",
                          "_relu_out_shape = _relu_in_shape[:1] + (1,) + _relu_in_shape[2:]",
                          "relu = torch.empty(_relu_out_shape, dtype=x.dtype, device=x.device)",
                          "assert _relu_in_shape.numel() < 2**31, \"kernel fused_relu indexes with 32 bits\"",
                          "_kernel(\"fused_relu_strided\")(_grid(_relu_rows * _relu_inner, 256), 256, x.contiguous(), relu, "
                          "nvrtc_runtime.int64(_relu_rows), nvrtc_runtime.int64(_relu_cols), "
                          "nvrtc_runtime.int64(_relu_inner))"));
  EXPECT_EQ(r.kernels[0].name, "fused_relu_strided");
  EXPECT_THAT(r.kernels[0].source, HasSubstr("fused_relu_strided(const float* __restrict__ a0, out_t* __restrict__ out, "
                                             "long long outer, long long reduced, long long inner)"));
  hiera::testing::expect_kernels_compile(r);
}

// A Conv2d module's output reduced over its channels (fusion/08): first the
// conv in channels_last, where a position's 64 channels are one contiguous
// row (8 threads a row, 4 rows a warp); then the contiguous conv's strided
// columns. Both add the conv's bias in the kernel.
TEST(RowReduction, AConvolutionsChannelsAreRowsInChannelsLast) {
  GraphBuilder b;
  b.input("x", {16, 8, 34, 34});
  b.module("conv", "Conv2d", {{"in_channels", 8}, {"out_channels", 64}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {64, 8, 3, 3}}, {"bias", {64}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {16, 64, 32, 32}, "float32", "self.conv(x)");
  b.call("min_1", "call_function", "torch.min", "min", {node_arg("conv")}, {{"dim", int_arg(1)}, {"keepdim", bool_arg(true)}},
         {}, "none");
  b.call("getitem", "call_function", "operator.getitem", "getitem", {node_arg("min_1"), int_arg(0)}, {}, {16, 1, 32, 32});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("getitem")}, {}, {16, 1, 32, 32});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"tanh"}), skipped);
  ASSERT_EQ(found.size(), 2u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_channels_last_conv_reduction");
  EXPECT_THAT(r.covered, ElementsAre("conv", "getitem", "min_1", "tanh"));
  EXPECT_EQ(r.description,
            "'conv' in channels_last, then conv2d + min + getitem + tanh: min over dims (1,) fused into one kernel (8 "
            "warps of 4 rows each per block, each row the channels of one position); 'conv' without its bias, added in "
            "the kernel");
  EXPECT_THAT(
      r.statements,
      ElementsAre(
          "conv = torch.nn.functional.conv2d(_hiera_channels_last(x, \"to_channels_last_float32\", torch.channels_last), "
          "self.conv.weight, None, self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups)",
          "_tanh_in_shape = conv.shape", "_tanh_memory_shape = torch.Size([_tanh_in_shape[d] for d in (0, 2, 3, 1)])",
          "assert self.conv.bias.dtype == torch.float32 and conv.dtype == torch.float32, \"kernel fused_tanh_nhwc expects "
          "float32 self.conv.bias, float32 conv\"",
          "_tanh_rows = _tanh_in_shape.numel() // max(1, _tanh_in_shape[1])", "_tanh_cols = _tanh_in_shape[1]",
          "_tanh_out_shape = _tanh_in_shape[:1] + (1,) + _tanh_in_shape[2:]",
          "tanh = torch.empty(_tanh_out_shape, dtype=self.conv.bias.dtype, device=conv.device)",
          "assert _tanh_in_shape.numel() < 2**31, \"kernel fused_tanh_nhwc indexes with 32 bits\"",
          "_kernel(\"fused_tanh_nhwc\")(_grid(_tanh_rows, 32, 8), (8, 32), self.conv.bias.contiguous(), "
          "conv.contiguous(memory_format=torch.channels_last), _tanh_memory_shape[3:4].numel(), "
          "nvrtc_runtime.uint64(_divider(_tanh_memory_shape[3:4].numel())), tanh, nvrtc_runtime.int64(_tanh_rows), "
          "nvrtc_runtime.int64(_tanh_cols))"));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "fused_tanh_nhwc");
  EXPECT_EQ(r.kernels[1].name, "to_channels_last_float32");
  // A row of 8 lanes: the shuffles stay within it.
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define SEGMENT_THREADS 8\n#define ROWS_PER_BLOCK 32\n"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("for (int offset = ROW_LANES / 2; offset > 0; offset /= 2)"));
  hiera::testing::expect_kernels_compile(r);
  EXPECT_EQ(found[1].recipe, "s3_warp_shuffle_row_reduction");
  EXPECT_EQ(found[1].kernels[0].name, "fused_tanh_strided");
  EXPECT_EQ(found[1].statements[0],
            "conv = torch.nn.functional.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding, "
            "self.conv.dilation, self.conv.groups)");

  // A mean over the positions is not a row of channels: the contiguous kernel alone.
  GraphBuilder t;
  t.input("x", {16, 8, 34, 34});
  t.module("conv", "Conv2d", {{"in_channels", 8}, {"out_channels", 64}, {"bias", true}}, {{"weight", {64, 8, 3, 3}}, {"bias", {64}}});
  t.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {16, 64, 32, 32}, "float32", "self.conv(x)");
  t.call("sum_1", "call_function", "torch.mean", "mean", {node_arg("conv"), list_arg({int_arg(2), int_arg(3)})}, {}, {16, 64});
  const auto summed = reductions(t.build({"sum_1"}), skipped);
  ASSERT_EQ(summed.size(), 1u);
  EXPECT_EQ(summed[0].recipe, "s3_warp_shuffle_row_reduction");
}

// torch.max(x, dim=1)[0]: the values only, a max reduction; its getitem is covered too.
TEST(RowReduction, TheValuesOfMaxOverADim) {
  GraphBuilder b;
  b.input("x", {32, 64, 16, 16});
  engine_node_tuple(b);
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"tanh"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].covered, ElementsAre("getitem", "max_1", "tanh"));
  EXPECT_EQ(found[0].produces, "tanh");
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("{ return (a != a || a > b) ? a : b; }"));
  hiera::testing::expect_kernels_compile(found[0]);
}

TEST(RowReduction, RefusalsSayWhy) {
  GraphBuilder b;
  b.input("x", {32, 64, 16, 16}).input("small", {4, 1 << 20});
  b.call("sum_1", "call_function", "torch.sum", "sum", {node_arg("x"), list_arg({int_arg(1), int_arg(3)})}, {}, {32, 16});
  b.call("max_1", "call_function", "torch.max", "max", {node_arg("x"), int_arg(3)}, {}, {});
  b.call("sum_2", "call_function", "torch.sum", "sum", {node_arg("small"), int_arg(1)}, {}, {4});
  b.call("sum_3", "call_function", "torch.sum", "sum", {node_arg("x")}, {{"dim", int_arg(-1)}, {"dtype", hiera::testing::string_arg("x")}},
         {32, 64, 16});
  std::vector<SkippedRewrite> skipped;
  EXPECT_TRUE(reductions(b.build({"sum_1", "max_1", "sum_2", "sum_3"}), skipped).empty());
  ASSERT_EQ(skipped.size(), 4u);
  EXPECT_EQ(skipped[0].reason, "sum_1 reduces over dims (1, 3), which are not adjacent");
  EXPECT_EQ(skipped[1].reason, "max_1: max over a dimension returns values and indices, and the indices are read");
  EXPECT_EQ(skipped[2].reason, "sum_2: only 4 rows, one segment each would leave most of the GPU idle");
  EXPECT_EQ(skipped[3].reason, "sum_3: a reduction with a dtype argument");
}

// RMSNorm: weight * (x * rsqrt(mean(x^2, -1, keepdim) + eps)). The mean's one
// use spreads it back over its row, so the row stays in registers: x^2 is the
// input function, the epilogue re-reads x and the weight per element.
TEST(RowReduction, AMeanUsedOverItsRowIsOneRowInRegistersKernel) {
  GraphBuilder b;
  b.input("x", {2048, 4096});
  b.parameter("weight", "weight", {4096});
  b.call("pow_1", "call_method", "pow", "pow", {node_arg("x"), number_arg(2.0)}, {}, {2048, 4096});
  b.call("mean", "call_method", "mean", "mean", {node_arg("pow_1"), int_arg(-1)}, {{"keepdim", bool_arg(true)}},
         {2048, 1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mean"), number_arg(1e-6)}, {}, {2048, 1});
  b.call("rsqrt", "call_function", "torch.rsqrt", "rsqrt", {node_arg("add")}, {}, {2048, 1});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), node_arg("rsqrt")}, {}, {2048, 4096});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("weight"), node_arg("mul")}, {}, {2048, 4096});
  std::vector<SkippedRewrite> skipped;
  const auto found = reductions(b.build({"mul_1"}), skipped);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(skipped.empty());
  const Replacement& r = found[0];
  EXPECT_EQ(r.recipe, "s3_row_in_registers");
  EXPECT_EQ(r.produces, "mul_1");
  EXPECT_THAT(r.covered, ElementsAre("add", "mean", "mul", "mul_1", "pow_1", "rsqrt"));
  EXPECT_EQ(r.description,
            "pow + mean + add + rsqrt + mul + mul: mean over the last dimension and its use over each row fused into one "
            "kernel (rows of 4096 held in registers, 256 threads per row)");
  EXPECT_THAT(r.statements,
              ElementsAre("_mul_1_in_shape = x.shape",
                          "assert x.dtype == torch.float32 and weight.dtype == torch.float32, \"kernel fused_mul_1 expects "
                          "float32 x, float32 weight\"",
                          "_mul_1_rows = _mul_1_in_shape[:1].numel()", "_mul_1_cols = _mul_1_in_shape[1:2].numel()",
                          "mul_1 = torch.empty(_mul_1_in_shape, dtype=x.dtype, device=x.device)",
                          "assert _mul_1_in_shape.numel() < 2**31, \"kernel fused_mul_1 indexes with 32 bits\"",
                          "_kernel(\"fused_mul_1_rows\")((_mul_1_rows + 1 - 1) // 1, (256, 1), x.contiguous(), "
                          "weight.contiguous(), x.contiguous(), _mul_1_in_shape[1:2].numel(), "
                          "nvrtc_runtime.uint64(_divider(_mul_1_in_shape[1:2].numel())), mul_1, "
                          "nvrtc_runtime.int64(_mul_1_rows)) if _mul_1_cols == 4096 else "
                          "_kernel(\"fused_mul_1_rows_any_length\")((_mul_1_rows + 1 - 1) // 1, (256, 1), x.contiguous(), "
                          "weight.contiguous(), x.contiguous(), _mul_1_in_shape[1:2].numel(), "
                          "nvrtc_runtime.uint64(_divider(_mul_1_in_shape[1:2].numel())), mul_1, "
                          "nvrtc_runtime.int64(_mul_1_rows), nvrtc_runtime.int64(_mul_1_cols))"));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_1_rows");
  EXPECT_EQ(r.kernels[1].name, "fused_mul_1_rows_any_length");
  EXPECT_EQ(r.kernels[1].source, r.kernels[0].source);
  const std::string& source = r.kernels[0].source;
  EXPECT_THAT(source, HasSubstr("#define COLS 4096\n#define SEGMENT_THREADS 256\n#define ROWS_PER_BLOCK 1\n"));
  EXPECT_THAT(source, HasSubstr("#define STATS 3\n"));
  EXPECT_THAT(source, HasSubstr("return a + b;"));
  EXPECT_THAT(source, HasSubstr("const float t0 = acc * (1.0f / (float)cols);"));
  EXPECT_THAT(source, HasSubstr("fused_mul_1_rows_any_length("));
  hiera::testing::expect_kernels_compile(r);
}

}  // namespace
