// The least work of a node: products with torch.diag and outer products
// written as matmul count one multiply per output element; every other node
// keeps the capture's count.
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

}  // namespace
