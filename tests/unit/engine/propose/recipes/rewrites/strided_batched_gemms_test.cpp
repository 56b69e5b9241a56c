// s2_strided_batched_gemm on the captured batched_loop module (an unrolled loop).
#include <gtest/gtest.h>

#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(StridedBatchedGemmsRewrite, TheLoopOfMatmulsPlusBiasIsOneBaddbmm) {
  const auto found = rewrites::find_strided_batched_gemms(captured_graph("batched_loop"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s2_strided_batched_gemm | add,add_1,add_2,add_3,matmul,matmul_1,matmul_2,matmul_3,stack | stack | "
                   "stack = torch.baddbmm(bias, x[0:4], weight[0:4])"}));
  EXPECT_EQ(found[0].description, "4 matmuls + bias on slices of 'x' as one torch.baddbmm");
}

TEST(StridedBatchedGemmsRewrite, WithoutBiasAndWithASharedOperandABmm) {
  auto g = captured_graph("batched_loop");
  // stack([x[i] @ weight[i] ...]) directly, and then x[i] @ w for one shared w.
  auto& stack = node_named(g, "stack");
  for (int i = 0; i < 4; ++i) {
    const std::string matmul = i == 0 ? "matmul" : "matmul_" + std::to_string(i);
    stack.args[0].items[i].node = matmul;
    node_named(g, matmul).users = {"stack"};
  }
  EXPECT_EQ(replacement_texts(rewrites::find_strided_batched_gemms(g, {})),
            (Texts{"s2_strided_batched_gemm | matmul,matmul_1,matmul_2,matmul_3,stack | stack | stack = "
                   "torch.bmm(x[0:4], weight[0:4])"}));
  for (int i = 0; i < 4; ++i)
    node_named(g, i == 0 ? "matmul" : "matmul_" + std::to_string(i)).args[1].node = "getitem_1";
  EXPECT_EQ(replacement_texts(rewrites::find_strided_batched_gemms(g, {})),
            (Texts{"s2_strided_batched_gemm | matmul,matmul_1,matmul_2,matmul_3,stack | stack | stack = "
                   "torch.bmm(x[0:4], getitem_1.expand(4, -1, -1))"}));
}

TEST(StridedBatchedGemmsRewrite, NeedsConsecutiveSlicesOfOneTensor) {
  auto g = captured_graph("batched_loop");
  node_named(g, "getitem_4").args[1].number = 3;  // x[0], x[1], x[3], x[3]
  EXPECT_TRUE(rewrites::find_strided_batched_gemms(g, {}).empty());
}

}  // namespace
