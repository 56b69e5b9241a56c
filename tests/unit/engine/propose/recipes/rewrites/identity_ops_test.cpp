// s1_remove_identity_ops on the captured identity_ops module: every no-op is
// found, and each condition that makes an op not a no-op keeps it.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

hiera::engine::graph::Node& node(hiera::engine::graph::OpGraph& g, const std::string& name) {
  return hiera::testing::node_named(g, name);
}

TEST(IdentityOpsRewrite, RemovesEveryNoOpOfTheModule) {
  const auto found = rewrites::find_identity_ops(captured_graph("identity_ops"), {});
  EXPECT_EQ(replacement_texts(found), (Texts{
                                          "s1_remove_identity_ops | mul | mul | mul = fc",
                                          "s1_remove_identity_ops | drop | drop | drop = mul",
                                          "s1_remove_identity_ops | add | add | add = drop",
                                          "s1_remove_identity_ops | view | view | view = add",
                                          "s1_remove_identity_ops | truediv | truediv | truediv = view",
                                          "s1_remove_identity_ops | clone | clone | clone = truediv",
                                          "s1_remove_identity_ops | ident | ident | ident = clone",
                                      }));
  EXPECT_EQ(found[0].description, "x * 1 removed ('mul' is 'fc')");
  EXPECT_EQ(found[1].description, "dropout with p=0 removed ('drop' is 'mul')");
  EXPECT_EQ(found[3].description, "view to the shape it already has removed ('view' is 'add')");
  EXPECT_EQ(found[0].space, hiera::engine::knowledge::Space::S1);
}

TEST(IdentityOpsRewrite, DropoutIsANoOpOnlyWithPZeroOrInEvalMode) {
  auto g = captured_graph("identity_ops");
  g.submodules.at("drop").attrs["p"] = 0.5;
  const auto training = replacement_texts(rewrites::find_identity_ops(g, {}));
  EXPECT_EQ(std::count(training.begin(), training.end(), "s1_remove_identity_ops | drop | drop | drop = mul"), 0);
  g.training = false;
  const auto eval = rewrites::find_identity_ops(g, {});
  ASSERT_EQ(eval.size(), 7u);
  EXPECT_EQ(eval[1].description, "dropout in eval mode removed ('drop' is 'mul')");
}

// The nodes the rewrite removes from the graph after `change`.
std::vector<std::string> removed_after(const std::function<void(hiera::engine::graph::OpGraph&)>& change) {
  auto g = captured_graph("identity_ops");
  change(g);
  std::vector<std::string> out;
  for (const auto& r : rewrites::find_identity_ops(g, {})) out.push_back(r.produces);
  return out;
}

TEST(IdentityOpsRewrite, KeepsOpsThatPromoteBroadcastOrAreNotIdentities) {
  const Texts all{"mul", "drop", "add", "view", "truediv", "clone", "ident"};
  EXPECT_EQ(removed_after([](auto&) {}), all);
  // x * 1 promoting the dtype.
  EXPECT_EQ(removed_after([](auto& g) { node(g, "mul").meta->dtype = "float64"; }),
            (Texts{"drop", "add", "view", "truediv", "clone", "ident"}));
  // x + 0 broadcasting to a larger shape.
  EXPECT_EQ(removed_after([](auto& g) {
              node(g, "add").meta->shape = {2, 8, 16};
            }),
            (Texts{"mul", "drop", "truediv", "clone", "ident"}));  // the view's input changed shape too
  // torch.rsub(x, 0) is 0 - x.
  EXPECT_EQ(removed_after([](auto& g) {
              node(g, "add").target = "torch.rsub";
              node(g, "add").kind = "sub";
            }),
            (Texts{"mul", "drop", "view", "truediv", "clone", "ident"}));
  // rounding_mode=None is still true division; floor(x / 1) is not x.
  EXPECT_EQ(removed_after([](auto& g) { node(g, "truediv").kwargs["rounding_mode"] = Arg{}; }), all);
  EXPECT_EQ(removed_after([](auto& g) {
              Arg floor;
              floor.kind = Arg::Kind::String;
              floor.text = "floor";
              node(g, "truediv").kwargs["rounding_mode"] = floor;
            }),
            (Texts{"mul", "drop", "add", "view", "clone", "ident"}));
  // A clone whose result is returned gives the output its own storage.
  EXPECT_EQ(removed_after([](auto& g) { g.nodes.back().args[0].node = "clone"; }),
            (Texts{"mul", "drop", "add", "view", "truediv", "ident"}));
}

TEST(IdentityOpsRewrite, ViewsWithInferredSizesAreKept) {
  auto g = captured_graph("identity_ops");
  node(g, "view").args[2].number = -1;  // view(8, -1): another input size gives another shape
  const auto texts = replacement_texts(rewrites::find_identity_ops(g, {}));
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "s1_remove_identity_ops | view | view | view = add"), 0);
}

TEST(IdentityOpsRewrite, AnInPlaceWriteKeepsClonesAndNewTensors) {
  auto g = captured_graph("identity_ops");
  Arg yes;
  yes.kind = Arg::Kind::Bool;
  yes.flag = true;
  node(g, "relu").kwargs["inplace"] = yes;  // relu now writes into what the clone protected
  EXPECT_EQ(replacement_texts(rewrites::find_identity_ops(g, {})),
            (Texts{
                "s1_remove_identity_ops | drop | drop | drop = mul",
                "s1_remove_identity_ops | view | view | view = add",
                "s1_remove_identity_ops | ident | ident | ident = clone",
            }));
}

}  // namespace
