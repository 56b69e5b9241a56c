// softmax(x * scale + mask) * v: the prologue, the softmax and the epilogue in
// one row kernel (row_logsumexp.cu with a per-element sweep), the exact
// statements, the formulas torch uses, and refusals (a dim that is not the last).
#include "engine/propose/recipes/kernels/row_softmax.h"

#include <limits>

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
using hiera::testing::number_arg;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

KernelRewriteOptions options() { return hiera::testing::source_options(); }

OpGraph scaled_masked_softmax(const std::string& kind = "softmax", long long dim = -1, long long cols = 512) {
  GraphBuilder b;
  b.input("x", {16, 8, 128, cols}).input("mask", {128, cols}).input("v", {16, 8, 128, cols});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), number_arg(0.125)}, {}, {16, 8, 128, cols});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("mask")}, {}, {16, 8, 128, cols});
  b.call(kind, "call_function", "torch." + kind, kind, {node_arg("add")}, {{"dim", int_arg(dim)}}, {16, 8, 128, cols});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg(kind), node_arg("v")}, {}, {16, 8, 128, cols});
  return b.build({"mul_1"});
}

TEST(RowSoftmax, PrologueSoftmaxAndEpilogueInOneKernel) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(scaled_masked_softmax(), covered, options(), skipped);
  ASSERT_EQ(found.size(), 2u);  // the row in registers first, then the streaming kernel
  EXPECT_TRUE(skipped.empty());
  const Replacement& r = found[1];
  EXPECT_EQ(r.recipe, "s3_fused_row_softmax");
  EXPECT_EQ(r.produces, "mul_1");
  EXPECT_THAT(r.covered, ElementsAre("add", "mul", "mul_1", "softmax"));
  EXPECT_EQ(covered, r.covered);
  EXPECT_EQ(r.description,
            "mul + add + softmax + mul: softmax over the last dimension fused into one kernel (one warp per segment)");
  EXPECT_THAT(r.statements,
              ElementsAre("_mul_1_in_shape = _broadcast_shapes(x.shape, mask.shape)",
                          "assert x.dtype == torch.float32 and mask.dtype == torch.float32 and v.dtype == torch.float32, "
                          "\"kernel fused_mul_1 expects float32 x, float32 mask, float32 v\"",
                          "_mul_1_rows = _mul_1_in_shape[:3].numel()",
                          "_mul_1_cols = _mul_1_in_shape[3]",
                          "mul_1 = torch.empty(_mul_1_in_shape, dtype=x.dtype, device=x.device)",
                          "assert _mul_1_in_shape.numel() < 2**31, \"kernel fused_mul_1 indexes with 32 bits\"",
                          "_kernel(\"fused_mul_1\")(_grid(_mul_1_rows, 8), (32, 8), x.contiguous(), mask.contiguous(), "
                          "_mul_1_in_shape[2:4].numel(), nvrtc_runtime.uint64(_divider(_mul_1_in_shape[2:4].numel())), "
                          "v.contiguous(), mul_1, nvrtc_runtime.int64(_mul_1_rows), nvrtc_runtime.int64(_mul_1_cols))"));
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/row_logsumexp.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("#define SEGMENT_THREADS 32\n#define ROWS_PER_BLOCK 8\n#define PER_ELEMENT 1\n"));
  EXPECT_THAT(source, HasSubstr("fused_mul_1_input(const index_t i, const float* __restrict__ a0, const float* "
                                "__restrict__ a1, const int a1_size0, const unsigned long long a1_size0_div) {\n"
                                "  const float a0_v = static_cast<float>(a0[i]);\n"
                                "  const float t0 = a0_v * 0.125f;\n"
                                "  const float a1_v = static_cast<float>(a1[hiera_mod(i, a1_size0, a1_size0_div)]);\n"
                                "  const float t1 = t0 + a1_v;\n  return t1;"));
  // torch's max-subtracted softmax, then the epilogue.
  EXPECT_THAT(source, HasSubstr("  const float t0 = expf(x - row_max) * (1.0f / row_sum);\n"
                                "  const float b0_v = static_cast<float>(b0[i]);\n"
                                "  const float t1 = t0 * b0_v;\n  return t1;"));
  hiera::testing::expect_kernels_compile(r);
}

