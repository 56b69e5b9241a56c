// ElementwiseProgram's index math for broadcast operands: a per-channel
// operand read at the channel index a kernel already holds
// (ProgramOptions::channel_index), and the operands that still need their
// index computed from i.
#include "engine/propose/recipes/kernels/elementwise_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_builder.h"

namespace {

using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::OpGraph;
using hiera::testing::GraphBuilder;
using hiera::testing::node_arg;
using ::testing::ElementsAre;

// conv [2, 8, 5, 6] * scale [8, 1, 1] + plane [8, 5, 1]
OpGraph scaled() {
  GraphBuilder b;
  b.input("conv", {2, 8, 5, 6});
  b.parameter("scale", "scale", {8, 1, 1});
  b.parameter("plane", "plane", {8, 5, 1});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("conv"), node_arg("scale")}, {}, {2, 8, 5, 6});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("plane")}, {}, {2, 8, 5, 6});
  return b.build({"add"});
}

std::vector<std::string> body(const std::string& channel_index) {
  const OpGraph graph = scaled();
  ProgramOptions options;
  options.shape = {2, 8, 5, 6};
  options.shape_python = "_s";
  options.channel_index = channel_index;
  ElementwiseProgram program(graph, {"mul", "add"}, options);
  program.bind("conv", "v");
  program.value("add");
  return program.body();
}

TEST(ElementwiseProgram, PerChannelOperandsReadAtTheKnownChannel) {
  // scale varies along dimension 1 alone: read at c. plane also varies along dimension 2: index math.
  EXPECT_THAT(body("c"), ElementsAre("const float a0_v = static_cast<float>(a0[c]);", "const float t0 = v * a0_v;",
                                     "const float a1_v = static_cast<float>(a1[hiera_mod(hiera_div(i, a1_inner0_div), "
                                     "a1_size0, a1_size0_div)]);",
                                     "const float t1 = t0 + a1_v;"));
}

TEST(ElementwiseProgram, WithoutAChannelIndexEveryBroadcastIsComputed) {
  EXPECT_THAT(body(""), ElementsAre("const float a0_v = static_cast<float>(a0[hiera_mod(hiera_div(i, a0_inner0_div), "
                                    "a0_size0, a0_size0_div)]);",
                                    "const float t0 = v * a0_v;",
                                    "const float a1_v = static_cast<float>(a1[hiera_mod(hiera_div(i, a1_inner0_div), "
                                    "a1_size0, a1_size0_div)]);",
                                    "const float t1 = t0 + a1_v;"));
}

}  // namespace
