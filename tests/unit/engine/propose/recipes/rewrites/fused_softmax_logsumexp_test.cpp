// s1_fused_softmax_logsumexp on the captured activations module.
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

TEST(FusedSoftmaxLogsumexpRewrite, LogOfSoftmaxAndLogSumExp) {
  EXPECT_EQ(replacement_texts(rewrites::find_fused_softmax_logsumexp(captured_graph("activations"), {})),
            (Texts{
                "s1_fused_softmax_logsumexp | log_1,softmax | log_1 | log_1 = torch.log_softmax(log, dim=-1) | risky",
                "s1_fused_softmax_logsumexp | exp_1,log_2,sum_1 | log_2 | log_2 = torch.logsumexp(log_1, dim=-1) | "
                "risky",
            }));
}

TEST(FusedSoftmaxLogsumexpRewrite, NeedsPrivateIntermediates) {
  auto g = captured_graph("activations");
  node_named(g, "softmax").users.push_back("output");
  node_named(g, "exp_1").users.push_back("output");
  EXPECT_TRUE(rewrites::find_fused_softmax_logsumexp(g, {}).empty());
}

}  // namespace
