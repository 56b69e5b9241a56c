// The generated kernels and their launch statements, run: every rewrite kind
// on small graphs, compiled for the CPU (cpu_emulation/cuda_emulation.h) and
// executed by cpu_emulation/run_replacements.py exactly as the emitted forward
// would run them, then compared with torch's own result. No GPU needed; skipped
// (saying why) without a python3 that imports torch or a host C++ compiler.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/propose/recipes/kernels/kernel_rewrites.h"
#include "engine/propose/recipes/module_emitter.h"
#include "graph_builder.h"
#include "kernel_test_support.h"
#include "subprocess.h"
#include "temp_directory.h"
#include "build_paths.h"

namespace {

using namespace std::chrono_literals;
using namespace hiera::engine::propose::recipes;
using namespace hiera::engine::propose::recipes::kernels;
using hiera::engine::graph::Arg;
using hiera::engine::graph::OpGraph;
using hiera::testing::bool_arg;
using hiera::testing::GraphBuilder;
using hiera::testing::int_arg;
using hiera::testing::list_arg;
using hiera::testing::node_arg;
using hiera::testing::number_arg;
using hiera::testing::slice_arg;
using hiera::testing::string_arg;
using nlohmann::json;
using Shape = std::vector<std::int64_t>;

std::string torch_python() {
  const auto found =
      hiera::testing::run_process({::hiera::testing::source_dir() + "/scripts/find-torch-python"}, "", 60s);
  if (found.exit_code != 0) return "";
  std::string path = found.out;
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return path;
}

struct Case {
  std::string name;
  OpGraph graph;
  std::map<std::string, std::string> reference;  // output node -> torch expression over the inputs
  std::vector<std::string> recipes;              // what the rewrites must have produced
  std::vector<std::string> setup = {};
  std::vector<std::string> misaligned = {};
  bool gpu_only = false;       // too big to emulate: run and timed by --device cuda only
  double bound_bytes = 0.0;    // minimum DRAM traffic, for the timing's share of the bound
  // Variants of one kernel produce the same node: run the first offered (false) or the last (true).
  bool last_variant = false;
  // Or the one at this position among them, when last_variant is false.
  std::size_t nth_variant = 0;
  // rtol = atol for the comparison with torch; 0: 1e-4 and 1e-5 (float32 kernels).
  double tolerance = 0.0;
};

json case_json(const Case& c) {
  KernelRewriteOptions options;
  options.knowledge = &hiera::testing::source_knowledge();
  const auto result = analyze_kernel_rewrites(c.graph, options);
  std::vector<std::string> recipes;
  json replacements = json::array();
  std::map<std::string, std::size_t> variant_of;  // produced node -> its index in `replacements`
  std::map<std::string, std::size_t> variants;    // produced node -> variants seen so far
  for (const auto& r : result.replacements) {
    recipes.push_back(r.recipe);
    const auto seen = variant_of.find(r.produces);
    const std::size_t position = variants[r.produces]++;
    if (seen != variant_of.end() && !c.last_variant && position != c.nth_variant) continue;
    json kernels = json::object();
    for (const auto& k : r.kernels) kernels[k.name] = k.source;
    json replacement = {{"statements", r.statements}, {"kernels", kernels}, {"definitions", r.definitions}};
    if (seen != variant_of.end()) {
      replacements[seen->second] = std::move(replacement);
    } else {
      variant_of[r.produces] = replacements.size();
      replacements.push_back(std::move(replacement));
    }
  }
  EXPECT_EQ(recipes, c.recipes) << c.name;
  json inputs = json::object(), module_tensors = json::object();
  for (const auto& n : c.graph.nodes)
    if ((n.op == "placeholder" || n.op == "get_attr") && n.meta) inputs[n.name] = n.meta->shape;
  for (const auto& [path, info] : c.graph.parameters) module_tensors[path] = info.shape;
  for (const auto& [path, info] : c.graph.buffers) module_tensors[path] = info.shape;
  return {{"name", c.name},         {"inputs", inputs},           {"module_tensors", module_tensors},
          {"setup", c.setup},       {"misaligned", c.misaligned}, {"reference", c.reference},
          {"gpu_only", c.gpu_only}, {"bound_bytes", c.bound_bytes}, {"replacements", replacements},
          {"tolerance", c.tolerance}};
}

OpGraph bias_leaky_scale(Shape shape = {3, 5, 7, 7}) {
  GraphBuilder b;
  b.input("conv", shape);
  b.parameter("bias", "bias", {shape[1], 1, 1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("conv"), node_arg("bias")}, {}, shape);
  b.call("leaky", "call_function", "torch.nn.functional.leaky_relu", "leaky_relu", {node_arg("add")},
         {{"negative_slope", number_arg(0.2)}}, shape);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("leaky"), number_arg(2.0)}, {}, shape);
  return b.build({"mul"});
}

OpGraph broadcasts() {
  GraphBuilder b;
  b.input("x", {3, 5, 6, 7}).input("row", {7}).input("plane", {3, 1, 6, 7}).input("s", {1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("x"), node_arg("row")}, {}, {3, 5, 6, 7});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("add"), node_arg("plane")}, {}, {3, 5, 6, 7});
  b.call("sub", "call_function", "operator.sub", "sub", {node_arg("mul"), node_arg("s")}, {}, {3, 5, 6, 7});
  return b.build({"sub"});
}

OpGraph batch_norm_relu() {
  GraphBuilder b;
  b.input("x", {4, 8, 5, 5});
  b.module("bn", "BatchNorm2d", {{"eps", 1e-5}, {"track_running_stats", true}}, {{"weight", {8}}, {"bias", {8}}},
           {{"running_mean", {8}}, {"running_var", {8}}});
  b.call("bn", "call_module", "bn", "batch_norm", {node_arg("x")}, {}, {4, 8, 5, 5}, "float32", "self.bn(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("bn")}, {}, {4, 8, 5, 5});
  return b.build({"relu"});
}

OpGraph activations() {
  GraphBuilder b;
  b.input("x", {5, 77}).input("r", {5, 77});
  b.call("gt", "call_function", "operator.gt", "unknown", {node_arg("x"), number_arg(0.0)}, {}, {5, 77}, "bool");
  b.call("where", "call_function", "torch.where", "where", {node_arg("gt"), node_arg("x"), number_arg(0.5)}, {}, {5, 77});
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("where")}, {}, {5, 77});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("where"), node_arg("sigmoid")}, {}, {5, 77});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("r")}, {}, {5, 77});
  b.call("mish", "call_function", "torch.nn.functional.mish", "mish", {node_arg("add")}, {}, {5, 77});
  b.call("gelu", "call_function", "torch.nn.functional.gelu", "gelu", {node_arg("mish")},
         {{"approximate", string_arg("tanh")}}, {5, 77});
  b.call("hs", "call_function", "torch.nn.functional.hardswish", "hardswish", {node_arg("gelu")}, {}, {5, 77});
  b.call("div", "call_function", "operator.truediv", "div", {node_arg("hs"), number_arg(3.0)}, {}, {5, 77});
  return b.build({"div"});
}

OpGraph softmax_mask(Shape shape = {2, 3, 5, 40}) {
  GraphBuilder b;
  b.input("x", shape).input("mask", {shape[2], shape[3]}).input("v", shape);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), number_arg(0.125)}, {}, shape);
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("mask")}, {}, shape);
  b.call("softmax", "call_function", "torch.softmax", "softmax", {node_arg("add")}, {{"dim", int_arg(-1)}}, shape);
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("softmax"), node_arg("v")}, {}, shape);
  return b.build({"mul_1"});
}

// RMSNorm over rows of `hidden`: weight * (x * rsqrt(mean(x^2) + eps)).
OpGraph rms_norm(std::int64_t rows, std::int64_t hidden) {
  GraphBuilder b;
  b.input("x", {rows, hidden});
  b.parameter("weight", "weight", {hidden});
  b.call("pow_1", "call_method", "pow", "pow", {node_arg("x"), number_arg(2.0)}, {}, {rows, hidden});
  b.call("mean", "call_method", "mean", "mean", {node_arg("pow_1"), int_arg(-1)}, {{"keepdim", bool_arg(true)}},
         {rows, 1});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mean"), number_arg(1e-6)}, {}, {rows, 1});
  b.call("rsqrt", "call_function", "torch.rsqrt", "rsqrt", {node_arg("add")}, {}, {rows, 1});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("x"), node_arg("rsqrt")}, {}, {rows, hidden});
  b.call("mul_1", "call_function", "operator.mul", "mul", {node_arg("weight"), node_arg("mul")}, {}, {rows, hidden});
  return b.build({"mul_1"});
}

// LayerNorm(x + r) over rows of `hidden`: fusion/14's pattern.
OpGraph residual_layer_norm(std::int64_t tokens, std::int64_t hidden) {
  GraphBuilder b;
  b.input("x", {tokens, hidden}).input("r", {tokens, hidden});
  b.module("ln", "LayerNorm", {{"normalized_shape", {hidden}}, {"eps", 1e-5}}, {{"weight", {hidden}}, {"bias", {hidden}}});
  b.call("add", "call_function", "operator.add", "add", {node_arg("x"), node_arg("r")}, {}, {tokens, hidden});
  b.call("ln", "call_module", "ln", "layer_norm", {node_arg("add")}, {}, {tokens, hidden}, "float32", "self.ln(add)");
  return b.build({"ln"});
}

OpGraph reductions() {
  GraphBuilder b;
  b.input("h", {37, 70}).input("x", {33, 100}).input("conv", {5, 7, 40, 40}).input("w", {3, 2500});
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("h")}, {}, {37, 70});
  b.call("sum_1", "call_method", "sum", "sum", {node_arg("sigmoid")}, {{"dim", int_arg(-1)}, {"keepdim", bool_arg(true)}},
         {37, 1});
  b.call("half_sum", "call_function", "operator.mul", "mul", {node_arg("sum_1"), number_arg(0.5)}, {}, {37, 1});
  b.call("amax", "call_function", "torch.amax", "amax", {node_arg("x")}, {{"dim", int_arg(1)}}, {33});
  b.call("lse", "call_function", "torch.logsumexp", "logsumexp", {node_arg("x"), int_arg(-1)},
         {{"keepdim", bool_arg(true)}}, {33, 1});
  b.call("pooled", "call_method", "mean", "mean", {node_arg("conv"), list_arg({int_arg(2), int_arg(3)})}, {}, {5, 7});
  b.call("log_probs", "call_function", "torch.log_softmax", "log_softmax", {node_arg("w"), int_arg(1)}, {}, {3, 2500});
  return b.build({"half_sum", "amax", "lse", "pooled", "log_probs"});
}

// logsumexp over rows long enough for several 8-element steps a thread, 5 rows in blocks of 4.
OpGraph long_row_logsumexp() {
  GraphBuilder b;
  b.input("x", {5, 3000});
  b.call("lse", "call_function", "torch.logsumexp", "logsumexp", {node_arg("x"), int_arg(-1)}, {}, {5});
  return b.build({"lse"});
}

// Over the channels of [N, C, H, W]: strided columns.
OpGraph strided_reductions() {
  GraphBuilder b;
  b.input("x", {3, 6, 5, 7}).input("y", {2, 9, 4, 10});
  b.call("sum_1", "call_function", "torch.sum", "sum", {node_arg("x"), int_arg(1)}, {{"keepdim", bool_arg(true)}},
         {3, 1, 5, 7});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("sum_1")}, {}, {3, 1, 5, 7});
  b.call("max_1", "call_function", "torch.max", "max", {node_arg("x")}, {{"dim", int_arg(1)}}, {}, "none");
  b.call("getitem", "call_function", "operator.getitem", "getitem", {node_arg("max_1"), int_arg(0)}, {}, {3, 5, 7});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("getitem")}, {}, {3, 5, 7});
  b.call("lse", "call_function", "torch.logsumexp", "logsumexp", {node_arg("y"), int_arg(1)},
         {{"keepdim", bool_arg(true)}}, {2, 1, 4, 10});
  b.call("softmax", "call_function", "torch.softmax", "softmax", {node_arg("y"), int_arg(1)}, {}, {2, 9, 4, 10});
  return b.build({"relu", "tanh", "lse", "softmax"});
}

