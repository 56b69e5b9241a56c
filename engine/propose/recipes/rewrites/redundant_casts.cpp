// s1_remove_redundant_casts_copies: casts to the dtype a tensor already has,
// widening round trips, and .contiguous() on a tensor that is contiguous.
#include <map>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

using graph::Arg;
using graph::Node;

constexpr const char* kRecipe = "s1_remove_redundant_casts_copies";

// Exact round trips: every value of the narrow type is representable in the wide one.
bool widens(const std::string& narrow, const std::string& wide) {
  static const std::multimap<std::string, std::string> kWider = {
      {"float16", "float32"}, {"float16", "float64"}, {"bfloat16", "float32"}, {"bfloat16", "float64"},
      {"float32", "float64"}, {"int32", "int64"},     {"int16", "int32"},      {"int16", "int64"},
      {"int8", "int16"},      {"int8", "int32"},      {"int8", "int64"}};
  const auto [begin, end] = kWider.equal_range(narrow);
  for (auto it = begin; it != end; ++it) {
    if (it->second == wide) return true;
  }
  return false;
}

}  // namespace

std::vector<Replacement> find_redundant_casts(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    const Node* source = argument_node(graph, node, 0, "input");
    if (!source || !source->meta || !node.meta) continue;
    if (is_kind(node, "contiguous") && node.op == "call_method" && passes_only(node, 1, {})) {
      // Module inputs can arrive with any strides; intermediates have the layout their op gives them.
      if (source->op != "placeholder" && contiguous(*source->meta)) {
        out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                       ".contiguous() on the contiguous '" + source->name + "' removed", {node.name},
                                       node.name, {node.name + " = " + source->name}));
      }
      continue;
    }
    if (!is_dtype_cast(node)) continue;
    if (dtype(node) == dtype(*source)) {
      // .to() to the dtype a tensor has returns the tensor itself.
      out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                     "cast of '" + source->name + "' to its own dtype " + dtype(node) + " removed",
                                     {node.name}, node.name, {node.name + " = " + source->name}));
      continue;
    }
    // narrow -> wide -> narrow: the second cast gives back exactly the first's input.
    if (!is_dtype_cast(*source) || !only_user(*source, node) || mutates(graph, *source)) continue;
    const Node* origin = argument_node(graph, *source, 0, "input");
    if (!origin || !origin->meta || dtype(*origin) != dtype(node) || !widens(dtype(node), dtype(*source))) continue;
    if (!alias_is_safe(graph, *origin, node)) continue;
    out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                   "round trip " + dtype(node) + " -> " + dtype(*source) + " -> " + dtype(node) +
                                       " of '" + origin->name + "' removed",
                                   {source->name, node.name}, node.name, {node.name + " = " + origin->name}));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
