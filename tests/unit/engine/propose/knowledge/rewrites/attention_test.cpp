// s1_scaled_dot_product_attention on the captured attention module.
#include <gtest/gtest.h>

#include "engine/propose/knowledge/rewrites/rewrites.h"
#include "tests/unit/engine/propose/knowledge/graph_fixtures.h"
#include "tests/unit/engine/propose/knowledge/replacement_text.h"

namespace {

using namespace hiera::engine::propose::knowledge_proposer;
using hiera::engine::graph::Arg;
using hiera::testing::captured_graph;
using hiera::testing::node_named;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(AttentionRewrite, HandWrittenAttentionBecomesSdpaWithTheReferencesScale) {
  const auto found = rewrites::find_attention(captured_graph("attention"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s1_scaled_dot_product_attention | add,matmul,matmul_1,mul,softmax,transpose | matmul_1 | "
                   "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, "
                   "scale=truediv) if _HIERA_SDPA_HAS_SCALE else (torch.softmax((((q @ (k.transpose(-2, -1))) * "
                   "truediv) + mask), dim=-1)) @ v | risky"}));
  EXPECT_EQ(found[0].definitions,
            (Texts{"# F.scaled_dot_product_attention takes scale= from torch 2.1 on; older versions keep the "
                   "reference's math.\n_HIERA_SDPA_HAS_SCALE = tuple(int(part) for part in "
                   "torch.__version__.split(\".\")[:2]) >= (2, 1)"}));
}

TEST(AttentionRewrite, ConstantScalesAndDivisionsArePassedAsScale) {
  auto g = captured_graph("attention");
  auto& mul = node_named(g, "mul");
  mul.kind = "div";
  mul.args[1] = Arg{};
  mul.args[1].kind = Arg::Kind::Number;
  mul.args[1].number = 8.0;  // scores / 8.0
  mul.code = "matmul / 8.0";
  const auto found = rewrites::find_attention(g, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].statements[0],
            "matmul_1 = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.125) if "
            "_HIERA_SDPA_HAS_SCALE else (torch.softmax((((q @ (k.transpose(-2, -1))) / 8.0) + mask), dim=-1)) @ v");
}

TEST(AttentionRewrite, LeavesOtherPatternsAlone) {
  const auto without = [](const std::function<void(hiera::engine::graph::OpGraph&)>& change) {
    auto g = captured_graph("attention");
    change(g);
    return rewrites::find_attention(g, {}).empty();
  };
  EXPECT_FALSE(without([](auto&) {}));
  // softmax over another dim than the keys'
  EXPECT_TRUE(without([](auto& g) { node_named(g, "softmax").kwargs["dim"].number = 2; }));
  // the probabilities are also returned
  EXPECT_TRUE(without([](auto& g) { node_named(g, "softmax").users.push_back("output"); }));
  // a mask that broadcasts the scores to a larger shape
  EXPECT_TRUE(without([](auto& g) { node_named(g, "add").meta->shape = {3, 2, 4, 16, 16}; }));
  // k transposed over other dims
  EXPECT_TRUE(without([](auto& g) { node_named(g, "transpose").args[1].number = 1; }));
  // values of another dtype
  EXPECT_TRUE(without([](auto& g) { node_named(g, "v").meta->dtype = "float16"; }));
}

}  // namespace

namespace {

TEST(AttentionRewrite, AnNnSoftmaxModuleToo) {
  auto g = captured_graph("attention");
  auto& softmax = node_named(g, "softmax");
  softmax.op = "call_module";
  softmax.target = "softmax";
  softmax.kwargs.clear();
  softmax.normalized = std::map<std::string, Arg>{{"input", softmax.args[0]}};
  softmax.code = "self.softmax(add)";
  g.submodules["softmax"] = {"Softmax", {{"dim", -1}}};
  EXPECT_EQ(rewrites::find_attention(g, {}).size(), 1u);
  g.submodules["softmax"].attrs["dim"] = 1;
  EXPECT_TRUE(rewrites::find_attention(g, {}).empty());
}

}  // namespace