OpGraph norms() {
  GraphBuilder b;
  b.input("x", {3, 5, 96}).input("r", {3, 5, 96}).input("c", {2, 8, 40, 40}).input("d", {3, 16, 9, 9});
  b.input("e", {2, 6, 11, 13});
  b.module("ln", "LayerNorm", {{"normalized_shape", {96}}, {"eps", 1e-5}}, {{"weight", {96}}, {"bias", {96}}});
  b.module("gn", "GroupNorm", {{"num_groups", 2}, {"num_channels", 8}, {"eps", 1e-5}}, {{"weight", {8}}, {"bias", {8}}});
  b.module("gn4", "GroupNorm", {{"num_groups", 4}, {"num_channels", 16}, {"eps", 1e-5}}, {{"weight", {16}}, {"bias", {16}}});
  b.call("add", "call_function", "operator.add", "add", {node_arg("x"), node_arg("r")}, {}, {3, 5, 96});
  b.call("ln", "call_module", "ln", "layer_norm", {node_arg("add")}, {}, {3, 5, 96}, "float32", "self.ln(add)");
  b.call("gelu", "call_function", "torch.nn.functional.gelu", "gelu", {node_arg("ln")}, {}, {3, 5, 96});
  b.call("res", "call_function", "operator.add", "add", {node_arg("gelu"), node_arg("add")}, {}, {3, 5, 96});
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("c")}, {}, {2, 8, 40, 40}, "float32", "self.gn(c)");
  b.call("swish", "call_function", "torch.nn.functional.silu", "silu", {node_arg("gn")}, {}, {2, 8, 40, 40});
  b.call("gn4", "call_module", "gn4", "group_norm", {node_arg("d")}, {}, {3, 16, 9, 9}, "float32", "self.gn4(d)");
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("gn4")}, {}, {3, 16, 9, 9});
  b.call("inorm", "call_function", "torch.nn.functional.instance_norm", "instance_norm", {node_arg("e")},
         {{"eps", number_arg(1e-3)}}, {2, 6, 11, 13});
  return b.build({"res", "swish", "tanh", "inorm"});
}

Arg slices(std::vector<std::pair<std::optional<long long>, std::optional<long long>>> bounds) {
  std::vector<Arg> items;
  for (const auto& [a, b] : bounds) items.push_back(slice_arg(a, b));
  return list_arg(items);
}

// The 7-point Laplacian on a grid (70 x 21 x 45: two z chunks of 34 planes) and a batched 2D Jacobi step.
OpGraph slice_stencils(Shape grid = {70, 21, 45}, Shape fields = {3, 30, 70}) {
  const std::optional<long long> none;
  GraphBuilder b;
  b.input("x", grid).input("u", fields);
  const Shape out = {grid[0] - 2, grid[1] - 2, grid[2] - 2};
  const std::vector<std::tuple<const char*, Arg, const char*>> taps = {
      {"g0", slices({{2, none}, {1, -1}, {1, -1}}), "x[2:, 1:-1, 1:-1]"},
      {"g1", slices({{none, -2}, {1, -1}, {1, -1}}), "x[:-2, 1:-1, 1:-1]"},
      {"g2", slices({{1, -1}, {2, none}, {1, -1}}), "x[1:-1, 2:, 1:-1]"},
      {"g3", slices({{1, -1}, {none, -2}, {1, -1}}), "x[1:-1, :-2, 1:-1]"},
      {"g4", slices({{1, -1}, {1, -1}, {2, none}}), "x[1:-1, 1:-1, 2:]"},
      {"g5", slices({{1, -1}, {1, -1}, {none, -2}}), "x[1:-1, 1:-1, :-2]"},
      {"g6", slices({{1, -1}, {1, -1}, {1, -1}}), "x[1:-1, 1:-1, 1:-1]"}};
  for (const auto& [name, index, code] : taps)
    b.call(name, "call_function", "operator.getitem", "getitem", {node_arg("x"), index}, {}, out, "float32", code);
  b.call("a1", "call_function", "operator.add", "add", {node_arg("g0"), node_arg("g1")}, {}, out);
  b.call("a2", "call_function", "operator.add", "add", {node_arg("a1"), node_arg("g2")}, {}, out);
  b.call("a3", "call_function", "operator.add", "add", {node_arg("a2"), node_arg("g3")}, {}, out);
  b.call("a4", "call_function", "operator.add", "add", {node_arg("a3"), node_arg("g4")}, {}, out);
  b.call("a5", "call_function", "operator.add", "add", {node_arg("a4"), node_arg("g5")}, {}, out);
  b.call("m", "call_function", "operator.mul", "mul", {int_arg(6), node_arg("g6")}, {}, out);
  b.call("lap", "call_function", "operator.sub", "sub", {node_arg("a5"), node_arg("m")}, {}, out);
  const Shape out2 = {fields[0], fields[1] - 2, fields[2] - 2};
  b.call("n", "call_function", "operator.getitem", "getitem", {node_arg("u"), slices({{none, none}, {none, -2}, {1, -1}})},
         {}, out2, "float32", "u[:, :-2, 1:-1]");
  b.call("s", "call_function", "operator.getitem", "getitem", {node_arg("u"), slices({{none, none}, {2, none}, {1, -1}})},
         {}, out2, "float32", "u[:, 2:, 1:-1]");
  b.call("w", "call_function", "operator.getitem", "getitem", {node_arg("u"), slices({{none, none}, {1, -1}, {none, -2}})},
         {}, out2, "float32", "u[:, 1:-1, :-2]");
  b.call("e", "call_function", "operator.getitem", "getitem", {node_arg("u"), slices({{none, none}, {1, -1}, {2, none}})},
         {}, out2, "float32", "u[:, 1:-1, 2:]");
  b.call("b1", "call_function", "operator.add", "add", {node_arg("n"), node_arg("s")}, {}, out2);
  b.call("b2", "call_function", "operator.add", "add", {node_arg("b1"), node_arg("w")}, {}, out2);
  b.call("b3", "call_function", "operator.add", "add", {node_arg("b2"), node_arg("e")}, {}, out2);
  b.call("jacobi", "call_function", "operator.mul", "mul", {node_arg("b3"), number_arg(0.25)}, {}, out2);
  return b.build({"lap", "jacobi"});
}

// A diagonal difference over a batch of grids: two taps, and an odd output width (263), so the vec4
// kernel stores its last float4 of a row one float at a time.
OpGraph diagonal_difference(Shape grid = {2, 9, 6, 264}) {
  const std::optional<long long> none;
  GraphBuilder b;
  b.input("x", grid);
  const Shape out = {grid[0], grid[1] - 1, grid[2] - 1, grid[3] - 1};
  b.call("hi", "call_function", "operator.getitem", "getitem",
         {node_arg("x"), slices({{none, none}, {1, none}, {1, none}, {1, none}})}, {}, out, "float32", "x[:, 1:, 1:, 1:]");
  b.call("lo", "call_function", "operator.getitem", "getitem",
         {node_arg("x"), slices({{none, none}, {none, -1}, {none, -1}, {none, -1}})}, {}, out, "float32", "x[:, :-1, :-1, :-1]");
  b.call("diff", "call_function", "operator.sub", "sub", {node_arg("hi"), node_arg("lo")}, {}, out);
  return b.build({"diff"});
}

OpGraph conv_stencils(Shape x = {2, 1, 20, 18, 35}) {
  GraphBuilder b;
  b.input("x", x).input("y", {2, 3, 20, 40});
  b.buffer("stencil", "stencil", {1, 1, 3, 3, 3}, false);
  b.buffer("blur", "blur", {3, 1, 5, 5}, false);
  b.buffer("shift", "shift", {3}, false);
  b.call("conv3d", "call_function", "torch.conv3d", "conv3d", {node_arg("x"), node_arg("stencil")},
         {{"padding", int_arg(1)}}, x);
  b.call("conv2d", "call_function", "torch.nn.functional.conv2d", "conv2d",
         {node_arg("y"), node_arg("blur"), node_arg("shift")}, {{"padding", int_arg(2)}, {"groups", int_arg(3)}},
         {2, 3, 20, 40});
  return b.build({"conv3d", "conv2d"});
}

// Depthwise convs with learned weights (depthwise_conv2d.cu): an nn.Conv2d 7x7 with a bias on planes
// a block covers whole (13 x 18: 5 threads of 4 in x, the last with two outputs), an F.conv2d 3x3 of
// stride 2 with a parameter and no bias, and an nn.Conv2d 5x5 with padding_mode reflect on 75 x 70
// planes (two tiles of 64 in each direction).
OpGraph depthwise_convs() {
  GraphBuilder b;
  b.input("x", {2, 6, 13, 18}).input("y", {2, 5, 17, 15}).input("z", {1, 2, 75, 70});
  b.module("dw", "Conv2d",
           {{"in_channels", 6}, {"out_channels", 6}, {"groups", 6}, {"bias", true}, {"padding", {3, 3}},
            {"padding_mode", "zeros"}},
           {{"weight", {6, 1, 7, 7}}, {"bias", {6}}});
  b.parameter("w", "w", {5, 1, 3, 3});
  b.module("dw5", "Conv2d",
           {{"in_channels", 2}, {"out_channels", 2}, {"groups", 2}, {"bias", true}, {"padding", {2, 2}},
            {"padding_mode", "reflect"}},
           {{"weight", {2, 1, 5, 5}}, {"bias", {2}}});
  b.call("dw", "call_module", "dw", "conv2d", {node_arg("x")}, {}, {2, 6, 13, 18}, "float32", "self.dw(x)");
  b.call("strided", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("y"), node_arg("w")},
         {{"stride", int_arg(2)}, {"padding", int_arg(1)}, {"groups", int_arg(5)}}, {2, 5, 9, 8});
  b.call("dw5", "call_module", "dw5", "conv2d", {node_arg("z")}, {}, {1, 2, 75, 70}, "float32", "self.dw5(z)");
  return b.build({"dw", "strided", "dw5"});
}

// A MobileNetV2 depthwise stage: nn.Conv2d 3x3 (groups = 12, no bias) -> BatchNorm2d (eval) -> F.relu6;
// the batch norm and the clamp run in the depthwise kernel's store, the statistics read at the channel.
OpGraph depthwise_batch_norm_relu6(Shape x = {3, 12, 11, 9}) {
  const std::int64_t c = x[1];
  GraphBuilder b;
  b.input("x", x);
  b.module("dw", "Conv2d",
           {{"in_channels", c}, {"out_channels", c}, {"groups", c}, {"bias", false}, {"padding", {1, 1}},
            {"padding_mode", "zeros"}},
           {{"weight", {c, 1, 3, 3}}});
  b.module("bn", "BatchNorm2d", {{"eps", 1e-5}, {"track_running_stats", true}}, {{"weight", {c}}, {"bias", {c}}},
           {{"running_mean", {c}}, {"running_var", {c}}});
  b.call("dw", "call_module", "dw", "conv2d", {node_arg("x")}, {}, x, "float32", "self.dw(x)");
  b.call("bn", "call_module", "bn", "batch_norm", {node_arg("dw")}, {}, x, "float32", "self.bn(dw)");
  b.call("relu6", "call_function", "torch.nn.functional.relu6", "hardtanh", {node_arg("bn")}, {}, x);
  return b.build({"relu6"});
}

// Depthwise conv1d: a Conformer module's nn.Conv1d of 15 taps with BatchNorm1d and SiLU in its store, over
// a sequence longer than one block (600 outputs, blocks of 128 threads: two), and a causal F.conv1d of 4 taps.
OpGraph depthwise_conv1d() {
  GraphBuilder b;
  b.input("x", {2, 6, 600}).input("y", {3, 5, 33});
  b.module("dw", "Conv1d",
           {{"in_channels", 6}, {"out_channels", 6}, {"groups", 6}, {"bias", true}, {"padding", {7}},
            {"padding_mode", "zeros"}},
           {{"weight", {6, 1, 15}}, {"bias", {6}}});
  b.module("bn", "BatchNorm1d", {{"eps", 1e-5}, {"track_running_stats", true}}, {{"weight", {6}}, {"bias", {6}}},
           {{"running_mean", {6}}, {"running_var", {6}}});
  b.parameter("w", "w", {5, 1, 4});
  b.call("dw", "call_module", "dw", "conv1d", {node_arg("x")}, {}, {2, 6, 600}, "float32", "self.dw(x)");
  b.call("bn", "call_module", "bn", "batch_norm", {node_arg("dw")}, {}, {2, 6, 600}, "float32", "self.bn(dw)");
  b.call("silu", "call_function", "torch.nn.functional.silu", "silu", {node_arg("bn")}, {}, {2, 6, 600});
  b.call("causal", "call_function", "torch.conv1d", "conv1d", {node_arg("y"), node_arg("w")},
         {{"padding", int_arg(3)}, {"groups", int_arg(5)}}, {3, 5, 36});
  return b.build({"silu", "causal"});
}

// ConvNeXt's depthwise conv: nn.Conv2d(C, C, 7, padding=3, groups=C) with a bias.
OpGraph convnext_depthwise(Shape x) {
  const std::int64_t c = x[1];
  GraphBuilder b;
  b.input("x", x);
  b.module("dwconv", "Conv2d",
           {{"in_channels", c}, {"out_channels", c}, {"groups", c}, {"bias", true}, {"padding", {3, 3}},
            {"padding_mode", "zeros"}},
           {{"weight", {c, 1, 7, 7}}, {"bias", {c}}});
  b.call("dwconv", "call_module", "dwconv", "conv2d", {node_arg("x")}, {}, x, "float32", "self.dwconv(x)");
  return b.build({"dwconv"});
}

