// s1_fused_torch_primitives (activations) on the captured activations module.
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

TEST(FusedActivationsRewrite, HandWrittenActivationsBecomeTorchOperators) {
  const auto found = rewrites::find_fused_activations(captured_graph("activations"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{
                "s1_fused_torch_primitives | mul,sigmoid | mul | mul = torch.nn.functional.silu(x)",
                "s1_fused_torch_primitives | add,erf,mul_1,mul_2,truediv | mul_2 | mul_2 = "
                "torch.nn.functional.gelu(mul)",
                "s1_fused_torch_primitives | add_1,add_2,mul_3,mul_4,mul_5,mul_6,pow_1,tanh | mul_6 | mul_6 = "
                "torch.nn.functional.gelu(mul_2, approximate=\"tanh\")",
                "s1_fused_torch_primitives | add_3,exp,log | log | log = torch.nn.functional.softplus(mul_6) | risky",
            }));
  EXPECT_EQ(found[2].description, "hand-written tanh GELU of 'mul_2' as F.gelu(approximate=\"tanh\")");
}

TEST(FusedActivationsRewrite, OnlyTheExactFormulas) {
  auto g = captured_graph("activations");
  node_named(g, "mul_1").args[0].number = 0.6;   // 0.6 * x * (1 + erf(...)) is not GELU
  node_named(g, "mul_4").args[0].number = 0.05;  // another cubic coefficient
  node_named(g, "sigmoid").args[0].node = "x";   // (unchanged: still x * sigmoid(x))
  node_named(g, "add_3").args[0].number = 2;     // log(2 + exp(x))
  EXPECT_EQ(replacement_texts(rewrites::find_fused_activations(g, {})),
            (Texts{"s1_fused_torch_primitives | mul,sigmoid | mul | mul = torch.nn.functional.silu(x)"}));
}

}  // namespace
