// s2_cublaslt_epilogue_bias_act on the captured mlp_epilogue module.
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

TEST(CublasLtEpiloguesRewrite, LinearPlusReluAndTanhGeluInTheEpilogue) {
  const auto found = rewrites::find_cublaslt_epilogues(captured_graph("mlp_epilogue"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{
                "s2_cublaslt_epilogue_bias_act | fc1,relu | relu | relu = torch._addmm_activation(self.fc1.bias, x, "
                "self.fc1.weight.t()) if _HIERA_HAS_ADDMM_ACTIVATION else torch.relu((self.fc1(x)))",
                // Its GELU is tanh on CUDA only: CPU tensors take the reference's expression.
                "s2_cublaslt_epilogue_bias_act | fc2,gelu | gelu | gelu = torch._addmm_activation(self.fc2.bias, relu, "
                "self.fc2.weight.t(), use_gelu=True) if _HIERA_HAS_ADDMM_ACTIVATION and relu.is_cuda else "
                "torch.nn.functional.gelu((self.fc2(relu)), approximate='tanh')",
            }));
  EXPECT_EQ(found[0].space, hiera::engine::knowledge::Space::S2);
  EXPECT_EQ(found[0].definitions,
            (Texts{"# torch._addmm_activation (cuBLASLt bias + activation epilogue) is private: use it only where it "
                   "exists.\n_HIERA_HAS_ADDMM_ACTIVATION = hasattr(torch, \"_addmm_activation\")"}));
}

TEST(CublasLtEpiloguesRewrite, OnlyTwoDimensionalInputsAndTheTanhGelu) {
  auto g = captured_graph("mlp_epilogue");
  node_named(g, "x").meta->shape = {2, 16, 32};               // a 3D input
  node_named(g, "gelu").kwargs["approximate"].text = "none";  // exact GELU has no epilogue
  EXPECT_TRUE(rewrites::find_cublaslt_epilogues(g, {}).empty());
}

}  // namespace
