// s1_remove_redundant_casts_copies on the captured casts module.
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

TEST(RedundantCastsRewrite, RemovesContiguousSameDtypeCastAndWideningRoundTrip) {
  const auto found = rewrites::find_redundant_casts(captured_graph("casts"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{
                "s1_remove_redundant_casts_copies | contiguous | contiguous | contiguous = tanh",
                "s1_remove_redundant_casts_copies | to | to | to = contiguous",
                "s1_remove_redundant_casts_copies | double,float_1 | float_1 | float_1 = to",
            }));
  EXPECT_EQ(found[2].description, "round trip float32 -> float64 -> float32 of 'to' removed");
}

TEST(RedundantCastsRewrite, KeepsCastsThatChangeSomething) {
  auto g = captured_graph("casts");
  node_named(g, "double").meta->dtype = "float16";  // a narrowing round trip rounds
  Arg copy;
  copy.kind = Arg::Kind::Bool;
  copy.flag = true;
  node_named(g, "to").kwargs["copy"] = copy;    // .to(..., copy=True) copies
  node_named(g, "tanh").meta->stride = {1, 4};  // a transposed layout: contiguous() copies
  EXPECT_TRUE(rewrites::find_redundant_casts(g, {}).empty());
}

TEST(RedundantCastsRewrite, ModuleInputsMayArriveWithAnyStrides) {
  auto g = captured_graph("casts");
  node_named(g, "contiguous").args[0].node = "x";
  const auto texts = replacement_texts(rewrites::find_redundant_casts(g, {}));
  EXPECT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0], "s1_remove_redundant_casts_copies | to | to | to = contiguous");
}

}  // namespace