// F.pad with a boundary mode, then a stencil conv: the pad folds into the direct kernel's boundary.
OpGraph padded_stencils() {
  GraphBuilder b;
  b.input("x", {2, 1, 9, 10, 13}).input("y", {2, 3, 11, 17});
  b.buffer("stencil", "stencil", {1, 1, 3, 3, 3}, true);
  b.buffer("blur", "blur", {3, 1, 5, 5}, true);
  b.buffer("blur3", "blur3", {3, 1, 3, 3}, true);
  auto pad = [&](const std::string& name, const std::string& input, std::vector<long long> amounts, const std::string& mode,
                 std::vector<std::int64_t> shape) {
    std::vector<Arg> items;
    for (auto a : amounts) items.push_back(int_arg(a));
    b.call(name, "call_function", "torch.nn.functional.pad", "unknown", {node_arg(input), list_arg(items)},
           {{"mode", string_arg(mode)}}, shape);
  };
  pad("pad3", "x", {1, 1, 1, 1, 1, 1}, "circular", {2, 1, 11, 12, 15});
  b.call("conv3d", "call_function", "torch.conv3d", "conv3d", {node_arg("pad3"), node_arg("stencil")}, {}, {2, 1, 9, 10, 13});
  pad("pad_r", "y", {2, 2, 2, 2}, "reflect", {2, 3, 15, 21});
  b.call("conv2d", "call_function", "torch.conv2d", "conv2d", {node_arg("pad_r"), node_arg("blur")},
         {{"groups", int_arg(3)}}, {2, 3, 11, 17});
  pad("pad_e", "y", {1, 1, 1, 1}, "replicate", {2, 3, 13, 19});
  b.call("conv2d_e", "call_function", "torch.conv2d", "conv2d", {node_arg("pad_e"), node_arg("blur3")},
         {{"groups", int_arg(3)}}, {2, 3, 11, 17});
  return b.build({"conv3d", "conv2d", "conv2d_e"});
}

// F.pad (replicate, reflect) then stencil convs over rows of 136 floats: the vec4 kernel over the planes
// maps the borders. The capture read the buffers (kPaddedVec4Values): a one-channel 5x5 blur, and a 3x3
// sharpening kernel the same in each of 3 groups (its literals let one kernel march through every channel).
OpGraph padded_stencils_vec4() {
  GraphBuilder b;
  b.input("y", {2, 3, 11, 136}).input("g", {3, 1, 9, 136});
  b.buffer("blur", "blur", {1, 1, 5, 5}, true);
  b.buffer("sharpen", "sharpen", {3, 1, 3, 3}, true);
  b.call("pad_g", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("g"), list_arg({int_arg(2), int_arg(2), int_arg(2), int_arg(2)})}, {{"mode", string_arg("replicate")}},
         {3, 1, 13, 140});
  b.call("blurred", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("pad_g"), node_arg("blur")}, {},
         {3, 1, 9, 136});
  b.call("pad_y", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("y"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1)})}, {{"mode", string_arg("reflect")}},
         {2, 3, 13, 138});
  b.call("sharp", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("pad_y"), node_arg("sharpen")},
         {{"groups", int_arg(3)}}, {2, 3, 11, 136});
  OpGraph graph = b.build({"blurred", "sharp"});
  std::vector<double> blur, sharpen;
  for (int i = 0; i < 25; ++i) blur.push_back(1.0 + (i % 7) * 0.25);
  for (int c = 0; c < 3; ++c)
    for (const double v : {0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0}) sharpen.push_back(v);
  for (auto& n : graph.nodes) {
    if (n.name == "blur") n.facts.values = blur;
    if (n.name == "sharpen") n.facts.values = sharpen;
  }
  return graph;
}

// padded_stencils_vec4's 5x5 blur alone on planes of `g`'s shape (stencil2d_03's size in the generalisation
// suite: 32 planes of 2048 x 2048, for the GPU's timing).
OpGraph replicate_blur(Shape g) {
  GraphBuilder b;
  b.input("g", g);
  b.buffer("blur", "blur", {1, 1, 5, 5}, true);
  Shape padded = g;
  padded[2] += 4, padded[3] += 4;
  b.call("pad_g", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("g"), list_arg({int_arg(2), int_arg(2), int_arg(2), int_arg(2)})}, {{"mode", string_arg("replicate")}},
         padded);
  b.call("blurred", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("pad_g"), node_arg("blur")}, {}, g);
  OpGraph graph = b.build({"blurred"});
  for (auto& n : graph.nodes) {
    if (n.name != "blur") continue;
    n.facts.values = std::vector<double>();
    for (int i = 0; i < 25; ++i) n.facts.values->push_back(1.0 + (i % 7) * 0.25);
  }
  return graph;
}

// The buffers of padded_stencils_vec4 holding the values its capture read.
const std::vector<std::string> kPaddedVec4Values = {
    "blur.copy_(torch.tensor([1.0 + (i % 7) * 0.25 for i in range(25)]).view(1, 1, 5, 5))",
    "sharpen.copy_(torch.tensor([0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0]).view(1, 1, 3, 3).repeat(3, 1, 1, 1))"};

// F.pad in 3D (replicate, reflect, circular) then a 27-point conv3d over rows of 16 floats: the vec4
// kernel maps each load's plane and each row's y (the chains' shifts across a mapped border included).
OpGraph padded_stencils3d_vec4() {
  GraphBuilder b;
  b.input("x", {2, 1, 9, 10, 16});
  b.buffer("box", "box", {1, 1, 3, 3, 3}, true);
  const std::vector<std::pair<std::string, std::string>> modes = {{"r", "replicate"}, {"f", "reflect"}, {"c", "circular"}};
  std::vector<std::string> outputs;
  for (const auto& [tag, mode] : modes) {
    b.call("pad_" + tag, "call_function", "torch.nn.functional.pad", "unknown",
           {node_arg("x"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1)})},
           {{"mode", string_arg(mode)}}, {2, 1, 11, 12, 18});
    b.call("box_" + tag, "call_function", "torch.conv3d", "conv3d", {node_arg("pad_" + tag), node_arg("box")}, {},
           {2, 1, 9, 10, 16});
    outputs.push_back("box_" + tag);
  }
  OpGraph graph = b.build(outputs);
  std::vector<double> values;
  for (int i = 0; i < 27; ++i) values.push_back(0.5 + (i % 5) * 0.25);
  for (auto& n : graph.nodes)
    if (n.name == "box") n.facts.values = values;
  return graph;
}

// Conv stencils with the elementwise ops after them in the kernel's store: u - box(replicate pad of u)
// (the centre read by the vec4 kernel, rows of `width` floats), a heat step x + conv(x) * f over a field f
// (a point field: the scalar kernel), and y * 0.5 + blur(reflect pad of y) over three planes of one
// coefficient set (the vec4 kernel over planes, the centre its own row).
OpGraph conv_stencil_epilogues(Shape u = {2, 1, 9, 10, 16}, bool only_box = false) {
  GraphBuilder b;
  b.input("u", u);
  b.buffer("box", "box", {1, 1, 3, 3, 3}, true);
  Shape padded = u;
  for (std::size_t d = 2; d < 5; ++d) padded[d] += 2;
  b.call("pad_u", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("u"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1), int_arg(1)})},
         {{"mode", string_arg("replicate")}}, padded);
  b.call("smooth", "call_function", "torch.conv3d", "conv3d", {node_arg("pad_u"), node_arg("box")}, {}, u);
  b.call("residual", "call_function", "operator.sub", "sub", {node_arg("u"), node_arg("smooth")}, {}, u);
  std::vector<std::string> outputs = {"residual"};
  if (!only_box) {
    const Shape x = {2, 1, 7, 6, 13}, y = {2, 3, 12, 24};
    b.input("x", x).input("f", x).input("y", y);
    b.buffer("lap", "lap", {1, 1, 3, 3, 3}, true);
    b.buffer("blur", "blur", {3, 1, 3, 3}, true);
    b.call("lap_x", "call_function", "torch.conv3d", "conv3d", {node_arg("x"), node_arg("lap")}, {{"padding", int_arg(1)}}, x);
    b.call("flux", "call_function", "operator.mul", "mul", {node_arg("lap_x"), node_arg("f")}, {}, x);
    b.call("heat", "call_function", "operator.add", "add", {node_arg("x"), node_arg("flux")}, {}, x);
    b.call("pad_y", "call_function", "torch.nn.functional.pad", "unknown",
           {node_arg("y"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1)})}, {{"mode", string_arg("reflect")}},
           {2, 3, 14, 26});
    b.call("blurred", "call_function", "torch.nn.functional.conv2d", "conv2d", {node_arg("pad_y"), node_arg("blur")},
           {{"groups", int_arg(3)}}, y);
    b.call("half_y", "call_function", "operator.mul", "mul", {node_arg("y"), number_arg(0.5)}, {}, y);
    b.call("sharpened", "call_function", "operator.add", "add", {node_arg("half_y"), node_arg("blurred")}, {}, y);
    outputs.insert(outputs.end(), {"heat", "sharpened"});
  }
  OpGraph graph = b.build(outputs);
  for (auto& n : graph.nodes) {
    if (n.name == "box") {
      n.facts.values = std::vector<double>();
      for (int i = 0; i < 27; ++i) n.facts.values->push_back((i % 3 == 1 ? 2.0 : 1.0) * (i / 3 % 3 == 1 ? 2.0 : 1.0) * (i / 9 == 1 ? 2.0 : 1.0) / 64.0);
    }
    if (n.name == "lap") {
      n.facts.values = std::vector<double>(27, 0.0);
      for (int i : {4, 10, 12, 14, 16, 22}) (*n.facts.values)[static_cast<std::size_t>(i)] = 1.0;
      (*n.facts.values)[13] = -6.0;
    }
    if (n.name == "blur") {
      n.facts.values = std::vector<double>();
      for (int c = 0; c < 3; ++c)
        for (double v : {0.0625, 0.125, 0.0625, 0.125, 0.25, 0.125, 0.0625, 0.125, 0.0625}) n.facts.values->push_back(v);
    }
  }
  return graph;
}

// The buffers of conv_stencil_epilogues holding the values its capture read.
const std::vector<std::string> kConvEpilogueValues = {
    "box.copy_(torch.tensor([(1 + (i % 3 == 1)) * (1 + (i // 3 % 3 == 1)) * (1 + (i // 9 == 1)) / 64.0 for i in range(27)]).view(1, 1, 3, 3, 3))",
    "lap.zero_(); lap.view(-1)[[4, 10, 12, 14, 16, 22]] = 1.0; lap.view(-1)[13] = -6.0",
    "blur.copy_(torch.tensor([1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]).div(16).view(1, 1, 3, 3).repeat(3, 1, 1, 1))"};

const std::map<std::string, std::string> kConvEpilogueReference = {
    {"residual", "u - F.conv3d(F.pad(u, (1,) * 6, mode='replicate'), box)"},
    {"heat", "x + F.conv3d(x, lap, padding=1) * f"},
    {"sharpened", "y * 0.5 + F.conv2d(F.pad(y, (1, 1, 1, 1), mode='reflect'), blur, groups=3)"}};
const std::vector<std::string> kConvEpilogueRecipes = {"s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1",
                                                       "s3_stencil3d_direct_l1",  "s3_stencil3d_27pt",
                                                       "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"};

// A Sobel x / y pair per field: a grouped conv with two outputs per group on a reflect pad, read as
// conv[:, 0::2] and conv[:, 1::2] by sqrt(gx * gx + gy * gy + 1e-12). The kernel computes both outputs
// and writes only the magnitude. The capture read the kernel (kSobelPairValues); rows of 136 floats.
OpGraph sobel_pairs(std::int64_t width = 136) {
  GraphBuilder b;
  b.input("x", {2, 3, 9, width});
  b.buffer("kernel", "kernel", {6, 1, 3, 3}, true);
  b.call("pad", "call_function", "torch.nn.functional.pad", "unknown",
         {node_arg("x"), list_arg({int_arg(1), int_arg(1), int_arg(1), int_arg(1)})}, {{"mode", string_arg("reflect")}},
         {2, 3, 11, width + 2});
  b.call("g", "call_function", "torch.conv2d", "conv2d", {node_arg("pad"), node_arg("kernel")}, {{"groups", int_arg(3)}},
         {2, 6, 9, width});
  auto channel_slice = [](long long start) {
    Arg every = slice_arg(std::nullopt, std::nullopt);
    Arg strided = slice_arg(start, std::nullopt);
    strided.items[2] = int_arg(2);
    return list_arg({every, strided});
  };
  b.call("gx", "call_function", "operator.getitem", "getitem", {node_arg("g"), channel_slice(0)}, {}, {2, 3, 9, width},
         "float32", "g[:, 0::2]");
  b.call("gy", "call_function", "operator.getitem", "getitem", {node_arg("g"), channel_slice(1)}, {}, {2, 3, 9, width},
         "float32", "g[:, 1::2]");
  b.call("xx", "call_function", "operator.mul", "mul", {node_arg("gx"), node_arg("gx")}, {}, {2, 3, 9, width});
  b.call("yy", "call_function", "operator.mul", "mul", {node_arg("gy"), node_arg("gy")}, {}, {2, 3, 9, width});
  b.call("sum2", "call_function", "operator.add", "add", {node_arg("xx"), node_arg("yy")}, {}, {2, 3, 9, width});
  b.call("eps", "call_function", "operator.add", "add", {node_arg("sum2"), number_arg(1e-12)}, {}, {2, 3, 9, width});
  b.call("magnitude", "call_function", "torch.sqrt", "sqrt", {node_arg("eps")}, {}, {2, 3, 9, width});
  OpGraph graph = b.build({"magnitude"});
  std::vector<double> values;
  for (int field = 0; field < 3; ++field)
    for (const double v : {-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0, -1.0, -2.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 1.0})
      values.push_back(v);
  for (auto& n : graph.nodes)
    if (n.name == "kernel") n.facts.values = values;
  return graph;
}

