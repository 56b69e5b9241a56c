// s1_addmm_linear_bias on the captured linear_bias module (three spellings).
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

TEST(LinearBiasRewrite, FoldsTheBiasIntoTheGemm) {
  const auto found = rewrites::find_linear_bias(captured_graph("linear_bias"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{
                // x @ W.t() + b
                "s1_addmm_linear_bias | add,matmul | add | add = torch.nn.functional.linear(x, weight, bias)",
                // torch.matmul(y, W2) + b2 with W2 as [K, N]
                "s1_addmm_linear_bias | add_1,matmul_1 | add_1 | add_1 = torch.nn.functional.linear(add, w2.t(), b2)",
                // nn.Linear(bias=False) + b3
                "s1_addmm_linear_bias | add_2,fc | add_2 | add_2 = torch.nn.functional.linear(add_1, self.fc.weight, "
                "b3)",
            }));
  EXPECT_EQ(found[0].description, "'x' @ 't' + 'bias' as one F.linear");
}

TEST(LinearBiasRewrite, AMatrixBiasOnTwoDimensionsIsAnAddmm) {
  auto g = captured_graph("linear_bias");
  node_named(g, "b2").meta->shape = {8, 32};  // a full [M, N] addend
  const auto texts = replacement_texts(rewrites::find_linear_bias(g, {}));
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[1], "s1_addmm_linear_bias | add_1,matmul_1 | add_1 | add_1 = torch.addmm(b2, add, w2)");
}

TEST(LinearBiasRewrite, LeavesAddsThatAreNotABias) {
  auto g = captured_graph("linear_bias");
  node_named(g, "add").meta->shape = {2, 8, 32};        // the addend broadcast the product to a larger shape
  node_named(g, "matmul_1").users.push_back("output");  // the product is used elsewhere
  node_named(g, "b3").meta->dtype = "float64";          // a bias of another dtype promotes
  EXPECT_TRUE(rewrites::find_linear_bias(g, {}).empty());
}

}  // namespace
