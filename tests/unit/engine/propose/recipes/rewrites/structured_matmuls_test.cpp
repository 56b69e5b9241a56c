// s1_reassociate_matmul_chain (structured matrices) on the captured module.
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

TEST(StructuredMatmulsRewrite, DiagonalAndOuterProductsBecomeBroadcastMultiplies) {
  EXPECT_EQ(replacement_texts(rewrites::find_structured_matmuls(captured_graph("structured_matmul"), {})),
            (Texts{
                "s1_reassociate_matmul_chain | matmul | matmul | matmul = x * d",
                "s1_reassociate_matmul_chain | matmul_1 | matmul_1 | matmul_1 = e.unsqueeze(-1) * matmul",
                "s1_reassociate_matmul_chain | matmul_2 | matmul_2 | matmul_2 = u * v if u.shape[-1] == 1 else "
                "torch.matmul(u, v)",
                "s1_reassociate_matmul_chain | bmm | bmm | bmm = torch.matmul(matmul_2, w)",
            }));
}

TEST(StructuredMatmulsRewrite, LeavesGeneralProductsAlone) {
  auto g = captured_graph("structured_matmul");
  node_named(g, "diag").args.push_back(node_named(g, "diag").args[0]);  // torch.diag(d, <node>): an offset
  node_named(g, "diag").args[1].kind = hiera::engine::graph::Arg::Kind::Number;
  node_named(g, "diag").args[1].number = 1;
  node_named(g, "diag").args[1].is_integer = true;
  node_named(g, "d").meta->shape = {4, 4};  // diag of a matrix extracts its diagonal
  node_named(g, "diag_1").args[0].node = "d";
  node_named(g, "u").meta->shape = {3, 5, 2};      // an inner dimension of 2
  node_named(g, "matmul_2").meta->shape = {5, 7};  // the other operand lacks the batch the expand gave
  EXPECT_TRUE(rewrites::find_structured_matmuls(g, {}).empty());
}

}  // namespace