const std::string kSobelMagnitude =
    "(lambda g: torch.sqrt(g[:, 0::2] * g[:, 0::2] + g[:, 1::2] * g[:, 1::2] + 1e-12))"
    "(F.conv2d(F.pad(x, (1, 1, 1, 1), mode='reflect'), kernel, groups=3))";
const std::vector<std::string> kSobelPairValues = {
    "sx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])",
    "kernel.copy_(torch.stack([sx, sx.t()]).unsqueeze(1).repeat(3, 1, 1, 1))"};

// im2col spelled out: F.unfold's 3x3 windows (zero padding 1) viewed [B, C, 9, L], weighted by a
// buffer over the taps ([1, 1, 9, 1], or [C, 9, 1] per channel), summed over them, viewed back.
OpGraph unfold_window(std::int64_t width, bool per_channel) {
  GraphBuilder b;
  b.input("x", {2, 3, 10, width});
  b.buffer("taps", "taps", per_channel ? Shape{3, 9, 1} : Shape{1, 1, 9, 1}, true);
  b.call("unfold", "call_function", "torch.nn.functional.unfold", "unknown", {node_arg("x"), int_arg(3)},
         {{"padding", int_arg(1)}}, {2, 27, 10 * width});
  b.call("view", "call_method", "view", "view",
         {node_arg("unfold"), int_arg(2), int_arg(3), int_arg(9), int_arg(10 * width)}, {}, {2, 3, 9, 10 * width});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("view"), node_arg("taps")}, {}, {2, 3, 9, 10 * width});
  b.call("sum_1", "call_method", "sum", "sum", {node_arg("mul")}, {{"dim", int_arg(2)}}, {2, 3, 10 * width});
  b.call("view_1", "call_method", "view", "view",
         {node_arg("sum_1"), int_arg(2), int_arg(3), int_arg(10), int_arg(width)}, {}, {2, 3, 10, width});
  return b.build({"view_1"});
}

// torch.roll in the spellings the capture gives (the method and the function, ints and tuples, a
// roll of a roll), as periodic stencils on the direct kernels' circular boundary.
void roll(GraphBuilder& b, const std::string& name, const std::string& input, Arg shifts, Arg dims, bool method,
          const Shape& shape) {
  if (method) {
    b.call(name, "call_method", "roll", "unknown", {node_arg(input), shifts, dims}, {}, shape);
  } else {
    b.call(name, "call_function", "torch.roll", "unknown", {node_arg(input)}, {{"shifts", shifts}, {"dims", dims}}, shape);
  }
}

// A periodic heat step over a batch of 2D fields: u + 0.1 * (the 5-point Laplacian of u).
OpGraph roll_heat_step_2d() {
  const Shape shape = {2, 13, 37};
  GraphBuilder b;
  b.input("u", shape);
  roll(b, "r0", "u", int_arg(1), int_arg(-1), true, shape);
  roll(b, "r1", "u", int_arg(-1), int_arg(-1), false, shape);
  roll(b, "r2", "u", int_arg(1), int_arg(-2), true, shape);
  roll(b, "r3", "u", int_arg(-1), int_arg(1), false, shape);
  b.call("a0", "call_function", "operator.add", "add", {node_arg("r0"), node_arg("r1")}, {}, shape);
  b.call("a1", "call_function", "operator.add", "add", {node_arg("a0"), node_arg("r2")}, {}, shape);
  b.call("a2", "call_function", "operator.add", "add", {node_arg("a1"), node_arg("r3")}, {}, shape);
  b.call("m", "call_function", "operator.mul", "mul", {int_arg(4), node_arg("u")}, {}, shape);
  b.call("lap", "call_function", "operator.sub", "sub", {node_arg("a2"), node_arg("m")}, {}, shape);
  b.call("dt", "call_function", "operator.mul", "mul", {node_arg("lap"), number_arg(0.1)}, {}, shape);
  b.call("step", "call_function", "operator.add", "add", {node_arg("u"), node_arg("dt")}, {}, shape);
  return b.build({"step"});
}

// A 3D periodic diffusion step with a coefficient field k, the Laplacian written in a Python loop
// over the dims: lap = -6 * u; for d in (-3, -2, -1): lap = lap + torch.roll(u, 1, d) + torch.roll(u, -1, d).
// 66 planes: two z chunks of 33, so the last step of each is partial.
OpGraph roll_diffusion_3d() {
  const Shape shape = {2, 66, 5, 6};
  GraphBuilder b;
  b.input("u", shape).input("k", shape);
  b.call("lap", "call_function", "operator.mul", "mul", {number_arg(-6.0), node_arg("u")}, {}, shape);
  std::string lap = "lap";
  for (int d : {-3, -2, -1}) {
    const std::string id = std::to_string(-d);
    roll(b, "plus" + id, "u", int_arg(1), int_arg(d), false, shape);
    b.call("lap_p" + id, "call_function", "operator.add", "add", {node_arg(lap), node_arg("plus" + id)}, {}, shape);
    roll(b, "minus" + id, "u", int_arg(-1), int_arg(d), false, shape);
    b.call("lap_m" + id, "call_function", "operator.add", "add", {node_arg("lap_p" + id), node_arg("minus" + id)}, {}, shape);
    lap = "lap_m" + id;
  }
  b.call("dk", "call_function", "operator.mul", "mul", {number_arg(0.05), node_arg("k")}, {}, shape);
  b.call("flux", "call_function", "operator.mul", "mul", {node_arg("dk"), node_arg(lap)}, {}, shape);
  b.call("step", "call_function", "operator.add", "add", {node_arg("u"), node_arg("flux")}, {}, shape);
  return b.build({"step"});
}

// Tuple shifts over both dims of a 2D grid, a roll of a roll and a one-element tuple:
// (torch.roll(u, shifts=(1, -2), dims=(-1, 0)) - u.roll(3, 1).roll(-1, -2)) * 0.5 + u.roll((1,), (0,)) * u.
OpGraph roll_spellings() {
  const Shape shape = {17, 23};
  GraphBuilder b;
  b.input("u", shape);
  roll(b, "pair", "u", list_arg({int_arg(1), int_arg(-2)}), list_arg({int_arg(-1), int_arg(0)}), false, shape);
  roll(b, "inner", "u", int_arg(3), int_arg(1), true, shape);
  roll(b, "outer", "inner", int_arg(-1), int_arg(-2), true, shape);
  roll(b, "single", "u", list_arg({int_arg(1)}), list_arg({int_arg(0)}), true, shape);
  b.call("diff", "call_function", "operator.sub", "sub", {node_arg("pair"), node_arg("outer")}, {}, shape);
  b.call("half", "call_function", "operator.mul", "mul", {node_arg("diff"), number_arg(0.5)}, {}, shape);
  b.call("prod", "call_function", "operator.mul", "mul", {node_arg("single"), node_arg("u")}, {}, shape);
  b.call("out", "call_function", "operator.add", "add", {node_arg("half"), node_arg("prod")}, {}, shape);
  return b.build({"out"});
}

// Shifted slices with another field read at the output point: a 3D second difference along z
// scaled by a field f (68 planes: two z chunks of 34), and a 2D average plus a field g.
OpGraph slice_stencils_with_fields() {
  const std::optional<long long> none;
  GraphBuilder b;
  b.input("x", {70, 9, 20}).input("f", {68, 7, 18}).input("v", {3, 30, 68}).input("g", {3, 28, 66});
  const Shape out3 = {68, 7, 18}, out2 = {3, 28, 66};
  b.call("up", "call_function", "operator.getitem", "getitem", {node_arg("x"), slices({{2, none}, {1, -1}, {1, -1}})}, {},
         out3, "float32", "x[2:, 1:-1, 1:-1]");
  b.call("down", "call_function", "operator.getitem", "getitem", {node_arg("x"), slices({{none, -2}, {1, -1}, {1, -1}})},
         {}, out3, "float32", "x[:-2, 1:-1, 1:-1]");
  b.call("mid", "call_function", "operator.getitem", "getitem", {node_arg("x"), slices({{1, -1}, {1, -1}, {1, -1}})}, {},
         out3, "float32", "x[1:-1, 1:-1, 1:-1]");
  b.call("s0", "call_function", "operator.add", "add", {node_arg("up"), node_arg("down")}, {}, out3);
  b.call("s1", "call_function", "operator.mul", "mul", {int_arg(2), node_arg("mid")}, {}, out3);
  b.call("s2", "call_function", "operator.sub", "sub", {node_arg("s0"), node_arg("s1")}, {}, out3);
  b.call("dzz", "call_function", "operator.mul", "mul", {node_arg("s2"), node_arg("f")}, {}, out3);
  b.call("n", "call_function", "operator.getitem", "getitem", {node_arg("v"), slices({{none, none}, {none, -2}, {1, -1}})},
         {}, out2, "float32", "v[:, :-2, 1:-1]");
  b.call("s", "call_function", "operator.getitem", "getitem", {node_arg("v"), slices({{none, none}, {2, none}, {1, -1}})},
         {}, out2, "float32", "v[:, 2:, 1:-1]");
  b.call("t0", "call_function", "operator.add", "add", {node_arg("n"), node_arg("s")}, {}, out2);
  b.call("t1", "call_function", "operator.mul", "mul", {node_arg("t0"), number_arg(0.5)}, {}, out2);
  b.call("avg", "call_function", "operator.add", "add", {node_arg("t1"), node_arg("g")}, {}, out2);
  return b.build({"dzz", "avg"});
}

const std::vector<std::string> kLaplacianIn27 = {
    "stencil.zero_()", "stencil[0, 0, 1, 1, 1] = -6.0",
    "stencil[0, 0, 0, 1, 1] = stencil[0, 0, 2, 1, 1] = stencil[0, 0, 1, 0, 1] = 1.0",
    "stencil[0, 0, 1, 2, 1] = stencil[0, 0, 1, 1, 0] = stencil[0, 0, 1, 1, 2] = 1.0"};

// The graph as captured from a module whose `stencil` buffer holds kLaplacianIn27 (the capture's facts).
OpGraph with_laplacian_values(OpGraph graph) {
  std::vector<double> values(27, 0.0);
  values[13] = -6.0;
  for (const std::size_t i : {4, 10, 12, 14, 16, 22}) values[i] = 1.0;
  for (auto& n : graph.nodes)
    if (n.name == "stencil") n.facts.values = values;
  return graph;
}

// conv -> * m [N, 1, 1, W] -> + bias [C, 1, 1] -> relu: the channels_last variant (offered first) runs.
OpGraph channels_last_epilogue() {
  GraphBuilder b;
  b.input("x", {3, 4, 9, 11}).input("m", {3, 1, 1, 11});
  b.buffer("weight", "weight", {6, 4, 3, 3}, true);
  b.parameter("bias", "bias", {6, 1, 1});
  b.call("conv", "call_function", "torch.conv2d", "conv2d", {node_arg("x"), node_arg("weight")},
         {{"padding", int_arg(1)}}, {3, 6, 9, 11}, "float32", "torch.conv2d(x, weight, padding=1)");
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("conv"), node_arg("m")}, {}, {3, 6, 9, 11});
  b.call("add", "call_function", "operator.add", "add", {node_arg("mul"), node_arg("bias")}, {}, {3, 6, 9, 11});
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("add")}, {}, {3, 6, 9, 11});
  return b.build({"relu"});
}

// self.conv(x) of an nn.Conv2d with a bias -> relu -> * scale [C, 1, 1]: the conv runs without its
// bias, which the epilogue adds on the NHWC tensor (the module's hyper-parameters come from `setup`).
// With 8 channels the vector kernel reads the bias and the scale as one pack per 4 lanes (lane packs).
OpGraph module_conv_epilogue() {
  GraphBuilder b;
  b.input("x", {3, 4, 9, 11});
  b.module("conv", "Conv2d",
           {{"in_channels", 4}, {"out_channels", 8}, {"bias", true}, {"padding", {1, 1}}, {"padding_mode", "zeros"}},
           {{"weight", {8, 4, 3, 3}}, {"bias", {8}}});
  b.parameter("scale", "scale", {8, 1, 1});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {3, 8, 9, 11}, "float32", "self.conv(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("conv")}, {}, {3, 8, 9, 11});
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("relu"), node_arg("scale")}, {}, {3, 8, 9, 11});
  return b.build({"mul"});
}