// Rows of 512 known at capture: each warp holds a row in registers (16 values
// a lane), the launch checks the length and falls back to the streaming kernel.
TEST(RowSoftmax, RowsOfACapturedLengthAreHeldInRegisters) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(scaled_masked_softmax(), covered, options(), skipped);
  ASSERT_EQ(found.size(), 2u);
  const Replacement& r = found[0];
  const Replacement& streaming = found[1];
  EXPECT_EQ(r.recipe, "s3_row_in_registers");
  EXPECT_EQ(r.produces, "mul_1");
  EXPECT_EQ(r.covered, streaming.covered);
  EXPECT_EQ(r.description, "mul + add + softmax + mul: softmax over the last dimension fused into one kernel (rows of "
                           "512 held in registers, one warp per row)");
  ASSERT_EQ(r.statements.size(), streaming.statements.size());
  for (std::size_t k = 0; k + 1 < r.statements.size(); ++k) EXPECT_EQ(r.statements[k], streaming.statements[k]);
  EXPECT_EQ(r.statements.back(),
            "_kernel(\"fused_mul_1_rows\")((_mul_1_rows + 4 - 1) // 4, (32, 4), x.contiguous(), mask.contiguous(), "
            "_mul_1_in_shape[2:4].numel(), nvrtc_runtime.uint64(_divider(_mul_1_in_shape[2:4].numel())), v.contiguous(), "
            "mul_1, nvrtc_runtime.int64(_mul_1_rows)) if _mul_1_cols == 512 else " + streaming.statements.back());
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "fused_mul_1_rows");
  EXPECT_EQ(r.kernels[1].name, "fused_mul_1");
  EXPECT_EQ(r.kernels[1].source, streaming.kernels[0].source);
  const std::string& source = r.kernels[0].source;
  EXPECT_EQ(source.rfind("// hiera: generated from knowledge/templates/row_registers.cu\n", 0), 0u);
  EXPECT_THAT(source, HasSubstr("#define COLS 512\n#define SEGMENT_THREADS 32\n#define ROWS_PER_BLOCK 4\n"));
  EXPECT_THAT(source, HasSubstr("#define STATS 1\n"));
  EXPECT_THAT(source, HasSubstr("  const float t0 = expf(x - row_max) * (1.0f / row_sum);\n"
                                "  const float b0_v = static_cast<float>(b0[i]);\n"
                                "  const float t1 = t0 * b0_v;\n  return t1;"));
  hiera::testing::expect_kernels_compile(r);
}

TEST(RowSoftmax, LogSoftmaxOfLongRowsUsesRowsInRegistersOrSeveralRowsPerBlock) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(scaled_masked_softmax("log_softmax", 3, 8192), covered, options(), skipped);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].description,
            "mul + add + log_softmax + mul: log_softmax over the last dimension fused into one kernel (rows of 8192 held "
            "in registers, 512 threads per row)");
  EXPECT_THAT(found[0].statements.back(), HasSubstr("(_mul_1_rows + 1 - 1) // 1, (512, 1), "));
  EXPECT_THAT(found[0].kernels[0].source, HasSubstr("#define COLS 8192\n#define SEGMENT_THREADS 512\n"));
  hiera::testing::expect_kernels_compile(found[0]);
  const Replacement& r = found[1];
  // The streaming kernel: 32 elements a thread, loaded 8 at a time, two rows per 512-thread block.
  EXPECT_EQ(r.description,
            "mul + add + log_softmax + mul: log_softmax over the last dimension fused into one kernel (256 threads per "
            "segment, 2 segments per block)");
  EXPECT_THAT(r.statements.back(), HasSubstr("(_grid(_mul_1_rows, 2), (256, 2), "));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("#define SEGMENT_THREADS 256\n#define ROWS_PER_BLOCK 2\n"));
  EXPECT_THAT(r.kernels[0].source, HasSubstr("const float t0 = x - row_max - logf(row_sum);"));
  hiera::testing::expect_kernels_compile(r);
}

