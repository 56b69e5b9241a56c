// The questions rewrites ask of a graph, on captured graphs: arguments by
// position or name, in-place writes, contiguity, dims.
#include <gtest/gtest.h>

#include "engine/propose/recipes/graph_queries.h"
#include "graph_fixtures.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::node_named;

TEST(GraphQueries, ArgumentsByPositionKeywordOrSchemaName) {
  auto g = captured_graph("reductions");
  const auto& amax = node_named(g, "amax");  // torch.amax(s, 2, keepdim=True)
  EXPECT_EQ(argument(amax, 0, "input")->node, "sum_1");
  EXPECT_EQ(argument(amax, 1, "dim")->number, 2);
  EXPECT_TRUE(flag(argument(amax, 2, "keepdim")).value());
  EXPECT_EQ(argument(amax, 3, "out"), nullptr);
  EXPECT_EQ(argument_node(g, amax, 0, "input"), g.find("sum_1"));
  EXPECT_EQ(int_list(argument(amax, 1, "dim")), (std::vector<std::int64_t>{2}));
  EXPECT_FALSE(constant(argument(amax, 0, "input")).has_value());
  EXPECT_TRUE(passes_only(amax, 2, {"keepdim"}));
  EXPECT_FALSE(passes_only(amax, 1, {"keepdim"}));
  EXPECT_FALSE(passes_only(amax, 2, {}));
}

TEST(GraphQueries, InPlaceWrites) {
  auto g = captured_graph("identity_ops");
  EXPECT_FALSE(graph_mutates(g));
  auto& relu = node_named(g, "relu");
  relu.target = "torch.relu_";
  EXPECT_TRUE(mutates(g, relu));
  relu.op = "call_method";
  relu.target = "__iadd__";
  EXPECT_TRUE(mutates(g, relu));
  relu.op = "call_function";
  relu.target = "operator.iadd";
  EXPECT_TRUE(mutates(g, relu));
  relu.target = "operator.is_not";  // not an in-place operator
  EXPECT_FALSE(mutates(g, relu));
  relu.target = "operator.setitem";
  EXPECT_TRUE(mutates(g, relu));
  // torch.export's aten ops carry their overload after the name (05_jacobi2d's out[1:-1, 1:-1] = ...).
  relu.target = "torch.ops.aten.copy_.default";
  EXPECT_TRUE(mutates(g, relu));
  relu.target = "torch.ops.aten.clone.default";
  EXPECT_FALSE(mutates(g, relu));
  g.submodules.at("drop").attrs["inplace"] = true;
  EXPECT_TRUE(mutates(g, node_named(g, "drop")));
  EXPECT_TRUE(graph_mutates(g));
}

TEST(GraphQueries, ShapesDimsAndLayouts) {
  auto g = captured_graph("attention");
  EXPECT_TRUE(contiguous(*g.find("q")->meta));
  EXPECT_FALSE(contiguous(*g.find("transpose")->meta));
  EXPECT_EQ(rank(*g.find("q")), 4u);
  EXPECT_FALSE(rank(*g.find("size")).has_value());
  EXPECT_EQ(normalize_dim(-1, 4), 3);
  EXPECT_EQ(normalize_dim(-5, 4), std::nullopt);
  EXPECT_EQ(normalize_dim(4, 4), std::nullopt);
  EXPECT_TRUE(is_returned(g, "matmul_1"));
  EXPECT_FALSE(is_returned(g, "softmax"));
  EXPECT_TRUE(only_user(*g.find("softmax"), *g.find("matmul_1")));
  EXPECT_FALSE(only_user(*g.find("q"), *g.find("matmul")));
  EXPECT_TRUE(is_floating("bfloat16"));
  EXPECT_FALSE(is_floating("int64"));
}

}  // namespace