// self.conv(x) with a bias -> group norm (4 groups) -> relu: the norm kernel adds the conv's bias.
OpGraph conv_bias_group_norm() {
  GraphBuilder b;
  b.input("x", {2, 3, 10, 12});
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 8}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {8, 3, 3, 3}}, {"bias", {8}}});
  b.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 8}, {"eps", 1e-5}}, {{"weight", {8}}, {"bias", {8}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {2, 8, 10, 12}, "float32", "self.conv(x)");
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {2, 8, 10, 12}, "float32", "self.gn(conv)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("gn")}, {}, {2, 8, 10, 12});
  return b.build({"relu"});
}

// self.conv(x) with a bias (6 channels) -> instance norm -> / 2 (fusion/11): in channels_last the
// split-statistics kernels gather each (sample, channel) plane from rows of 6 channels (6 does not
// divide a warp: 42 rows of 6 channels a block, merged through shared memory).
OpGraph conv_instance_norm_divide() {
  GraphBuilder b;
  b.input("x", {2, 3, 14, 13});
  b.module("conv", "Conv2d", {{"in_channels", 3}, {"out_channels", 6}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {6, 3, 3, 3}}, {"bias", {6}}});
  b.module("inorm", "InstanceNorm2d", {{"num_features", 6}, {"eps", 1e-5}, {"track_running_stats", false}}, {});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {2, 6, 12, 11}, "float32", "self.conv(x)");
  b.call("inorm", "call_module", "inorm", "instance_norm", {node_arg("conv")}, {}, {2, 6, 12, 11}, "float32",
         "self.inorm(conv)");
  b.call("div", "call_function", "operator.truediv", "div", {node_arg("inorm"), number_arg(2.0)}, {}, {2, 6, 12, 11});
  return b.build({"div"});
}

// self.conv(x) with a bias -> min over the channels (keepdim) -> tanh -> tanh (fusion/08): in
// channels_last a position's channels are a contiguous row; `channels` 8 gives rows of 4 threads,
// 40 rows of 8 threads (a warp holds 8 or 4 rows, the last block's rows run past the end); the
// 40-channel conv reads 20 channels (the input's transpose takes a partial second tile of channels).
OpGraph conv_min_channels(std::int64_t channels, std::int64_t in_channels = 3) {
  GraphBuilder b;
  b.input("x", {2, in_channels, 9, 11});
  b.module("conv", "Conv2d", {{"in_channels", in_channels}, {"out_channels", channels}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {channels, in_channels, 3, 3}}, {"bias", {channels}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {2, channels, 7, 9}, "float32", "self.conv(x)");
  b.call("min", "call_function", "torch.min", "min", {node_arg("conv")}, {{"dim", int_arg(1)}, {"keepdim", bool_arg(true)}},
         {}, "none");
  b.call("values", "call_function", "operator.getitem", "getitem", {node_arg("min"), int_arg(0)}, {}, {2, 1, 7, 9});
  b.call("tanh", "call_function", "torch.tanh", "tanh", {node_arg("values")}, {}, {2, 1, 7, 9});
  b.call("tanh_1", "call_function", "torch.tanh", "tanh", {node_arg("tanh")}, {}, {2, 1, 7, 9});
  return b.build({"tanh_1"});
}

// self.conv(x) (16 -> 32 channels, padding 1) -> mean over the channels -> sigmoid: rows of 36
// floats (a multiple of 4: no zero columns added), 3 x 2 tiles of 8 x 32 positions per image.
OpGraph conv_mean_channels() {
  GraphBuilder b;
  b.input("x", {2, 16, 20, 36});
  b.module("conv", "Conv2d",
           {{"in_channels", 16}, {"out_channels", 32}, {"bias", true}, {"padding", {1, 1}}, {"padding_mode", "zeros"}},
           {{"weight", {32, 16, 3, 3}}, {"bias", {32}}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {2, 32, 20, 36}, "float32", "self.conv(x)");
  b.call("mean", "call_method", "mean", "mean", {node_arg("conv"), int_arg(1)}, {}, {2, 20, 36});
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("mean")}, {}, {2, 20, 36});
  return b.build({"sigmoid"});
}

// self.conv(x) (3 -> 8 channels) -> AvgPool2d(2) -> sigmoid -> sum over dims 1, 2, 3 (fusion/20): a
// 13 x 12 output pools to 6 x 6 (its last row is in no window); rows of 14 get zero columns added.
OpGraph conv_pool_sum() {
  GraphBuilder b;
  b.input("x", {2, 3, 15, 14});
  b.module("conv", "Conv2d",
           {{"in_channels", 3}, {"out_channels", 8}, {"bias", true}, {"padding", {0, 0}}, {"padding_mode", "zeros"}},
           {{"weight", {8, 3, 3, 3}}, {"bias", {8}}});
  b.module("pool", "AvgPool2d", {{"kernel_size", 2}, {"stride", 2}, {"padding", 0}, {"ceil_mode", false}});
  b.call("conv", "call_module", "conv", "conv2d", {node_arg("x")}, {}, {2, 8, 13, 12}, "float32", "self.conv(x)");
  b.call("pool", "call_module", "pool", "avg_pool2d", {node_arg("conv")}, {}, {2, 8, 6, 6}, "float32", "self.pool(conv)");
  b.call("sigmoid", "call_function", "torch.sigmoid", "sigmoid", {node_arg("pool")}, {}, {2, 8, 6, 6});
  b.call("total", "call_function", "torch.sum", "sum", {node_arg("sigmoid")},
         {{"dim", list_arg({int_arg(1), int_arg(2), int_arg(3)})}}, {2});
  return b.build({"total"});
}

// self.conv(x) of an nn.Conv3d with a bias -> GroupNorm(4, 8) -> relu: the channels_last_3d
// form (memory order N, D, H, W, C) of the split statistics.
OpGraph conv3d_group_norm() {
  GraphBuilder b;
  b.input("x", {2, 3, 5, 6, 7});
  b.module("conv", "Conv3d", {{"in_channels", 3}, {"out_channels", 8}, {"bias", true}, {"padding_mode", "zeros"}},
           {{"weight", {8, 3, 3, 3, 3}}, {"bias", {8}}});
  b.module("gn", "GroupNorm", {{"num_groups", 4}, {"num_channels", 8}, {"eps", 1e-5}}, {{"weight", {8}}, {"bias", {8}}});
  b.call("conv", "call_module", "conv", "conv3d", {node_arg("x")}, {}, {2, 8, 3, 4, 5}, "float32", "self.conv(x)");
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("conv")}, {}, {2, 8, 3, 4, 5}, "float32", "self.gn(conv)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("gn")}, {}, {2, 8, 3, 4, 5});
  return b.build({"relu"});
}

// Group norm whose (sample, group) segments are 32768 long: too long for registers, so the
// split-statistics kernels (the first variant) with four blocks per segment, or the streaming kernel.
OpGraph long_group_norm() {
  GraphBuilder b;
  b.input("x", {2, 4, 128, 128});
  b.module("gn", "GroupNorm", {{"num_groups", 2}, {"num_channels", 4}, {"eps", 1e-5}}, {{"weight", {4}}, {"bias", {4}}});
  b.call("gn", "call_module", "gn", "group_norm", {node_arg("x")}, {}, {2, 4, 128, 128}, "float32", "self.gn(x)");
  b.call("relu", "call_function", "torch.relu", "relu", {node_arg("gn")}, {}, {2, 4, 128, 128});
  return b.build({"relu"});
}

// silu(x) * 1.7, clamped, + a bias over the last dimension (fusion/25 in float32): the bias is
// read as one pack per 4 lanes when the row length is a multiple of 4, per element otherwise
// (column_bias_packed runs the lane-pack kernel on rows of 24, column_bias_odd_length the
// per-element vector kernel on rows of 26).
OpGraph column_bias_chain(std::int64_t cols, const std::string& dtype = "float32") {
  GraphBuilder b;
  b.input("x", {5, cols}, dtype);
  b.parameter("bias", "bias", {cols}, dtype);
  b.call("silu", "call_function", "torch.nn.functional.silu", "silu", {node_arg("x")}, {}, {5, cols}, dtype);
  b.call("mul", "call_function", "operator.mul", "mul", {node_arg("silu"), number_arg(1.7)}, {}, {5, cols}, dtype);
  b.call("clamp", "call_function", "torch.clamp", "clamp", {node_arg("mul")},
         {{"min", number_arg(-4.0)}, {"max", number_arg(4.0)}}, {5, cols}, dtype);
  b.call("add", "call_function", "operator.add", "add", {node_arg("clamp"), node_arg("bias")}, {}, {5, cols}, dtype);
  return b.build({"add"});
}

// The group norm kernels read a module's group count at run time.
constexpr const char* kGroupCounts = "self.gn.num_groups, self.gn4.num_groups = 2, 4";

