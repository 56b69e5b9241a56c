// engine/graph/normalize: one spelling per computation before matching.
#include "engine/graph/normalize.h"

#include <gtest/gtest.h>

#include "tests/unit/engine/propose/recipes/graph_fixtures.h"

namespace {

using hiera::engine::graph::normalize;
using hiera::engine::graph::rename_in_code;
using hiera::engine::graph::to_json;
using hiera::testing::captured_graph;

// The nodes as matching sees them: everything but the costs.
nlohmann::json matched_nodes(const hiera::engine::graph::OpGraph& graph) {
  nlohmann::json nodes = to_json(graph)["nodes"];
  for (auto& n : nodes) n.erase("flops"), n.erase("bytes");
  return nodes;
}

TEST(GraphNormalize, EvalDropoutIsGoneAndTheGraphIsTheOneWithoutIt) {
  const auto with = normalize(captured_graph("attention_bmm_dropout"));
  const auto without = normalize(captured_graph("attention_bmm"));
  EXPECT_EQ(with.removed, (std::vector<std::string>{"dropout (dropout in eval mode)"}));
  EXPECT_TRUE(without.removed.empty());
  EXPECT_EQ(matched_nodes(with.graph), matched_nodes(without.graph));
  EXPECT_EQ(with.graph.find("bmm_1")->code, "torch.bmm(softmax, v)");
  EXPECT_EQ(with.graph.find("softmax")->users, (std::vector<std::string>{"bmm_1"}));
}

TEST(GraphNormalize, DropoutThatRunsStays) {
  auto g = captured_graph("attention_bmm_dropout");
  g.training = true;  // nn.Dropout(0.1) in training mode draws a mask
  const auto n = normalize(g);
  EXPECT_TRUE(n.removed.empty());
  EXPECT_NE(n.graph.find("dropout"), nullptr);
}

TEST(GraphNormalize, PZeroDropoutAndIdentityModulesGo) {
  const auto n = normalize(captured_graph("identity_ops"));
  EXPECT_EQ(n.removed, (std::vector<std::string>{"drop (dropout with p=0)", "ident (nn.Identity)"}));
  EXPECT_EQ(n.graph.find("drop"), nullptr);
  EXPECT_EQ(n.graph.find("ident"), nullptr);
}

TEST(GraphNormalize, FactsOfTheCaptureSurviveParsingAndPrinting) {
  const auto g = captured_graph("attention_additive_causal");
  EXPECT_EQ(g.find("mask")->facts.mask, "causal_additive");
  ASSERT_TRUE(g.find("mask")->facts.values.has_value());
  EXPECT_EQ(g.find("mask")->facts.values->size(), 256u);
  EXPECT_EQ(g.find("mask")->facts.values->at(1), -std::numeric_limits<double>::infinity());
  const auto again = hiera::engine::graph::parse_op_graph(to_json(g));
  EXPECT_EQ(to_json(again), to_json(g));
}

TEST(GraphNormalize, RenamingReadsLeavesAttributesKeywordsAndStringsAlone) {
  EXPECT_EQ(rename_in_code("self.dropout(dropout) @ v", "dropout", "softmax"), "self.dropout(softmax) @ v");
  EXPECT_EQ(rename_in_code("f(dropout, dropout=dropout, s='dropout')", "dropout", "x"), "f(x, dropout=x, s='dropout')");
  EXPECT_EQ(rename_in_code("a == dropout_1 + dropout", "dropout", "x"), "a == dropout_1 + x");
  EXPECT_EQ(rename_in_code("1e5 * e5", "e5", "y"), "1e5 * y");
}

}  // namespace

namespace {

TEST(GraphNormalize, BatchedMatmulEinsumsBecomeTorchMatmul) {
  const auto n = normalize(hiera::testing::captured_graph("attention_einsum"));
  std::vector<std::string> codes;
  for (const auto& node : n.graph.nodes) codes.push_back(node.name + " = " + node.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"q = q", "k = k", "v = v", "einsum_k_t = k.transpose(-2, -1)",
                                             "einsum = torch.matmul(q, einsum_k_t)", "mul = einsum * 0.3535533905932738",
                                             "softmax = mul.softmax(dim=-1)", "einsum_1 = torch.matmul(softmax, v)",
                                             "output = einsum_1"}));
  EXPECT_EQ(n.rewritten, (std::vector<std::string>{"einsum (einsum as torch.matmul)", "einsum_1 (einsum as torch.matmul)"}));
  const auto* t = n.graph.find("einsum_k_t");
  EXPECT_EQ(t->meta->shape, (std::vector<std::int64_t>{2, 4, 8, 16}));
  EXPECT_EQ(t->users, (std::vector<std::string>{"einsum"}));
  EXPECT_EQ(n.graph.find("einsum")->kind, "matmul");
}

TEST(GraphNormalize, OtherEinsumsStayAsWritten) {
  for (const char* equation : {"bhqd,bhkd->bhkq", "bhqd,bhqd->bhqd", "...qd,...kd->...qk", "bhqd,bhkd->bqk"}) {
    auto g = hiera::testing::captured_graph("attention_einsum");
    for (auto& node : g.nodes) {
      if (node.name == "einsum") node.args[0].text = equation;
    }
    const auto n = normalize(g);
    EXPECT_EQ(n.graph.find("einsum")->code.rfind("torch.einsum(", 0), 0u) << equation;
  }
}

}  // namespace
