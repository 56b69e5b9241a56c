// s1_merge_reduction_chains on the captured reductions module.
#include <gtest/gtest.h>

#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(ReductionChainsRewrite, MergesChainsIntoOneReduction) {
  // s.mean(-1).mean(-1) on [4, 8, 6]: the second -1 is dim 1 of the input; amax(amax(s, 2, True), 1, True).
  const auto found = rewrites::find_reduction_chains(captured_graph("reductions"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{
                "s1_merge_reduction_chains | mean,mean_1 | mean_1 | mean_1 = sum_1.mean(dim=(1, 2))",
                "s1_merge_reduction_chains | amax,amax_1 | amax_1 | amax_1 = sum_1.amax(dim=(1, 2), keepdim=True)",
            }));
  EXPECT_EQ(found[0].description, "two chained mean reductions of 'sum_1' as one over dims (1, 2)");
}

TEST(ReductionChainsRewrite, NeedsTheSameKindKeepdimAndAPrivateIntermediate) {
  auto g = captured_graph("reductions");
  Arg no;
  no.kind = Arg::Kind::Bool;
  no.flag = false;
  node_named(g, "amax_1").kwargs["keepdim"] = no;   // keepdim differs between the two
  node_named(g, "mean").users.push_back("output");  // the intermediate is used elsewhere
  EXPECT_TRUE(rewrites::find_reduction_chains(g, {}).empty());
  auto kinds = captured_graph("reductions");
  node_named(kinds, "mean_1").kind = "sum";  // sum of a mean
  EXPECT_EQ(rewrites::find_reduction_chains(kinds, {}).size(), 1u);
}

}  // namespace