TEST(CpuEmulation, GeneratedKernelsComputeWhatTorchComputes) {
  const std::string python = torch_python();
  if (python.empty()) GTEST_SKIP() << "no python3 that imports torch (scripts/find-torch-python)";
  std::vector<Case> cases = {
      {"bias_leaky_scale", bias_leaky_scale(), {{"mul", "F.leaky_relu(conv + bias, 0.2) * 2.0"}}, {"s3_elementwise_fusion"}},
      {"bias_leaky_scale_misaligned", bias_leaky_scale(), {{"mul", "F.leaky_relu(conv + bias, 0.2) * 2.0"}},
       {"s3_elementwise_fusion"}, {}, {"conv"}},
      {"broadcasts", broadcasts(), {{"sub", "(x + row) * plane - s"}}, {"s3_elementwise_fusion"}},
      {"batch_norm_relu", batch_norm_relu(),
       {{"relu", "torch.relu(F.batch_norm(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, "
                 "False, 0.1, 1e-5))"}},
       {"s3_elementwise_fusion"}},
      {"activations", activations(),
       {{"div", "F.hardswish(F.gelu(F.mish(torch.where(x > 0, x, torch.tensor(0.5)) * torch.sigmoid(torch.where(x > 0, "
                "x, torch.tensor(0.5))) + r), approximate='tanh')) / 3.0"}},
       {"s3_elementwise_fusion"}},
      // The rows held in registers (the first variant), then the streaming kernels (the last), with a fully
      // masked row and a NaN.
      {"softmax_mask", softmax_mask(), {{"mul_1", "torch.softmax(x * 0.125 + mask, -1) * v"}},
       {"s3_row_in_registers", "s3_fused_row_softmax"}, {"x[0, 1, 2, :] = float('-inf')", "x[1, 0, 3, 7] = float('nan')"}},
      {"softmax_mask_streaming", softmax_mask(), {{"mul_1", "torch.softmax(x * 0.125 + mask, -1) * v"}},
       {"s3_row_in_registers", "s3_fused_row_softmax"}, {"x[0, 1, 2, :] = float('-inf')", "x[1, 0, 3, 7] = float('nan')"},
       {}, false, 0.0, true},
      {"reductions", reductions(),
       {{"half_sum", "torch.sigmoid(h).sum(-1, keepdim=True) * 0.5"}, {"amax", "torch.amax(x, 1)"},
        {"lse", "torch.logsumexp(x, -1, keepdim=True)"}, {"pooled", "conv.mean((2, 3))"},
        {"log_probs", "torch.log_softmax(w, 1)"}},
       {"s3_warp_shuffle_row_reduction", "s3_warp_shuffle_row_reduction", "s3_fused_logsumexp",
        "s3_warp_shuffle_row_reduction", "s3_row_in_registers", "s3_fused_row_softmax"},
       {"x[3, 7] = float('nan')", "x[5, :] = float('-inf')", "x[6, 2] = float('inf')", "w[1, 17] = float('inf')"}},
      // The streaming kernels of the same ops (the last variant: log_softmax's is not the one in registers).
      {"reductions_streaming", reductions(),
       {{"half_sum", "torch.sigmoid(h).sum(-1, keepdim=True) * 0.5"}, {"amax", "torch.amax(x, 1)"},
        {"lse", "torch.logsumexp(x, -1, keepdim=True)"}, {"pooled", "conv.mean((2, 3))"},
        {"log_probs", "torch.log_softmax(w, 1)"}},
       {"s3_warp_shuffle_row_reduction", "s3_warp_shuffle_row_reduction", "s3_fused_logsumexp",
        "s3_warp_shuffle_row_reduction", "s3_row_in_registers", "s3_fused_row_softmax"},
       {"x[3, 7] = float('nan')", "x[5, :] = float('-inf')", "x[6, 2] = float('inf')", "w[1, 17] = float('inf')",
        "w[2, 2400] = 40.0"}, {}, false, 0.0, true},
      // A NaN late in its row, a row of -inf, an inf, and a max that grows in a later step.
      {"long_row_logsumexp", long_row_logsumexp(), {{"lse", "torch.logsumexp(x, -1)"}}, {"s3_fused_logsumexp"},
       {"x[1, 2999] = float('nan')", "x[2, :] = float('-inf')", "x[3, 1500] = float('inf')", "x[4, 2900] = 30.0"}},
      {"strided_reductions", strided_reductions(),
       {{"relu", "torch.relu(x.sum(1, keepdim=True))"}, {"tanh", "torch.tanh(torch.max(x, dim=1)[0])"},
        {"lse", "torch.logsumexp(y, 1, keepdim=True)"}, {"softmax", "torch.softmax(y, 1)"}},
       {"s3_warp_shuffle_row_reduction", "s3_warp_shuffle_row_reduction", "s3_fused_logsumexp", "s3_fused_row_softmax"}},
      {"norms", norms(),
       {{"res", "F.gelu(F.layer_norm(x + r, (96,), self.ln.weight, self.ln.bias, 1e-5)) + (x + r)"},
        {"swish", "F.silu(F.group_norm(c, 2, self.gn.weight, self.gn.bias, 1e-5))"},
        {"tanh", "torch.tanh(F.group_norm(d, 4, self.gn4.weight, self.gn4.bias, 1e-5))"},
        {"inorm", "F.instance_norm(e, eps=1e-3)"}},
       {"s3_row_in_registers", "s3_welford_layer_norm", "s3_row_in_registers", "s3_welford_group_norm",
        "s3_row_in_registers", "s3_welford_group_norm", "s3_row_in_registers", "s3_welford_group_norm"},
       {kGroupCounts}},
      {"norms_streaming", norms(),
       {{"res", "F.gelu(F.layer_norm(x + r, (96,), self.ln.weight, self.ln.bias, 1e-5)) + (x + r)"},
        {"swish", "F.silu(F.group_norm(c, 2, self.gn.weight, self.gn.bias, 1e-5))"},
        {"tanh", "torch.tanh(F.group_norm(d, 4, self.gn4.weight, self.gn4.bias, 1e-5))"},
        {"inorm", "F.instance_norm(e, eps=1e-3)"}},
       {"s3_row_in_registers", "s3_welford_layer_norm", "s3_row_in_registers", "s3_welford_group_norm",
        "s3_row_in_registers", "s3_welford_group_norm", "s3_row_in_registers", "s3_welford_group_norm"},
       {kGroupCounts}, {}, false, 0.0, true},
      {"slice_stencils", slice_stencils(),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"},
        {"jacobi", "(u[:, :-2, 1:-1] + u[:, 2:, 1:-1] + u[:, 1:-1, :-2] + u[:, 1:-1, 2:]) * 0.25"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}},
      {"slice_stencils_ring", slice_stencils(),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"},
        {"jacobi", "(u[:, :-2, 1:-1] + u[:, 2:, 1:-1] + u[:, 1:-1, :-2] + u[:, 1:-1, 2:]) * 0.25"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, {}, {}, false, 0.0, true},
      {"conv_stencils", conv_stencils(),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"},
       // A 7-point Laplacian in 27 coefficients: the kernel skips the zero ones.
       kLaplacianIn27},
      {"padded_stencils", padded_stencils(),
       {{"conv3d", "F.conv3d(F.pad(x, (1, 1, 1, 1, 1, 1), mode='circular'), stencil)"},
        {"conv2d", "F.conv2d(F.pad(y, (2, 2, 2, 2), mode='reflect'), blur, groups=3)"},
        {"conv2d_e", "F.conv2d(F.pad(y, (1, 1, 1, 1), mode='replicate'), blur3, groups=3)"}},
       {"s3_stencil3d_direct_l1", "s3_stencil2d_direct_l1", "s3_stencil2d_direct_l1"}},
      // Replicate and reflect borders in the vec4 kernel over planes (first), the scalar direct kernel after it;
      // then the buffers no longer hold the captured values: the one-channel blur's kernel that reads its
      // weight is vec4 too, the three-channel one's is the scalar direct kernel.
      {"padded_stencils_vec4", padded_stencils_vec4(),
       {{"blurred", "F.conv2d(F.pad(g, (2, 2, 2, 2), mode='replicate'), blur)"},
        {"sharp", "F.conv2d(F.pad(y, (1, 1, 1, 1), mode='reflect'), sharpen, groups=3)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"},
       kPaddedVec4Values},
      {"padded_stencils_vec4_buffer_changed", padded_stencils_vec4(),
       {{"blurred", "F.conv2d(F.pad(g, (2, 2, 2, 2), mode='replicate'), blur)"},
        {"sharp", "F.conv2d(F.pad(y, (1, 1, 1, 1), mode='reflect'), sharpen, groups=3)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}},
      {"padded_stencils_vec4_direct", padded_stencils_vec4(),
       {{"blurred", "F.conv2d(F.pad(g, (2, 2, 2, 2), mode='replicate'), blur)"},
        {"sharp", "F.conv2d(F.pad(y, (1, 1, 1, 1), mode='reflect'), sharpen, groups=3)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"},
       kPaddedVec4Values, {}, false, 0.0, true},
      // 3D borders in the vec4 kernel: the weights the capture read (literals), then a changed buffer.
      {"padded_stencils3d_vec4", padded_stencils3d_vec4(),
       {{"box_r", "F.conv3d(F.pad(x, (1,) * 6, mode='replicate'), box)"},
        {"box_f", "F.conv3d(F.pad(x, (1,) * 6, mode='reflect'), box)"},
        {"box_c", "F.conv3d(F.pad(x, (1,) * 6, mode='circular'), box)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1", "s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1",
        "s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1"},
       {"box.copy_(torch.tensor([0.5 + (i % 5) * 0.25 for i in range(27)]).view(1, 1, 3, 3, 3))"}},
      // A conv stencil's epilogue in its store: the vec4 kernels (3D with the centre, 2D over planes) and the
      // heat step's scalar kernel with its field; the last variants (scalar, shared ring); a changed buffer.
      {"conv_stencil_epilogues", conv_stencil_epilogues(), kConvEpilogueReference, kConvEpilogueRecipes, kConvEpilogueValues},
      {"conv_stencil_epilogues_last_variant", conv_stencil_epilogues(), kConvEpilogueReference, kConvEpilogueRecipes,
       kConvEpilogueValues, {}, false, 0.0, true},
      {"conv_stencil_epilogues_buffer_changed", conv_stencil_epilogues(), kConvEpilogueReference, kConvEpilogueRecipes},
      {"padded_stencils3d_vec4_buffer_changed", padded_stencils3d_vec4(),
       {{"box_r", "F.conv3d(F.pad(x, (1,) * 6, mode='replicate'), box)"},
        {"box_f", "F.conv3d(F.pad(x, (1,) * 6, mode='reflect'), box)"},
        {"box_c", "F.conv3d(F.pad(x, (1,) * 6, mode='circular'), box)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1", "s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1",
        "s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1"}},
      // Two outputs per group combined in the kernel: the vec4 kernel over planes with the pair's literals;
      // the buffer changed (the kernel that reads it, per channel); the scalar direct kernel; rows of 135
      // floats (no vec4 kernel).
      {"sobel_pairs", sobel_pairs(), {{"magnitude", kSobelMagnitude}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}, kSobelPairValues},
      {"sobel_pairs_buffer_changed", sobel_pairs(), {{"magnitude", kSobelMagnitude}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}},
      {"sobel_pairs_direct", sobel_pairs(), {{"magnitude", kSobelMagnitude}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}, kSobelPairValues, {}, false,
       0.0, true},
      {"sobel_pairs_odd_rows", sobel_pairs(135), {{"magnitude", kSobelMagnitude}},
       {"s3_stencil2d_direct_l1"}, kSobelPairValues},
      // F.unfold's windows weighted and summed: the vec4 kernel over planes (shared taps, rows of 136), the
      // scalar direct kernel after it; per-channel taps over rows of 135: the direct kernel alone.
      {"unfold_window", unfold_window(136, false),
       {{"view_1", "(F.unfold(x, 3, padding=1).view(2, 3, 9, -1) * taps).sum(dim=2).view(2, 3, 10, 136)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}},
      {"unfold_window_direct", unfold_window(136, false),
       {{"view_1", "(F.unfold(x, 3, padding=1).view(2, 3, 9, -1) * taps).sum(dim=2).view(2, 3, 10, 136)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}, {}, {}, false, 0.0, true},
      {"unfold_window_per_channel", unfold_window(135, true),
       {{"view_1", "(F.unfold(x, 3, padding=1).view(2, 3, 9, -1) * taps).sum(dim=2).view(2, 3, 10, 135)"}},
       {"s3_stencil2d_direct_l1"}},
      // torch.roll stencils, wrapped around through the circular boundary, with a second field read at the point.
      {"roll_heat_step_2d", roll_heat_step_2d(),
       {{"step", "u + (torch.roll(u, 1, -1) + torch.roll(u, -1, -1) + torch.roll(u, 1, -2) + torch.roll(u, -1, 1) - 4 * u) * 0.1"}},
       {"s3_stencil2d_direct_l1"}},
      {"roll_diffusion_3d", roll_diffusion_3d(),
       {{"step", "u + 0.05 * k * (-6.0 * u + sum(torch.roll(u, 1, d) + torch.roll(u, -1, d) for d in (-3, -2, -1)))"}},
       {"s3_stencil3d_direct_l1"}},
      {"roll_spellings", roll_spellings(),
       {{"out", "(torch.roll(u, shifts=(1, -2), dims=(-1, 0)) - u.roll(3, 1).roll(-1, -2)) * 0.5 + u.roll((1,), (0,)) * u"}},
       {"s3_stencil2d_direct_l1"}},
      // Slices and a field: the direct kernels (first) and the shared-memory ones (last); no vec4 kernel.
      {"slice_stencils_with_fields", slice_stencils_with_fields(),
       {{"dzz", "(x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] - 2 * x[1:-1, 1:-1, 1:-1]) * f"},
        {"avg", "(v[:, :-2, 1:-1] + v[:, 2:, 1:-1]) * 0.5 + g"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}},
      {"slice_stencils_with_fields_ring", slice_stencils_with_fields(),
       {{"dzz", "(x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] - 2 * x[1:-1, 1:-1, 1:-1]) * f"},
        {"avg", "(v[:, :-2, 1:-1] + v[:, 2:, 1:-1]) * 0.5 + g"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"},
       {}, {}, false, 0.0, true},
      {"conv_stencils_ring", conv_stencils(),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, kLaplacianIn27, {}, false, 0.0, true},
      // Rows a multiple of 4 wide take the vec4 kernel: 66 float4s per row cross warps (edge lanes load
      // their neighbours' float4s); the padded conv reads left and right of each float4 and zeros at the border.
      {"slice_stencils_vec4", slice_stencils({12, 9, 264}, {3, 30, 136}),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"},
        {"jacobi", "(u[:, :-2, 1:-1] + u[:, 2:, 1:-1] + u[:, 1:-1, :-2] + u[:, 1:-1, 2:]) * 0.25"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_7pt_register_z", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1",
        "s3_stencil2d_shared_tile"}},
      // The same grid starting 4 bytes into its storage: the launch takes the scalar kernel.
      {"slice_stencils_vec4_misaligned", slice_stencils({12, 9, 264}),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, {}, {"x"}},
      {"diagonal_difference_vec4", diagonal_difference(), {{"diff", "x[:, 1:, 1:, 1:] - x[:, :-1, :-1, :-1]"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_7pt_register_z"}},
      {"conv_stencils_vec4", conv_stencils({2, 1, 10, 7, 136}),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}},
      // The capture read the Laplacian's 27 values: its 7 taps compiled in, scalar and vec4 kernels, the
      // shared-memory one; then the buffer no longer holds them (random values), so the launch takes the
      // kernels that read the weight.
      {"conv_stencils_compiled_in", with_laplacian_values(conv_stencils()),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, kLaplacianIn27},
      {"conv_stencils_compiled_in_vec4", with_laplacian_values(conv_stencils({2, 1, 10, 7, 136})),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, kLaplacianIn27},
      {"conv_stencils_compiled_in_ring", with_laplacian_values(conv_stencils()),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_direct_l1", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, kLaplacianIn27,
       {}, false, 0.0, true},
      {"conv_stencils_buffer_changed", with_laplacian_values(conv_stencils({2, 1, 10, 7, 136})),
       {{"conv3d", "F.conv3d(x, stencil, padding=1)"}, {"conv2d", "F.conv2d(y, blur, shift, padding=2, groups=3)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_27pt", "s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}},
  };
  // The TF32 implicit-GEMM convolution comes first where it applies; these run the variants after it.
  const std::string tc = "s3_tf32_implicit_gemm_conv";
  const std::string channels_last_relu = "torch.relu(F.conv2d(x, weight, padding=1) * m + bias)";
  cases.push_back({"channels_last_epilogue", channels_last_epilogue(), {{"relu", channels_last_relu}},
                   {tc, "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"}, {}, {}, false, 0.0, false, 1});
  const std::string conv_module_relu = "torch.relu(F.conv2d(x, self.conv.weight, self.conv.bias, padding=1)) * scale";
  const std::string padded_module =
      "self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups = (1, 1), (1, 1), (1, 1), 1";
  cases.push_back({"channels_last_conv_bias", module_conv_epilogue(), {{"mul", conv_module_relu}},
                   {tc, "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"}, {padded_module}, {}, false, 0.0,
                   false, 1});
  // The conv in channels_last with the norm's split statistics (the first variant), then the
  // contiguous conv's row in registers (the second) and streaming kernel (the last).
  const std::string conv_module = "self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups = (1, 1), (1, 1), (1, 1), 1";
  const std::string conv_group_norm =
      "torch.relu(F.group_norm(F.conv2d(x, self.conv.weight, self.conv.bias, padding=1), 4, self.gn.weight, "
      "self.gn.bias, 1e-5))";
  const std::vector<std::string> conv_group_norm_recipes = {"s3_channels_last_conv_reduction", "s3_row_in_registers",
                                                            "s3_welford_group_norm"};
  cases.push_back({"conv_bias_group_norm", conv_bias_group_norm(), {{"relu", conv_group_norm}}, conv_group_norm_recipes,
                   {conv_module, "self.gn.num_groups = 4"}});
  cases.push_back({"conv_bias_group_norm_rows", conv_bias_group_norm(), {{"relu", conv_group_norm}},
                   conv_group_norm_recipes, {conv_module, "self.gn.num_groups = 4"}, {}, false, 0.0, false, 1});
  cases.push_back({"conv_bias_group_norm_streaming", conv_bias_group_norm(), {{"relu", conv_group_norm}},
                   conv_group_norm_recipes, {conv_module, "self.gn.num_groups = 4"}, {}, false, 0.0, true});
  const std::string no_padding = "self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups = (1, 1), (0, 0), (1, 1), 1";
  cases.push_back({"conv_instance_norm_nhwc", conv_instance_norm_divide(),
                   {{"div", "F.instance_norm(F.conv2d(x, self.conv.weight, self.conv.bias), eps=1e-5) / 2.0"}},
                   {"s3_channels_last_conv_reduction", "s3_row_in_registers", "s3_welford_group_norm"},
                   {no_padding}});
  const std::string conv_min = "torch.tanh(torch.tanh(torch.min(F.conv2d(x, self.conv.weight, self.conv.bias), 1, keepdim=True)[0]))";
  const std::vector<std::string> conv_min_recipes = {tc, "s3_channels_last_conv_reduction", "s3_warp_shuffle_row_reduction"};
  cases.push_back({"conv_min_channels_nhwc", conv_min_channels(8), {{"tanh_1", conv_min}}, conv_min_recipes, {no_padding},
                   {}, false, 0.0, false, 1});
  cases.push_back({"conv_min_40_channels_nhwc", conv_min_channels(40, 20), {{"tanh_1", conv_min}}, conv_min_recipes,
                   {no_padding}, {}, false, 0.0, false, 1});
  cases.push_back({"conv_min_channels_strided", conv_min_channels(8), {{"tanh_1", conv_min}}, conv_min_recipes,
                   {no_padding}, {}, false, 0.0, true});
  // The TF32 implicit-GEMM convolution itself (mma.sync emulated on the CPU): TF32 as cuDNN runs the
  // reference under torch.backends.cudnn.allow_tf32, within TF32's rounding of float32; and 3xTF32
  // with the flag off, at float32's tolerance. Input channels 3, 4 and 16 (padded to 8 and 16),
  // outputs 8, 40 and 32 (padded to 16, 48, 32); rows of 9, 11 (zero columns added) and 36.
  const std::string tf32_on = "torch.backends.cudnn.allow_tf32 = True";
  const std::string tf32_off = "torch.backends.cudnn.allow_tf32 = False";
  cases.push_back({"tensor_core_conv_min", conv_min_channels(8), {{"tanh_1", conv_min}}, conv_min_recipes,
                   {no_padding, tf32_on}, {}, false, 0.0, false, 0, 2e-2});
  cases.push_back({"tensor_core_conv_min_40", conv_min_channels(40, 20), {{"tanh_1", conv_min}}, conv_min_recipes,
                   {no_padding, tf32_off}});
  cases.push_back({"tensor_core_conv_epilogue", module_conv_epilogue(), {{"mul", conv_module_relu}},
                   {tc, "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"}, {padded_module, tf32_on}, {}, false,
                   0.0, false, 0, 2e-2});
  cases.push_back({"tensor_core_conv_broadcast_3xtf32", channels_last_epilogue(), {{"relu", channels_last_relu}},
                   {tc, "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"}, {tf32_off}});
  const std::string conv_mean = "torch.sigmoid(F.conv2d(x, self.conv.weight, self.conv.bias, padding=1).mean(1))";
  const std::vector<std::string> conv_mean_recipes = {tc, "s3_channels_last_conv_reduction", "s3_warp_shuffle_row_reduction"};
  cases.push_back({"tensor_core_conv_mean", conv_mean_channels(), {{"sigmoid", conv_mean}}, conv_mean_recipes,
                   {padded_module, tf32_on}, {}, false, 0.0, false, 0, 2e-2});
  cases.push_back({"tensor_core_conv_mean_3xtf32", conv_mean_channels(), {{"sigmoid", conv_mean}}, conv_mean_recipes,
                   {padded_module, tf32_off}});
  const std::string pool_sum = "torch.sigmoid(F.avg_pool2d(F.conv2d(x, self.conv.weight, self.conv.bias), 2)).sum(dim=[1, 2, 3])";
  const std::vector<std::string> pool_sum_recipes = {tc, "s3_warp_shuffle_row_reduction"};
  cases.push_back({"tensor_core_conv_pool_sum", conv_pool_sum(), {{"total", pool_sum}}, pool_sum_recipes,
                   {no_padding, tf32_on}, {}, false, 0.0, false, 0, 2e-2});
  cases.push_back({"tensor_core_conv_pool_sum_3xtf32", conv_pool_sum(), {{"total", pool_sum}}, pool_sum_recipes,
                   {no_padding, tf32_off}});
  cases.push_back({"conv3d_group_norm_ndhwc", conv3d_group_norm(),
                   {{"relu", "torch.relu(F.group_norm(F.conv3d(x, self.conv.weight, self.conv.bias), 4, self.gn.weight, "
                             "self.gn.bias, 1e-5))"}},
                   {"s3_channels_last_conv_reduction", "s3_row_in_registers", "s3_welford_group_norm"},
                   {"self.conv.stride, self.conv.padding, self.conv.dilation, self.conv.groups = (1, 1, 1), (0, 0, 0), "
                    "(1, 1, 1), 1",
                    "self.gn.num_groups = 4"}});
  cases.push_back({"depthwise_convs", depthwise_convs(),
                   {{"dw", "F.conv2d(x, self.dw.weight, self.dw.bias, padding=3, groups=6)"},
                    {"strided", "F.conv2d(y, w, None, stride=2, padding=1, groups=5)"},
                    {"dw5", "F.conv2d(F.pad(z, (2, 2, 2, 2), mode='reflect'), self.dw5.weight, self.dw5.bias, groups=2)"}},
                   {"s3_depthwise_conv2d", "s3_depthwise_conv2d", "s3_depthwise_conv2d"}});
  // The depthwise kernel with the batch norm and ReLU6 in its store (first), the channels_last conv with
  // them as its epilogue, and the elementwise kernel alone after cuDNN's conv.
  cases.push_back({"depthwise_batch_norm_relu6", depthwise_batch_norm_relu6(),
                   {{"relu6", "F.relu6(F.batch_norm(F.conv2d(x, self.dw.weight, None, padding=1, groups=12), "
                              "self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, False, 0.1, 1e-5))"}},
                   {"s3_depthwise_conv2d", "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"},
                   {"self.dw.stride, self.dw.padding, self.dw.dilation, self.dw.groups = (1, 1), (1, 1), (1, 1), 12"}});
  cases.push_back({"depthwise_conv1d", depthwise_conv1d(),
                   {{"silu", "F.silu(F.batch_norm(F.conv1d(x, self.dw.weight, self.dw.bias, padding=7, groups=6), "
                             "self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, False, 0.1, 1e-5))"},
                    {"causal", "F.conv1d(y, w, None, padding=3, groups=5)"}},
                   {"s3_depthwise_conv2d", "s3_elementwise_fusion", "s3_depthwise_conv2d"}});
  const std::string long_norm = "torch.relu(F.group_norm(x, 2, self.gn.weight, self.gn.bias, 1e-5))";
  cases.push_back({"long_group_norm_split", long_group_norm(), {{"relu", long_norm}},
                   {"s3_split_welford_norm", "s3_welford_group_norm"}, {"self.gn.num_groups = 2"}});
  cases.push_back({"long_group_norm_streaming", long_group_norm(), {{"relu", long_norm}},
                   {"s3_split_welford_norm", "s3_welford_group_norm"}, {"self.gn.num_groups = 2"}, {}, false, 0.0, true});
  const std::string column_bias = "torch.clamp(F.silu(x) * 1.7, min=-4.0, max=4.0) + bias";
  cases.push_back({"column_bias_packed", column_bias_chain(24), {{"add", column_bias}}, {"s3_elementwise_fusion"}});
  cases.push_back({"column_bias_odd_length", column_bias_chain(26), {{"add", column_bias}}, {"s3_elementwise_fusion"}});
  // fusion/25 in bfloat16: float intermediates (the first variant) and eager's rounding (the last), both
  // within bfloat16's rounding of eager's result.
  const std::vector<std::string> bf16_inputs = {"x = x.bfloat16()", "bias = (bias * 0.1).bfloat16()"};
  cases.push_back({"column_bias_bf16_float", column_bias_chain(24, "bfloat16"), {{"add", column_bias}},
                   {"s3_elementwise_fusion", "s3_elementwise_fusion"}, bf16_inputs, {}, false, 0.0, false, 0, 1e-2});
  cases.push_back({"column_bias_bf16_rounded", column_bias_chain(24, "bfloat16"), {{"add", column_bias}},
                   {"s3_elementwise_fusion", "s3_elementwise_fusion"}, bf16_inputs, {}, false, 0.0, true, 0, 1e-2});
  // RMSNorm's rows in registers (a block of 64 threads holds 1100), then a module called on rows of
  // another length (900): the kernel's any-length entry point.
  const std::string rms = "weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))";
  cases.push_back({"rms_norm", rms_norm(7, 1100), {{"mul_1", rms}}, {"s3_row_in_registers"}});
  cases.push_back({"rms_norm_other_length", rms_norm(7, 1100), {{"mul_1", rms}}, {"s3_row_in_registers"}});
  // Run and timed on a GPU only (run_replacements.py --device cuda): stencil3d_02's and stencil2d_03's sizes, each
  // as the vec4 kernel and the scalar one, the 512^3 Laplacian whose target is 80% of the DRAM bound (read 512^3 +
  // write 510^3 floats), and a large conv epilogue.
  std::vector<Case> gpu_cases = {
      // stencil3d_02's size in the generalisation suite: u - box(u) over 2 x 256^3, read once and written once.
      {"box_residual_large", conv_stencil_epilogues({2, 1, 256, 256, 256}, true),
       {{"residual", "u - F.conv3d(F.pad(u, (1,) * 6, mode='replicate'), box)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1"}, {kConvEpilogueValues[0]}, {}, true, 2.0 * 2 * 256 * 256 * 256 * 4},
      {"box_residual_large_scalar", conv_stencil_epilogues({2, 1, 256, 256, 256}, true),
       {{"residual", "u - F.conv3d(F.pad(u, (1,) * 6, mode='replicate'), box)"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_direct_l1"}, {kConvEpilogueValues[0]}, {}, true, 2.0 * 2 * 256 * 256 * 256 * 4,
       true},
      {"blur5_replicate_2048", replicate_blur({32, 1, 2048, 2048}),
       {{"blurred", "F.conv2d(F.pad(g, (2, 2, 2, 2), mode='replicate'), blur)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}, {kPaddedVec4Values[0]}, {}, true, 2.0 * 32 * 2048 * 2048 * 4},
      {"blur5_replicate_2048_scalar", replicate_blur({32, 1, 2048, 2048}),
       {{"blurred", "F.conv2d(F.pad(g, (2, 2, 2, 2), mode='replicate'), blur)"}},
       {"s3_stencil2d_vec4_direct", "s3_stencil2d_direct_l1"}, {kPaddedVec4Values[0]}, {}, true, 2.0 * 32 * 2048 * 2048 * 4, true},
      {"laplacian_512", slice_stencils({512, 512, 512}),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, {}, {}, true,
       4.0 * (512.0 * 512 * 512 + 510.0 * 510 * 510)},
      {"laplacian_512_ring", slice_stencils({512, 512, 512}),
       {{"lap", "x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + "
                "x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]"}},
       {"s3_stencil3d_vec4_direct", "s3_stencil3d_7pt_register_z", "s3_stencil2d_direct_l1", "s3_stencil2d_shared_tile"}, {}, {}, true,
       4.0 * (512.0 * 512 * 512 + 510.0 * 510 * 510), true},
      {"bias_leaky_scale_large", bias_leaky_scale({128, 64, 64, 64}), {{"mul", "F.leaky_relu(conv + bias, 0.2) * 2.0"}},
       {"s3_elementwise_fusion"}, {}, {}, true, 2 * 4.0 * 128 * 64 * 64 * 64},
      // Rows in registers against the streaming kernels: x and v read, the output written.
      {"softmax_mask_large", softmax_mask({8, 16, 1024, 1024}), {{"mul_1", "torch.softmax(x * 0.125 + mask, -1) * v"}},
       {"s3_row_in_registers", "s3_fused_row_softmax"}, {}, {}, true, 3 * 4.0 * 8 * 16 * 1024 * 1024},
      {"softmax_mask_large_streaming", softmax_mask({8, 16, 1024, 1024}),
       {{"mul_1", "torch.softmax(x * 0.125 + mask, -1) * v"}}, {"s3_row_in_registers", "s3_fused_row_softmax"}, {}, {},
       true, 3 * 4.0 * 8 * 16 * 1024 * 1024, true},
      {"layer_norm_large", residual_layer_norm(65536, 4096),
       {{"ln", "F.layer_norm(x + r, (4096,), self.ln.weight, self.ln.bias, 1e-5)"}},
       {"s3_row_in_registers", "s3_welford_layer_norm"}, {}, {}, true, 3 * 4.0 * 65536 * 4096},
      {"layer_norm_large_streaming", residual_layer_norm(65536, 4096),
       {{"ln", "F.layer_norm(x + r, (4096,), self.ln.weight, self.ln.bias, 1e-5)"}},
       {"s3_row_in_registers", "s3_welford_layer_norm"}, {}, {}, true, 3 * 4.0 * 65536 * 4096, true},
      {"rms_norm_large", rms_norm(65536, 4096),
       {{"mul_1", "weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))"}}, {"s3_row_in_registers"}, {}, {},
       true, 2 * 4.0 * 65536 * 4096},
      // Depthwise convs at the generalisation suite's sizes against cuDNN: ConvNeXt's 7x7 (x read, the output written),
      // and MobileNetV2's 3x3 with its batch norm and ReLU6 in the store.
      {"convnext_depthwise_large", convnext_depthwise({32, 192, 56, 56}),
       {{"dwconv", "F.conv2d(x, self.dwconv.weight, self.dwconv.bias, padding=3, groups=192)"}}, {"s3_depthwise_conv2d"}, {},
       {}, true, 2 * 4.0 * 32 * 192 * 56 * 56},
      {"mobilenet_depthwise_large", depthwise_batch_norm_relu6({128, 192, 56, 56}),
       {{"relu6", "F.relu6(F.batch_norm(F.conv2d(x, self.dw.weight, None, padding=1, groups=192), self.bn.running_mean, "
                  "self.bn.running_var, self.bn.weight, self.bn.bias, False, 0.1, 1e-5))"}},
       {"s3_depthwise_conv2d", "s3_channels_last_conv_epilogue", "s3_elementwise_fusion"},
       {"self.dw.stride, self.dw.padding, self.dw.dilation, self.dw.groups = (1, 1), (1, 1), (1, 1), 192"}, {}, true,
       2 * 4.0 * 128 * 192 * 56 * 56},
  };
  // The emitted module's _divider and _broadcast_shapes, which the launch statements call.
  json all = {{"cases", json::array()}, {"helpers", divider_helper() + broadcast_helper()}};
  for (const auto& c : cases) all["cases"].push_back(case_json(c));
  for (auto& c : all["cases"]) {
    if (c["name"] != "rms_norm_other_length") continue;
    c["inputs"]["x"] = {7, 900};
    c["module_tensors"]["weight"] = {900};
  }
  for (const auto& c : gpu_cases) all["cases"].push_back(case_json(c));
  // Rows of 24 run the lane-pack kernel (the bias as one pack per 4 lanes); rows of 26 do not.
  for (const auto& c : all["cases"]) {
    if (c["name"] != "column_bias_packed" && c["name"] != "column_bias_odd_length") continue;
    const std::string vec = c["replacements"][0]["kernels"]["fused_add_vec"];
    EXPECT_EQ(vec.find("_pack = reinterpret_cast<const hiera_pack<float>*>(a1)[hiera_mod(") != std::string::npos,
              c["name"] == "column_bias_packed")
        << c["name"];
  }
  hiera::testing::TempDirectory dir("hiera-cpu-emulation-");
  const auto file = dir.path() / "cases.json";
  std::ofstream(file) << all.dump();
  // HIERA_KERNEL_CASES=path keeps the cases for a GPU run: run_replacements.py path work --device cuda.
  if (const char* keep = std::getenv("HIERA_KERNEL_CASES")) std::ofstream(keep) << all.dump();
  // Compiled kernels are kept by content hash across runs.
  const auto work = std::filesystem::temp_directory_path() / "hiera-cpu-emulation-cache";
  const auto result = hiera::testing::run_process(
      {python,
       ::hiera::testing::source_dir() + "/tests/unit/engine/propose/recipes/kernels/cpu_emulation/run_replacements.py",
       file.string(), work.string()},
      "", 600s);
  if (result.exit_code == 77) GTEST_SKIP() << result.out;
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_THAT(result.out, ::testing::Not(::testing::HasSubstr("FAIL")));
  // Every output was checked; aligned tensors took the 16-byte kernel, the misaligned view the scalar one.
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 122) << result.out;
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   long_row_logsumexp: lse max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   reductions_streaming: log_probs max error"));
  // Circular, reflect and replicate pads folded into the direct stencils read what F.pad would have made.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   padded_stencils: conv3d max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   padded_stencils: conv2d_e max error"));
  // The vec4 kernel marching down the planes' rows maps replicate and reflect borders; the kernel reading a
  // changed buffer is vec4 too (its batch is the plane, so it reads each plane's channel).
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   padded_stencils_vec4: sharp max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_blurred_vec4, stencil_sharp_vec4)\nok   padded_stencils_vec4: sharp"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_blurred_weights_vec4, stencil_sharp_weights_vec4)\n"
                                               "ok   padded_stencils_vec4_buffer_changed: sharp"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   padded_stencils_vec4_direct: sharp max error"));
  // 3D borders through the vec4 kernel: the literals' kernel, then the one that reads a changed buffer.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_box_c_vec4, stencil_box_f_vec4, stencil_box_r_vec4)\n"
                                               "ok   conv_stencil_epilogues: heat"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_box_c_weights_vec4, stencil_box_f_weights_vec4, "
                                               "stencil_box_r_weights_vec4)\nok   sobel_pairs: magnitude"));
  // A Sobel pair per field: both outputs in one kernel, only the magnitude written.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   sobel_pairs: magnitude max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_g_vec4)\nok   sobel_pairs_buffer_changed: magnitude"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_g_weights_vec4)\nok   sobel_pairs_direct: magnitude"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_g)\nok   sobel_pairs_odd_rows: magnitude"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("sobel_pairs_odd_rows: magnitude max error"));
  // A conv stencil's epilogue in its store: u - box(u) with the centre through the vec4 kernel, the heat step's
  // field through the scalar kernel, y * 0.5 + blur(y) marching down the rows.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   conv_stencil_epilogues: residual max error 0 (kernels stencil_blurred_vec4, "
                                               "stencil_lap_x, stencil_smooth_vec4)"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   conv_stencil_epilogues_last_variant: heat max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   conv_stencil_epilogues_buffer_changed: sharpened max error"));
  // F.unfold's windows as a stencil: vec4 over planes, the scalar direct kernel, per-channel coefficients.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_view_1_vec4)\nok   unfold_window_direct: view_1"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_view_1)\nok   unfold_window_per_channel: view_1"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("unfold_window_per_channel: view_1 max error"));
  // Rolls wrap around through the circular boundary; the other fields are read at the output point.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   roll_heat_step_2d: step max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   roll_diffusion_3d: step max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   roll_spellings: out max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   slice_stencils_with_fields: avg max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   slice_stencils_with_fields_ring: dzz max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   rms_norm: mul_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   rms_norm_other_length: mul_1 max error"));
  // Rows held in registers, a warp's and a block's, and the streaming kernels they fall back to.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   softmax_mask: mul_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_mul_1_rows)\nok   softmax_mask_streaming"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_mul_1)\nok   reductions"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("fused_log_probs_rows"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_inorm_rows, fused_res_rows, fused_swish_rows, fused_tanh_rows)"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_inorm, fused_res, fused_swish, fused_tanh)"));
  // Which stencil kernel ran: the vec4 one only where rows are a multiple of 4 floats.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   slice_stencils: lap max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_jacobi, stencil_lap)\nok   slice_stencils_ring"));
  // The 2D Jacobi over 136-wide rows: the vec4 kernel over its 3 planes.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_jacobi_vec4, stencil_lap_vec4)\nok   slice_stencils_vec4_misaligned"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("slice_stencils_vec4_misaligned: lap max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_jacobi, stencil_lap)\nok   diagonal_difference_vec4: diff"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_diff_vec4)\nok   conv_stencils_vec4"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_conv2d_vec4, stencil_conv3d_vec4)\nok   conv_stencils_compiled_in:"));
  // The Laplacian compiled in runs while the buffer holds it; the kernel that reads the weight once it does not.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_conv2d_vec4, stencil_conv3d_vec4)\nok   conv_stencils_compiled_in_ring:"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels stencil_conv2d_vec4, stencil_conv3d_weights_vec4)\nok   channels_last_epilogue"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_mul_vec)\nok   bias_leaky_scale_misaligned: mul"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_mul)\nok   broadcasts"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   channels_last_epilogue: relu max error"));
  // Its bias has 6 channels, no whole pack of 4: the vector kernel loads it per element.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu_nhwc_vec, to_channels_last_float32)"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   channels_last_conv_bias: mul max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_mul_nhwc_vec, to_channels_last_float32)"));
  // The conv in channels_last: the split statistics of its group norm and instance norm, the
  // reduction over its channels as rows; the contiguous conv's kernels after them.
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   conv_bias_group_norm: relu max error"));
  // 8 channels: the pass in packs of 4; 6 channels (the instance norm): the scalar pass.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu_nhwc_finalize, fused_relu_nhwc_partial, fused_relu_nhwc_vec, "
                                               "to_channels_last_float32)\nok   conv_bias_group_norm_rows"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu_rows)\nok   conv_bias_group_norm_streaming"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu)\nok   conv_instance_norm_nhwc: div max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_div_nhwc, fused_div_nhwc_finalize, fused_div_nhwc_partial, "
                                               "to_channels_last_float32)\nok   conv_min_channels_nhwc: tanh_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_tanh_1_nhwc, to_channels_last_float32)\n"
                                               "ok   conv_min_40_channels_nhwc: tanh_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_tanh_1_nhwc, to_channels_last_float32)\n"
                                               "ok   conv_min_channels_strided: tanh_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_tanh_1_strided)\nok   tensor_core_conv_min: tanh_1 max error"));
  // The TF32 implicit-GEMM kernels, TF32 or 3xTF32 as the flag says.
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_tanh_1)\nok   tensor_core_conv_min_40: tanh_1 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_tanh_1_3xtf32)\nok   tensor_core_conv_epilogue: mul max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_mul)\nok   tensor_core_conv_broadcast_3xtf32: relu max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_relu_3xtf32)\nok   tensor_core_conv_mean: sigmoid max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_sigmoid)\nok   tensor_core_conv_mean_3xtf32: sigmoid max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_sigmoid_3xtf32)\nok   tensor_core_conv_pool_sum: total max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_total, conv_tc_total_images)\n"
                                               "ok   tensor_core_conv_pool_sum_3xtf32: total max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels conv_tc_total_3xtf32, conv_tc_total_images)\n"
                                               "ok   conv3d_group_norm_ndhwc: relu max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu_ndhwc_finalize, fused_relu_ndhwc_partial, fused_relu_ndhwc_vec, "
                                               "to_channels_last_float32)\nok   depthwise_convs: dw max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_dw, depthwise_dw5, depthwise_strided)\n"
                                               "ok   depthwise_convs: dw5 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_dw, depthwise_dw5, depthwise_strided)\n"
                                               "ok   depthwise_convs: strided max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_dw, depthwise_dw5, depthwise_strided)\n"
                                               "ok   depthwise_batch_norm_relu6: relu6 max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_relu6)\nok   depthwise_conv1d: causal max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_causal, depthwise_silu)\nok   depthwise_conv1d: silu max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels depthwise_causal, depthwise_silu)\nok   long_group_norm_split: relu max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_relu_finalize, fused_relu_partial, fused_relu_vec)\n"
                                               "ok   long_group_norm_streaming: relu max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("ok   column_bias_packed: add max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_add_vec)\nok   column_bias_odd_length: add max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_add_vec)\nok   column_bias_bf16_float: add max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_add_f32_vec)\nok   column_bias_bf16_rounded: add max error"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("(kernels fused_add_vec)\nok   rms_norm"));
}

}  // namespace
