// s2_cuda_graph_capture: launch-bound forwards (or the reference's own forward when
// there is no graph) in a CUDA graph.
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

TEST(CudaGraphRewrite, CudaGraphForLaunchBoundForwards) {
  const auto found = rewrites::find_cuda_graph(captured_graph("activations"), {});
  EXPECT_EQ(replacement_texts(found), (Texts{"s2_cuda_graph_capture |  |  | <cuda graph> | risky"}));
  EXPECT_EQ(found[0].description, "the forward's 23 kernel launches captured in one CUDA graph and replayed");

  const auto fallback = rewrites::find_cuda_graph(captured_graph("data_dependent"), {});
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0].description,
            "the whole forward captured in a CUDA graph and replayed (no op graph: the reference's own forward)");

  auto large = captured_graph("activations");
  node_named(large, "x").meta->shape = {8192, 4096};  // too large: the copies in and out cost more
  EXPECT_TRUE(rewrites::find_cuda_graph(large, {}).empty());
  auto sync = captured_graph("activations");
  node_named(sync, "log_2").target = "item";  // a host sync: capture would fail
  EXPECT_TRUE(rewrites::find_cuda_graph(sync, {}).empty());
  auto single = captured_graph("mlp_epilogue");
  single.nodes.erase(single.nodes.begin() + 1, single.nodes.end() - 2);  // one kernel left
  EXPECT_TRUE(rewrites::find_cuda_graph(single, {}).empty());
}

}  // namespace
