// s1_channels_last_conv on the captured conv_stack module.
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

TEST(ChannelsLastRewrite, TheConvolutionStackRunsChannelsLastAndLeavesContiguous) {
  const auto found = rewrites::find_channels_last(captured_graph("conv_stack"), {});
  EXPECT_EQ(replacement_texts(found),
            (Texts{"s1_channels_last_conv | conv1,conv2,relu,relu_1 | relu_1 | conv1 = "
                   "self.conv1(x.contiguous(memory_format=torch.channels_last)); relu = torch.relu(conv1); conv2 = "
                   "self.conv2(relu); relu_1 = (torch.relu(conv2)).contiguous()"}));
  EXPECT_EQ(found[0].description, "2 convolutions from 'conv1' to 'relu_1' in channels_last memory format");
}

TEST(ChannelsLastRewrite, NotForASingleConvolution) {
  auto g = captured_graph("conv_stack");
  node_named(g, "relu").users.push_back("output");  // the stack's value escapes after the first convolution
  EXPECT_TRUE(rewrites::find_channels_last(g, {}).empty());
}

}  // namespace
