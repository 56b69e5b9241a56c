// s2_split_tf32_gemm: float32 products large enough for the tensor cores as 3xTF32, not where TF32 is allowed.
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

TEST(SplitTf32Rewrite, LargeFloat32ProductsInEverySpelling) {
  const auto found = rewrites::find_split_tf32(captured_graph("fp32_gemms"), {});
  // The bmm (4 x 256^3 multiply-adds), the 64-wide linear and the matrix-vector product are left alone.
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s2_split_tf32_gemm | fc | fc | fc = _split_tf32.linear(x, self.fc.weight, self.fc.bias)",
                   "s2_split_tf32_gemm | linear | linear | linear = _split_tf32.linear(relu, proj, None)",
                   "s2_split_tf32_gemm | matmul | matmul | matmul = _split_tf32.matmul(linear, w)"}));
  for (const auto& r : found) {
    EXPECT_EQ(r.space, hiera::engine::knowledge::Space::S2);
    EXPECT_EQ(r.imports, (Texts{"from hiera_runner import split_tf32 as _split_tf32"}));
    EXPECT_FALSE(r.risky);
    EXPECT_TRUE(r.library_gap);  // torch.compile calls the same float32 GEMM: kept in the compiled composition
  }
  EXPECT_EQ(found[2].description, "matrix product 'matmul' in float32 as one 3xTF32 GEMM (operands split in two TF32 parts, K tripled)");
}

TEST(SplitTf32Rewrite, ProductsWithoutNnLinear) {
  // addmm of a vector bias and W.t() is F.linear (the weight split once); matmul with W.T too; einsum as a plain
  // and a batched product; addmm of a matrix adds it after the product. An einsum reading its second operand
  // transposed ("sd,fd->sf") is left alone.
  EXPECT_EQ(replacement_texts(rewrites::find_split_tf32(captured_graph("fp32_gemm_spellings"), {})),
            (Texts{"s2_split_tf32_gemm | addmm | addmm | addmm = _split_tf32.linear(x, weight, bias)",
                   "s2_split_tf32_gemm | matmul | matmul | matmul = _split_tf32.linear(addmm, proj, None)",
                   "s2_split_tf32_gemm | einsum | einsum | einsum = _split_tf32.matmul(matmul, w)",
                   "s2_split_tf32_gemm | addmm_1 | addmm_1 | addmm_1 = torch.add(_split_tf32.matmul(matmul, w), m)",
                   "s2_split_tf32_gemm | einsum_1 | einsum_1 | einsum_1 = _split_tf32.matmul(view, t3)"}));
  // addmm with beta or alpha is not a plain product plus its input.
  auto g = captured_graph("fp32_gemm_spellings");
  node_named(g, "addmm_1").kwargs["beta"] = hiera::engine::graph::Arg{};
  for (const auto& r : rewrites::find_split_tf32(g, {})) EXPECT_NE(r.produces, "addmm_1");
}

TEST(SplitTf32Rewrite, NotWhereTf32IsAllowedNorForOtherDtypes) {
  rewrites::RewriteOptions options;
  options.allowed_precisions = {"tf32"};
  EXPECT_TRUE(rewrites::find_split_tf32(captured_graph("fp32_gemms"), options).empty());
  auto half = captured_graph("fp32_gemms");
  for (auto& n : half.nodes)
    if (n.meta) n.meta->dtype = "bfloat16";
  EXPECT_TRUE(rewrites::find_split_tf32(half, {}).empty());
}

TEST(SplitTf32Rewrite, EachSideAtLeast128) {
  auto g = captured_graph("fp32_gemms");
  node_named(g, "x").meta->shape = {4, 256, 96};  // K = 96 for fc
  const auto found = rewrites::find_split_tf32(g, {});
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found[0].produces, "fc");
}

}  // namespace