// softmax over dim 1 of [16, 8, 128, 512]: one thread per (n, h, w) column, two passes at stride 128 * 512.
TEST(RowSoftmax, OverAnInnerDimensionByStridedColumns) {
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(scaled_masked_softmax("softmax", 1), covered, options(), skipped);
  ASSERT_EQ(found.size(), 1u);
  const Replacement& r = found[0];
  EXPECT_EQ(r.description,
            "mul + add + softmax + mul: softmax over dim 1 fused into one kernel (one thread per strided column)");
  EXPECT_EQ(r.statements[2], "_mul_1_rows = _mul_1_in_shape[:1].numel()");
  EXPECT_EQ(r.statements[3], "_mul_1_cols = _mul_1_in_shape[1]");
  EXPECT_EQ(r.statements[4], "_mul_1_inner = _mul_1_in_shape[2:].numel()");
  EXPECT_EQ(r.kernels[0].name, "fused_mul_1_strided");
  EXPECT_THAT(r.statements.back(), HasSubstr("_kernel(\"fused_mul_1_strided\")(_grid(_mul_1_rows * _mul_1_inner, 256), 256, "));
  hiera::testing::expect_kernels_compile(r);
}

// The epilogue reads the prologue's result too (softmax(a) + a): the kernel recomputes it per element.
TEST(RowSoftmax, AnEpilogueMayReadThePrologue) {
  GraphBuilder b;
  b.input("x", {64, 256});
  b.call("exp", "call_function", "torch.exp", "exp", {node_arg("x")}, {}, {64, 256});
  b.call("softmax", "call_function", "torch.softmax", "softmax", {node_arg("exp"), int_arg(-1)}, {}, {64, 256});
  b.call("add", "call_function", "operator.add", "add", {node_arg("softmax"), node_arg("exp")}, {}, {64, 256});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(b.build({"add"}), covered, options(), skipped);
  ASSERT_EQ(found.size(), 2u);
  for (const auto& r : found) {
    EXPECT_THAT(r.covered, ElementsAre("add", "exp", "softmax"));
    EXPECT_THAT(r.kernels[0].source, HasSubstr("  const float t0 = expf(x - row_max) * (1.0f / row_sum);\n"
                                               "  const float t1 = t0 + x;\n  return t1;"));
    hiera::testing::expect_kernels_compile(r);
  }
}

// softmax((x * scale).masked_fill(mask, -inf)): a boolean [1, 1, S, S] mask
// read per element in the prologue (the attention-probability chain of 06).
TEST(RowSoftmax, MaskedFillWithABroadcastBooleanMask) {
  GraphBuilder b;
  b.input("x", {4, 8, 64, 64}).input("mask", {1, 1, 64, 64}, "bool");
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), number_arg(0.125)}, {}, {4, 8, 64, 64});
  b.call("masked_fill", "call_method", "masked_fill", "unknown",
         {node_arg("mul"), node_arg("mask"), number_arg(-std::numeric_limits<double>::infinity())}, {}, {4, 8, 64, 64});
  b.call("softmax", "call_function", "torch.softmax", "softmax", {node_arg("masked_fill")}, {{"dim", int_arg(-1)}},
         {4, 8, 64, 64});
  std::set<std::string> covered;
  std::vector<SkippedRewrite> skipped;
  const auto found = find_row_softmax(b.build({"softmax"}), covered, options(), skipped);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(skipped.empty());
  EXPECT_EQ(found[0].recipe, "s3_row_in_registers");
  EXPECT_THAT(found[1].covered, ElementsAre("masked_fill", "mul", "softmax"));
  EXPECT_EQ(found[1].description,
            "mul + masked_fill + softmax: softmax over the last dimension fused into one kernel (one warp per segment)");
  const std::string& source = found[1].kernels[0].source;
  EXPECT_THAT(source, HasSubstr("fused_softmax_input(const index_t i, const bool* __restrict__ a0, const float* "
                                "__restrict__ a1, const int a0_size0, const unsigned long long a0_size0_div) {\n"
                                "  const bool a0_v = a0[hiera_mod(i, a0_size0, a0_size0_div)];\n"
                                "  const float a1_v = static_cast<float>(a1[i]);\n"
                                "  const float t0 = a1_v * 0.125f;\n"
                                "  const float t1 = (a0_v ? __int_as_float(0xff800000) : t0);\n"));
  EXPECT_THAT(found[1].statements.back(),
              HasSubstr("(32, 8), mask.contiguous(), x.contiguous(), _softmax_in_shape[2:4].numel(), "
                        "nvrtc_runtime.uint64(_divider(_softmax_in_shape[2:4].numel())), softmax,"));
  hiera::testing::expect_kernels_compile(found[0]);
  hiera::testing::expect_kernels_compile(found[1]);
}

}  // namespace
