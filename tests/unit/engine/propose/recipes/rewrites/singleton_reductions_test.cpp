// s1_singleton_dim_reductions on the captured reductions module.
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

TEST(SingletonReductionsRewrite, ASumOverASizeOneDimIsASqueezeCheckedAtRunTime) {
  const auto found = rewrites::find_singleton_reductions(captured_graph("reductions"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s1_singleton_dim_reductions | sum_1 | sum_1 | sum_1 = exp.squeeze(1) if exp.shape[1] == 1 else "
                   "exp.sum(dim=1)"}));
  EXPECT_EQ(found[0].description, "sum over the size-1 dim(s) 1 of 'exp' as a view");
}

TEST(SingletonReductionsRewrite, WithKeepdimTheTensorItself) {
  auto g = captured_graph("reductions");
  Arg yes;
  yes.kind = Arg::Kind::Bool;
  yes.flag = true;
  auto& sum = node_named(g, "sum_1");
  sum.kwargs["keepdim"] = yes;
  sum.kwargs["dim"].kind = Arg::Kind::List;  // dim=(1, -3): the same dim twice, both size 1
  Arg one = sum.kwargs["dim"];
  one.kind = Arg::Kind::Number;
  one.number = 1;
  one.is_integer = true;
  Arg minus = one;
  minus.number = -3;
  sum.kwargs["dim"].items = {one, minus};
  sum.meta->shape = {4, 1, 8, 6};
  EXPECT_EQ(replacement_texts(rewrites::find_singleton_reductions(g, {})),
            (Texts{"s1_singleton_dim_reductions | sum_1 | sum_1 | sum_1 = exp if exp.shape[1] == 1 else "
                   "exp.sum(dim=1)"}));
}

TEST(SingletonReductionsRewrite, LeavesOtherReductionsAlone) {
  auto wide = captured_graph("reductions");
  node_named(wide, "exp").meta->shape = {4, 2, 8, 6};
  EXPECT_TRUE(rewrites::find_singleton_reductions(wide, {}).empty());

  auto cast = captured_graph("reductions");
  Arg f64;
  f64.kind = Arg::Kind::Dtype;
  f64.text = "float64";
  node_named(cast, "sum_1").kwargs["dtype"] = f64;
  EXPECT_TRUE(rewrites::find_singleton_reductions(cast, {}).empty());

  // A module input coming back as the output would alias it.
  auto input = captured_graph("reductions");
  node_named(input, "sum_1").args[0].node = "x";
  node_named(input, "x").meta->shape = {4, 1, 8, 6};
  input.nodes.back().args[0].items[0].node = "sum_1";
  EXPECT_TRUE(rewrites::find_singleton_reductions(input, {}).empty());
}

}  // namespace
