// s2_tf32_matmul: TF32 for float32 GEMMs and convolutions, only when the contract allows tf32.
#include <gtest/gtest.h>

#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::testing::captured_graph;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(Tf32Rewrite, Tf32OnlyWhenTheContractAllowsIt) {
  EXPECT_TRUE(rewrites::find_tf32(captured_graph("conv_stack"), {}).empty());
  rewrites::RewriteOptions options;
  options.allowed_precisions = {"bf16", "tf32"};
  EXPECT_EQ(replacement_texts(rewrites::find_tf32(captured_graph("conv_stack"), options)),
            (Texts{"s2_tf32_matmul |  |  | torch.backends.cuda.matmul.allow_tf32 := True; "
                   "torch.backends.cudnn.allow_tf32 := True"}));
  EXPECT_EQ(replacement_texts(rewrites::find_tf32(captured_graph("mlp_epilogue"), options)),
            (Texts{"s2_tf32_matmul |  |  | torch.backends.cuda.matmul.allow_tf32 := True"}));
  auto half = captured_graph("mlp_epilogue");
  for (auto& n : half.nodes) {
    if (n.meta) n.meta->dtype = "float16";
  }
  EXPECT_TRUE(rewrites::find_tf32(half, options).empty());  // no float32 GEMM to speed up
}

}  // namespace
