// Which replacements go into one candidate: conflicts, the most complete
// combination first, then the variants, each set once.
#include <gtest/gtest.h>

#include "engine/propose/recipes/replacement_sets.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::knowledge::Space;
using Sets = std::vector<std::vector<std::size_t>>;

Replacement covering(std::set<std::string> nodes, std::string recipe, Space space = Space::S1, bool risky = false) {
  Replacement r;
  r.recipe = std::move(recipe);
  r.space = space;
  r.covered = std::move(nodes);
  r.produces = *r.covered.begin();
  r.statements = {r.produces + " = x"};
  r.risky = risky;
  return r;
}

TEST(ReplacementSets, Conflicts) {
  Replacement bench, no_bench, tf32, graph_a, graph_b;
  bench.settings = {{"torch.backends.cudnn.benchmark", "True"}};
  no_bench.settings = {{"torch.backends.cudnn.benchmark", "False"}};
  tf32.settings = {{"torch.backends.cuda.matmul.allow_tf32", "True"}, {"torch.backends.cudnn.benchmark", "True"}};
  graph_a.cuda_graph = graph_b.cuda_graph = true;
  EXPECT_TRUE(conflict(covering({"a", "b"}, "r"), covering({"b", "c"}, "r")));
  EXPECT_FALSE(conflict(covering({"a"}, "r"), covering({"b"}, "r")));
  EXPECT_TRUE(conflict(bench, no_bench));
  EXPECT_FALSE(conflict(bench, tf32));  // the same flag to the same value
  EXPECT_TRUE(conflict(graph_a, graph_b));
  EXPECT_FALSE(conflict(graph_a, bench));
}

TEST(ReplacementSets, MostCompleteFirstThenVariantsThenSingles) {
  // 0 and 1 compete for node b; 2 is risky; 3 is S2.
  const std::vector<Replacement> pool = {covering({"a", "b"}, "big"), covering({"b"}, "small"),
                                         covering({"c"}, "risky", Space::S1, true), covering({"d"}, "lib", Space::S2)};
  SetPreference s2;
  s2.space = Space::S2;
  EXPECT_EQ(replacement_sets(pool, s2), (Sets{
                                            {0, 2, 3},  // everything that fits, the step's space first
                                            {0, 3},     // without the risky rewrite
                                            {3},        // only the step's space
                                            {1, 2, 3},  // the loser of the contest for b first
                                            {0},        // then each alone, in rank order
                                            {1},
                                            {2},
                                        }));
}

TEST(ReplacementSets, TheStepsRecipesWinContests) {
  const std::vector<Replacement> pool = {covering({"a", "b"}, "big"), covering({"b"}, "small")};
  SetPreference prefer;
  prefer.recipes = {"small"};
  EXPECT_EQ(replacement_sets(pool, prefer), (Sets{{1}, {0}}));
  EXPECT_TRUE(replacement_sets({}, prefer).empty());
}

}  // namespace
