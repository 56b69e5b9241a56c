// Shapes and work of ops, computed by hand in each test.
#include "engine/analysis/torch_shape_rules.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

PyValue t(Shape shape, std::string dtype = "float32") { return PyValue::tensor(std::move(shape), std::move(dtype)); }
PyValue i(std::int64_t v) { return PyValue::of_int(v); }
PyValue seq(std::vector<std::int64_t> values) {
  PyValue s = PyValue::sequence({});
  for (const auto v : values) s.items.push_back(i(v));
  return s;
}

OpOutcome op(std::string_view name, std::vector<PyValue> args, std::vector<std::pair<std::string, PyValue>> kwargs = {}) {
  OpCall call{std::move(args), std::move(kwargs)};
  return apply_op(*find_op(name), call);
}

void expect(const OpOutcome& o, Shape shape, double flops, double bytes) {
  ASSERT_TRUE(o.result.is_tensor());
  EXPECT_EQ(o.result.shape, shape);
  ASSERT_TRUE(o.work);
  EXPECT_DOUBLE_EQ(o.work->flops, flops);
  EXPECT_DOUBLE_EQ(o.work->bytes, bytes);
}

TEST(TorchShapeRulesTest, ElementwiseAndBroadcast) {
  expect(op("relu", {t({8, 16})}), {8, 16}, 128, 2 * 128 * 4);
  expect(op("add", {t({8, 1, 16}), t({4, 1})}), {8, 4, 16}, 512, (128 + 4 + 512) * 4.0);
  expect(op("mul", {t({8, 16}, "float16"), PyValue::of_float(0.5)}), {8, 16}, 128, 2 * 128 * 2);
  EXPECT_FALSE(op("add", {t({3}), t({4})}).work);  // shapes that do not broadcast
}

TEST(TorchShapeRulesTest, DiagAndTriangles) {
  // A vector's matrix (and one square bigger per step off the diagonal); a matrix's diagonal.
  expect(op("diag", {t({16})}), {16, 16}, 0, (16 + 256) * 4.0);
  expect(op("diag", {t({16}), i(-2)}), {18, 18}, 0, (16 + 324) * 4.0);
  expect(op("diag", {t({4, 6})}), {4}, 0, (24 + 4) * 4.0);
  expect(op("diag", {t({4, 6}), i(3)}), {3}, 0, (24 + 3) * 4.0);
  expect(op("diag", {t({4, 6})}, {{"diagonal", i(-1)}}), {3}, 0, (24 + 3) * 4.0);
  EXPECT_FALSE(op("diag", {t({2, 3, 4})}).work);
  expect(op("tril", {t({8, 8})}), {8, 8}, 64, 2 * 64 * 4);
  expect(op("triu", {t({8, 8}), i(1)}), {8, 8}, 64, 2 * 64 * 4);
}

TEST(TorchShapeRulesTest, MatmulAndLinear) {
  expect(op("matmul", {t({2, 64, 32}), t({32, 16})}), {2, 64, 16}, 2.0 * 2 * 64 * 16 * 32, (4096 + 512 + 2048) * 4.0);
  expect(op("matmul", {t({32}), t({32, 8})}), {8}, 2.0 * 8 * 32, (32 + 256 + 8) * 4.0);
  expect(op("addmm", {t({16}), t({4, 8}), t({8, 16})}), {4, 16}, 2.0 * 64 * 8 + 64, (16 + 32 + 128 + 64) * 4.0);
  expect(op("linear", {t({4, 10}), t({6, 10}), t({6})}), {4, 6}, 2.0 * 24 * 10 + 24, (40 + 60 + 6 + 24) * 4.0);
  EXPECT_FALSE(op("matmul", {t({2, 3}), t({4, 5})}).work);
}

TEST(TorchShapeRulesTest, ConvolutionFunctionalAndLayer) {
  // 1x3x8x8 input, 4 filters of 3x3x3, stride 1, padding 1.
  expect(op("conv2d", {t({1, 3, 8, 8}), t({4, 3, 3, 3}), t({4})}, {{"padding", i(1)}}), {1, 4, 8, 8},
         2.0 * 256 * 27 + 256, (192 + 108 + 256 + 4) * 4.0);
  LayerSpec conv{"Conv2d", OpCall{{i(3), i(4), seq({3, 3})}, {{"stride", i(2)}, {"bias", PyValue::of_kind(PyValue::Kind::Bool)}}}, {}};
  const OpOutcome strided = apply_layer(conv, OpCall{{t({1, 3, 8, 8})}, {}});
  expect(strided, {1, 4, 3, 3}, 2.0 * 36 * 27, (192 + 108 + 36) * 4.0);
  LayerSpec transposed{"ConvTranspose2d", OpCall{{i(4), i(2), i(2)}, {{"stride", i(2)}}}, {}};
  // (L-1)*s - 2p + d(k-1) + 1 = 3*2 + 1 + 1 = 8; macs = input elements x k*k x out channels.
  expect(apply_layer(transposed, OpCall{{t({1, 4, 4, 4})}, {}}), {1, 2, 8, 8}, 2.0 * 64 * 4 * 2 + 128, (64 + 32 + 128 + 2) * 4.0);
}

