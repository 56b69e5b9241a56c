// s1_channels_last_conv: a stack of 2D convolutions (with the elementwise,
// norm and pooling ops between them) runs in channels_last memory format:
// the input is converted once before the first convolution and the result
// made contiguous again where it leaves the stack, so code after it (a .view)
// sees the reference's layout. The weights stay as they are (ModelNew
// overrides only forward); cuDNN converts them per call, which is small
// against the activations.
#include <algorithm>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_channels_last_conv";

// Ops that keep a channels_last input channels_last (and compute the same values in either layout).
bool keeps_layout(const graph::Node& node) {
  static const std::set<std::string> kKinds = {
      "conv2d",      "relu",     "leaky_relu", "gelu", "sigmoid",    "tanh",       "silu",       "mish",    "hardswish",
      "hardsigmoid", "hardtanh", "elu",        "selu", "softplus",   "clamp",      "add",        "sub",     "mul",
      "div",         "neg",      "abs",        "exp",  "batch_norm", "max_pool2d", "avg_pool2d", "dropout", "identity"};
  return kKinds.count(node.kind) > 0;
}

}  // namespace

std::vector<Replacement> find_channels_last(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  std::set<std::string> used;
  for (std::size_t first = 0; first < graph.nodes.size(); ++first) {
    const graph::Node& conv = graph.nodes[first];
    if (!is_kind(conv, "conv2d") || used.count(conv.name) || rank(conv) != 4u || !is_floating(dtype(conv))) continue;
    const graph::Node* x = argument_node(graph, conv, 0, "input");
    if (!x || rank(*x) != 4u) continue;
    // Grow the stack forward: ops that keep the layout and read a value of the stack.
    std::vector<const graph::Node*> stack{&conv};
    std::set<std::string> members{conv.name};
    for (std::size_t i = first + 1; i < graph.nodes.size(); ++i) {
      const graph::Node& n = graph.nodes[i];
      if (!keeps_layout(n) || rank(n) != 4u || mutates(graph, n)) continue;
      bool reads_stack = false;
      for (const auto& a : n.args) reads_stack = reads_stack || (a.is_node() && members.count(a.node));
      if (!reads_stack) continue;
      stack.push_back(&n);
      members.insert(n.name);
    }
    // The longest prefix whose values all stay inside it except its last one, with two convolutions or more.
    for (std::size_t end = stack.size(); end-- > 1;) {
      std::set<std::string> prefix;
      for (std::size_t i = 0; i <= end; ++i) prefix.insert(stack[i]->name);
      bool closed = true;
      int convs = 0;
      for (std::size_t i = 0; i <= end; ++i) {
        convs += is_kind(*stack[i], "conv2d") ? 1 : 0;
        if (i == end) continue;
        closed = closed && !is_returned(graph, stack[i]->name);
        for (const auto& user : stack[i]->users) closed = closed && prefix.count(user) > 0;
      }
      if (!closed || convs < 2) continue;
      std::vector<std::string> statements;
      for (std::size_t i = 0; i <= end; ++i) {
        const graph::Node& n = *stack[i];
        std::string code = n.code;
        if (i == 0)
          code = substitute_names(code, {{x->name, x->name + ".contiguous(memory_format=torch.channels_last)"}});
        if (i == end) code = "(" + code + ").contiguous()";
        statements.push_back(n.name + " = " + code);
      }
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                     std::to_string(convs) + " convolutions from '" + conv.name + "' to '" +
                                         stack[end]->name + "' in channels_last memory format",
                                     prefix, stack[end]->name, statements));
      used.insert(prefix.begin(), prefix.end());
      break;
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
