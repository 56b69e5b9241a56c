// The least work of a node: products with torch.diag and outer products
// written as matmul count one multiply per output element; causally masked
// attention products count the scores on and below the diagonal; every other
// node keeps the capture's count.
#include <gtest/gtest.h>

#include "engine/graph/minimal_work.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"

namespace {

using namespace hiera::engine::graph;
using hiera::testing::captured_graph;
using hiera::testing::node_named;

TEST(MinimalWork, ProductsWithADiagonalMatrixAndOuterProductsAreMultiplies) {
  const OpGraph g = captured_graph("structured_matmul");
  // x @ torch.diag(d) and torch.diag(e) @ a: 16 x 16 outputs, 8192 flops as written.
  EXPECT_EQ(node_named(const_cast<OpGraph&>(g), "matmul").flops, 8192.0);
  const NodeWork column_scale = minimal_work(g, *g.find("matmul"));
  EXPECT_EQ(column_scale.flops, 256.0);
  EXPECT_EQ(column_scale.reason, "a product with torch.diag(v) is one multiply per output element");
  EXPECT_EQ(minimal_work(g, *g.find("matmul_1")).flops, 256.0);
  // (3, 5, 1) @ (3, 1, 7): 105 outputs, 210 flops as written.
  const NodeWork outer = minimal_work(g, *g.find("matmul_2"));
  EXPECT_EQ(outer.flops, 105.0);
  EXPECT_EQ(outer.reason, "a product over an inner dimension of 1 is one multiply per output element");
  // A general product (the batched weight) and non-products keep their count, with no reason.
  EXPECT_EQ(minimal_work(g, *g.find("bmm")).flops, 840.0);
  EXPECT_TRUE(minimal_work(g, *g.find("bmm")).reason.empty());
  EXPECT_EQ(minimal_work(g, *g.find("diag")).flops, 0.0);
}

TEST(MinimalWork, AnOffDiagonalOrAMatrixArgumentIsNotADiagonalMatrix) {
  OpGraph g = captured_graph("structured_matmul");
  Arg one;
  one.kind = Arg::Kind::Number;
  one.is_integer = true;
  one.number = 1;
  node_named(g, "diag").kwargs["diagonal"] = one;  // torch.diag(d, diagonal=1): a shifted diagonal
  EXPECT_EQ(minimal_work(g, *g.find("matmul")).flops, 8192.0);
  node_named(g, "diag").kwargs.clear();
  node_named(g, "d").meta->shape = {16, 16};  // torch.diag of a matrix is its diagonal, a vector
  EXPECT_EQ(minimal_work(g, *g.find("matmul")).flops, 8192.0);
}

// (2, 4, 16, 16) scores: 32768 flops a product as written; a causal mask keeps 17 of every 32 (16 * 17 / 2 of 256).
TEST(MinimalWork, CausallyMaskedAttentionProductsCountTheKeptScores) {
  const std::string reason = "a causal mask keeps the scores on and below the diagonal: (S + 1) / 2S of the product";
  // masked_fill with a triu mask, an additive -inf mask, torch.where over a tril mask, and a bf16 one with a
  // finfo.min fill and a float32 softmax between casts.
  for (const char* fixture : {"attention_causal_triu", "attention_additive_causal", "attention_causal_where",
                              "attention_bf16_finfo_where"}) {
    SCOPED_TRACE(fixture);
    const OpGraph g = captured_graph(fixture);
    for (const char* product : {"matmul", "matmul_1"}) {  // the scores, and their probabilities times v
      SCOPED_TRACE(product);
      ASSERT_EQ(g.find(product)->flops, 32768.0);
      const NodeWork work = minimal_work(g, *g.find(product));
      EXPECT_EQ(work.flops, 17408.0);
      EXPECT_EQ(work.reason, reason);
    }
  }
  // Without a mask, and with einsum's products (counted as written since the capture counts einsum), nothing less.
  EXPECT_EQ(captured_graph("attention_einsum").find("einsum")->flops, 32768.0);
  for (const char* fixture : {"attention", "attention_einsum"}) {
    const OpGraph g = captured_graph(fixture);
    for (const auto& node : g.nodes) {
      if (node.flops <= 0.0) continue;
      EXPECT_EQ(minimal_work(g, node).flops, node.flops) << fixture << " " << node.name;
    }
  }
}

TEST(MinimalWork, AMaskThatIsNotCausalKeepsTheCount) {
  OpGraph g = captured_graph("attention_causal_triu");
  for (auto& node : g.nodes) node.facts.mask.clear();  // a padding mask: its values are not known to be causal
  EXPECT_EQ(minimal_work(g, *g.find("matmul")).flops, 32768.0);
  EXPECT_EQ(minimal_work(g, *g.find("matmul_1")).flops, 32768.0);
}

TEST(MinimalWork, CausalScaledDotProductAttention) {
  OpGraph g = captured_graph("attention");
  Node sdpa = *g.find("matmul_1");  // (2, 4, 16, 8): the attention's output shape
  sdpa.name = "sdpa";
  sdpa.kind = "scaled_dot_product_attention";
  sdpa.target = "torch._C._nn.scaled_dot_product_attention";
  sdpa.flops = 75776.0;  // its four products' and softmax's count as the capture writes it
  EXPECT_EQ(minimal_work(g, sdpa).flops, 75776.0);
  Arg causal;
  causal.kind = Arg::Kind::Bool;
  causal.flag = true;
  sdpa.kwargs["is_causal"] = causal;
  const NodeWork work = minimal_work(g, sdpa);
  EXPECT_EQ(work.flops, 75776.0 * 17.0 / 32.0);
  EXPECT_EQ(work.reason, "a causal attention computes the scores on and below the diagonal only");
}

TEST(MinimalWork, ARegionMovesWhatEntersAndLeavesItOnce) {
  const OpGraph silu = captured_graph("activations");
  // x * sigmoid(x) on (8, 64) float32: x read once (2048 B), the product read outside (2048 B); 512 + 512 flops.
  EXPECT_EQ(region_work(silu, {"sigmoid", "mul"}, "mul"), (RegionWork{1024.0, 4096.0, "float32"}));
  const OpGraph convs = captured_graph("conv_stack");
  // conv1 + relu: x (2, 3, 8, 8) 1536 B in, conv1's weight 864 B and bias 32 B, relu's (2, 8, 8, 8) 4096 B out; a
  // float32 convolution is bounded at TF32's peak.
  EXPECT_EQ(region_work(convs, {"conv1", "relu"}, "relu"), (RegionWork{55296.0 + 1024.0, 1536.0 + 864.0 + 32.0 + 4096.0, "tf32"}));
  // Every call of the forward (a whole-forward rewrite): at least the inputs, every weight used and the output.
  const RegionWork whole = region_work(convs, {}, "");
  EXPECT_EQ(whole.flops, convs.total_flops);
  EXPECT_GE(whole.bytes, 1536.0 + 864.0 + 32.0 + 2304.0 + 32.0);
}

}  // namespace
