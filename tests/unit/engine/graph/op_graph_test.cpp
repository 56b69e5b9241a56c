// The op graph of the capture job: real captured graphs parse (and survive a
// round trip through to_json), users are computed when absent, and every
// malformed field is refused with its JSON path.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "engine/graph/op_graph.h"
#include "tests/unit/engine/propose/recipes/graph_fixtures.h"
#include "thrown_message.h"

namespace {

using hiera::engine::graph::Arg;
using hiera::engine::graph::OpGraph;
using hiera::engine::graph::parse_op_graph;
using hiera::engine::graph::to_json;
using hiera::testing::graph_json;
using hiera::testing::thrown_message;
using nlohmann::json;

std::string parse_error(const json& value) {
  return thrown_message<std::runtime_error>([&] { parse_op_graph(value); }, "(parsed)");
}

TEST(OpGraph, ParsesACapturedAttentionGraph) {
  const OpGraph g = parse_op_graph(graph_json("attention"));
  EXPECT_EQ(g.method, "fx");
  EXPECT_EQ(g.fallback, "");
  EXPECT_EQ(g.class_name, "Model");
  EXPECT_EQ(g.forward_params, (std::vector<std::string>{"q", "k", "v", "mask"}));
  EXPECT_TRUE(g.training);
  EXPECT_TRUE(g.captured());
  ASSERT_EQ(g.nodes.size(), 14u);
  EXPECT_EQ(g.nodes.back().op, "output");

  const auto* t = g.find("transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->op, "call_method");
  EXPECT_EQ(t->target, "transpose");
  EXPECT_EQ(t->kind, "transpose");
  EXPECT_EQ(t->code, "k.transpose(-2, -1)");
  ASSERT_EQ(t->args.size(), 3u);
  EXPECT_EQ(t->args[0].kind, Arg::Kind::Node);
  EXPECT_EQ(g.producer(t->args[0]), g.find("k"));
  EXPECT_EQ(t->args[1].kind, Arg::Kind::Number);
  EXPECT_TRUE(t->args[1].is_integer);
  EXPECT_EQ(t->args[1].number, -2);
  ASSERT_TRUE(t->meta.has_value());
  EXPECT_EQ(t->meta->shape, (std::vector<std::int64_t>{2, 4, 8, 16}));
  EXPECT_EQ(t->meta->stride, (std::vector<std::int64_t>{512, 128, 1, 8}));
  EXPECT_EQ(t->meta->dtype, "float32");
  EXPECT_EQ(t->meta->elements(), 1024);
  EXPECT_EQ(t->users, (std::vector<std::string>{"matmul"}));

  const auto* size = g.find("size");
  ASSERT_NE(size, nullptr);
  EXPECT_FALSE(size->meta.has_value());  // a Python int
  const auto* softmax = g.find("softmax");
  ASSERT_TRUE(softmax->kwargs.count("dim"));
  EXPECT_EQ(softmax->kwargs.at("dim").number, -1);
  ASSERT_TRUE(softmax->normalized.has_value());
  EXPECT_EQ(softmax->normalized->at("input").node, "add");
  EXPECT_GT(g.find("matmul")->flops, 0.0);
  EXPECT_EQ(g.total_flops, [&] {
    double sum = 0;
    for (const auto& n : g.nodes) sum += n.flops;
    return sum;
  }());
  EXPECT_EQ(g.find("nothing"), nullptr);
}

TEST(OpGraph, ParsesSubmodulesParametersAndListArguments) {
  const OpGraph g = parse_op_graph(graph_json("batched_loop"));
  EXPECT_EQ(g.parameters.at("weight").shape, (std::vector<std::int64_t>{4, 16, 12}));
  EXPECT_EQ(g.parameters.at("bias").dtype, "float32");
  const auto* stack = g.find("stack");
  ASSERT_EQ(stack->args.size(), 1u);
  ASSERT_EQ(stack->args[0].kind, Arg::Kind::List);
  ASSERT_EQ(stack->args[0].items.size(), 4u);
  EXPECT_EQ(stack->args[0].items[3].node, "add_3");

  const OpGraph conv = parse_op_graph(graph_json("conv_stack"));
  EXPECT_EQ(conv.submodules.at("conv1").type, "Conv2d");
  EXPECT_EQ(conv.submodules.at("conv1").attrs.at("out_channels").get<int>(), 8);
  EXPECT_EQ(conv.submodules.at("head").attrs.at("bias").get<bool>(), true);
}

TEST(OpGraph, EveryFixtureSurvivesARoundTrip) {
  for (const char* name : {"activations", "attention", "batched_loop", "casts", "conv_stack", "data_dependent",
                           "identity_ops", "linear_bias", "mlp_epilogue", "reductions", "structured_matmul"}) {
    SCOPED_TRACE(name);
    const OpGraph g = parse_op_graph(graph_json(name));
    const json once = to_json(g);
    EXPECT_EQ(to_json(parse_op_graph(once)), once);
    EXPECT_EQ(once["nodes"].size(), graph_json(name)["nodes"].size());
  }
}

TEST(OpGraph, AFallbackGraphHasNoNodesAndSaysWhy) {
  const OpGraph g = parse_op_graph(graph_json("data_dependent"));
  EXPECT_FALSE(g.captured());
  EXPECT_EQ(g.method, "");
  EXPECT_EQ(g.fallback.rfind("forward has data-dependent control flow: ", 0), 0u) << g.fallback;
  EXPECT_EQ(g.forward_params, (std::vector<std::string>{"x"}));
}

TEST(OpGraph, AcceptsTheWholeJobResult) {
  const OpGraph g = parse_op_graph(json{{"graph", graph_json("casts")}});
  EXPECT_EQ(g.nodes.size(), 8u);
  const OpGraph none = parse_op_graph(json{{"graph", nullptr}});
  EXPECT_FALSE(none.captured());
  EXPECT_EQ(none.fallback, "the capture returned no graph (a CUDA task)");
  EXPECT_EQ(parse_error(json{{"graph", json{{"nodes", 3}}}}), "graph.nodes: expected an array, got an integer");
}

TEST(OpGraph, ComputesUsersWhenTheyAreAbsent) {
  json value = graph_json("attention");
  for (auto& node : value["nodes"]) node.erase("users");
  const OpGraph g = parse_op_graph(value);
  const OpGraph given = parse_op_graph(graph_json("attention"));
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(g.nodes[i].users, given.nodes[i].users) << g.nodes[i].name;
  }
  EXPECT_EQ(g.find("q")->users, (std::vector<std::string>{"matmul", "size"}));
}

TEST(OpGraph, DecodesEveryArgumentForm) {
  json value = graph_json("casts");
  value["nodes"][1]["args"] = json::array({json{{"node", "x"}}, 2, 2.5, true, nullptr, json{{"str", "tanh"}},
                                           json{{"list", {1, json{{"node", "x"}}}}}, json{{"slice", {1, nullptr, -1}}},
                                           json{{"dtype", "float16"}}, json{{"ellipsis", true}},
                                           json{{"float", "-inf"}}, json{{"other", "torch.channels_last"}}});
  const OpGraph g = parse_op_graph(value);
  const auto& args = g.nodes[1].args;
  ASSERT_EQ(args.size(), 12u);
  EXPECT_EQ(args[1].kind, Arg::Kind::Number);
  EXPECT_TRUE(args[1].is_integer);
  EXPECT_EQ(args[2].number, 2.5);
  EXPECT_FALSE(args[2].is_integer);
  EXPECT_EQ(args[3].kind, Arg::Kind::Bool);
  EXPECT_TRUE(args[3].flag);
  EXPECT_EQ(args[4].kind, Arg::Kind::None);
  EXPECT_EQ(args[5].kind, Arg::Kind::String);
  EXPECT_EQ(args[5].text, "tanh");
  EXPECT_EQ(args[6].kind, Arg::Kind::List);
  EXPECT_EQ(args[6].items[1].node, "x");
  EXPECT_EQ(args[7].kind, Arg::Kind::Slice);
  EXPECT_EQ(args[7].items[1].kind, Arg::Kind::None);
  EXPECT_EQ(args[7].items[2].number, -1);
  EXPECT_EQ(args[8].kind, Arg::Kind::Dtype);
  EXPECT_EQ(args[8].text, "float16");
  EXPECT_EQ(args[9].kind, Arg::Kind::Ellipsis);
  EXPECT_TRUE(std::isinf(args[10].number) && args[10].number < 0);
  EXPECT_EQ(args[11].kind, Arg::Kind::Other);
  EXPECT_EQ(args[11].text, "torch.channels_last");
  // And back: to_json writes the same forms.
  EXPECT_EQ(to_json(g)["nodes"][1]["args"], value["nodes"][1]["args"]);
}

TEST(OpGraph, NamesTheFirstMalformedFieldByItsPath) {
  const auto with = [](const std::string& pointer, const json& replacement) {
    json value = graph_json("attention");
    value[json::json_pointer(pointer)] = replacement;
    return parse_error(value);
  };
  EXPECT_EQ(with("/nodes/5/args/1", json{{"nodes", "k"}}),
            "nodes[5].args[1]: unknown argument form 'nodes' (expected one of node, str, list, slice, dtype, "
            "ellipsis, float, other)");
  EXPECT_EQ(with("/nodes/5/args/1", json::array({1, 2})),
            "nodes[5].args[1]: expected an argument (a number, a boolean, null, or an object with one of node, str, "
            "list, slice, dtype, ellipsis, float, other), got an array");
  EXPECT_EQ(with("/nodes/5/args/1", json{{"node", "later"}}),
            "nodes[5].args[1]: refers to node 'later', which is not defined before this node");
  EXPECT_EQ(with("/nodes/5/args/1", json{{"node", "matmul_1"}}),
            "nodes[5].args[1]: refers to node 'matmul_1', which is not defined before this node");
  EXPECT_EQ(with("/nodes/5/kwargs", json{{"alpha", json{{"list", {json{{"node", "zz"}}}}}}}),
            "nodes[5].kwargs.alpha.list[0]: refers to node 'zz', which is not defined before this node");
  EXPECT_EQ(with("/nodes/5/args/1", json{{"float", "huge"}}),
            "nodes[5].args[1].float: expected \"inf\", \"-inf\" or \"nan\", got \"huge\"");
  EXPECT_EQ(with("/nodes/5/args/1", json{{"slice", {1, 2}}}),
            "nodes[5].args[1].slice: expected [start, stop, step], got 2 items");
  EXPECT_EQ(with("/nodes/2/meta/shape/1", "4"), "nodes[2].meta.shape[1]: expected an integer, got a string");
  EXPECT_EQ(with("/nodes/2/meta/stride", json::array({1})),
            "nodes[2].meta.stride: has 1 entries for a shape of 4 dimensions");
  EXPECT_EQ(with("/nodes/2/meta/dtype", 7), "nodes[2].meta.dtype: expected a string, got an integer");
  EXPECT_EQ(with("/nodes/3/name", "q"), "nodes[3].name: duplicate node name 'q'");
  EXPECT_EQ(with("/nodes/3/op", "call_everything"),
            "nodes[3].op: unknown op 'call_everything' (expected placeholder, call_function, call_method, "
            "call_module, get_attr or output)");
  EXPECT_EQ(with("/nodes/4/users/0", "ghost"), "nodes[4].users[0]: unknown node 'ghost'");
  EXPECT_EQ(with("/training", "yes"), "training: expected a boolean, got a string");
  EXPECT_EQ(with("/forward_params/0", 1), "forward_params[0]: expected a string, got an integer");
  EXPECT_EQ(with("/parameters", json{{"w", json{{"dtype", "float32"}}}}), "parameters.w.shape: missing");
  EXPECT_EQ(with("/buffers", json{{"b", json{{"shape", {2}}, {"dtype", "float32"}, {"persistent", 1}}}}),
            "buffers.b.persistent: expected a boolean, got an integer");
  EXPECT_EQ(with("/submodules", json{{"conv", json{{"attrs", json::object()}}}}), "submodules.conv.type: missing");
  EXPECT_EQ(with("/total_flops", "many"), "total_flops: expected a number, got a string");
  EXPECT_EQ(with("/nodes/5/time_ms", "slow"), "nodes[5].time_ms: expected a number of milliseconds, 0 or more, got a string");
  EXPECT_EQ(with("/nodes/5/time_ms", -0.5), "nodes[5].time_ms: expected a number of milliseconds, 0 or more, got a number");

  json no_name = graph_json("attention");
  no_name["nodes"][0].erase("name");
  EXPECT_EQ(parse_error(no_name), "nodes[0].name: missing");
  json early_output = graph_json("attention");
  early_output["nodes"][12]["op"] = "output";
  EXPECT_EQ(parse_error(early_output), "nodes[12].op: the output node must be the last node");
  json no_output = graph_json("attention");
  no_output["nodes"].erase(13);
  EXPECT_EQ(parse_error(no_output), "nodes[12]: the last node must be the output node");
  EXPECT_EQ(parse_error(json::array()), "graph: expected an object, got an array");
}

TEST(OpGraph, ANodesMeasuredTimeIsReadAndWrittenBack) {
  json value = graph_json("attention");
  value["nodes"][5]["time_ms"] = 0.25;
  const auto g = parse_op_graph(value);
  EXPECT_EQ(g.nodes[5].time_ms, 0.25);
  EXPECT_FALSE(g.nodes[4].time_ms);  // not measured: unset, not zero
  EXPECT_EQ(to_json(g)["nodes"][5]["time_ms"], 0.25);
  EXPECT_FALSE(to_json(g)["nodes"][4].contains("time_ms"));
}

TEST(OpGraph, IgnoresUnknownFields) {
  json value = graph_json("casts");
  value["future_field"] = {1, 2};
  value["nodes"][2]["annotation"] = "new";
  EXPECT_EQ(parse_op_graph(value).nodes.size(), 8u);
}

}  // namespace