TEST(TorchShapeRulesTest, LinearPoolNormLayers) {
  LayerSpec linear{"Linear", OpCall{{i(10), i(6)}, {}}, {}};
  expect(apply_layer(linear, OpCall{{t({2, 5, 10})}, {}}), {2, 5, 6}, 2.0 * 60 * 10 + 60, (100 + 60 + 6 + 60) * 4.0);
  LayerSpec pool{"MaxPool2d", OpCall{{i(2)}, {}}, {}};
  expect(apply_layer(pool, OpCall{{t({1, 2, 9, 9})}, {}}), {1, 2, 4, 4}, 32.0 * 4, (162 + 32) * 4.0);
  LayerSpec adaptive{"AdaptiveAvgPool2d", OpCall{{seq({1, 1})}, {}}, {}};
  expect(apply_layer(adaptive, OpCall{{t({2, 3, 4, 4})}, {}}), {2, 3, 1, 1}, 6.0 * 16, (96 + 6) * 4.0);
  LayerSpec norm{"LayerNorm", OpCall{{i(16)}, {}}, {}};
  expect(apply_layer(norm, OpCall{{t({4, 16})}, {}}), {4, 16}, 5.0 * 64, 2.0 * 64 * 4);
}

TEST(TorchShapeRulesTest, Reductions) {
  expect(op("sum", {t({4, 5, 6}), i(1)}), {4, 6}, 120, (120 + 24) * 4.0);
  expect(op("mean", {t({4, 5, 6})}, {{"dim", seq({-1, 0})}, {"keepdim", PyValue::of_int(1)}}), {1, 5, 1}, 120, (120 + 5) * 4.0);
  expect(op("amax", {t({4, 5})}), Shape{}, 20, (20 + 1) * 4.0);
  const OpOutcome max = op("max", {t({4, 5}), i(1)});
  ASSERT_EQ(max.result.kind, PyValue::Kind::Sequence);  // (values, indices)
  EXPECT_EQ(max.result.items.at(1).dtype, "int64");
  expect(op("softmax", {t({2, 10})}, {{"dim", i(-1)}}), {2, 10}, 100, 2.0 * 20 * 4);
}

TEST(TorchShapeRulesTest, ViewsCostNothingCopiesMoveBytes) {
  expect(op("view", {t({4, 6}), i(2), i(-1)}), {2, 12}, 0, 0);
  expect(op("reshape", {t({4, 6}), seq({-1})}), {24}, 0, 0);
  expect(op("permute", {t({2, 3, 4}), i(2), i(0), i(1)}), {4, 2, 3}, 0, 0);
  expect(op("transpose", {t({2, 3, 4}), i(0), i(-1)}), {4, 3, 2}, 0, 0);
  expect(op("flatten", {t({2, 3, 4}), i(1)}), {2, 12}, 0, 0);
  expect(op("unsqueeze", {t({2, 3}), i(-1)}), {2, 3, 1}, 0, 0);
  expect(op("squeeze", {t({2, 1, 3})}), {2, 3}, 0, 0);
  expect(op("contiguous", {t({2, 3})}), {2, 3}, 0, 2 * 6 * 4.0);
  expect(op("half", {t({2, 3})}), {2, 3}, 0, 6 * 4.0 + 6 * 2.0);
  expect(op("cat", {PyValue::sequence({t({2, 3}), t({5, 3})})}), {7, 3}, 0, 2 * 21 * 4.0);
  expect(op("stack", {PyValue::sequence({t({2, 3}), t({2, 3})}), i(1)}), {2, 2, 3}, 0, 2 * 12 * 4.0);
  EXPECT_FALSE(op("view", {t({4, 6}), i(5), i(-1)}).work);  // 24 does not divide by 5
}

TEST(TorchShapeRulesTest, AttentionAndUnknownShapes) {
  // q 2x8x16 (batch, Lq, D), k 2x32x16, v 2x32x4: 2*(2*8)*32*16 + 2*(2*8)*32*4 flops.
  expect(op("scaled_dot_product_attention", {t({2, 8, 16}), t({2, 32, 16}), t({2, 32, 4})}), {2, 8, 4},
         2.0 * 16 * 32 * 16 + 2.0 * 16 * 32 * 4, (256 + 1024 + 256 + 64) * 4.0);
  const OpOutcome unknown = op("relu", {PyValue::tensor(std::nullopt, "float16")});
  EXPECT_TRUE(unknown.result.is_tensor());
  EXPECT_EQ(unknown.result.dtype, "float16");
  EXPECT_FALSE(unknown.work);
}

}  // namespace
}  // namespace hiera::engine::analysis
