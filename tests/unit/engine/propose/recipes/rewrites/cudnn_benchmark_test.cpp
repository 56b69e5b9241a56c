// s2_cudnn_benchmark_algorithm: cudnn.benchmark for the call around convolutions.
#include <gtest/gtest.h>

#include "engine/propose/recipes/rewrites/rewrites.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "tests/unit/engine/propose/recipes/replacement_text.h"

namespace {

using namespace hiera::engine::propose::recipes;
using hiera::testing::captured_graph;
using hiera::testing::replacement_texts;
using Texts = std::vector<std::string>;

TEST(CudnnBenchmarkRewrite, CudnnBenchmarkForConvolutions) {
  const auto found = rewrites::find_cudnn_benchmark(captured_graph("conv_stack"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s2_cudnn_benchmark_algorithm |  |  | torch.backends.cudnn.benchmark := True"}));
  EXPECT_EQ(found[0].description, "cuDNN benchmarks its algorithms for the 2 convolution(s)");
  EXPECT_TRUE(rewrites::find_cudnn_benchmark(captured_graph("mlp_epilogue"), {}).empty());
}

}  // namespace
