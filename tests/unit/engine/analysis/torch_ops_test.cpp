// The op table: spellings to canonical ops and categories, layers, dtypes.
#include "engine/analysis/torch_ops.h"

#include <gtest/gtest.h>

namespace hiera::engine::analysis {
namespace {

TEST(TorchOpsTest, InPlaceNamesAreTheirOp) {
  ASSERT_TRUE(find_op("relu_"));
  EXPECT_EQ(find_op("relu_")->name, "relu");
  EXPECT_EQ(find_op("add_")->category, OpCategory::Binary);
  EXPECT_EQ(find_op("__init__"), std::nullopt);
  EXPECT_EQ(find_op("size"), std::nullopt);
  EXPECT_EQ(find_op("item"), std::nullopt);
}

TEST(TorchOpsTest, Categories) {
  EXPECT_EQ(find_op("softmax")->category, OpCategory::Softmax);
  EXPECT_EQ(find_op("bmm")->category, OpCategory::Matmul);
  EXPECT_EQ(find_op("conv_transpose2d")->category, OpCategory::Conv);
  EXPECT_EQ(find_op("permute")->category, OpCategory::View);
  EXPECT_EQ(find_op("contiguous")->category, OpCategory::Copy);
  EXPECT_EQ(find_op("logsumexp")->category, OpCategory::Reduction);
  EXPECT_EQ(find_op("scaled_dot_product_attention")->category, OpCategory::Attention);
}

TEST(TorchOpsTest, OperatorsAndLayers) {
  EXPECT_EQ(operator_op("@")->name, "matmul");
  EXPECT_EQ(operator_op("**")->name, "pow");
  EXPECT_EQ(operator_op(">=")->name, "ge");
  EXPECT_EQ(operator_op("and"), std::nullopt);
  EXPECT_EQ(layer_op("Conv2d")->name, "conv2d");
  EXPECT_EQ(layer_op("BatchNorm1d")->name, "batch_norm");
  EXPECT_EQ(layer_op("LeakyReLU")->name, "leaky_relu");
  EXPECT_EQ(layer_op("Tanh")->name, "tanh");
  EXPECT_EQ(layer_op("Sequential")->category, OpCategory::Other);
  EXPECT_EQ(layer_op("MyBlock"), std::nullopt);
}

TEST(TorchOpsTest, SyncMethodsAndDtypeNames) {
  EXPECT_TRUE(is_sync_method("item"));
  EXPECT_TRUE(is_sync_method("numpy"));
  EXPECT_FALSE(is_sync_method("cuda"));
  EXPECT_EQ(dtype_name("torch.half"), "float16");
  EXPECT_EQ(dtype_name("torch.long"), "int64");
  EXPECT_EQ(dtype_name("bfloat16"), "bfloat16");
  EXPECT_EQ(dtype_name("torch.cuda"), std::nullopt);
}

}  // namespace
}  // namespace hiera::engine::analysis
