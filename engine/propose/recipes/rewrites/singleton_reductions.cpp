// s1_singleton_dim_reductions: a reduction over dimensions of size 1 is the
// tensor itself (keepdim) or a squeeze of it. The size is checked at run time
// too (a conditional expression on the shape): a dimension that is 1 in the
// captured example may be larger for another input the contract allows.
#include <algorithm>
#include <optional>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_singleton_dim_reductions";

// sum/mean/amax/amin/prod/logsumexp of one element is that element.
bool is_value_preserving_reduction(const graph::Node& node) {
  return is_kind(node, "sum") || is_kind(node, "mean") || is_kind(node, "amax") || is_kind(node, "amin") ||
         is_kind(node, "logsumexp") || is_call(node, "prod", "torch.prod");
}

}  // namespace

std::vector<Replacement> find_singleton_reductions(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  for (const auto& node : graph.nodes) {
    if (!is_value_preserving_reduction(node) || !passes_only(node, 3, {"dim", "keepdim"})) continue;
    const graph::Node* x = argument_node(graph, node, 0, "input");
    if (!x || !x->meta || !node.meta || dtype(*x) != dtype(node)) continue;
    const auto dims = int_list(argument(node, 1, "dim"));
    if (!dims || dims->empty()) continue;  // a full reduction
    const graph::Arg* keep = argument(node, 2, "keepdim");
    if (keep && !flag(keep)) continue;
    const bool keepdim = keep && *flag(keep);
    std::vector<std::int64_t> normalized;
    bool singleton = true;
    for (const auto d : *dims) {
      const auto n = normalize_dim(d, x->meta->shape.size());
      singleton = singleton && n && x->meta->shape[static_cast<std::size_t>(*n)] == 1;
      if (n) normalized.push_back(*n);
    }
    if (!singleton || !alias_is_safe(graph, *x, node)) continue;
    std::sort(normalized.begin(), normalized.end());
    normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
    std::string condition, value = x->name, listed;
    for (std::size_t i = 0; i < normalized.size(); ++i) {
      const std::string d = std::to_string(normalized[i]);
      condition += (i ? " and " : "") + x->name + ".shape[" + d + "] == 1";
      listed += (i ? ", " : "") + d;
    }
    if (!keepdim) {
      for (auto it = normalized.rbegin(); it != normalized.rend(); ++it)
        value += ".squeeze(" + std::to_string(*it) + ")";
    }
    out.push_back(make_replacement(kRecipe, knowledge::Space::S1,
                                   (node.kind == "unknown" ? std::string("prod") : node.kind) +
                                       " over the size-1 dim(s) " + listed + " of '" + x->name + "' as a view",
                                   {node.name}, node.name,
                                   {node.name + " = " + value + " if " + condition + " else " + node.code}));
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
