// s1_remove_identity_ops: operations that return their input's value.
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

using graph::Node;

constexpr const char* kRecipe = "s1_remove_identity_ops";

struct Identity {
  const Node* source;
  std::string why;
  bool same_object;  // the reference returns its input itself (or a view of it): no aliasing question
};

std::optional<Identity> dropout(const graph::OpGraph& graph, const Node& node) {
  if (!is_kind(node, "dropout")) return std::nullopt;
  const Node* input = argument_node(graph, node, 0, "input");
  if (!input) return std::nullopt;
  double p = 0.5;
  bool training = true;
  if (const auto* sub = submodule(graph, node)) {
    const auto it = sub->attrs.find("p");
    if (it == sub->attrs.end() || !it->is_number()) return std::nullopt;
    p = it->get<double>();
    training = graph.training;
  } else if (node.op == "call_function") {
    if (const auto* arg = argument(node, 1, "p")) {
      if (!constant(arg)) return std::nullopt;
      p = *constant(arg);
    }
    // F.dropout's `training` defaults to True whatever the module's mode; torch.dropout calls it `train`.
    const auto* arg = argument(node, 2, node.target == "torch.dropout" ? "train" : "training");
    if (arg) {
      if (!flag(arg)) return std::nullopt;
      training = *flag(arg);
    }
  } else {
    return std::nullopt;
  }
  if (p != 0.0 && training) return std::nullopt;
  return Identity{input, p == 0.0 ? "dropout with p=0" : "dropout in eval mode", true};
}

std::optional<Identity> arithmetic(const graph::OpGraph& graph, const Node& node) {
  const bool add = is_kind(node, "add"), sub = is_kind(node, "sub"), mul = is_kind(node, "mul"),
             div = is_kind(node, "div");
  if (!(add || sub || mul || div) || node.args.size() != 2) return std::nullopt;
  if (node.target.find("rsub") != std::string::npos) return std::nullopt;  // torch.rsub(x, 0) is 0 - x
  if (!passes_only(node, 2, {"alpha", "rounding_mode"})) return std::nullopt;
  if (div && keyword(node, "rounding_mode") && keyword(node, "rounding_mode")->kind != graph::Arg::Kind::None) {
    return std::nullopt;  // trunc/floor of x / 1 is not x
  }
  const double neutral = (add || sub) ? 0.0 : 1.0;
  const char* const op = add ? "+" : sub ? "-" : mul ? "*" : "/";
  const Node* source = nullptr;
  std::string why;
  if (is_constant(&node.args[1], neutral)) {
    source = graph.producer(node.args[0]);
    why = std::string("x ") + op + " " + (neutral == 0.0 ? "0" : "1");
  } else if ((add || mul) && is_constant(&node.args[0], neutral)) {
    source = graph.producer(node.args[1]);
    why = std::string(neutral == 0.0 ? "0" : "1") + " " + op + " x";
  }
  // Type promotion or broadcasting would make the result differ from x.
  if (!source || !source->meta || !node.meta || dtype(*source) != dtype(node) || !same_shape(*source, node)) {
    return std::nullopt;
  }
  return Identity{source, why, false};
}

std::optional<Identity> same_shape_view(const graph::OpGraph& graph, const Node& node) {
  if (!is_kind(node, "view") && !is_kind(node, "reshape")) return std::nullopt;
  const Node* source = argument_node(graph, node, 0, "input");
  if (!source || !source->meta || !node.meta || !node.kwargs.empty()) return std::nullopt;
  std::vector<std::int64_t> shape;
  if (node.args.size() == 2 && node.args[1].kind == graph::Arg::Kind::List) {
    const auto list = int_list(&node.args[1]);
    if (!list) return std::nullopt;
    shape = *list;
  } else {
    for (std::size_t i = 1; i < node.args.size(); ++i) {
      const auto c = constant(&node.args[i]);
      if (!c || !node.args[i].is_integer) return std::nullopt;
      shape.push_back(static_cast<std::int64_t>(*c));
    }
  }
  // Literal sizes only (no -1): then any input the reference accepts has exactly this shape.
  if (shape.empty() || shape != source->meta->shape || node.meta->shape != shape) return std::nullopt;
  for (const auto d : shape) {
    if (d < 0) return std::nullopt;
  }
  return Identity{source, node.kind + " to the shape it already has", true};
}

std::optional<Identity> read_only_clone(const graph::OpGraph& graph, const Node& node) {
  if (!is_call(node, "clone", "torch.clone") || !passes_only(node, 1, {})) return std::nullopt;
  const Node* source = argument_node(graph, node, 0, "input");
  if (!source) return std::nullopt;
  // A clone protects against writes and gives the output its own storage.
  if (graph_mutates(graph) || is_returned(graph, node.name)) return std::nullopt;
  return Identity{source, "clone whose result is only read", true};
}

}  // namespace

std::vector<Replacement> find_identity_ops(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if (node.op == "placeholder" || node.op == "output" || mutates(graph, node)) continue;
    std::optional<Identity> found;
    if (is_kind(node, "identity") && node.op == "call_module") {  // nn.Identity (clone is an "identity" kind too)
      if (const Node* input = argument_node(graph, node, 0, "input")) found = Identity{input, "nn.Identity", true};
    }
    if (!found) found = dropout(graph, node);
    if (!found) found = arithmetic(graph, node);
    if (!found) found = same_shape_view(graph, node);
    if (!found) found = read_only_clone(graph, node);
    if (!found) continue;
    if (!found->same_object && !alias_is_safe(graph, *found->source, node)) continue;
    out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                   found->why + " removed ('" + node.name + "' is '" + found->source->name + "')",
                                   {node.name}, node.name, {node.name + " = " + found->source->name}));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
