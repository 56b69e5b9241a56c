// s1_merge_reduction_chains: a reduction of a reduction of the same kind over
// other dimensions is one reduction over all of them (one pass over the data
// instead of two, and no intermediate tensor).
#include <algorithm>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/rewrites/rewrites.h"

namespace hiera::engine::propose::recipes::rewrites {

namespace {

constexpr const char* kRecipe = "s1_merge_reduction_chains";

struct Reduction {
  const graph::Node* input = nullptr;
  std::vector<std::int64_t> dims;  // normalized, sorted, unique
  bool keepdim = false;
};

std::optional<Reduction> reduction(const graph::OpGraph& graph, const graph::Node& node, const std::string& kind) {
  if (!is_kind(node, kind) || !passes_only(node, 3, {"dim", "keepdim"})) return std::nullopt;
  Reduction r;
  r.input = argument_node(graph, node, 0, "input");
  if (!r.input || !r.input->meta || !node.meta || dtype(*r.input) != dtype(node)) return std::nullopt;
  const auto dims = int_list(argument(node, 1, "dim"));
  if (!dims || dims->empty()) return std::nullopt;
  for (const auto d : *dims) {
    const auto n = normalize_dim(d, r.input->meta->shape.size());
    if (!n) return std::nullopt;
    r.dims.push_back(*n);
  }
  std::sort(r.dims.begin(), r.dims.end());
  r.dims.erase(std::unique(r.dims.begin(), r.dims.end()), r.dims.end());
  const graph::Arg* keep = argument(node, 2, "keepdim");
  if (keep && !flag(keep)) return std::nullopt;
  r.keepdim = keep && *flag(keep);
  return r;
}

}  // namespace

std::vector<Replacement> find_reduction_chains(const graph::OpGraph& graph, const RewriteOptions&) {
  std::vector<Replacement> out;
  std::set<std::string> used;
  for (const auto& outer : graph.nodes) {
    for (const char* kind : {"sum", "mean", "amax", "amin"}) {
      const auto o = reduction(graph, outer, kind);
      if (!o) continue;
      const graph::Node& inner = *o->input;
      const auto i = reduction(graph, inner, kind);
      if (!i || i->keepdim != o->keepdim || !only_user(inner, outer) || used.count(inner.name)) continue;
      // The outer dims index the inner result: without keepdim the inner dims are gone from it.
      std::vector<std::int64_t> merged = i->dims;
      std::vector<std::int64_t> surviving;
      for (std::int64_t d = 0; d < static_cast<std::int64_t>(i->input->meta->shape.size()); ++d) {
        if (i->keepdim || !std::binary_search(i->dims.begin(), i->dims.end(), d)) surviving.push_back(d);
      }
      for (const auto d : o->dims) merged.push_back(surviving[static_cast<std::size_t>(d)]);
      std::sort(merged.begin(), merged.end());
      merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
      std::string dims;
      for (std::size_t k = 0; k < merged.size(); ++k) dims += (k ? ", " : "") + std::to_string(merged[k]);
      if (merged.size() == 1) dims += ",";
      const std::string x = i->input->name;
      out.push_back(make_replacement(
          kRecipe, knowledge::Space::S1,
          "two chained " + std::string(kind) + " reductions of '" + x + "' as one over dims (" + dims + ")",
          {inner.name, outer.name}, outer.name,
          {outer.name + " = " + x + "." + kind + "(dim=(" + dims + ")" + (o->keepdim ? ", keepdim=True" : "") + ")"}));
      used.insert(outer.name);
      used.insert(inner.name);
    }
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::rewrites
